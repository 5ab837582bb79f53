"""The storage conformance kit: one pytest suite every ``Storage`` backend must pass.

The checkpoint engine's guarantees (exactly-once resume, no lost commit, no escape from the store) are
only as good as the four storage primitives under it, so each backend proves the same contract with
the same tests. A backend's test module subclasses ``StorageConformance`` and provides a ``storage``
fixture::

    import pytest

    from statehitl.checkpoint import FileStorage
    from statehitl.testing.conformance import StorageConformance


    class TestFileStorage(StorageConformance):
        @pytest.fixture
        def storage(self, tmp_path):
            return FileStorage(tmp_path)

The contract, as the tests pin it down:

- ``read(key)`` is ``(bytes, token)`` or None. The token returned by ``write`` is the one ``read`` then
  reports. Tokens are opaque; they may be derived from the content (S3 ETags are), so a writer must not
  rely on a token changing when the bytes did not.
- ``write(key, data, expect=ABSENT)`` creates once; ``expect=token`` replaces only the value that token
  was read from. Any other case raises ``CheckpointConflict`` and leaves the stored value as it was:
  an existing key under ``ABSENT``, a stale or made-up token, a token for a key that does not exist.
- ``list(prefix)`` is every key that starts with ``prefix`` as a plain string (not per segment:
  ``"t/a"`` matches ``"t/a/1"``, ``"t/a-1"`` and ``"t/ab"``), sorted by code point (keys are ASCII, so
  that is byte order, which is what S3 and DynamoDB return), however many keys there are (pagination).
- ``delete(prefix)`` removes exactly the keys ``list(prefix)`` names and returns how many.
- Values are opaque bytes of any length, including empty, 5 MB and every byte value.
- Keys and prefixes that could escape the store (``..``, a leading ``/``, empty segments, backslashes,
  leading dots, odd characters) raise ``InvalidThreadIdError`` before the store is touched.
- Concurrent writers, as asyncio tasks or OS threads, resolve through compare-and-set alone:
  one create-once winner, no lost update.

Not required, because a file system cannot hold it: a key that is also a "directory" of other keys
(``a`` next to ``a/b``). The engine's key layout never needs it; reading such a key must say absent.

Every test works under its own unique prefix and cleans it up, so the suite also runs against a
shared bucket or table. It never writes, lists or deletes outside that prefix; the only exception
is a handful of unsafe root-level prefixes handed to ``list``, which must refuse them.

The tests are synchronous and drive the async storage through ``run`` (``asyncio.run`` by default), so
no async pytest plugin is needed; a backend whose client is bound to one event loop overrides ``run``.
It must work from any thread: the thread tests call it from worker threads.

Optional capabilities (``conformance_capabilities.CAPABILITIES``): a store that declares one, by having
its member, is held to its protocol: ``read_all``, ``version`` and ``list_versions`` give what ``list``
and ``read`` give; ``read_named`` what ``read`` gives for each key of one name; ``read_named_page`` pages
that cover those keys once, in an order that a rewrite or a deleted ``after`` does not move;
``cache_scope`` a name that stays; ``cleanup`` removes nothing a read or a listing reaches;
``change_feed()`` a new feed each time; ``keeps_records_in_process`` a bool and ``root`` a path. A store
without one skips its tests.

The rest of the contract depends on how a backend is reached and what it stores, so it is tested by
the backend's own tests next to the kit: ``from_url`` for a backend registered by URL scheme, what its
``cleanup`` removes and what its ``change_feed`` follows, and the shared ``StorageError`` subclasses
for a missing or refused store. docs/backends.md ("Write your own backend") walks through all of it
with an example.

The kit is one class assembled from one module per part of the contract: values (``conformance_values``),
listing and deleting (``conformance_listing``), concurrency (``conformance_concurrency``), unsafe keys
(``conformance_keys``) and capabilities (``conformance_capabilities``), on the shared settings and
fixtures (``conformance_base``).
"""

from __future__ import annotations

from statehitl.testing.conformance_capabilities import CapabilityContract
from statehitl.testing.conformance_concurrency import ConcurrencyContract
from statehitl.testing.conformance_keys import (
    BAD_KEY_SUFFIXES,
    BAD_PREFIX_SUFFIXES,
    BAD_ROOT_KEYS,
    BAD_ROOT_PREFIXES,
    KeySafetyContract,
)
from statehitl.testing.conformance_listing import ListingContract
from statehitl.testing.conformance_values import ValueContract

__all__ = ["BAD_KEY_SUFFIXES", "BAD_PREFIX_SUFFIXES", "BAD_ROOT_KEYS", "BAD_ROOT_PREFIXES", "StorageConformance"]


class StorageConformance(ValueContract, ListingContract, ConcurrencyContract, KeySafetyContract, CapabilityContract):
    """Subclass it as ``Test<Backend>`` and provide a ``storage`` fixture; every test is inherited.

    Class attributes size the load. A slow remote backend may lower them, but keep ``many_keys`` above
    its page size (or listing pagination goes untested) and ``concurrency`` at a few writers at least.
    """
