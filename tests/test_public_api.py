"""The public API, pinned: a change here is a change users see, so it must be deliberate."""

from __future__ import annotations

import subprocess
import sys

import statehitl
import statehitl.agent
import statehitl.answers
import statehitl.cache
import statehitl.cache.memory
import statehitl.callbacks
import statehitl.channels
import statehitl.checkpoint
import statehitl.checkpoint.base
import statehitl.checkpoint.saver
import statehitl.checkpoint.saver_hooks
import statehitl.checkpoint.serde.jsonplus
import statehitl.config
import statehitl.constants
import statehitl.errors
import statehitl.experimental.checkpoint
import statehitl.func
import statehitl.graph
import statehitl.graph.message
import statehitl.graph.state
import statehitl.handlers
import statehitl.hooks
import statehitl.inbox
import statehitl.interventions
import statehitl.managed
import statehitl.managed.is_last_step
import statehitl.models
import statehitl.multiagent
import statehitl.nesting
import statehitl.offload
import statehitl.prebuilt
import statehitl.prebuilt.chat_agent_executor
import statehitl.prebuilt.interrupt
import statehitl.prebuilt.tool_node
import statehitl.prebuilt.tool_validator
import statehitl.pregel
import statehitl.resumable
import statehitl.runtime
import statehitl.session
import statehitl.storage
import statehitl.storage.search
import statehitl.storage.search.bm25
import statehitl.store
import statehitl.store.base
import statehitl.store.memory
import statehitl.testing
import statehitl.testing.builds
import statehitl.testing.clocks
import statehitl.testing.webhooks
import statehitl.timeout_policy
import statehitl.tools
import statehitl.transitions
import statehitl.types
import statehitl.values
import statehitl.vended_interventions
import statehitl.vended_interventions.hitl
import statehitl.worker

