"""Records that were cut, rolled back, moved or forged are refused, never read as an older or other state.

Each of these once made an answered interrupt look pending again, so that answering it ran the
approved action a second time, or made every reader loop forever.
"""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from fault_drivers import Ledger, refund_graph
from statehitl import Agent, inbox, tool
from statehitl.checkpoint import Checkpointer, FileStorage, MemoryStorage
from statehitl.checkpoint import file as file_module
from statehitl.checkpoint.answer_records import answer_key
from statehitl.checkpoint.file_log import HEADER_LEN, SYNCED_TO_OFFSET
from statehitl.checkpoint.file_views import PARSED_LOGS
from statehitl.errors import CheckpointCorruptError
from statehitl.hooks import BeforeToolCallEvent
from statehitl.inbox.answers import answer_waiting
from statehitl.models import ScriptedModel
from statehitl.session import FileSessionManager

KEY = b"k" * 32


def answer(waiting: Any, response: str = "y") -> list[dict[str, Any]]:
    return [{"interruptResponse": {"interruptId": i.id, "response": response}} for i in waiting.interrupts]


def paid_thread(directory: Path, ledger: Ledger, **options: Any) -> Any:
    """The refund graph on a file store, run to its end: interrupted, answered, paid."""
    app = refund_graph(Checkpointer(FileStorage(directory), **options), ledger)
    app.invoke(answer(app.invoke({}, thread_id="t")), thread_id="t")
    assert ledger.effects == 1
    return app


def thread_log(directory: Path) -> Path:
    return directory / "threads" / "t~log"


@pytest.mark.parametrize("cut", ["inside the newest record", "right before the newest record"])
def test_a_log_cut_below_its_synced_to_mark_is_corrupt_not_an_older_state(tmp_path: Path, cut: str) -> None:
    ledger = Ledger()
    paid_thread(tmp_path, ledger)
    log = thread_log(tmp_path)
    data = log.read_bytes()
    synced_to = int(data[SYNCED_TO_OFFSET:HEADER_LEN - 1])
    newest = data.rfind(b"#rec ", 0, synced_to)
    log.write_bytes(data[: newest + 20 if cut.startswith("inside") else newest])
    fresh = refund_graph(Checkpointer(FileStorage(tmp_path)), ledger)
    with pytest.raises(CheckpointCorruptError, match="before its synced-to mark"):
        fresh.get_state("t")
    with pytest.raises(CheckpointCorruptError, match="before its synced-to mark"):
        fresh.invoke([{"interruptResponse": {"interruptId": "v2:x", "response": "y"}}], thread_id="t")
    assert ledger.effects == 1
    assert sum(ledger.attempts.values()) == 1


def test_a_thread_restored_from_an_older_copy_behind_its_index_is_not_resumed(tmp_path: Path) -> None:
    """The thread's log restored from a backup taken while it waited; its index entry is newer. Reading it
    cannot tell (the copy is consistent), but acting on an answer again is refused, and nothing runs."""
    ledger = Ledger()
    app = refund_graph(Checkpointer(FileStorage(tmp_path)), ledger)
    waiting = app.invoke({}, thread_id="t")
    backup = tmp_path / "backup~log"
    shutil.copyfile(thread_log(tmp_path), backup)
    app.invoke(answer(waiting), thread_id="t")
    shutil.copyfile(backup, thread_log(tmp_path))
    file_module._WRITERS.clear()  # as in a process started after the restore: nothing known of the log
    PARSED_LOGS.clear()
    fresh = refund_graph(Checkpointer(FileStorage(tmp_path)), ledger)
    assert fresh.get_state("t").interrupts  # the copy reads as waiting: only its index says otherwise
    with pytest.raises(CheckpointCorruptError, match="records were lost"):
        fresh.invoke(answer(waiting), thread_id="t")
    assert sum(ledger.attempts.values()) == 1


@pytest.mark.parametrize("signed", [True, False])
def test_a_record_copied_over_another_threads_newest_is_refused_at_once(signed: bool) -> None:
    storage = MemoryStorage()
    options = {"signing_key": KEY} if signed else {}
    ledger = Ledger()
    app = refund_graph(Checkpointer(storage, **options), ledger)
    # D: paid: the interrupt (the run's first record), the resume's claim, two steps (and the answer)
    app.invoke(answer(app.invoke({}, thread_id="d")), thread_id="d")
    app.invoke({}, thread_id="c")  # C: waiting: the interrupt, its one record

    async def transplant() -> None:
        d_keys = await storage.list("threads/d/")
        [c_key] = await storage.list("threads/c/")
        found = await storage.read(c_key)
        assert found is not None
        data = (await storage.read(d_keys[0]))
        assert data is not None
        await storage.write(c_key, data[0], expect=found[1])

    asyncio.run(transplant())
    fresh = refund_graph(Checkpointer(storage, **options), ledger)
    with pytest.raises(CheckpointCorruptError, match="signature" if signed else "not the record of that place"):
        fresh.get_state("c")


