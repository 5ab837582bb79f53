from pydantic import BaseModel

from statehitl.graph import END, START, StateGraph


class S(BaseModel):
    n: int = 0


def test_recorder_fixture_logs(transition_recorder):
    g = StateGraph(S)
    g.add_node("inc", lambda s: {"n": s.n + 1})
    g.add_edge(START, "inc")
    g.add_edge("inc", END)
    g.compile().invoke({"n": 1}, thread_id="t")
    assert transition_recorder.log == [
        "enter inc (step 0)",
        "exit inc: done",
        'step 1 writes {"inc":{"n":2}} next []',
        "checkpoint #0 completed step 1 next []",
    ]