PUBLIC = {
    statehitl.func: ["Workflow", "entrypoint", "task"],
    statehitl.graph: ["CompiledStateGraph", "END", "GraphRunResult", "GraphTask", "MessagesState", "NodeContext",
                      "START", "StateGraph", "StateSnapshot", "Status", "add_messages", "append"],
    statehitl.graph.message: ["MessagesState", "REMOVE_ALL_MESSAGES", "RemoveMessage", "add_messages", "push_message"],
    statehitl.graph.state: ["CompiledStateGraph", "END", "START", "StateGraph"],
    statehitl.pregel: ["NodeBuilder", "Pregel", "PregelNode"],
    statehitl.channels: ["AnyValue", "BaseChannel", "BinaryOperatorAggregate", "DeltaChannel", "EphemeralValue",
                         "INPUT", "LastValue", "Overwrite", "Rewritten", "StateSchema", "Topic", "UntrackedValue",
                         "append", "append_items", "overwritten", "writer_label"],
    statehitl.prebuilt: ["APPROVAL_INTERRUPT", "AgentState", "InjectedIdempotencyKey", "InjectedState", "InjectedStore",
                         "InjectedToolCallId", "ToolInvocationError", "ToolNode", "ToolRuntime", "ValidationNode",
                         "create_react_agent", "tools_condition"],
    statehitl.prebuilt.chat_agent_executor: ["AgentState", "AgentStatePydantic", "AgentStateWithStructuredResponse",
                                             "AgentStateWithStructuredResponsePydantic", "StructuredResponse",
                                             "StructuredResponseSchema", "create_react_agent",
                                             "create_tool_calling_executor", "structured_state"],
    statehitl.prebuilt.tool_node: ["INVALID_TOOL_NAME_ERROR_TEMPLATE", "InjectedState", "InjectedStore",
                                   "TOOL_CALL_ERROR_TEMPLATE", "TOOL_INVOCATION_ERROR_TEMPLATE", "ToolCallRequest",
                                   "ToolCallWithContext", "ToolInvocationError", "ToolNode", "ToolRuntime",
                                   "tools_condition"],
    statehitl.prebuilt.tool_validator: ["ValidationNode"],
    statehitl.types: ["All", "CachePolicy", "Checkpointer", "Command", "Durability", "GraphTask", "Interrupt",
                      "Overwrite", "PregelTask", "RetryPolicy", "Send", "Snapshot", "StateSnapshot", "StateUpdate",
                      "StreamMode", "StreamWriter", "TimeoutPolicy", "ensure_valid_checkpointer", "interrupt"],
    statehitl.constants: ["CONF", "END", "START", "TAG_HIDDEN", "TAG_NOSTREAM"],
    statehitl.config: ["get_config", "get_store", "get_stream_writer"],
    statehitl.store: ["BaseStore", "FileStore", "GetOp", "InMemoryStore", "IndexConfig", "InvalidNamespaceError",
                      "Item", "ListNamespacesOp", "MatchCondition", "NOT_PROVIDED", "NamespacePath", "Op", "PutOp",
                      "Result", "SearchItem", "SearchOp", "StorageStore", "TTLConfig"],
    statehitl.store.base: ["BaseStore", "GetOp", "IndexConfig", "InvalidNamespaceError", "Item", "ListNamespacesOp",
                           "MatchCondition", "NOT_PROVIDED", "NamespaceMatchType", "NamespacePath", "NotProvided", "Op",
                           "PutOp", "Result", "SearchItem", "SearchOp", "TTLConfig"],
    statehitl.store.memory: ["InMemoryStore"],
    statehitl.managed: ["IsLastStep", "IsLastStepManager", "ManagedValue", "RemainingSteps", "RemainingStepsManager",
                        "managed_value", "refuse_writes", "values_of"],
    statehitl.managed.is_last_step: ["IsLastStep", "IsLastStepManager", "RemainingSteps", "RemainingStepsManager"],
    statehitl.prebuilt.interrupt: ["ActionRequest", "HumanInterrupt", "HumanInterruptConfig", "HumanResponse"],
    statehitl.cache: ["BaseCache", "InMemoryCache"],
    statehitl.cache.memory: ["InMemoryCache"],
    statehitl.callbacks: ["AsyncGraphCallbackManager", "GraphCallbackHandler", "GraphCallbackManager",
                          "GraphInterruptEvent", "GraphLifecycleEvent", "GraphLifecycleStatus", "GraphResumeEvent",
                          "get_async_graph_callback_manager_for_config", "get_sync_graph_callback_manager_for_config",
                          "graph_handlers"],
    statehitl.runtime: ["DEFAULT_RUNTIME", "ExecutionInfo", "RunControl", "Runtime", "ServerInfo", "get_runtime"],
    statehitl: ["Agent", "InterventionHandler", "Snapshot", "ToolContext", "tool"],
    statehitl.interventions: ["Confirm", "Deny", "Guide", "InterventionAction", "InterventionHandler", "OnError",
                              "Proceed", "Transform"],
    statehitl.vended_interventions: ["HumanInTheLoop"],
    statehitl.vended_interventions.hitl: ["HumanInTheLoop", "HumanInTheLoopClassifier", "LLMClassifierConfig"],
    statehitl.answers: ["Answer", "Approve", "Edit", "Reject", "Respond", "ToolAnswer", "check_edit", "outcome_of",
                        "tool_answer_schema"],
    statehitl.agent: ["Agent", "AgentMetrics", "AgentNode", "AgentResult", "AgentRuntime", "AgentState",
                      "ConversationManager", "LoopRun", "NullConversationManager", "SlidingWindowConversationManager",
                      "ToolMetrics"],
    statehitl.errors: sorted([*(name for name in dir(statehitl.errors) if name.endswith(("Error", "Conflict"))),
                              "GraphBubbleUp", "GraphDrained", "GraphInterrupt", "ParentCommand"]),
    statehitl.nesting: ["MachineNode", "NodeCall", "NodeDone", "NodeStopped", "call_machine_node", "kept_run",
                        "node_call", "resumed_run", "started_run"],
    statehitl.transitions: ["CheckpointWritten", "ClaimTaken", "HookFired", "InterruptAnswered",
                            "InterruptRaisedTransition", "NodeCancelled", "NodeEntered", "NodeExited", "StepApplied",
                            "ToolFinished", "Transition"],
    statehitl.hooks: ["AfterInvocationEvent", "AfterModelCallEvent", "AfterMultiAgentInvocationEvent",
                      "AfterNodeCallEvent", "AfterToolCallEvent", "AfterToolsEvent", "BeforeInvocationEvent",
                      "BeforeModelCallEvent", "BeforeMultiAgentInvocationEvent", "BeforeNodeCallEvent",
                      "BeforeToolCallEvent", "BeforeToolsEvent", "HookEvent", "HookOrder", "HookProvider",
                      "HookRegistry", "InterruptibleEvent", "MessageAddedEvent", "ModelStopResponse",
                      "MultiAgentInitializedEvent"],
    statehitl.multiagent: ["Graph", "GraphBuilder", "GraphEdge", "GraphNode", "GraphResult", "GraphState",
                           "MultiAgentBase", "MultiAgentResult", "NodeResult", "SharedContext", "Status", "Swarm",
                           "SwarmNode", "SwarmResult"],
    statehitl.models: ["AnthropicModel", "BedrockModel", "ContextWindowOverflowException", "LiteLLMModel",
                       "LlamaCppModel", "Model", "ModelError", "ModelThrottledException", "ModelTurn", "OllamaModel",
                       "OpenAIModel", "ScriptedModel", "collect_turn"],
    statehitl.handlers: ["CompositeCallbackHandler", "PrintingCallbackHandler", "null_callback_handler"],
    statehitl.session: ["BidiAgentSaveLatestStrategy", "DynamoDBSessionManager", "FileSessionManager",
                        "MultiAgentSaveLatestStrategy", "S3SessionManager", "SESSION_URL_ENV", "SaveLatestStrategy",
                        "SessionManager", "SnapshotSessionManager", "SnapshotTrigger"],
    statehitl.storage: ["BlobStore", "DynamoDBStorage", "InMemoryStorage", "LocalFileStorage", "S3Storage", "Storage",
                        "StorageSearchResult"],
    statehitl.storage.search: ["Bm25SearchStrategy", "Bm25SearchStrategyConfig", "KeywordSearchStrategy",
                               "SearchStrategy", "Searchable", "StorageSearchResult"],
    statehitl.storage.search.bm25: ["Bm25SearchStrategy", "Bm25SearchStrategyConfig"],
    statehitl.experimental.checkpoint: ["CHECKPOINT_SCHEMA_VERSION", "Checkpoint", "CheckpointPosition"],
    statehitl.tools: ["DecoratedFunctionTool", "ToolRegistry", "tool"],
    statehitl.checkpoint: ["ABSENT", "AuditEntry", "CheckpointRecord", "Checkpointer", "FileCheckpointer",
                           "FileStorage", "InMemorySaver", "InterruptRecord", "MemoryCheckpointer", "MemorySaver",
                           "MemoryStorage", "Storage",
                           "storage_from_url", "validate_key", "validate_prefix", "validate_thread_id"],
    statehitl.checkpoint.base: ["Checkpoint", "CheckpointMetadata", "CheckpointTuple", "PendingWrite"],
    statehitl.checkpoint.saver: ["GraphValues", "SaverReads", "SaverWriteRefused"],
    statehitl.checkpoint.saver_hooks: ["PendingPut", "SaverOverrides", "SaverWriteSkipped", "channel_values",
                                       "check_checkpointer_serde", "overrides_of", "pending_put", "pending_writes",
                                       "put_through", "read_through"],
    statehitl.testing: ["CountingStorage", "StorageCounts", "TransitionRecorder"],
    statehitl.inbox: ["Answered", "AppBuilder", "AuditRow", "PendingInterrupt", "PendingPage", "StoredAnswer",
                      "SweepReport", "UnappliedAnswer", "aanswer", "afind_pending", "answer", "apending",
                      "apending_page", "apply_answered", "aresume_answered", "asweep", "athread_audit_trail",
                      "aunapplied", "build_app", "find_pending", "load_app", "open_store", "pending", "pending_page",
                      "resume_answered", "sweep", "thread_audit_trail", "unapplied"],
    statehitl.resumable: ["ResumableApp", "Resumed", "as_resumable", "resume_stored"],
    statehitl.offload: ["call_sync", "may_run_inline", "off_the_loop", "sync_pool"],
    statehitl.checkpoint.serde.jsonplus: ["JsonPlusSerializer"],
    statehitl.timeout_policy: ["TimeoutPolicy"],
    statehitl.values: ["TAG", "ValueTypes", "as_json", "decode_value", "encode_value", "needs_tags", "register"],
    statehitl.testing.builds: ["BuildFailed", "FailingBuild", "SlowBuild"],
    statehitl.testing.clocks: ["skew", "skewed"],
    statehitl.testing.webhooks: ["WebhookReceiver"],
    statehitl.worker: ["CallableSink", "EVENT_HEADER", "Event", "ID_HEADER", "OutboxEntry", "Outcome", "RETRY_COMMENT",
                       "RETRY_SCHEDULE", "Report", "Retrying", "SIGNATURE_HEADER", "Sink", "TIMESTAMP_HEADER",
                       "TOLERANCE", "ThreadOutcome", "Webhook", "WebhookDeliveryError", "Worker", "WorkerSettings",
                       "answer_event", "delivery_failed_event", "interrupt_event", "lambda_handler",
                       "outcome_unknown_event", "read_outbox", "retry_failed", "sign", "verify_signature",
                       "webhook_id"],
}


