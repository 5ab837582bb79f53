"""The web page and its JSON API a page at a time (``?limit=N&cursor=C``): the same pages as
``inbox.pending_page``, a link (or ``next_cursor``) to the next, and a bad query refused with 400."""

from __future__ import annotations

import asyncio
import html
import re
from typing import Any

from aiohttp.test_utils import TestClient, TestServer

from paging_program import leave_waiting
from statehitl import inbox
from statehitl.checkpoint.engine import Checkpointer
from statehitl.inbox.web import make_app

THREADS = [f"job-{i}" for i in range(5)]


def client_run(store: str, check: Any) -> None:
    async def go() -> None:
        async with TestClient(TestServer(make_app(store))) as client:
            await check(client)

    asyncio.run(go())


def test_the_api_pages_as_the_library_does(store: str) -> None:
    leave_waiting(Checkpointer.from_url(store), THREADS, twice={"job-1"})
    wanted = [[p.id for p in inbox.pending_page(store, limit=4).items]]
    cursor = inbox.pending_page(store, limit=4).next_cursor
    wanted.append([p.id for p in inbox.pending_page(store, limit=4, cursor=cursor).items])

    async def check(client: TestClient[Any, Any]) -> None:
        first = await (await client.get("/api/pending", params={"limit": "4"})).json()
        assert [item["id"] for item in first["items"]] == wanted[0]
        second = await (await client.get("/api/pending", params={"limit": "4", "cursor": first["next_cursor"]})).json()
        assert [item["id"] for item in second["items"]] == wanted[1]
        assert second["next_cursor"] is None
        whole = await (await client.get("/api/pending")).json()
        assert isinstance(whole, list)
        assert len(whole) == 6
        for params, why in [({"limit": "0"}, "limit= must be a whole number"), ({"limit": "x"}, "not 'x'"),
                            ({"cursor": first["next_cursor"]}, "give the limit= it was made with too"),
                            ({"limit": "4", "cursor": "nonsense"}, "page cursor refused")]:
            refused = await client.get("/api/pending", params=params)
            assert refused.status == 400
            assert why in (await refused.json())["error"]

    client_run(store, check)


def test_the_page_links_to_the_next_until_the_last(store: str) -> None:
    leave_waiting(Checkpointer.from_url(store), THREADS)

    async def check(client: TestClient[Any, Any]) -> None:
        seen: list[str] = []
        address = "/?limit=2"
        pages = 0
        while True:
            response = await client.get(address)
            assert response.status == 200
            text = await response.text()
            seen.extend(re.findall(r'<a href="thread/([^"]+)">', text))
            pages += 1
            link = re.search(r'<a id="next-page" href="([^"]+)">', text)
            if link is None:
                assert 'id="last-page"' in text
                break
            address = "/" + html.unescape(link.group(1))
        assert (seen, pages) == (THREADS, 3)
        refused = await client.get("/?limit=2&cursor=abc")
        assert refused.status == 400
        assert "page cursor refused" in await refused.text()

    client_run(store, check)
