"""``statehitl threads list|show|delete`` in-process through ``main([...])``."""

from __future__ import annotations

import asyncio

import pytest
from cli_support import assert_one_line_error, latest

import stored_records

STORE = ".statehitl"


@pytest.fixture
def two_threads(cli):
    """``waiting`` stopped at the approval, ``small`` auto-approved and completed."""
    assert cli("demo", "--thread", "waiting", "--no-wait").code == 0
    assert cli("demo", "--thread", "small", "--amount", "20").code == 0


def _rows(out: str) -> dict[str, str]:
    lines = out.splitlines()
    return {line.split()[0]: line for line in lines[1:]}


def test_list_a_store_whose_directory_does_not_exist_says_so(cli, workdir):
    done = cli("threads", "list")

    assert_one_line_error(done, "no store at file://.statehitl", f"{workdir / '.statehitl'} does not exist")
    assert_one_line_error(cli("threads", "show", "t", "--store", "file://./typo"), f"{workdir / 'typo'} does not exist")
    assert not (workdir / ".statehitl").exists()
    assert not (workdir / "typo").exists()


def test_list_an_empty_store(cli, workdir):
    (workdir / ".statehitl").mkdir()
    done = cli("threads", "list")

    assert done.code == 0
    assert done.out == "no threads in file://.statehitl\n"


def test_list_one_line_per_thread_with_pending_interrupts(cli, two_threads):
    done = cli("threads", "list")

    assert done.code == 0, done.err
    header, *rows = done.out.splitlines()
    assert header.split()[:4] == ["THREAD", "STATUS", "STEP", "MACHINE"]
    assert header.endswith("WAITING ON / FAILURE")
    assert len(rows) == 2
    waiting, small = _rows(done.out)["waiting"], _rows(done.out)["small"]
    assert waiting.split()[1:4] == ["interrupted", "2", "RefundGraph"]
    assert 'refund-approval at approve: {"customer": "Ada Lovelace", "amount": 120.0' in waiting
    assert "Approve refund of $120.00 to Ada Lovelace?" in waiting
    assert small.split()[1:4] == ["completed", "3", "RefundGraph"]
    assert small.rstrip().endswith("-")
    # the columns line up
    assert header.index("WAITING ON") == waiting.index("refund-approval")


def test_list_after_resume_shows_nothing_pending(cli, two_threads):
    cli("demo", "--resume", "waiting", "--answer", "y")

    waiting = _rows(cli("threads", "list").out)["waiting"]
    assert waiting.split()[1:3] == ["completed", "4"]
    assert "refund-approval" not in waiting


def test_show_history_newest_first(cli, two_threads):
    done = cli("threads", "show", "waiting")

    assert done.code == 0, done.err
    out = done.out
    assert out.splitlines()[0].startswith("thread waiting  RefundGraph  interrupted  3 checkpoints, newest first")
    ids = [line.split()[1] for line in out.splitlines() if line.startswith("checkpoint ")]
    assert ids == ["000000000002", "000000000001", "000000000000"]
    newest = out[out.index("checkpoint 000000000002"):out.index("checkpoint 000000000001")]
    assert "step 2  interrupted" in newest
    assert "next        approve" in newest
    assert "writes" not in newest  # an interrupted step applied nothing yet
    middle = out[out.index("checkpoint 000000000001"):out.index("checkpoint 000000000000")]
    assert 'writes      assess: {"log": "assess: $120.00 is over the $50.00 auto-approval limit' in middle
    assert "interrupts  refund-approval at approve: {" in newest
    assert "[id v2:" in newest
    after_intake = out[out.index("checkpoint 000000000000"):]  # the run's first record: after its first step
    assert "step 1  executing" in after_intake
    assert "next        assess" in after_intake
    assert 'writes      intake: {"log": "intake: Ada Lovelace' in after_intake
    assert "values" not in out


def test_show_says_the_number_the_checkpoints_skip_went_to_a_claim(cli, two_threads):
    cli("demo", "--resume", "waiting", "--answer", "y")
    done = cli("threads", "show", "waiting")

    assert done.code == 0, done.err
    assert done.out.splitlines()[0].startswith(
        "thread waiting  RefundGraph  completed  5 checkpoints and 1 claim (it took the number the checkpoints skip), "
        "newest first")
    numbers = [line.split()[:2] for line in done.out.splitlines() if line.startswith(("checkpoint ", "claim "))]
    assert numbers == [["checkpoint", "000000000005"], ["checkpoint", "000000000004"], ["claim", "000000000003"],
                       ["checkpoint", "000000000002"], ["checkpoint", "000000000001"], ["checkpoint", "000000000000"]]


def test_show_with_values(cli, two_threads):
    done = cli("threads", "show", "small", "--values")

    assert done.code == 0
    assert 'values      {"customer": "Ada Lovelace", "request": "The blender arrived broken.", "amount": 20.0' \
        in done.out


