"""FileStorage: create-once and compare-and-set writes, listing, deleting, and what lands on disk.

The generic contract is also run by the conformance kit (test_storage_conformance.py); these tests
pin what is particular to files: the log layout, torn writes, corruption, compaction, the root boundary.
"""

from __future__ import annotations

import asyncio
import gc
import multiprocessing
import os
import threading
from pathlib import Path
from typing import Any

import pytest

import statehitl.checkpoint.file as file_module
import statehitl.checkpoint.file_handles as file_handles
from statehitl.checkpoint import ABSENT, FileStorage, Storage
from statehitl.checkpoint.file_log import frame, slack
from statehitl.checkpoint.file_views import PARSED_LOGS
from statehitl.errors import CheckpointConflict, CheckpointCorruptError, InvalidThreadIdError


def run(coro: Any) -> Any:
    return asyncio.run(coro)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return tmp_path / "store"


@pytest.fixture
def storage(root: Path) -> FileStorage:
    return FileStorage(root)


def other_process(root: Path) -> FileStorage:
    """The store as another process sees it: nothing this process parsed is cached (see file_views),
    no log is open for writing (see file_handles)."""
    PARSED_LOGS.clear()
    file_module._WRITERS.clear()
    return FileStorage(root)


def test_it_is_a_storage(storage: FileStorage) -> None:
    assert isinstance(storage, Storage)
    assert repr(storage) == f"FileStorage({str(storage.root)!r})"


def test_keys_of_one_directory_share_one_readable_log(storage: FileStorage, root: Path) -> None:
    token = run(storage.write("threads/t/cp/000000000000", b'{"x": 1}', expect=ABSENT))
    run(storage.write("threads/t/cp/000000000001", b'{"x": 2}', expect=ABSENT, durable=False))
    assert run(storage.read("threads/t/cp/000000000000")) == (b'{"x": 1}', token)
    assert run(storage.read("threads/t/cp/missing")) is None
    assert run(storage.read("nothing/here")) is None
    raw = (root / "threads" / "t" / "cp~log").read_bytes()
    data = raw.rstrip(b"\0")
    first, *frames = data.split(b"\n")
    assert first.startswith(b"statehitl-log v2 name-synced:1 id:")  # the first durable write synced its name
    assert frames == [b"#rec 000000000000 8 " + token.encode(), b'{"x": 1}',
                      b"#rec 000000000001 8 " + run(storage.read("threads/t/cp/000000000001"))[1].encode(),
                      b'{"x": 2}', b""]
    synced_to = int(first.rsplit(b"synced-to:", 1)[1])
    assert raw[:synced_to].endswith(b'{"x": 1}\n')  # what the durable write forced to disk, not the later one
    # the durable write grew the file by its frame and its slack of zeros; the next write went into them
    assert len(raw) == synced_to + slack(synced_to)


def _data_and_slack(log: Path) -> tuple[bytes, int]:
    """A log's frames (with its first line), and how many zero bytes follow them."""
    raw = log.read_bytes()
    data = raw.rstrip(b"\0")
    return data, len(raw) - len(data)


def test_create_once_conflicts_and_keeps_the_first_value(storage: FileStorage) -> None:
    first = run(storage.write("k", b"first", expect=ABSENT))
    with pytest.raises(CheckpointConflict, match=r"key 'k' already exists"):
        run(storage.write("k", b"second", expect=ABSENT))
    assert run(storage.read("k")) == (b"first", first)


def test_racing_creators_exactly_one_wins(storage: FileStorage) -> None:
    async def race() -> list[Any]:
        return await asyncio.gather(
            *(storage.write("race", f"writer {i}".encode(), expect=ABSENT) for i in range(8)),
            return_exceptions=True,
        )

    outcomes = run(race())
    winners = [i for i, o in enumerate(outcomes) if isinstance(o, str)]
    assert len(winners) == 1
    assert all(isinstance(o, CheckpointConflict) for o in outcomes if not isinstance(o, str))
    assert run(storage.read("race"))[0] == f"writer {winners[0]}".encode()


