"""Which errors a node's ``RetryPolicy`` retries, as LangGraph decides: programs run on LangGraph and on statehitl.

Each program counts a failing node's attempts for errors of every kind (a bug's, an outage's, an HTTP
client's with a server's or a client's status) under each form ``retry_on`` takes, and the error that ends the
run; the counts must be LangGraph's.
"""

from __future__ import annotations

import operator
from types import SimpleNamespace
from typing import Annotated, Any, TypedDict

import pytest
from test_langgraph_parity import langgraph_names, statehitl_names


class Log(TypedDict):
    log: Annotated[list[str], operator.add]


def http_errors() -> dict[str, Exception]:
    """httpx's and requests' errors for a server's and a client's status (and requests' without a response)."""
    import httpx
    import requests

    def from_httpx(status: int) -> Exception:
        request = httpx.Request("GET", "http://service")
        return httpx.HTTPStatusError("status", request=request, response=httpx.Response(status, request=request))

    def from_requests(status: int | None) -> Exception:
        response = None
        if status is not None:
            response = requests.Response()
            response.status_code = status
        return requests.HTTPError("status", response=response)

    return {"httpx 503": from_httpx(503), "httpx 404": from_httpx(404), "requests 502": from_requests(502),
            "requests 400": from_requests(400), "requests 200": from_requests(200),
            "requests without response": from_requests(None)}


def attempts(lg: SimpleNamespace, policy: Any, error: Exception) -> tuple[int, str]:
    calls: list[int] = []

    def failing(state: Log) -> dict[str, Any]:
        calls.append(1)
        raise error

    g = lg.StateGraph(Log)
    g.add_node("failing", failing, retry_policy=policy)
    g.add_edge(lg.START, "failing")
    try:
        g.compile().invoke({"log": []})
    except Exception as exc:
        return len(calls), type(exc).__name__
    return len(calls), "finished"


def retried_errors(lg: SimpleNamespace) -> dict[str, list[tuple[str, int, str]]]:
    """The default retries an outage and a server's HTTP status, not a bug or a bad value (requests' client
    statuses too, as LangGraph reads a requests Response's truth); a class, a tuple or list of classes, an empty
    one and a predicate retry what they name; a ``retry_on`` of another kind is a ``TypeError`` once a node
    fails."""
    errors: dict[str, Exception] = {"ValueError": ValueError("v"), "ConnectionError": ConnectionError("c"),
                                    "TimeoutError": TimeoutError(), "KeyError": KeyError("k"),
                                    "OSError": OSError("o"), "custom": type("Flaky", (Exception,), {})(),
                                    **http_errors()}
    quick = {"max_attempts": 2, "initial_interval": 0.0, "jitter": False}
    policies = {"default": lg.RetryPolicy(**quick), "class": lg.RetryPolicy(**quick, retry_on=KeyError),
                "tuple": lg.RetryPolicy(**quick, retry_on=(KeyError, OSError)),
                "list": lg.RetryPolicy(**quick, retry_on=[ValueError]), "empty": lg.RetryPolicy(**quick, retry_on=()),
                "predicate": lg.RetryPolicy(**quick, retry_on=lambda exc: "Flaky" in type(exc).__name__),
                "not a policy": lg.RetryPolicy(**quick, retry_on=5)}
    return {name: [(error_name, *attempts(lg, policy, error)) for error_name, error in errors.items()]
            for name, policy in policies.items()}


PROGRAMS = [retried_errors]


@pytest.mark.parametrize("program", PROGRAMS, ids=[p.__name__ for p in PROGRAMS])
def test_the_program_sees_what_it_sees_on_langgraph(program: Any) -> None:
    assert program(statehitl_names()) == program(langgraph_names())
