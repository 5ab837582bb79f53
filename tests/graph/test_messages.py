"""Message channels (``statehitl.graph.message``): what LangGraph parity cannot show. How LangChain messages
are stored (langchain-core's dict form, never pickle, never a class the data names beyond LangChain's own),
that they come back as the same classes in another process, and that everything works with plain dicts
where langchain-core is not installed, which ``import statehitl`` never loads."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from statehitl.checkpoint import Checkpointer, FileCheckpointer, MemoryStorage
from statehitl.errors import CheckpointCorruptError, InvalidUpdateError
from statehitl.graph import START, MessagesState, StateGraph
from statehitl.types import Command, interrupt

CALL = {"name": "lookup", "args": {"q": "tea"}, "id": "call-1", "type": "tool_call"}


def chat_app(checkpointer: Checkpointer) -> Any:
    def agent(state: MessagesState) -> dict[str, Any]:
        return {"messages": [AIMessage("", id="ai-1", tool_calls=[CALL])]}

    def tool(state: MessagesState) -> dict[str, Any]:
        return {"messages": [ToolMessage(interrupt("run lookup?"), tool_call_id="call-1", id="tool-1")]}

    g = StateGraph(MessagesState)
    g.add_node(agent)
    g.add_node(tool)
    g.add_edge(START, "agent")
    g.add_edge("agent", "tool")
    return g.compile(checkpointer=checkpointer)


def run(code: str, *args: str, blocked: bool = False) -> str:
    """``code`` in a new interpreter (``blocked``: as if langchain-core were not installed); its stdout."""
    head = f"import sys\nsys.path.insert(0, {str(Path(__file__).parent)!r})\n"
    if blocked:
        head += "sys.modules['langchain_core'] = None\n"
    done = subprocess.run([sys.executable, "-c", head + textwrap.dedent(code), *args], capture_output=True, text=True,
                          timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_langchain_messages_are_stored_in_langchain_cores_dict_form() -> None:
    checkpointer = Checkpointer(MemoryStorage(), compress=False)
    app = chat_app(checkpointer)
    app.invoke({"messages": [{"role": "user", "content": "tea?", "id": "h-1"}]}, "t")
    head = asyncio.run(checkpointer.head("t"))
    assert head is not None
    stored = head.record.values["messages"]
    assert [m["type"] for m in stored] == ["human", "ai"]
    assert stored[1]["data"]["tool_calls"] == [CALL]
    assert json.loads(json.dumps(stored)) == stored  # plain JSON
    writes = [r.writes["agent"] for r in asyncio.run(checkpointer.history("t")) if r.writes and "agent" in r.writes]
    assert writes[0]["messages"][0]["type"] == "ai"  # the step's write (its checkpoint's record), in the same form


def test_a_thread_of_langchain_messages_resumes_in_another_process_with_the_same_classes(tmp_path: Path) -> None:
    app = chat_app(FileCheckpointer(tmp_path))
    app.invoke({"messages": [HumanMessage("tea?", id="h-1")]}, "t")
    out = run("""
        from statehitl.checkpoint import FileCheckpointer
        from statehitl.types import Command
        from test_messages import chat_app
        result = chat_app(FileCheckpointer(sys.argv[1])).invoke(Command(resume="a hot drink"), "t")
        print([(type(m).__name__, m.id, m.content, getattr(m, "tool_calls", None)) for m in result["messages"]])
    """, str(tmp_path))
    assert out.strip() == str([("HumanMessage", "h-1", "tea?", None), ("AIMessage", "ai-1", "", [CALL]),
                               ("ToolMessage", "tool-1", "a hot drink", None)])


def test_a_stored_message_of_a_type_outside_langchains_set_is_refused() -> None:
    storage = MemoryStorage()
    app = chat_app(Checkpointer(storage, compress=False))
    app.invoke({"messages": [HumanMessage("tea?", id="h-1")]}, "t")
    for key in asyncio.run(storage.list("threads/t/")):
        data, token = asyncio.run(storage.read(key))
        edited = data.replace(b'"type":"human"', b'"type":"os.system"').replace(b'"type": "human"',
                                                                              b'"type": "os.system"')
        if edited != data:
            asyncio.run(storage.write(key, edited, expect=token))
    with pytest.raises(CheckpointCorruptError, match=r"os\.system"):
        app.get_state("t").values  # noqa: B018


def test_a_write_that_is_not_a_message_is_refused_and_nothing_is_stored() -> None:
    checkpointer = Checkpointer(MemoryStorage())
    g = StateGraph(MessagesState)
    g.add_node("bad", lambda state: {"messages": [42]})
    g.add_edge(START, "bad")
    app = g.compile(checkpointer=checkpointer)
    with pytest.raises(InvalidUpdateError, match="42 is not a message"):
        app.invoke({"messages": [("user", "hi")]}, "t")
    with pytest.raises(InvalidUpdateError, match="messages"):
        app.invoke({"messages": [object()]}, "u")
    assert app.get_state("u") is None


def test_without_langchain_core_messages_are_plain_dicts_across_processes(tmp_path: Path) -> None:
    program = """
        import json
        from statehitl.checkpoint import FileCheckpointer
        from statehitl.graph import START, MessagesState, StateGraph
        from statehitl.graph.message import REMOVE_ALL_MESSAGES, RemoveMessage, add_messages
        from statehitl.types import Command, interrupt

        def bot(state):
            return {"messages": [{"role": "assistant", "content": "echo " + state["messages"][-1]["content"]}]}

        def ask(state):
            first = state["messages"][0]["id"]
            return {"messages": [("user", interrupt("more?")), RemoveMessage(id=first)]}

        g = StateGraph(MessagesState)
        g.add_node(bot)
        g.add_node(ask)
        g.add_edge(START, "bot")
        g.add_edge("bot", "ask")
        app = g.compile(checkpointer=FileCheckpointer(sys.argv[1]))
        if sys.argv[2] == "start":
            result = app.invoke({"messages": "hello"}, "t")
        else:
            result = app.invoke(Command(resume="bye"), "t")
        print(json.dumps([[m["role"], m["content"], isinstance(m["id"], str)] for m in result["messages"]]))
        cleared = add_messages([{"role": "user", "content": "a", "id": "1"}],
                               [RemoveMessage(id=REMOVE_ALL_MESSAGES), ("assistant", "b")])
        print(json.dumps([[m["role"], m["content"]] for m in cleared]))
        print("langchain_core" in sys.modules and sys.modules["langchain_core"] is not None)
    """
    first = run(program, str(tmp_path), "start", blocked=True).splitlines()
    assert json.loads(first[0]) == [["user", "hello", True], ["assistant", "echo hello", True]]
    assert json.loads(first[1]) == [["assistant", "b"]]
    assert first[2] == "False"
    second = run(program, str(tmp_path), "resume", blocked=True).splitlines()
    assert json.loads(second[0]) == [["assistant", "echo hello", True], ["user", "bye", True]]


def test_a_thread_of_langchain_messages_read_without_langchain_core_says_what_to_install(tmp_path: Path) -> None:
    chat_app(FileCheckpointer(tmp_path)).invoke({"messages": [HumanMessage("tea?", id="h-1")]}, "t")
    out = run("""
        from statehitl.checkpoint import FileCheckpointer
        from statehitl.graph import START, MessagesState, StateGraph
        g = StateGraph(MessagesState)
        g.add_node("agent", lambda s: None)
        g.add_node("tool", lambda s: None)
        g.add_edge(START, "agent")
        g.add_edge("agent", "tool")
        try:
            g.compile(checkpointer=FileCheckpointer(sys.argv[1])).get_state("t").values
        except Exception as exc:
            print(type(exc).__name__, exc)
    """, str(tmp_path), blocked=True)
    assert "statehitl[langchain]" in out


def test_importing_statehitl_and_its_graphs_never_loads_langchain_core() -> None:
    out = run("""
        import statehitl, statehitl.graph, statehitl.graph.message, statehitl.store, statehitl.managed, statehitl.cache
        from statehitl.graph import MessagesState, StateGraph
        print([m for m in ("langchain_core", "langgraph") if m in sys.modules])
    """)
    assert out.strip() == "[]"


def test_streaming_messages_without_langchain_core_streams_nothing_and_runs() -> None:
    out = run("""
        from statehitl.graph import START, MessagesState, StateGraph
        g = StateGraph(MessagesState)
        g.add_node("bot", lambda s: {"messages": [("assistant", "hi")]})
        g.add_edge(START, "bot")
        print(list(g.compile().stream({"messages": "hello"}, stream_mode=["messages", "updates"])))
    """, blocked=True)
    assert out.strip() == "[('updates', {'bot': {'messages': [('assistant', 'hi')]}})]"


def test_the_resume_answer_goes_into_a_tool_message() -> None:
    app = chat_app(Checkpointer(MemoryStorage()))
    app.invoke({"messages": [HumanMessage("tea?", id="h-1")]}, "t")
    result = app.invoke(Command(resume="yes"), "t")
    assert isinstance(result["messages"][-1], ToolMessage)