def test_compare_and_set_replace_with_the_version_token(storage: FileStorage) -> None:
    v1 = run(storage.write("head", b"one", expect=ABSENT))
    v2 = run(storage.write("head", b"two", expect=v1))
    assert v2 != v1
    assert run(storage.read("head")) == (b"two", v2)
    with pytest.raises(CheckpointConflict, match=r"changed since version"):
        run(storage.write("head", b"stale", expect=v1))
    with pytest.raises(CheckpointConflict):
        run(storage.write("missing", b"x", expect=v2))
    assert run(storage.read("head")) == (b"two", v2)
    assert run(storage.read("missing")) is None


def test_list_is_sorted_and_by_prefix_and_delete_removes_what_list_names(storage: FileStorage) -> None:
    for key in ("threads/b/cp/000000000001", "threads/a/cp/000000000002", "threads/a/cp/000000000001",
                "threads/ab/cp/000000000001", "other/x"):
        run(storage.write(key, b"v", expect=ABSENT))
    assert run(storage.list("threads/a/")) == ["threads/a/cp/000000000001", "threads/a/cp/000000000002"]
    assert run(storage.list("threads/a")) == ["threads/a/cp/000000000001", "threads/a/cp/000000000002",
                                              "threads/ab/cp/000000000001"]
    assert run(storage.list("")) == sorted([*run(storage.list("threads/")), "other/x"])
    assert run(storage.list("nope/")) == []
    assert run(storage.delete("threads/a/")) == 2
    assert run(storage.list("threads/")) == ["threads/ab/cp/000000000001", "threads/b/cp/000000000001"]
    assert run(storage.delete("threads/a/")) == 0


def test_listing_ignores_hidden_and_foreign_files(storage: FileStorage, root: Path) -> None:
    v1 = run(storage.write("t/k", b"1", expect=ABSENT))
    run(storage.write("t/k", b"2", expect=v1))
    run(storage.write("t/fast", b"3", expect=ABSENT, durable=False))
    assert [p.name for p in root.rglob(".tmp-*")] == []
    # what a crashed compaction leaves behind, and files that are not logs, are never keys
    (root / ".tmp-deadbeef").write_bytes(b"half a log")
    (root / ".hidden-dir").mkdir()
    (root / ".hidden-dir" / "x~log").write_bytes(b"x")
    (root / "t").mkdir()
    (root / "t" / "000000000001").write_bytes(b"{}")  # a record in the layout before logs
    assert run(storage.list("")) == ["t/fast", "t/k"]
    assert run(storage.list("t/")) == ["t/fast", "t/k"]
    assert run(storage.read("t/k"))[0] == b"2"


def test_a_write_cut_short_by_a_crash_is_ignored_then_cleared(storage: FileStorage, root: Path) -> None:
    kept = run(storage.write("t/a", b"kept", expect=ABSENT))
    log = root / "t~log"
    data, zeros = _data_and_slack(log)
    wrong_digest = frame("b", b"never forced to disk")[0].replace(b"never", b"\0\0\0\0\0")  # a lost page
    phantom = bytes(300) + frame("b", b"an older frame")[0]  # its first page lost, a later one on disk
    for torn in (b"#rec b 5 0123", b"#rec b 500 0123456789abcdef01234567\npart", wrong_digest, phantom):
        log.write_bytes(data + torn + bytes(zeros - len(torn)))
        fresh = other_process(root)
        assert run(fresh.list("t/")) == ["t/a"]
        assert run(fresh.read("t/a")) == (b"kept", kept)
        run(fresh.write("t/c", b"next", expect=ABSENT, durable=False))
        after, _ = _data_and_slack(log)
        assert after.startswith(data + b"#rec c 4 ")  # appended where the good frames end
        assert len(after) == len(data) + len(frame("c", b"next")[0])  # and nothing of the torn bytes is left
        assert run(other_process(root).list("t/")) == ["t/a", "t/c"]
        run(fresh.delete("t/c"))
        log.write_bytes(data + bytes(zeros))


@pytest.mark.parametrize("left", [b"", b"statehitl-log v2 name-", b"statehitl-log v2 name-synced:0 id:0123"])
def test_a_log_whose_first_line_a_crash_cut_short_is_started_anew(root: Path, left: bytes) -> None:
    log = root / "t~log"
    root.mkdir()
    log.write_bytes(left)  # created, and killed before (or while) writing its first line
    storage = FileStorage(root)
    assert run(storage.list("t/")) == []
    token = run(storage.write("t/a", b"first", expect=ABSENT))
    assert log.read_bytes().startswith(b"statehitl-log v2 name-synced:1 id:")
    assert run(FileStorage(root).read("t/a")) == (b"first", token)