def test_show_after_resume_has_the_answer_and_the_payment(cli, two_threads):
    cli("demo", "--resume", "waiting", "--answer", "y")

    out = cli("threads", "show", "waiting").out
    assert out.splitlines()[0].startswith("thread waiting  RefundGraph  completed  5 checkpoints")
    assert 'approve: {"decision": "approved"' in out
    # the number the resume's claim took is shown too, so the checkpoint ids never skip one silently
    numbers = [line.split()[1] for line in out.splitlines() if line.startswith(("checkpoint ", "claim "))]
    assert numbers == [f"{n:012d}" for n in range(len(numbers) - 1, -1, -1)]
    [claim] = [line for line in out.splitlines() if line.startswith("claim ")]
    assert "a resume by" in claim
    assert "acting on the answers to v2:" in claim


def test_delete(cli, workdir, two_threads):
    done = cli("threads", "delete", "small")

    assert done.code == 0
    # its 3 checkpoints (one after each of its 3 steps) and its index record
    assert done.out.strip() == "deleted thread small (4 records) from file://.statehitl"
    assert latest(workdir / STORE, "small") is None
    assert list(_rows(cli("threads", "list").out)) == ["waiting"]


def _shown(cli, thread: str) -> list[str]:
    """The checkpoint ids ``threads show`` lists, newest first."""
    lines = cli("threads", "show", thread).out.splitlines()
    return [line.split()[1] for line in lines if line.startswith("checkpoint ")]


def _answered(cli, thread: str) -> None:
    """A refund thread that stopped at the approval and was resumed: checkpoints 0 (the run's first), 1, 2, 4, 5
    (3: the claim)."""
    cli("demo", "--thread", thread, "--no-wait")
    assert cli("demo", "--resume", thread, "--answer", "y").code == 0
    assert _shown(cli, thread) == [f"{seq:012d}" for seq in (5, 4, 2, 1, 0)]


@pytest.mark.parametrize(("keep", "remain", "report"), [
    (1, 1, "removed 4 checkpoints and 1 claim record; 1 checkpoint remains, the newest\n"),
    (2, 2, "removed 3 checkpoints and 1 claim record; 2 checkpoints remain, the newest\n"),
    (3, 3, "removed 2 checkpoints and 1 claim record; 3 checkpoints remain, the newest\n"),
    (5, 5, "removed 0 checkpoints and 1 claim record; all 5 checkpoints remain (no more than --keep 5)\n"),
])
def test_prune_says_how_many_checkpoints_remain_and_why(cli, keep, remain, report):
    _answered(cli, "t")

    done = cli("threads", "prune", "t", "--keep", str(keep))

    assert done.code == 0, done.err
    assert done.out.startswith(f"pruned thread t: {report}")
    assert len(_shown(cli, "t")) == remain  # what show lists is what prune said


def test_show_names_the_checkpoint_a_fork_branched_from(cli, workdir):
    from statehitl.checkpoint import FileCheckpointer
    from statehitl.cli.demo import build_graph

    _answered(cli, "t")
    app = build_graph().compile(checkpointer=FileCheckpointer(workdir / STORE))
    app.invoke({"amount": 10.0}, thread_id="t", checkpoint_id="000000000001")
    records = asyncio.run(app.checkpointer.history("t"))
    first_of_fork = min((r for r in records if r.seq > 5), key=lambda r: r.seq)  # after the five of the first branch
    # checkpoint 1 stopped on the approval: record 2 says so, and is what the fork goes on from
    assert (first_of_fork.seq, first_of_fork.parent_seq) == (6, 2)

    out = cli("threads", "show", "t").out

    assert out.count("  parent ") == 1  # only where the checkpoint listed next is not the parent
    section = out[out.index("checkpoint 000000000006"):out.index("checkpoint 000000000005")]
    assert "parent      000000000002 (forked from it: the checkpoints listed between are another branch)" in section


def test_show_says_when_a_parent_was_pruned(cli):
    _answered(cli, "t")
    cli("threads", "prune", "t", "--keep", "2")

    out = cli("threads", "show", "t").out

    assert _shown(cli, "t") == ["000000000005", "000000000004"]
    assert out.count("  parent ") == 1
    assert "parent      000000000002 (pruned)" in out[out.index("checkpoint 000000000004"):]


def test_any_store_url(cli):
    store = "memory://cli-threads-test"
    cli("demo", "--thread", "m1", "--no-wait", "--store", store)

    assert "m1" in _rows(cli("threads", "list", "--store", store).out)
    assert cli("threads", "show", "m1", "--store", store).code == 0
    assert cli("threads", "delete", "m1", "--store", store).code == 0
    assert cli("threads", "list", "--store", store).out.startswith("no threads in memory://cli-threads-test")


@pytest.mark.parametrize("store", ["memory://", "memory://never-written"])
def test_an_empty_memory_store_says_why_it_is_empty(cli, store):
    done = cli("threads", "list", "--store", store)

    assert done.code == 0
    assert done.out.startswith(f"no threads in {store} (a memory:// store lives only inside the process that "
                               "made it, so a statehitl command, a process of its own, always finds it empty;")
    assert_one_line_error(cli("threads", "show", "t1", "--store", store), f"unknown thread 't1' in {store}: a "
                          "memory:// store lives only inside the process that made it")


