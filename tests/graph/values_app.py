"""A StateGraph whose state, Send arguments and answers hold values JSON cannot: what the values tests run
in this process and read back in another (``main(store, thread)`` prints what it reads)."""

from __future__ import annotations

import dataclasses
import datetime
import decimal
import enum
import ipaddress
import math
import pathlib
import uuid
from typing import Any, TypedDict

from pydantic import BaseModel

from statehitl.checkpoint import Checkpointer
from statehitl.graph import END, START, StateGraph
from statehitl.types import Send, interrupt


class Color(enum.Enum):
    RED = "red"


class Inner(BaseModel):
    a: int
    extra: Any = None


@dataclasses.dataclass
class Box:
    size: float


class Kept:
    """A class of the user's own, stored only once registered (``statehitl.values.register``)."""

    def __init__(self, name: str) -> None:
        self.name = name


VALUES: dict[str, Any] = {
    "dt": datetime.datetime(2024, 1, 2, 3, 4, 5, 6, tzinfo=datetime.timezone(datetime.timedelta(hours=2))),
    "naive": datetime.datetime(2024, 1, 2, 3, 4, 5, 6), "d": datetime.date(2024, 1, 2),
    "t": datetime.time(1, 2, 3, 4), "td": datetime.timedelta(days=1, seconds=2, microseconds=3),
    "u": uuid.UUID(int=5), "dec": decimal.Decimal("1.10"), "b": b"\xff\x00 not utf-8", "s": {3, 1, 2},
    "fs": frozenset({"a", "b"}), "tup": (1, (2, 3)), "nan": math.nan, "inf": -math.inf, "c": complex(1, 2),
    "ik": {1: "one", (2, 3): "pair"}, "$t": "a key of the user's own", "path": pathlib.Path("/tmp/report.txt"),
    "pure": pathlib.PurePosixPath("a/b"), "ip4": ipaddress.ip_address("192.168.1.1"),
    "ip6": ipaddress.ip_address("2001:db8::1"), "net": ipaddress.ip_network("10.0.0.0/8"),
}


class State(TypedDict, total=False):
    anything: Any
    col: Color
    inner: Inner
    box: Box
    ratio: float
    raw: bytes
    sent: list[Any]
    answer: Any


def write(state: State) -> dict[str, Any]:
    return {"anything": VALUES, "col": Color.RED, "inner": Inner(a=1, extra=VALUES["s"]), "box": Box(0.5),
            "ratio": math.nan, "raw": VALUES["b"]}


def fan(state: State) -> list[Send]:
    return [Send("take", {"when": VALUES["dt"], "tags": VALUES["s"]})]


def take(arg: dict[str, Any]) -> dict[str, Any]:
    return {"sent": [arg]}


def ask(state: State) -> dict[str, Any]:
    return {"answer": interrupt("when?")}


def graph() -> StateGraph[Any]:
    g = StateGraph(State)
    g.add_node("write", write)
    g.add_node("take", take)
    g.add_node("ask", ask)
    g.add_edge(START, "write")
    g.add_conditional_edges("write", fan, ["take"])
    g.add_edge("take", "ask")
    g.add_edge("ask", END)
    return g


def same(a: Any, b: Any) -> bool:
    """Equal, NaN included, and of the same type all the way down."""
    if type(a) is not type(b):
        return False
    if isinstance(a, float) and math.isnan(a):
        return math.isnan(b)
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list | tuple):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, BaseModel):
        return same(a.model_dump(), b.model_dump())
    if isinstance(a, complex):
        return a == b
    return bool(a == b)


def check(values: dict[str, Any]) -> list[str]:
    """What differs from what was written (nothing, if it round-tripped)."""
    wrong = [k for k, v in VALUES.items() if not same(v, values["anything"][k])]
    wrong += [k for k, v in {"col": Color.RED, "inner": Inner(a=1, extra=VALUES["s"]), "box": Box(0.5),
                             "ratio": math.nan, "raw": VALUES["b"]}.items() if not same(v, values[k])]
    if not same(values["sent"], [{"when": VALUES["dt"], "tags": VALUES["s"]}]):
        wrong.append("sent")
    if "answer" in values and not same(values["answer"], {"at": VALUES["naive"], "ids": frozenset({1})}):
        wrong.append("answer")
    return wrong


def main(store: str, thread: str) -> None:
    """Print whether the thread was answered, and what of it differs from what was written."""
    app = graph().compile(checkpointer=Checkpointer.from_url(store))
    snapshot = app.get_state({"configurable": {"thread_id": thread}})
    print(snapshot.values.get("answer") is not None, check(snapshot.values))
