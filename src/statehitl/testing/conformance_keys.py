"""The kit's tests of keys and prefixes that could escape a store: each is refused before the store is touched."""

from __future__ import annotations

import pytest

from statehitl.checkpoint.storage import ABSENT, Storage
from statehitl.errors import InvalidThreadIdError
from statehitl.testing.conformance_base import ConformanceBase

BAD_KEY_SUFFIXES: tuple[str, ...] = (
    "..",
    "a/..",
    "a/../b",
    "./a",
    "a/./b",
    ".hidden",
    "a/.hidden",
    "a//b",
    "a/",
    "a\\b",
    "a\\..\\b",
    "a b",
    "a\nb",
    "a\x00b",
    "caf\u00e9",
)
"""Unsafe keys, appended to the test's own prefix so a backend that wrongly accepts one stays inside it."""

BAD_ROOT_KEYS: tuple[str, ...] = ("", "/", "/etc/passwd", "../escape", "..\\escape", "\\abs", ".", "..")
"""Unsafe keys on their own: empty, absolute, and climbing out of the store's root."""

BAD_PREFIX_SUFFIXES: tuple[str, ...] = ("../", "..", "a/../", "a//", "./", ".h", "a/.", "\\", "a\\", "a b")
"""Prefixes no valid key can start with; a store that walked them could reach outside its namespace."""

BAD_ROOT_PREFIXES: tuple[str, ...] = ("/", "/etc", "../", "..", ".", "\\")
"""Root-level unsafe prefixes. Only ``list`` is tried with these: a broken ``delete`` must not be given
a prefix that could reach files outside the store."""


def _ids(suffixes: tuple[str, ...]) -> list[str]:
    """Readable test ids (pytest escapes control characters itself); the empty string gets a name."""
    return [s or "<empty>" for s in suffixes]


class KeySafetyContract(ConformanceBase):
    """Unsafe keys and prefixes raise ``InvalidThreadIdError`` and leave nothing behind."""

    # -- key validation -------------------------------------------------------------------------

    def _check_key_refused(self, storage: Storage, key: str, prefix: str) -> None:
        async def scenario() -> None:
            with pytest.raises(InvalidThreadIdError):
                await storage.read(key)
            with pytest.raises(InvalidThreadIdError):
                await storage.write(key, b"x", expect=ABSENT)
            with pytest.raises(InvalidThreadIdError):
                await storage.write(key, b"x", expect="some-token")
            with pytest.raises(InvalidThreadIdError):
                await storage.write(key, b"x", expect=ABSENT, durable=False)
            assert await storage.list(prefix) == [], f"refused key {key!r} still left something behind"

        self.run(scenario())

    @pytest.mark.parametrize("suffix", BAD_KEY_SUFFIXES, ids=_ids(BAD_KEY_SUFFIXES))
    def test_unsafe_key_is_refused(self, storage: Storage, prefix: str, suffix: str) -> None:
        self._check_key_refused(storage, prefix + suffix, prefix)

    @pytest.mark.parametrize("key", BAD_ROOT_KEYS, ids=_ids(BAD_ROOT_KEYS))
    def test_unsafe_root_key_is_refused(self, storage: Storage, prefix: str, key: str) -> None:
        self._check_key_refused(storage, key, prefix)

    @pytest.mark.parametrize("suffix", BAD_PREFIX_SUFFIXES, ids=_ids(BAD_PREFIX_SUFFIXES))
    def test_unsafe_prefix_is_refused(self, storage: Storage, prefix: str, suffix: str) -> None:
        async def scenario() -> None:
            await storage.write(f"{prefix}a/k", b"keep", expect=ABSENT)
            with pytest.raises(InvalidThreadIdError):
                await storage.list(prefix + suffix)
            with pytest.raises(InvalidThreadIdError):
                await storage.delete(prefix + suffix)
            assert await storage.list(prefix) == [f"{prefix}a/k"]

        self.run(scenario())

    @pytest.mark.parametrize("bad", BAD_ROOT_PREFIXES, ids=_ids(BAD_ROOT_PREFIXES))
    def test_unsafe_root_prefix_is_refused_by_list(self, storage: Storage, bad: str) -> None:
        with pytest.raises(InvalidThreadIdError):
            self.run(storage.list(bad))
