"""``agent.take_snapshot`` / ``load_snapshot`` / ``Snapshot``, side by side with Strands 1.62.

The programs are the Python examples of Strands' snapshot page (docs/user-guide/concepts/agents/
snapshots.mdx) with a scripted model, and the page's rules: presets, include then exclude, app data,
serialisation, restoring only the fields a snapshot holds, and the errors. Each runs on both frameworks
and what it observes must be the same. A waiting agent's snapshot is statehitl's own (its interrupt state
names a checkpoint): ``test_snapshots_durable.py``.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
import strands
import strands.types.exceptions
from strands.agent.conversation_manager import NullConversationManager as StrandsNull

import statehitl
import statehitl.types.exceptions
from statehitl.agent.conversation_manager import NullConversationManager as StatehitlNull
from strands_side import conversation, side


def agent_on(name: str, script: list[Any], **options: Any) -> Any:
    on = side(name)
    manager = StrandsNull() if name == "strands" else StatehitlNull()  # Strands' default trims at 40 messages
    return on.Agent(model=on.model(script), callback_handler=None, conversation_manager=manager, **options)


def snapshot_class(name: str) -> Any:
    return strands.Snapshot if name == "strands" else statehitl.Snapshot


def comparable(data: dict[str, Any]) -> dict[str, Any]:
    """A snapshot's data with Strands' message bookkeeping left out of its messages."""
    shown = dict(data)
    if "messages" in shown:
        shown["messages"] = conversation(shown["messages"])
    return shown


def taking(name: str) -> dict[str, Any]:
    agent = agent_on(name, ["Hi there!"], system_prompt="You are a helpful assistant")
    agent("Hello!")
    agent.state.set("user_id", "user-123")
    snapshot = agent.take_snapshot(preset="session")
    return {"version": snapshot.schema_version, "scope": snapshot.scope, "keys": list(snapshot.data),
            "data": comparable(snapshot.data), "stamp": snapshot.created_at.endswith("Z"),
            "app_data": snapshot.app_data}


def test_the_session_preset_captures_what_strands_does() -> None:
    theirs = taking("strands")
    assert taking("statehitl") == theirs
    assert theirs["keys"] == ["messages", "state", "conversation_manager_state", "interrupt_state", "model_state"]
    assert theirs["data"]["interrupt_state"] == {"interrupts": {}, "context": {}, "activated": False}


def restoring(name: str) -> list[Any]:
    agent = agent_on(name, ["Hi!", "joke one", "joke two", "a summary"], system_prompt="You are a helpful assistant")
    agent("Hello!")
    snapshot = agent.take_snapshot(preset="session")
    agent("Tell me a joke")
    agent("Tell me another one")
    seen = [len(agent.messages)]
    agent.load_snapshot(snapshot)
    seen.append(len(agent.messages))
    seen.append(str(agent("Summarise")).strip())
    seen.append(conversation(agent.messages))
    return seen


def test_loading_takes_the_agent_back_and_it_goes_on_from_there() -> None:
    theirs = restoring("strands")
    assert restoring("statehitl") == theirs
    assert theirs[:3] == [6, 2, "a summary"]


FIELD_CHOICES: list[dict[str, Any]] = [
    {"include": ["messages", "state"]},
    {"preset": "session", "include": ["system_prompt"]},
    {"preset": "session", "exclude": ["interrupt_state"]},
    {"include": ["system_prompt", "model_state"], "exclude": ["model_state"]},
    {"preset": "session", "include": ["state"], "exclude": ["messages", "conversation_manager_state"]},
]


def selecting(name: str) -> list[Any]:
    agent = agent_on(name, ["ok"], system_prompt="Be brief")
    agent("Hello!")
    return [comparable(agent.take_snapshot(**choice).data) for choice in FIELD_CHOICES]


def test_presets_include_and_exclude_resolve_as_strands_resolves_them() -> None:
    theirs = selecting("strands")
    assert selecting("statehitl") == theirs
    assert theirs[1]["system_prompt"] == [{"text": "Be brief"}]
    assert list(theirs[3]) == ["system_prompt"]


def refusing(name: str) -> list[tuple[bool, str]]:
    errors = (strands.types.exceptions if name == "strands" else statehitl.types.exceptions).SnapshotException
    agent = agent_on(name, ["ok"])
    Snapshot = snapshot_class(name)
    attempts = [
        lambda: agent.take_snapshot(),
        lambda: agent.take_snapshot(exclude=["messages"]),
        lambda: agent.take_snapshot(include=["bogus"]),
        lambda: agent.load_snapshot(Snapshot(scope="multiAgent", schema_version="1.0", data={}, app_data={})),
        lambda: agent.load_snapshot(Snapshot(scope="agent", schema_version="2.0", data={}, app_data={})),
        lambda: Snapshot.from_dict({"scope": "nowhere", "schema_version": "1.0", "data": {}, "created_at": "t"}),
        lambda: Snapshot.from_dict({"scope": "agent", "schema_version": "0.9", "data": {}, "created_at": "t"}),
        lambda: agent.load_snapshot(Snapshot(scope="agent", schema_version="1.0", app_data={},
                                             data={"conversation_manager_state": {"__name__": "Other"}})),
    ]
    outcomes = []
    for attempt in attempts:
        with pytest.raises(Exception) as raised:  # noqa: PT011 - which exception is what is compared
            attempt()
        outcomes.append((isinstance(raised.value, errors | ValueError), str(raised.value).split(" Valid fields")[0]))
    return outcomes


def test_bad_fields_scopes_and_versions_are_refused_with_strands_messages() -> None:
    theirs = refusing("strands")
    assert refusing("statehitl") == theirs
    assert theirs[2] == (True, "Invalid snapshot field: 'bogus'.")
    assert theirs[3] == (True, "Expected snapshot scope 'agent', got 'multiAgent'")
    assert theirs[7] == (True, "Invalid conversation manager state.")


def serialising(name: str) -> list[Any]:
    agent = agent_on(name, ["Hi!"])
    agent("Hello!")
    agent.state.set("step", 3)
    text = json.dumps(agent.take_snapshot(preset="session", app_data={"snapshot_label": "After onboarding",
                                                                       "workflow_step": 3}).to_dict())
    restored = snapshot_class(name).from_dict(json.loads(text))
    new_agent = agent_on(name, ["Welcome back"])
    new_agent.load_snapshot(restored)
    reply = str(new_agent("Again")).strip()
    return [restored.app_data, new_agent.state.get(), reply, conversation(new_agent.messages)]


def test_a_snapshot_survives_json_and_loads_into_a_new_agent() -> None:
    theirs = serialising("strands")
    assert serialising("statehitl") == theirs
    assert theirs[0] == {"snapshot_label": "After onboarding", "workflow_step": 3}
    assert len(theirs[3]) == 4


def partial_loads(name: str) -> list[Any]:
    agent = agent_on(name, ["one", "two"], system_prompt="first prompt")
    agent("Hello!")
    agent.state.set("k", "before")
    only_state = agent.take_snapshot(include=["state", "system_prompt"])
    agent.state.set("k", "after")
    agent.system_prompt = "second prompt"
    agent("More")
    agent.load_snapshot(only_state)
    seen = [agent.state.get(), agent.system_prompt, len(agent.messages)]
    Snapshot = snapshot_class(name)
    agent.load_snapshot(Snapshot(scope="agent", schema_version="1.0", app_data={},
                                 data={"system_prompt": "a plain string", "messages": []}))
    seen += [agent.system_prompt, agent.messages]
    return seen


def test_only_the_fields_a_snapshot_holds_are_restored() -> None:
    theirs = partial_loads("strands")
    assert partial_loads("statehitl") == theirs
    assert theirs == [{"k": "before"}, "first prompt", 4, "a plain string", []]


def branching(name: str) -> list[Any]:
    agent = agent_on(name, ["It was a dark night.", "Formally, ...", "So, like, ..."],
                     system_prompt="You are a creative writer")
    agent("Write the opening paragraph of a mystery novel")
    branch_point = agent.take_snapshot(preset="session")
    agent("Continue in a formal, academic tone")
    formal = agent.take_snapshot(preset="session")
    agent.load_snapshot(branch_point)
    agent("Continue in a casual, conversational tone")
    casual = agent.take_snapshot(preset="session")
    return [conversation(formal.data["messages"]), conversation(casual.data["messages"])]


def test_two_branches_from_one_snapshot() -> None:
    theirs = branching("strands")
    assert branching("statehitl") == theirs
    assert theirs[0][:2] == theirs[1][:2]
    assert theirs[0][3] != theirs[1][3]


def test_app_data_and_messages_are_copies_not_the_agents_own() -> None:
    agent = agent_on("statehitl", ["ok"])
    agent("Hello!")
    app_data = {"nested": {"n": 1}}
    snapshot = agent.take_snapshot(preset="session", app_data=app_data)
    app_data["nested"]["n"] = 2
    snapshot.data["messages"][0]["content"][0]["text"] = "edited"
    assert snapshot.app_data == {"nested": {"n": 1}}
    assert agent.messages[0]["content"][0]["text"] == "Hello!"


def test_a_refused_snapshot_leaves_the_agent_as_it_was() -> None:
    agent = agent_on("statehitl", ["ok"], system_prompt="keep me")
    agent("Hello!")
    agent.state.set("k", 1)
    bad = statehitl.Snapshot(scope="agent", schema_version="1.0", app_data={},
                             data={"messages": [], "system_prompt": "new", "state": {"k": 2},
                                   "conversation_manager_state": {"__name__": "SomethingElse"}})
    with pytest.raises(statehitl.types.exceptions.SnapshotException, match="Invalid conversation manager state"):
        agent.load_snapshot(bad)
    assert (len(agent.messages), agent.system_prompt, agent.state.get()) == (2, "keep me", {"k": 1})
    wrong_type = statehitl.Snapshot(scope="agent", schema_version="1.0", app_data={},
                                    data={"messages": "not a list", "state": {"k": 3}})
    with pytest.raises(statehitl.types.exceptions.SnapshotException, match="messages"):
        agent.load_snapshot(wrong_type)
    assert agent.state.get() == {"k": 1}
