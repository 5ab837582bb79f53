"""Checkpointers from URLs: built-in schemes, plugins found by entry point, and a clear missing-plugin error."""

from __future__ import annotations

import asyncio
import re
from importlib.metadata import entry_points
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from pydantic import BaseModel

from statehitl._echo import echo
from statehitl._install import install_command
from statehitl.checkpoint import (
    ABSENT,
    Checkpointer,
    FileStorage,
    MemoryStorage,
    validate_thread_id,
)
from statehitl.checkpoint.url import UnknownSchemeError, storage_from_url
from statehitl.errors import CheckpointerNotFoundError, InvalidThreadIdError, StorageConfigError
from statehitl.graph import END, START, StateGraph


class S(BaseModel):
    n: int = 0


def test_file_url_with_an_absolute_path(tmp_path: Path) -> None:
    checkpointer = Checkpointer.from_url(f"file://{tmp_path}/cp")
    assert isinstance(checkpointer, Checkpointer)
    assert isinstance(checkpointer.storage, FileStorage)
    assert checkpointer.storage.root == tmp_path / "cp"


def test_file_url_with_a_relative_path_and_a_plain_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert storage_from_url("file://.statehitl").root == tmp_path / ".statehitl"
    assert storage_from_url("plain/dir").root == tmp_path / "plain" / "dir"
    assert storage_from_url("dir").root == tmp_path / "dir"
    assert storage_from_url("./dir").root == tmp_path / "dir"
    assert storage_from_url("~/dir").root == tmp_path / "home" / "dir"
    assert storage_from_url(f"{tmp_path}/abs").root == tmp_path / "abs"
    assert storage_from_url("dir//sub").root == tmp_path / "dir" / "sub"  # '//' after a word no backend has
    assert storage_from_url("./s3:/bucket").root == tmp_path / "s3:" / "bucket"  # what the refusals below advise
    assert storage_from_url(".").root == tmp_path


