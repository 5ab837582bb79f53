"""FileStorage: create-once and compare-and-set writes, listing, deleting, and what lands on disk.

The generic contract is also run by the conformance kit (test_storage_conformance.py); these tests
pin what is particular to files: the layout, atomic publishing, temp files, and the root boundary.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from statehitl.checkpoint import ABSENT, FileStorage, Storage
from statehitl.errors import CheckpointConflict, InvalidThreadIdError


def run(coro: Any) -> Any:
    return asyncio.run(coro)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return tmp_path / "store"


@pytest.fixture
def storage(root: Path) -> FileStorage:
    return FileStorage(root)


def test_it_is_a_storage(storage: FileStorage) -> None:
    assert isinstance(storage, Storage)
    assert repr(storage) == f"FileStorage({str(storage.root)!r})"


def test_key_is_a_path_below_the_root_holding_the_exact_bytes(storage: FileStorage, root: Path) -> None:
    token = run(storage.write("threads/t/cp/000000000000", b'{"x": 1}', expect=ABSENT))
    assert (root / "threads" / "t" / "cp" / "000000000000").read_bytes() == b'{"x": 1}'
    assert run(storage.read("threads/t/cp/000000000000")) == (b'{"x": 1}', token)
    assert run(storage.read("threads/t/cp/missing")) is None
    assert run(storage.read("nothing/here")) is None


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


def test_writes_leave_no_temp_files_and_listing_ignores_hidden_ones(storage: FileStorage, root: Path) -> None:
    v1 = run(storage.write("t/k", b"1", expect=ABSENT))
    run(storage.write("t/k", b"2", expect=v1))
    run(storage.write("t/fast", b"3", expect=ABSENT, durable=False))
    leftovers = [p.name for p in root.rglob(".tmp-*")]
    assert leftovers == []
    # what a crash mid-write leaves behind, and other internal files, are never keys
    (root / "t" / ".tmp-deadbeef").write_bytes(b"half a rec")
    (root / ".hidden-dir").mkdir()
    (root / ".hidden-dir" / "file").write_bytes(b"x")
    assert run(storage.list("")) == ["t/fast", "t/k"]
    assert run(storage.list("t/")) == ["t/fast", "t/k"]
    assert run(storage.read("t/fast"))[0] == b"3"


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
    assert (tmp_path / "deep" / "er" / "k").is_file()


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
