"""Semantic search's pieces: the user's embedding function behind one async interface, the texts of a value
an index embeds, and how close two vectors are.

The embedding function is always the user's: a function of a list of texts returning their vectors (sync
or async), or an object with LangChain's ``Embeddings`` methods (``embed_documents``/``embed_query``, and
their ``a``-prefixed async twins when it has them). A sync one runs in a worker thread, since it usually
waits on a network. Every vector it returns is checked to have ``dims`` numbers, so a model swapped for
another of a different size fails at the put, not as nonsense scores later.

Paths into a value (LangGraph's syntax): ``$`` the whole value; ``a.b`` nested keys; ``list[0]``,
``list[-1]``, ``list[*]`` (each element on its own); ``*`` every value of a dict or list; ``{a,b.c}`` several
fields at one level. A leaf that is text, a number or a bool is embedded as its text; a list or dict as
its JSON (sorted keys); a missing or null one not at all.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import math
from collections.abc import Mapping, Sequence
from typing import Any

from statehitl._sync import on_private_loop
from statehitl.errors import InvalidIndexError


def _is_async(fn: Any) -> bool:
    return inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(getattr(fn, "__call__", None))  # noqa: B004


class Embedder:
    """The index's ``embed``, called the same way whatever it is; vectors checked against ``dims``."""

    def __init__(self, embed: Any, dims: int) -> None:
        if isinstance(embed, str):
            raise InvalidIndexError(
                f"index embed={embed!r} names a provider; statehitl takes the embedding function itself: a "
                "function of a list of texts returning their vectors, or an Embeddings object (e.g. LangChain's "
                f"init_embeddings({embed!r}))")
        if not (callable(embed) or hasattr(embed, "embed_documents") or hasattr(embed, "aembed_documents")):
            raise InvalidIndexError(f"index embed={embed!r} cannot embed: give a function of a list of texts, or an "
                                    "object with embed_documents/embed_query (LangChain's Embeddings)")
        if not isinstance(dims, int) or isinstance(dims, bool) or dims <= 0:
            raise InvalidIndexError(f"index dims={dims!r} must be the length of a vector, a positive int")
        self.embed = embed
        self.dims = dims

    async def documents(self, texts: list[str]) -> list[list[float]]:
        """The vectors of ``texts``, in order."""
        if not texts:
            return []
        embed = self.embed
        if hasattr(embed, "aembed_documents"):
            vectors = await embed.aembed_documents(texts)
        elif hasattr(embed, "embed_documents"):
            vectors = await _off_loop(embed.embed_documents, texts)
        elif _is_async(embed):
            vectors = await embed(texts)
        else:
            vectors = await _off_loop(embed, texts)
        return self._checked(vectors, len(texts))

    async def query(self, text: str) -> list[float]:
        """The vector of a search query."""
        embed = self.embed
        if hasattr(embed, "aembed_query"):
            return self._checked([await embed.aembed_query(text)], 1)[0]
        if hasattr(embed, "embed_query"):
            return self._checked([await _off_loop(embed.embed_query, text)], 1)[0]
        return (await self.documents([text]))[0]

    def _checked(self, vectors: Any, count: int) -> list[list[float]]:
        if not isinstance(vectors, Sequence) or len(vectors) != count:
            raise InvalidIndexError(f"the embedding function returned {_shape(vectors)} for {count} text(s); it "
                                    "must return one vector per text")
        checked: list[list[float]] = []
        for vector in vectors:
            numbers = list(vector) if isinstance(vector, Sequence) or hasattr(vector, "tolist") else None
            if numbers is None or len(numbers) != self.dims or not all(_real(x) for x in numbers):
                raise InvalidIndexError(f"the embedding function returned {_shape(vector)} where the index's dims="
                                        f"{self.dims} asks for {self.dims} finite numbers per vector")
            checked.append([float(x) for x in numbers])
        return checked


def _real(x: Any) -> bool:
    """A finite number (numpy's included, which only have ``__float__``); not a bool or a text."""
    return hasattr(x, "__float__") and not isinstance(x, bool | str) and math.isfinite(float(x))


def _shape(value: Any) -> str:
    if isinstance(value, Sequence) and not isinstance(value, str):
        return f"a sequence of {len(value)}"
    return f"a {type(value).__name__}"


def tokenize_path(path: str) -> list[str]:
    """A path's steps: field names, ``[index]``/``[*]`` and ``{a,b}`` groups (brackets kept whole)."""
    steps: list[str] = []
    field = ""
    at = 0
    while at < len(path):
        char = path[at]
        if char in "[{":
            if field:
                steps.append(field)
                field = ""
            close = "]" if char == "[" else "}"
            depth, end = 0, at
            while end < len(path):
                depth += {char: 1, close: -1}.get(path[end], 0)
                end += 1
                if depth == 0:
                    break
            steps.append(path[at:end])
            at = end
            continue
        if char == ".":
            if field:
                steps.append(field)
            field = ""
        else:
            field += char
        at += 1
    if field:
        steps.append(field)
    return steps


def _leaf(value: Any) -> list[str]:
    if isinstance(value, str | int | float | bool):
        return [str(value)]
    if isinstance(value, list | dict):
        return [json.dumps(value, sort_keys=True, ensure_ascii=False)]
    return []


def _walk(value: Any, steps: list[str], at: int) -> list[str]:
    if at == len(steps):
        return _leaf(value)
    step = steps[at]
    if step.startswith("[") and step.endswith("]"):
        if not isinstance(value, list):
            return []
        if step == "[*]":
            return [text for item in value for text in _walk(item, steps, at + 1)]
        try:
            index = int(step[1:-1])
        except ValueError:
            return []
        return _walk(value[index], steps, at + 1) if -len(value) <= index < len(value) else []
    if step.startswith("{") and step.endswith("}"):
        if not isinstance(value, dict):
            return []
        return [text for field in step[1:-1].split(",") if field.strip()
                for text in _walk(value, tokenize_path(field.strip()), 0)]
    if step == "*":
        items = value.values() if isinstance(value, dict) else value if isinstance(value, list) else ()
        return [text for item in items for text in _walk(item, steps, at + 1)]
    return _walk(value[step], steps, at + 1) if isinstance(value, dict) and step in value else []


def texts_at(value: Mapping[str, Any], path: str) -> list[str]:
    """The texts an index embeds for ``path`` of a stored value (none when the path finds nothing)."""
    if path in ("", "$"):
        return [json.dumps(dict(value), sort_keys=True, ensure_ascii=False)]
    return _walk(dict(value), tokenize_path(path), 0)


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    """The cosine similarity of two vectors (0.0 when either is all zeros)."""
    norm = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    return sum(x * y for x, y in zip(a, b, strict=False)) / norm if norm else 0.0


async def _off_loop(fn: Any, arg: Any) -> Any:
    """A sync embedding function's call: in a worker thread, so a loop serving other work keeps serving it;
    inline under a sync call (``store.put`` from a sync node, a script's ``store.search``), whose private loop
    has nothing else to serve. There the hop bought nothing, and a sync store call made inside a running loop
    (its batch runs on a helper thread's loop) then waited on a second executor's thread: a sync node's
    ``store.put`` was seen to hang there, the executor's result never reaching the helper's loop."""
    if on_private_loop():
        return fn(arg)
    return await asyncio.to_thread(fn, arg)