def test_damage_where_the_log_was_synced_is_corruption_not_a_torn_write(storage: FileStorage, root: Path) -> None:
    run(storage.write("t/a", b"value-one", expect=ABSENT))
    run(storage.write("t/b", b"value-two", expect=ABSENT))
    log = root / "t~log"
    damaged = log.read_bytes().replace(b"value-one", b"value-0ne")
    log.write_bytes(damaged)
    fresh = other_process(root)
    with pytest.raises(CheckpointCorruptError, match=r"t~log: the record 'a' at byte \d+ does not match its digest"):
        run(fresh.read("t/a"))
    assert run(fresh.read("t/b"))[0] == b"value-two"  # the damage stays with the damaged record
    run(fresh.write("t/c", b"x", expect=ABSENT))
    frames_before = damaged.rstrip(b"\0").split(b"\n", 1)[1]
    assert log.read_bytes().split(b"\n", 1)[1].startswith(frames_before)  # nothing was cut off
    garbage, zeros = b"#garbage\n#rec b ", b"\0\0\0\0 b "
    for broken in (damaged.replace(b"#rec b ", garbage, 1), damaged.replace(b"#rec b ", zeros, 1)):
        log.write_bytes(broken)
        with pytest.raises(CheckpointCorruptError, match=r"t~log: unreadable bytes at byte \d+"):
            run(other_process(root).read("t/b"))
    log.write_bytes(b"something else entirely\n")
    with pytest.raises(CheckpointCorruptError, match=r"is not a statehitl record log"):
        run(other_process(root).read("t/a"))
    log.write_bytes(b"statehitl-log v1 name-synced:1 id:" + b"0" * 32 + b"\n")
    with pytest.raises(CheckpointCorruptError, match=r"earlier development version of statehitl \(v1\)"):
        run(other_process(root).read("t/a"))


def test_in_place_durable_writes_note_how_far_the_log_is_on_disk(storage: FileStorage, root: Path) -> None:
    """Writes past synced-to are the ones a crash may tear; the offset only ever covers synced frames."""
    log = root / "t~log"
    run(storage.write("t/a", b"1", expect=ABSENT))
    size = log.stat().st_size
    run(storage.write("t/b", b"2", expect=ABSENT, durable=False))
    data, _ = _data_and_slack(log)
    first_line = data.split(b"\n", 1)[0]
    assert int(first_line.rsplit(b":", 1)[1]) < len(data)  # b is not covered
    run(storage.write("t/c", b"3", expect=ABSENT))
    data, _ = _data_and_slack(log)
    assert int(data.split(b"\n", 1)[0].rsplit(b":", 1)[1]) == len(data)  # c's sync covered everything
    assert log.stat().st_size == size  # both went into the zeros the first left


def test_replaced_records_are_compacted_away(storage: FileStorage, root: Path) -> None:
    version = run(storage.write("index/t/entry", b"0" * 1000, expect=ABSENT))
    run(storage.write("index/t/other", b"stays", expect=ABSENT))
    for i in range(1, 200):
        version = run(storage.write("index/t/entry", str(i).encode() * 1000, expect=version, durable=False))
    assert (root / "index" / "t~log").stat().st_size < 70 * 1024
    assert run(storage.read("index/t/entry")) == (b"199" * 1000, version)
    assert run(other_process(root).read("index/t/other"))[0] == b"stays"
    assert [p.name for p in root.rglob(".tmp-*")] == []


def test_a_log_deleted_and_made_again_is_read_afresh(storage: FileStorage, root: Path) -> None:
    """A cached view must not be applied to a new file, even one that got the old inode number."""
    import subprocess
    import sys

    run(storage.write("threads/t/1", b"first life " * 10, expect=ABSENT))
    assert run(storage.list("threads/t/")) == ["threads/t/1"]  # this process has the log parsed
    elsewhere = (
        "import asyncio, sys\n"
        "from statehitl.checkpoint import ABSENT, FileStorage\n"
        "async def main(storage):\n"
        "    assert await storage.delete('threads/t/') == 1\n"
        "    await storage.write('threads/t/2', b'second life, longer than the first ' * 10, expect=ABSENT)\n"
        "asyncio.run(main(FileStorage(sys.argv[1])))\n"
    )
    subprocess.run([sys.executable, "-c", elsewhere, str(root)], check=True, timeout=60)
    assert run(storage.list("threads/t/")) == ["threads/t/2"]
    assert run(storage.read("threads/t/1")) is None
    run(storage.write("threads/t/3", b"x", expect=ABSENT))
    assert run(other_process(root).list("threads/t/")) == ["threads/t/2", "threads/t/3"]


