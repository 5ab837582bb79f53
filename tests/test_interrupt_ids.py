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
    assert interrupt_ids.tool("", 1, "t1") == "tool:1:t1"
    assert interrupt_ids.nested("node:2:clerk") == "node:2:clerk/"
    assert interrupt_ids.tool(interrupt_ids.nested("node:2:clerk"), 1, "t1") == "node:2:clerk/tool:1:t1"


def test_ids_are_pinned() -> None:
    assert interrupt_ids.interrupt_id("node:3:review", "refund-approval") == "v1:963de082b0a7c1199f49ae7b"
    assert interrupt_ids.interrupt_id("hook:before_tool:1:t1", "myapp-approval") == "v1:55359b325e6e246007b5b845"
    assert interrupt_ids.interrupt_id("node:2:clerk/tool:1:t1", "confirm") == "v1:0554e8e5d948630c212f5759"


def test_ids_differ_by_site_and_name() -> None:
    ids = {interrupt_ids.interrupt_id(site, name) for site in ("node:1:a", "node:1:b", "node:2:a")
           for name in ("x", "y")}
    assert len(ids) == 6