@pytest.mark.parametrize(("url", "meant"), [
    ("s3:/bucket", "did you mean s3://bucket?"),
    ("s3//bucket/prefix?region=eu-west-1", "did you mean s3://bucket/prefix?region=eu-west-1?"),
    ("s3:bucket", "did you mean s3://bucket?"),
    ("dynamodb:table", "did you mean dynamodb://table?"),
    ("dynamodb:/table", "did you mean dynamodb://table?"),
    ("memory:", "did you mean memory://?"),
    ("memory//x", "did you mean memory://x?"),
    ("S3:/bucket", "did you mean s3://bucket?"),
    ("file:/var/x", "did you mean file:///var/x (the absolute directory /var/x) or file://var/x (relative"),
    ("file:", "did you mean file://DIR?"),
    ("run:1/x", "a store URL is SCHEME://..., e.g. file://DIR, a directory path, s3://BUCKET/PREFIX"),
])
def test_a_url_with_a_mangled_separator_is_refused_not_made_a_directory(
    url: str, meant: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(StorageConfigError) as err:
        Checkpointer.from_url(url)
    message = str(err.value)
    assert f"the store URL {url!r} is not a well-formed URL" in message
    assert meant in message
    assert f"is written ./{url}" in message
    assert isinstance(err.value, ValueError)
    assert err.value.transient is False
    assert list(tmp_path.iterdir()) == []  # nothing was created where the store was misread as a path


@pytest.mark.parametrize(("url", "message"), [
    ("file://", "names no directory: use file://DIR"),
    ("file://?compress=1", "names no directory"),  # compress is the checkpointer's; nothing is left
    ("file://  ", "spaces or line breaks around it"),
    ("", "is empty: use file://DIR, a directory path, s3://BUCKET/PREFIX"),
    ("   ", "is empty"),
    ("s3://bucket\n", "spaces or line breaks around it"),
    ("file://dir?x=1", "file:// takes no options besides compress="),
    ("3d://x", "does not start with a scheme ('3d' is not one)"),
    ("a b://x", "does not start with a scheme"),
])
def test_empty_and_malformed_urls_are_refused(url: str, message: str, tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(StorageConfigError, match=re.escape(message)):
        Checkpointer.from_url(url)
    assert list(tmp_path.iterdir()) == []


def test_an_unknown_scheme_is_both_not_found_and_a_config_error_and_names_the_likely_one() -> None:
    with pytest.raises(UnknownSchemeError) as err:
        Checkpointer.from_url("dynamo://table?region=eu-west-1")
    assert isinstance(err.value, CheckpointerNotFoundError)
    assert isinstance(err.value, StorageConfigError)
    assert "did you mean dynamodb://table?region=eu-west-1?" in str(err.value)
    with pytest.raises(UnknownSchemeError, match=r"scheme names are lowercase: s3://b/p"):
        Checkpointer.from_url("S3://b/p")


def test_long_values_are_shortened_in_messages() -> None:
    thread = "x" * 10_000
    with pytest.raises(InvalidThreadIdError) as err:
        validate_thread_id(thread)
    message = str(err.value)
    assert f"thread id {'x' * 60!r}… (10000 characters) is not allowed" in message
    assert len(message) < 300
    with pytest.raises(StorageConfigError) as config:
        Checkpointer.from_url("s3:/" + "b" * 10_000)
    assert "(10004 characters)" in str(config.value)
    assert len(str(config.value)) < 1000
    with pytest.raises(UnknownSchemeError) as scheme:
        Checkpointer.from_url("q" * 5_000 + "://x")
    assert len(str(scheme.value)) < 1000
    assert echo("short") == "'short'"
    assert echo(list(range(100))).endswith("… (390 characters)")


def test_a_file_url_checkpointer_runs_a_graph(tmp_path: Path) -> None:
    g = StateGraph(S)
    g.add_node("inc", lambda s: {"n": s.n + 1})
    g.add_edge(START, "inc")
    g.add_edge("inc", END)
    g.compile(checkpointer=Checkpointer.from_url(f"file://{tmp_path}")).invoke({}, thread_id="t")
    again = g.compile(checkpointer=Checkpointer.from_url(f"file://{tmp_path}"))
    assert again.get_state("t").values == S(n=1)
    assert (tmp_path / "threads" / "t~log").is_file()


def test_memory_urls() -> None:
    fresh, other = Checkpointer.from_url("memory://"), Checkpointer.from_url("memory://")
    assert isinstance(fresh.storage, MemoryStorage)
    assert fresh.storage is not other.storage
    named = Checkpointer.from_url("memory://shared-test-store")
    assert Checkpointer.from_url("memory://shared-test-store/").storage is named.storage
    assert Checkpointer.from_url("memory://another-test-store").storage is not named.storage
    asyncio.run(named.storage.write("k", b"v", expect=ABSENT))
    assert asyncio.run(Checkpointer.from_url("memory://shared-test-store").storage.read("k"))[0] == b"v"
    asyncio.run(named.storage.delete("k"))


def test_unknown_scheme_is_a_clear_lookup_error() -> None:
    with pytest.raises(CheckpointerNotFoundError) as err:
        Checkpointer.from_url("nosuchscheme://bucket/prefix")
    assert isinstance(err.value, LookupError)
    assert "no checkpoint backend is installed for nosuchscheme:// URLs" in str(err.value)
    assert "'nosuchscheme://bucket/prefix'" in str(err.value)


@pytest.mark.parametrize("scheme", ["s3", "dynamodb"])
def test_missing_cloud_plugin_says_what_to_install(scheme: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("importlib.metadata.entry_points", lambda **kwargs: [])
    with pytest.raises(CheckpointerNotFoundError) as err:
        Checkpointer.from_url(f"{scheme}://bucket")
    assert f"install it with: {install_command(scheme)}" in str(err.value)  # tests/test_install.py: which one


class FakeStorage(MemoryStorage):
    urls: list[str] = []

    @classmethod
    def from_url(cls, url: str) -> FakeStorage:
        cls.urls.append(url)
        return cls()


def test_plugin_schemes_come_from_the_entry_point_group(monkeypatch: pytest.MonkeyPatch) -> None:
    groups: list[Any] = []

    def fake_entry_points(**kwargs: Any) -> list[Any]:
        groups.append(kwargs)
        return [SimpleNamespace(name="other", load=lambda: None),
                SimpleNamespace(name="fake", load=lambda: FakeStorage)]

    monkeypatch.setattr("importlib.metadata.entry_points", fake_entry_points)
    checkpointer = Checkpointer.from_url("fake://somewhere")
    assert isinstance(checkpointer.storage, FakeStorage)
    assert FakeStorage.urls == ["fake://somewhere"]
    assert groups == [{"group": "statehitl.checkpointers"}]


def test_built_in_backends_are_advertised_as_entry_points() -> None:
    found = {ep.name: ep.value for ep in entry_points(group="statehitl.checkpointers")}
    assert found["file"] == "statehitl.checkpoint.file:FileStorage"
    assert found["memory"] == "statehitl.checkpoint.memory:MemoryStorage"


class NoFactory(MemoryStorage):
    """A storage class registered by URL scheme that forgot ``from_url``: it has no way to read the URL."""

    from_url = None  # type: ignore[assignment]


class NotAStore:
    @classmethod
    def from_url(cls, url: str) -> NotAStore:
        return cls()


def plugins(monkeypatch: pytest.MonkeyPatch, **loaded: object) -> None:
    """Entry points for ``loaded`` (scheme -> what the entry point loads), as an installed package adds."""
    found = [SimpleNamespace(name=scheme, value=f"somepkg:{scheme}", load=lambda obj=obj: obj)
             for scheme, obj in loaded.items()]
    monkeypatch.setattr("importlib.metadata.entry_points", lambda **kwargs: found)


def test_a_plugin_without_from_url_is_a_clear_error_naming_it(monkeypatch: pytest.MonkeyPatch) -> None:
    plugins(monkeypatch, nofactory=NoFactory, function=lambda url: MemoryStorage())
    with pytest.raises(CheckpointerNotFoundError) as err:
        Checkpointer.from_url("nofactory://x")
    message = str(err.value)
    assert "the backend registered for nofactory:// URLs" in message
    assert "'somepkg:nofactory'" in message
    assert f"{__name__}.NoFactory, which has no from_url(url) classmethod" in message
    assert "Write your own backend" in message
    with pytest.raises(CheckpointerNotFoundError, match=r"\.<lambda>, which has no from_url"):
        Checkpointer.from_url("function://x")


def test_a_plugin_whose_from_url_makes_no_storage_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    plugins(monkeypatch, odd=NotAStore)
    with pytest.raises(TypeError, match=rf"{__name__}.NotAStore.from_url\('odd://x'\) returned NotAStore, "
                                        r"which is not a Storage"):
        Checkpointer.from_url("odd://x")


# -- the checkpointer's own query parameter: compress ------------------------------------------------------------


def test_compress_in_a_url_is_the_checkpointers_option_with_any_scheme(tmp_path: Path) -> None:
    on = Checkpointer.from_url(f"file://{tmp_path}/z?compress=true")
    assert on.compress is True
    assert on.storage.root == tmp_path / "z"  # type: ignore[attr-defined]
    assert Checkpointer.from_url(f"file://{tmp_path}/z?compress=0").compress is False
    assert Checkpointer.from_url(f"file://{tmp_path}/z").compress is True  # the store's default
    assert Checkpointer.from_url("memory://").compress is False
    named = Checkpointer.from_url("memory://compressed-url-store?compress=yes")
    assert named.compress is True
    assert named.storage is Checkpointer.from_url("memory://compressed-url-store").storage
    g = StateGraph(S)
    g.add_node("inc", lambda s: {"n": s.n + 1})
    g.add_edge(START, "inc")
    g.add_edge("inc", END)
    g.compile(checkpointer=on).invoke({}, thread_id="t")
    keys = asyncio.run(on.storage.list("threads/t/"))
    assert len(keys) == 1  # the step's, which also says how the run began
    for key in keys:
        stored = asyncio.run(on.storage.read(key))
        assert stored is not None
        assert stored[0].startswith(b"\x00z1")


def test_a_url_keeps_the_stores_own_parameters_byte_for_byte() -> None:
    from statehitl.checkpoint.url import checkpointer_options_of

    url = "s3://b/p?region=us-east-1&compress=1&endpoint_url=http://127.0.0.1:5000/x%20y"
    assert checkpointer_options_of(url) == (
        "s3://b/p?region=us-east-1&endpoint_url=http://127.0.0.1:5000/x%20y", {"compress": True})
    assert checkpointer_options_of("dynamodb://t?compress=off") == ("dynamodb://t", {"compress": False})
    assert checkpointer_options_of("dir?compress=true") == ("dir?compress=true", {})  # a plain path's "?" is its own
    assert checkpointer_options_of("s3://b/p?region=eu-west-1") == ("s3://b/p?region=eu-west-1", {})


@pytest.mark.parametrize(("url", "options", "message"), [
    ("memory://x?compress=maybe", {}, r"compress='maybe' in 'memory://x\?compress=maybe' is not a yes or no"),
    ("memory://x?compress=1&compress=0", {}, "compress is given 2 times"),
    ("memory://x?compress=1", {"compress": True}, "compress is given twice, in the URL and as an option"),
])
def test_a_bad_compress_in_a_url_is_named(url: str, options: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        Checkpointer.from_url(url, **options)
