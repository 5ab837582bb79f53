"""Interrupt ids are stored in waiting threads and quoted by answers: their derivation must never change.

Each expected value below was computed with the derivation every stored thread used, and is pinned.
If one of these fails, a change would strand every thread waiting on an interrupt raised at that
kind of site.
"""

from __future__ import annotations

from statehitl import interrupt_ids


def test_sites_read_as_they_always_have() -> None:
    assert interrupt_ids.node("", 3, "review") == "node:3:review"
    assert interrupt_ids.before_node_hook("", 3, "review") == "hook:before_node:3:review"
    assert interrupt_ids.before_tools_hook("", 1) == "hook:before_tools:1"
    assert interrupt_ids.before_tool_hook("", 1, "t1") == "hook:before_tool:1:t1"
    assert interrupt_ids.tool_call("", 1, "t1") == "tool:1:t1"
    assert interrupt_ids.nested("node:2:clerk") == "node:2:clerk/"
    assert interrupt_ids.tool_call(interrupt_ids.nested("node:2:clerk"), 1, "t1") == "node:2:clerk/tool:1:t1"
    assert interrupt_ids.nested_call("node:2:clerk", 0) == "node:2:clerk/"
    assert interrupt_ids.nested_call("node:2:clerk", 2) == "node:2:clerk/call2/"


def test_ids_are_pinned() -> None:
    assert interrupt_ids.interrupt_id("node:3:review", "refund-approval") == "v1:963de082b0a7c1199f49ae7b"
    assert interrupt_ids.interrupt_id("hook:before_tool:1:t1", "myapp-approval") == "v1:55359b325e6e246007b5b845"
    assert interrupt_ids.interrupt_id("node:2:clerk/tool:1:t1", "confirm") == "v1:0554e8e5d948630c212f5759"
    assert interrupt_ids.interrupt_id("node:3:review", "refund-approval", "t-1") == "v2:86d9e9f6f7e499b57bfef038"


def test_ids_differ_by_site_and_name() -> None:
    ids = {interrupt_ids.interrupt_id(site, name) for site in ("node:1:a", "node:1:b", "node:2:a")
           for name in ("x", "y")}
    assert len(ids) == 6


def test_a_thread_waiting_on_a_first_derivation_id_still_resumes(tmp_path) -> None:
    """A thread left waiting by a version whose ids did not name the thread: its stored id answers it."""

    from pydantic import BaseModel

    import stored_records
    from statehitl.checkpoint import FileCheckpointer
    from statehitl.graph import END, START, NodeContext, StateGraph

    class S(BaseModel):
        answer: str = ""

    def review(state: S, ctx: NodeContext) -> dict[str, str]:
        return {"answer": ctx.interrupt("approve")}

    g = StateGraph(S)
    g.add_node("review", review)
    g.add_edge(START, "review")
    g.add_edge("review", END)
    app = g.compile(checkpointer=FileCheckpointer(tmp_path))
    waiting = app.invoke({}, thread_id="old")
    old_id = interrupt_ids.interrupt_id("node:0:review", "approve")
    assert waiting.interrupts[0].id != old_id
    for key in (stored_records.keys(tmp_path, "threads/old/")[0], "index/old/entry"):  # as the old version wrote it
        record = stored_records.read_json(tmp_path, key)
        record["interrupts"][0]["id"] = old_id
        record["schema_version"] = 1
        stored_records.rewrite_json(tmp_path, key, record)
    assert [i.id for i in app.get_state("old").interrupts] == [old_id]
    done = app.invoke([{"interruptResponse": {"interruptId": old_id, "response": "yes"}}], thread_id="old")
    assert (done.stop_reason, done.state.answer) == ("end", "yes")
