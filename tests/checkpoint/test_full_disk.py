"""The file store on a real small disk: full part-way, over a file-size limit, remounted read-only.

A tmpfs of a few pages is mounted for the module (root can; elsewhere the tests skip, saying why). Each
case fills the disk so that a different write of an interrupt and its resume runs out of room, then
grows the disk, and drives the thread to its end as an operator would: the write that did not fit is
an error (``StorageFullError``), never a success with a record cut short, the thread goes on once
there is room, and the approved refund happened once.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import textwrap
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from pydantic import BaseModel

from fault_drivers import AgentDriver, GraphDriver, Ledger, check_outcome, drive
from statehitl.checkpoint import Checkpointer, FileStorage
from statehitl.checkpoint import file as file_module
from statehitl.errors import StorageFullError
from statehitl.graph import END, START, StateGraph
from statehitl.status import Status

PAGE = 4096


class Tmpfs:
    """A tmpfs mounted at ``path``: resizable, remountable read-only, unmounted at the end."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def mount(self, size: int) -> None:
        subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(self.path)], check=True,
                       capture_output=True)

    def remount(self, options: str) -> None:
        file_module._WRITERS.clear()  # a file system with files open for writing cannot become read-only
        subprocess.run(["mount", "-o", f"remount,{options}", str(self.path)], check=True, capture_output=True)

    def unmount(self) -> None:
        file_module._WRITERS.clear()  # the logs this process keeps open for writing would keep it busy
        done = subprocess.run(["umount", str(self.path)], check=False, capture_output=True)
        if done.returncode != 0:  # something else still holds a file: detach it now, freed when released
            subprocess.run(["umount", "-l", str(self.path)], check=True, capture_output=True)

    def free(self) -> int:
        stat = os.statvfs(self.path)
        return stat.f_bavail * stat.f_frsize

    def fill(self, leave: int) -> Path:
        """Take all the free space but ``leave`` bytes (rounded to pages) with a file of its own."""
        filler = self.path / f"filler-{uuid.uuid4().hex}"
        with open(filler, "wb") as out:
            out.write(bytes(max(0, self.free() - leave)))
        return filler


@pytest.fixture(scope="module")
def tmpfs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Tmpfs]:
    path = tmp_path_factory.mktemp("tmpfs")
    disk = Tmpfs(path)
    try:
        disk.mount(2 * 1024 * 1024)
    except (subprocess.CalledProcessError, FileNotFoundError) as exc:
        stderr = getattr(exc, "stderr", b"") or b""
        pytest.skip(f"cannot mount a tmpfs here (root and mount(8) are needed): {stderr.decode().strip() or exc}")
    try:
        yield disk
    finally:
        disk.unmount()


def _store(tmpfs: Tmpfs) -> Path:
    directory = tmpfs.path / uuid.uuid4().hex
    directory.mkdir()
    return directory


@pytest.mark.parametrize("shape", ["graph", "agent"])
def test_a_disk_that_fills_at_any_write_loses_nothing_and_doubles_nothing(tmpfs: Tmpfs, shape: str) -> None:
    full_cases = 0
    for pages in range(0, 12):
        directory = _store(tmpfs)
        filler = tmpfs.fill(leave=pages * PAGE)
        storage = FileStorage(directory)
        ledger = Ledger()
        driver = GraphDriver(storage, ledger) if shape == "graph" else AgentDriver(storage, ledger)
        story = drive(driver, Checkpointer(storage), lambda f=filler: f.unlink(missing_ok=True),
                      f"{pages} pages free")
        filler.unlink(missing_ok=True)
        full_cases += any(step.startswith("failed: ENOSPC") for step in story)
        check_outcome(driver, story, f"{pages} pages free: {story}")
    assert full_cases >= 3, "the disk never filled part-way through: the case tests too little"


class Steps(BaseModel):
    log: list[str] = []
    n: int = 0


def counting_graph(checkpointer: Checkpointer):
    g = StateGraph(Steps)
    g.add_node("step", lambda s: {"log": [*s.log, os.urandom(150).hex()], "n": s.n + 1})
    g.add_edge(START, "step")
    g.add_conditional_edges("step", lambda s: END if s.n >= 40 else "step")
    return g.compile(checkpointer=checkpointer)


def test_a_forty_step_run_that_fills_the_disk_goes_on_once_the_disk_grows(tmpfs: Tmpfs) -> None:
    directory = _store(tmpfs)
    filler = tmpfs.fill(leave=16 * PAGE)
    app = counting_graph(Checkpointer(FileStorage(directory), lease_seconds=0.01))
    with pytest.raises(StorageFullError, match="ENOSPC") as full:
        app.invoke({}, thread_id="t", durability="sync", step_limit=100)
    assert full.value.transient is False
    assert "previous checkpoint stays" in str(full.value)
    filler.unlink()  # the disk grows
    fresh = counting_graph(Checkpointer(FileStorage(directory)))
    stopped = fresh.get_state("t")
    assert stopped is not None
    assert 0 < stopped.values.n < 40  # what was durable before the disk filled
    done = fresh.invoke(None, thread_id="t", step_limit=100)
    assert done.status == Status.COMPLETED
    assert done.state.n == 40
    assert [s.values.n for s in fresh.history("t")] == sorted((s.values.n for s in fresh.history("t")), reverse=True)


def test_a_write_past_the_file_size_limit_is_an_error_and_the_thread_goes_on(tmp_path: Path) -> None:
    """``RLIMIT_FSIZE``, in a child process (the limit would bind the test runner too): the write that
    would grow the log past it fails with EFBIG (Python ignores SIGXFSZ), not a short write taken whole."""
    child = textwrap.dedent(f"""
        import resource, sys
        sys.path[:0] = [{str(Path(__file__).parent)!r}, {str(Path(__file__).parent.parent)!r}]
        from test_full_disk import counting_graph
        from statehitl.checkpoint import Checkpointer, FileStorage
        from statehitl.errors import StorageFullError
        resource.setrlimit(resource.RLIMIT_FSIZE, (24 * 1024, resource.RLIM_INFINITY))
        try:
            counting_graph(Checkpointer(FileStorage({str(tmp_path)!r}), lease_seconds=0.01)).invoke(
                {{}}, thread_id="t", durability="sync", step_limit=100)
        except StorageFullError as exc:
            print(exc.code)
            sys.exit(3)
    """)
    ran = subprocess.run([sys.executable, "-c", child], capture_output=True, text=True, timeout=120)
    assert ran.returncode == 3, ran.stderr
    assert ran.stdout.strip() == "EFBIG"
    app = counting_graph(Checkpointer(FileStorage(tmp_path)))
    assert 0 < app.get_state("t").values.n < 40
    assert app.invoke(None, thread_id="t", step_limit=100).state.n == 40


def test_a_store_remounted_read_only_refuses_writes_and_keeps_the_thread(tmpfs: Tmpfs) -> None:
    directory = _store(tmpfs)
    ledger = Ledger()
    driver = GraphDriver(FileStorage(directory), ledger)
    driver.start()
    tmpfs.remount("ro")
    try:
        _, interrupts = driver.status()
        with pytest.raises(StorageFullError, match="EROFS"):
            driver.answer(interrupts)
        assert ledger.effects == 0  # the claim could not be stored: nothing ran
    finally:
        tmpfs.remount("rw")
    story = drive(driver, Checkpointer(FileStorage(directory)), lambda: None, "after a read-only spell")
    check_outcome(driver, story, f"read-only: {story}")
    assert asyncio.run(Checkpointer(FileStorage(directory)).latest("t")).status == "completed"