def test_a_chain_that_points_at_itself_is_refused_not_followed_forever() -> None:
    storage = MemoryStorage()
    ledger = Ledger()
    app = refund_graph(Checkpointer(storage), ledger)
    app.invoke(answer(app.invoke({}, thread_id="t")), thread_id="t")

    async def loop() -> None:
        newest = (await storage.list("threads/t/"))[0]
        found = await storage.read(newest)
        assert found is not None
        record = json.loads(found[0])
        record["base_seq"] = record["parent_seq"] = record["seq"]
        await storage.write(newest, json.dumps(record).encode(), expect=found[1])

    asyncio.run(loop())
    with pytest.raises(CheckpointCorruptError, match="not the record of that place"):
        refund_graph(Checkpointer(storage), ledger).get_state("t")


def test_a_signed_inbox_answer_copied_to_another_threads_interrupt_approves_nothing() -> None:
    storage = MemoryStorage()
    checkpointer = Checkpointer(storage, signing_key=KEY)
    ledger = Ledger()
    app = refund_graph(checkpointer, ledger)
    waiting_d = app.invoke({}, thread_id="d").interrupts[0]
    waiting_c = app.invoke({}, thread_id="c").interrupts[0]
    asyncio.run(answer_waiting(checkpointer, "d", waiting_d.id, "y", responder="dora"))

    async def transplant() -> None:
        # the interrupts wait at checkpoint 0 of each thread: the run's first record
        found = await storage.read(answer_key("d", 0, waiting_d.id))
        assert found is not None
        await storage.write(answer_key("c", 0, waiting_c.id), found[0], expect="absent")

    asyncio.run(transplant())
    with pytest.raises(CheckpointCorruptError, match="signature"):
        inbox.resume_answered(refund_graph(Checkpointer(storage, signing_key=KEY), ledger), "c")
    assert ledger.effects == 0
    with pytest.raises(CheckpointCorruptError, match="signature"):  # nor shown as C's answer
        refund_graph(Checkpointer(storage, signing_key=KEY), ledger).get_state("c")


def test_an_unsigned_answer_copied_to_another_interrupt_is_refused_too() -> None:
    storage = MemoryStorage()
    checkpointer = Checkpointer(storage)
    ledger = Ledger()
    app = refund_graph(checkpointer, ledger)
    waiting_d = app.invoke({}, thread_id="d").interrupts[0]
    waiting_c = app.invoke({}, thread_id="c").interrupts[0]
    asyncio.run(answer_waiting(checkpointer, "d", waiting_d.id, "y", responder="dora"))

    async def transplant() -> None:
        # the interrupts wait at checkpoint 0 of each thread: the run's first record
        found = await storage.read(answer_key("d", 0, waiting_d.id))
        assert found is not None
        await storage.write(answer_key("c", 0, waiting_c.id), found[0], expect="absent")

    asyncio.run(transplant())
    with pytest.raises(CheckpointCorruptError, match="not to the one its key names"):
        inbox.resume_answered(refund_graph(Checkpointer(storage), ledger), "c")
    with pytest.raises(CheckpointCorruptError, match="not to the one its key names"):  # nor at the app's door
        refund_graph(Checkpointer(storage), ledger).invoke(None, thread_id="c")
    assert ledger.effects == 0


def test_a_tool_result_that_utf8_cannot_hold_is_stored_replaced_and_the_tool_ran_once(tmp_path: Path) -> None:
    """``os.listdir`` gives a file name that is not UTF-8 as lone surrogates: the result is stored with
    U+FFFD in their place and a count of them, and the answered call is not run again."""
    ran: list[str] = []

    @tool
    def list_files(path: str) -> str:
        """List a directory.

        Args:
            path: the directory
        """
        ran.append(path)
        return "report-\udcff.txt"

    def build() -> Agent:
        agent = Agent(model=ScriptedModel([{"role": "assistant", "content": [
            {"toolUse": {"toolUseId": "t1", "name": "list_files", "input": {"path": "/srv"}}}]}, "listed"]),
            tools=[list_files], callback_handler=None,
            session_manager=FileSessionManager("s", storage_dir=str(tmp_path)))
        agent.add_hook(BeforeToolCallEvent, lambda event: event.interrupt("ok", reason="list?"))
        return agent

    agent = build()
    waiting = agent("list /srv")
    done = agent(answer(waiting))
    assert done.stop_reason == "end_turn"
    assert ran == ["/srv"]
    again = build()
    assert again.messages[-2]["content"][0]["toolResult"]["content"][0]["text"] == "report-\ufffd.txt"
    stored = asyncio.run(again.checkpointer.history("s"))
    assert [r.replaced_text for r in stored if r.replaced_text] == [1]
    assert not again.interrupts