@pytest.mark.parametrize(
    "key", ["../x", "a/../../x", "/etc/passwd", "a//b", ".hidden", "a/.b", "a\\b", "", "a/", "a\n", "a\x00b"]
)
def test_keys_that_could_escape_are_refused_before_touching_disk(key: str, tmp_path: Path) -> None:
    storage = FileStorage(tmp_path / "store")
    with pytest.raises(InvalidThreadIdError) as err:
        run(storage.write(key, b"x", expect=ABSENT))
    assert isinstance(err.value, ValueError)
    with pytest.raises(InvalidThreadIdError):
        run(storage.read(key))
    assert not any(tmp_path.rglob("*"))


@pytest.mark.parametrize("prefix", ["../", "../../", "a/../../"])
def test_list_cannot_walk_out_of_the_root(prefix: str, tmp_path: Path) -> None:
    (tmp_path / "outside.txt").write_bytes(b"secret")
    storage = FileStorage(tmp_path / "store")
    run(storage.write("inside", b"x", expect=ABSENT))
    with pytest.raises(InvalidThreadIdError):
        run(storage.list(prefix))
    assert (tmp_path / "outside.txt").exists()


def test_root_is_created_on_first_write_and_may_start_missing(tmp_path: Path) -> None:
    storage = FileStorage(tmp_path / "deep" / "er")
    assert run(storage.list("")) == []
    run(storage.write("k", b"x", expect=ABSENT))
    assert (tmp_path / "deep" / "er" / "~log").is_file()