def test_a_plain_directory_is_a_file_store(cli, workdir):
    cli("demo", "--thread", "p1", "--no-wait", "--store", "plain-dir")

    assert latest(workdir / "plain-dir", "p1").status == "interrupted"
    assert "p1" in _rows(cli("threads", "list", "--store", "plain-dir").out)


def test_an_unreadable_thread_does_not_hide_the_others(cli, workdir, two_threads):
    # list reads each thread's index record, show its checkpoints: break both for "waiting"
    stored_records.rewrite(workdir / STORE, "index/waiting/entry", b"{ truncated")
    stored_records.rewrite(workdir / STORE, "threads/waiting/999999999997", b"{ truncated")  # checkpoint 2

    done = cli("threads", "list")
    assert done.code == 0
    rows = _rows(done.out)
    assert rows["waiting"].split()[1] == "unreadable"
    assert "not valid JSON" in rows["waiting"]
    assert rows["small"].split()[1] == "completed"

    shown = cli("threads", "show", "waiting")  # a broken store is a failure, not bad input: exit 1
    assert shown.code == 1
    assert len(shown.err.splitlines()) == 1
    assert "not valid JSON" in shown.err
    assert "Traceback" not in shown.err


# -- bad input --------------------------------------------------------------------------------------


@pytest.mark.parametrize("command", ["show", "delete"])
def test_unknown_thread(cli, two_threads, command):
    assert_one_line_error(cli("threads", command, "nope"), "unknown thread 'nope'", "file://.statehitl")


@pytest.mark.parametrize("command", ["show", "delete"])
def test_a_thread_id_that_would_escape_the_store(cli, command):
    assert_one_line_error(cli("threads", command, "../../etc"), "'../../etc'", "cannot escape")


@pytest.mark.parametrize("args", [["list"], ["show", "t"], ["delete", "t"]])
def test_a_store_url_with_no_backend(cli, args):
    assert_one_line_error(cli("threads", *args, "--store", "foo://bar"), "foo://", "no checkpoint backend")


def test_threads_needs_a_subcommand(cli):
    assert_one_line_error(cli("threads"), "list,show,audit,retry,delete")


def test_retry_allows_an_action_of_unknown_outcome_to_run_again_and_the_audit_says_who(cli, workdir) -> None:
    """An answered resume whose process died before recording anything: the thread refuses a second answer
    until someone allows the retry, which the audit trail keeps with the lost answer."""
    import asyncio
    import time

    from pydantic import BaseModel

    from statehitl.checkpoint import Checkpointer, FileStorage
    from statehitl.checkpoint.records import AnswerRecord
    from statehitl.errors import ActionOutcomeUnknownError
    from statehitl.graph import END, START, NodeContext, StateGraph

    ran: list[str] = []

    class Payment(BaseModel):
        paid: bool = False

    def pay(state: Payment, ctx: NodeContext) -> dict:
        if ctx.interrupt("approve", reason="pay 40?") == "y":
            ran.append(ctx.idempotency_key)
        return {"paid": True}

    g = StateGraph(Payment)
    g.add_node("pay", pay)
    g.add_edge(START, "pay")
    g.add_edge("pay", END)
    checkpointer = Checkpointer(FileStorage(workdir / ".statehitl"), lease_seconds=0.01)
    app = g.compile(checkpointer=checkpointer)
    waiting = app.invoke({}, thread_id="t").interrupts[0]

    async def died_acting() -> None:  # a resumer claimed the thread for ann's answer, then its process died
        head = await checkpointer.head("t")
        assert head is not None
        await checkpointer.claim(head, "host:1:dead", [AnswerRecord(interrupt_id=waiting.id, checkpoint_id=head.record
                                                                    .checkpoint_id, response="y", responder="ann",
                                                                    at=1.0)])

    asyncio.run(died_acting())
    time.sleep(0.02)  # its lease runs out
    answer = [{"interruptResponse": {"interruptId": waiting.id, "response": "y", "responder": "bob"}}]
    with pytest.raises(ActionOutcomeUnknownError, match="may have run"):
        app.invoke(answer, thread_id="t")
    assert ran == []
    done = cli("threads", "retry", "t", "--responder", "ops", "--comment", "no payment 40 in the ledger")
    assert done.code == 0, done.err
    assert "the retry is allowed" in done.out
    assert app.invoke(answer, thread_id="t").status.value == "completed"
    assert len(ran) == 1
    trail = cli("threads", "audit", "t").out
    assert "unknown  approve  by ann" in trail
    assert "retried  a retry allowed by ops: no payment 40 in the ledger" in trail
    assert "applied  approve  by bob" in trail
    again = cli("threads", "retry", "t")
    assert again.code != 0
    assert "no action of unknown outcome" in again.err