def test_each_module_exports_exactly_its_public_names() -> None:
    for module, names in PUBLIC.items():
        assert sorted(module.__all__) == names, module.__name__
        for name in names:
            assert hasattr(module, name), f"{module.__name__}.{name}"


def test_importing_statehitl_stays_light() -> None:
    """Serverless cold starts pay for every import: the bare package loads nothing heavy."""
    heavy = ["networkx", "pydantic", "boto3", "aiofiles", "opentelemetry"]
    code = f"import sys, statehitl; print([m for m in {heavy!r} if m in sys.modules])"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_the_inbox_library_loads_no_web_server() -> None:
    """Listing, answering and sweeping need no aiohttp (the ``inbox`` extra is only for ``inbox serve``)."""
    code = "import sys, statehitl.inbox, statehitl.cli.inbox; print('aiohttp' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"


def test_the_worker_loads_no_aws_sdk_until_a_store_needs_it() -> None:
    """``statehitl.worker`` is the Lambda handler's module: its import is every cold start's."""
    code = "import sys, statehitl.worker; print([m for m in ('boto3', 'botocore', 'aiohttp') if m in sys.modules])"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_importing_the_agent_stays_light() -> None:
    """``from statehitl import Agent`` is a cold start too: no AWS SDK, no OpenTelemetry, no networkx."""
    heavy = ["boto3", "botocore", "opentelemetry", "networkx"]
    code = f"import sys\nfrom statehitl import Agent, tool\nprint([m for m in {heavy!r} if m in sys.modules])"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_building_a_graph_does_not_load_the_cloud_backends() -> None:
    code = (
        "import sys\n"
        "from statehitl.graph import StateGraph\n"
        "from statehitl.checkpoint import FileCheckpointer\n"
        "print([m for m in ('boto3', 'botocore', 'networkx') if m in sys.modules])"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