def test_root_expands_user_and_is_absolute(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    assert FileStorage("~/cp").root == tmp_path / "cp"
    monkeypatch.chdir(tmp_path)
    assert FileStorage("rel").root == tmp_path / "rel"


def test_durable_writes_leave_the_loop_only_when_other_work_could_use_it(tmp_path: Path, monkeypatch) -> None:
    """Under a sync call statehitl's private loop has nothing else to run: the fsync stays inline."""
    import threading

    from statehitl._sync import run_sync

    storage = FileStorage(tmp_path)
    threads: list[int] = []
    real_write = FileStorage._write

    def spy(self: FileStorage, *args: Any) -> str:
        threads.append(threading.get_ident())
        return real_write(self, *args)

    monkeypatch.setattr(FileStorage, "_write", spy)
    run_sync(storage.write("a/1", b"x", expect=ABSENT, durable=True))
    asyncio.run(storage.write("a/2", b"x", expect=ABSENT, durable=True))  # a shared loop: offloaded
    assert threads[0] == threading.get_ident()
    assert threads[1] != threading.get_ident()


PROCESS_WRITER = """
import asyncio, sys
from statehitl.checkpoint import ABSENT, FileStorage
from statehitl.errors import CheckpointConflict

async def main(root: str, me: int) -> None:
    storage = FileStorage(root)
    for i in range(40):
        await storage.write(f"shared/own-{me}-{i}", b"x" * 300, expect=ABSENT, durable=i % 10 == 0)
        while True:  # a counter every process increments: lost updates would show in its final value
            found = await storage.read("shared/counter")
            assert found is not None
            try:
                await storage.write("shared/counter", str(int(found[0]) + 1).encode() + b" " * 20_000,
                                    expect=found[1], durable=False)
                break
            except CheckpointConflict:
                continue

asyncio.run(main(sys.argv[1], int(sys.argv[2])))
"""


def test_processes_sharing_one_log_lose_nothing_across_compactions(storage: FileStorage, root: Path) -> None:
    """Four processes append to one log while the counter's rewrites keep triggering compaction."""
    import subprocess
    import sys

    run(storage.write("shared/counter", b"0", expect=ABSENT))
    writers = [subprocess.Popen([sys.executable, "-c", PROCESS_WRITER, str(root), str(me)]) for me in range(4)]
    assert [w.wait(timeout=120) for w in writers] == [0, 0, 0, 0]
    fresh = FileStorage(root)
    keys = run(fresh.list("shared/"))
    assert len(keys) == 4 * 40 + 1
    assert int(run(fresh.read("shared/counter"))[0]) == 4 * 40
    # 160 rewrites of a 20 KB counter: 3.2 MB appended, kept near the live 70 KB by compaction
    assert (root / "shared~log").stat().st_size < 300 * 1024


def test_a_delete_after_a_torn_write_leaves_a_readable_log(storage: FileStorage, root: Path) -> None:
    for name in ("a", "b"):
        run(storage.write(f"t/{name}", name.encode(), expect=ABSENT))
    log = root / "t~log"
    data, zeros = _data_and_slack(log)
    log.write_bytes(data + b"#rec c 100 0123456789abcdef01234567\nhalf of c" + bytes(zeros - 54))  # killed mid-append
    assert run(FileStorage(root).delete("t/a")) == 1
    fresh = other_process(root)
    assert run(fresh.list("t/")) == ["t/b"]
    assert run(fresh.read("t/b"))[0] == b"b"


def test_a_refused_write_to_a_new_log_leaves_no_file(storage: FileStorage, root: Path) -> None:
    run(storage.write("k", b"x", expect=ABSENT))
    before = sorted(p.relative_to(root).as_posix() for p in root.rglob("*"))
    with pytest.raises(CheckpointConflict):
        run(storage.write("t/missing", b"x", expect="some-version"))
    assert sorted(p.relative_to(root).as_posix() for p in root.rglob("*")) == before


def test_a_log_view_taken_in_at_once_or_frame_by_frame_is_the_same() -> None:
    """Views keep their names sorted two ways: bulk (a log read afresh) and one insert at a time."""
    from statehitl.checkpoint.file_log import HEADER_LEN, LogView, Member

    changes: list[tuple[str, Member | None]] = [(f"{999 - i:012d}", Member(100 + i, i + 1, f"v{i}")) for i in range(50)]
    changes += [(f"{999 - i:012d}", None) for i in range(0, 50, 7)]  # deletions
    changes += [(f"{999 - 3:012d}", Member(900, 5, "again"))]  # a replaced value
    at_once, one_by_one = LogView(b"", HEADER_LEN), LogView(b"", HEADER_LEN)
    merged: dict[str, Member | None] = {}
    for name, member in changes:
        merged.pop(name, None)  # what parse() hands over: the last word on each name
        merged[name] = member
        one_by_one.apply(one_by_one.end + 1, {name: member})
    at_once.apply(one_by_one.end, merged)
    live = {n: m for n, m in merged.items() if m is not None}
    for view in (at_once, one_by_one):
        assert view.names() == sorted(live)
        assert view.members == live
        assert view.live == sum(m.length for m in live.values())


# -- writer descriptors kept open between writes (checkpoint/file_handles.py) ---------------------


def _count_up(storage: FileStorage, key: str, times: int) -> None:
    """Compare-and-set increments: a write that two writers both got through the lock would lose one."""
    for _ in range(times):
        while True:
            found = storage._read(key)
            assert found is not None
            try:
                storage._write(key, str(int(found[0]) + 1).encode(), found[1], False)
                break
            except CheckpointConflict:
                continue


def _open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def test_threads_sharing_one_kept_descriptor_lose_no_update(storage: FileStorage) -> None:
    """flock does not exclude threads of one process (they share the descriptor): the per-log lock does."""
    run(storage.write("shared/counter", b"0", expect=ABSENT))
    threads = [threading.Thread(target=_count_up, args=(storage, "shared/counter", 150)) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert int(run(FileStorage(storage.root).read("shared/counter"))[0]) == 4 * 150


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_forked_child_does_not_share_the_parents_log_locks(storage: FileStorage) -> None:
    """A child forked while the parent keeps the log open must not inherit its open file description,
    whose flock the two would then both hold at once."""
    run(storage.write("shared/counter", b"0", expect=ABSENT))  # the parent now keeps the log open
    context = multiprocessing.get_context("fork")
    child = context.Process(target=_count_up, args=(storage, "shared/counter", 300))
    child.start()
    _count_up(storage, "shared/counter", 300)
    child.join(timeout=120)
    assert child.exitcode == 0
    assert int(run(storage.read("shared/counter"))[0]) == 600


def _read_one(storage: FileStorage, key: str) -> None:
    assert run(storage.read(key)) is not None


def test_a_child_forked_while_a_thread_holds_the_parsed_logs_lock_can_read(storage: FileStorage) -> None:
    run(storage.write("t/a", b"1", expect=ABSENT))
    with PARSED_LOGS.lock:  # as a thread of the parent taking in frames at the moment of the fork
        child = multiprocessing.get_context("fork").Process(target=_read_one, args=(storage, "t/a"))
        child.start()
        child.join(timeout=60)
    if child.is_alive():
        child.kill()
    assert child.exitcode == 0


def test_kept_descriptors_are_bounded_and_shared_by_every_store_of_the_process(
        root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A server builds a store per request: the next request's store writes on the descriptor the last
    one kept, and however many logs are written, at most the capacity stay open."""
    gc.collect()
    file_module._WRITERS.clear()
    before = _open_fds()
    storage = FileStorage(root)
    for i in range(3 * 64):
        run(storage.write(f"t{i}/k", b"v", expect=ABSENT, durable=False))
    assert _open_fds() - before == 64
    assert [run(storage.read(f"t{i}/k"))[0] for i in range(3 * 64)] == [b"v"] * (3 * 64)
    del storage
    gc.collect()
    assert _open_fds() - before == 64  # kept past the store, for the next one
    opened_to_write: list[str] = []
    real_open = os.open

    def open_noting_writers(path: str, flags: int, *args: Any) -> int:
        if flags & os.O_RDWR:
            opened_to_write.append(str(path))
        return real_open(path, flags, *args)

    monkeypatch.setattr(os, "open", open_noting_writers)
    last = f"t{3 * 64 - 1}/k"  # the most recently written log, so still kept
    next_request = FileStorage(root)
    run(next_request.write(last, b"w", expect=run(next_request.read(last))[1]))
    assert opened_to_write == []
    assert run(next_request.read(last))[0] == b"w"
    monkeypatch.undo()
    file_module._WRITERS.clear()
    assert _open_fds() == before


@pytest.mark.parametrize("told_by", ["proc", "stat"])
def test_a_kept_descriptor_follows_the_log_to_its_new_file(storage: FileStorage, root: Path, told_by: str,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """Another process deleting the log or compacting it replaces the file this one has open; told by
    ``/proc/self/fd`` on Linux, by ``stat`` where there is no ``/proc``."""
    if told_by == "stat":
        monkeypatch.setattr(file_handles, "_proc_name", lambda fd: None)
        file_module._WRITERS.clear()
    run(storage.write("a/x", b"1", expect=ABSENT))
    (root / "a~log").unlink()  # as a delete elsewhere would
    run(storage.write("a/y", b"2", expect=ABSENT))
    assert run(other_process(root).list("a/")) == ["a/y"]
    os.replace(root / "a~log", root / "moved")  # as a compaction elsewhere would: a new file under the name
    (root / "a~log").write_bytes((root / "moved").read_bytes())
    run(storage.write("a/z", b"3", expect=ABSENT))
    assert run(other_process(root).list("a/")) == ["a/y", "a/z"]
    assert (root / "moved").read_bytes().count(b"#rec") == 1  # nothing went to the file no longer named


def test_a_descriptor_whose_file_went_before_it_was_kept_is_not_trusted(root: Path) -> None:
    """Opened, then removed before ``/proc`` was asked its name: the name it shows then is the removed
    file's, which must not count as still denoting it."""
    root.mkdir()
    path = root / "a~log"
    path.write_bytes(b"")
    fd = os.open(path, os.O_RDWR)
    try:
        path.unlink()
        assert not file_handles._Handle(fd).names(str(path))
        path.write_bytes(b"")
        assert not file_handles._Handle(fd).names(str(path))  # a new file under the name is not it either
    finally:
        os.close(fd)


def test_a_write_to_a_kept_log_reads_no_file_attributes(storage: FileStorage, monkeypatch: pytest.MonkeyPatch) -> None:
    """No ``stat`` or ``fstat`` of a log between its durable writes: on Linux 6.x ext4 each one read
    makes the next ``fdatasync`` commit the inode too (see file_handles). Reads take none either."""
    run(storage.write("a/x", b"1", expect=ABSENT))  # opens the log (one fstat, before its first write)
    asked: list[object] = []
    for name in ("stat", "fstat", "lstat"):
        real = getattr(os, name)
        monkeypatch.setattr(os, name, lambda *args, _real=real, **kwargs: asked.append(args) or _real(*args, **kwargs))
    for n in range(5):
        run(storage.write(f"a/y{n}", b"2", expect=ABSENT))
        assert run(storage.read(f"a/y{n}")) is not None
    assert run(storage.list("a/")) == ["a/x", *(f"a/y{n}" for n in range(5))]
    assert asked == []


def test_storages_of_one_process_share_what_they_parsed(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A server that builds a FileStorage per request parses a long log once, not once per request."""
    import statehitl.checkpoint.file as file_module
    from statehitl.checkpoint.file_log import HEADER_LEN

    first = FileStorage(root)
    for i in range(50):
        run(first.write(f"t/{i:03d}", b"x" * 100, expect=ABSENT, durable=i == 49))
    data_end = len(_data_and_slack(root / "t~log")[0])
    parsed_from: list[int] = []
    parse = file_module.parse
    monkeypatch.setattr(file_module, "parse", lambda *args: parsed_from.append(args[2]) or parse(*args))

    assert run(FileStorage(root).read("t/049")) == run(first.read("t/049"))
    assert parsed_from  # the zeros after the last frame: nothing new
    assert min(parsed_from) >= data_end  # only what follows the frames was looked at
    run(FileStorage(root).write("t/050", b"y", expect=ABSENT))
    assert run(first.list("t/"))[-1] == "t/050"  # and a new frame reaches every storage's view

    parsed_from.clear()
    assert len(run(other_process(root).list("t/"))) == 51
    assert parsed_from[0] == HEADER_LEN  # another process has nothing cached: it parses from the start


@pytest.mark.parametrize("names_with_file", [True, False])
def test_a_new_logs_name_is_synced_once_by_the_directory_only_where_the_file_sync_does_not(
    root: Path, monkeypatch: pytest.MonkeyPatch, names_with_file: bool
) -> None:
    import statehitl.checkpoint.file as file_module

    synced: list[str] = []
    data_syncs: list[int] = []
    fsync_dir, fdatasync = file_module.fsync_dir, file_module.fdatasync
    monkeypatch.setattr(file_module, "fsync_dir", lambda path: synced.append(str(path)) or fsync_dir(path))
    monkeypatch.setattr(file_module, "fdatasync", lambda fd: data_syncs.append(fd) or fdatasync(fd))
    asked: list[int] = []
    monkeypatch.setattr(file_module, "fsync_covers_new_name", lambda dev: asked.append(dev) or names_with_file)
    root.mkdir()  # (a new directory is always synced into its parent)
    storage = FileStorage(root)
    run(storage.write("t/a", b"1", expect=ABSENT, durable=False))  # a new log, its name not yet needed
    assert synced == []
    run(storage.write("t/b", b"2", expect=ABSENT))
    run(storage.write("t/c", b"3", expect=ABSENT))
    assert asked == [(root / "t~log").stat().st_dev]  # asked on the first durable write only
    assert synced == ([] if names_with_file else [str(root)])  # and never again: the header says so
    assert len(data_syncs) == 2
    assert (root / "t~log").read_bytes().startswith(b"statehitl-log v2 name-synced:1 id:")
    run(other_process(root).write("t/d", b"4", expect=ABSENT))
    assert len(asked) == 1  # a new process reads the flag from the header


def test_the_filesystem_of_a_device_is_read_from_mountinfo() -> None:
    from statehitl.checkpoint.file_names import filesystem_type

    mountinfo = (
        "27 1 254:0 / / rw,relatime - ext4 /dev/vda rw,discard\n"
        "30 25 0:27 / /dev/shm rw,relatime shared:5 master:1 - tmpfs tmpfs rw,size=24683584k\n"
        "41 27 8:17 /sub /mnt/with\\040space rw - xfs /dev/sdb1 rw,attr2\n"
    )
    assert filesystem_type(os.makedev(254, 0), mountinfo) == "ext4"
    assert filesystem_type(os.makedev(0, 27), mountinfo) == "tmpfs"  # optional fields before the "-"
    assert filesystem_type(os.makedev(8, 17), mountinfo) == "xfs"
    assert filesystem_type(os.makedev(9, 9), mountinfo) is None
    assert filesystem_type(os.makedev(254, 0), "") is None
