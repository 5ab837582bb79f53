"""Who is answering on the inbox page: an identity from its authentication, never from a box the user types in.

The page knows who you are in one of two ways, both chosen by the operator:

- **Tokens that name people.** A tokens file maps each token to a name and groups, one per line
  (``TOKEN NAME [GROUP,GROUP...]``; ``#`` comments and blank lines are skipped) or as JSON (a list of
  ``{"token": ..., "name": ..., "groups": [...]}``). The single token of ``--token-file`` (or
  ``$STATEHITL_INBOX_TOKEN``) is one such line: the token alone answers anonymously, as before, and
  ``TOKEN NAME GROUPS`` names who holds it.
- **A reverse proxy's header.** Behind a proxy that authenticates users (oauth2-proxy, an SSO gateway),
  ``--identity-header X-Forwarded-User`` (and ``--groups-header``, comma-separated groups) names the
  user on every request. Only honoured when asked for: the inbox cannot tell a proxy's header from one a
  client sent, so the proxy must set it on every request (replacing any a client sent), and nothing but
  the proxy may reach the inbox's port.

An anonymous identity (a token that names nobody, or no token) still gets the page's "Your name" box,
which is a label in the trail and vouches for nothing: it never satisfies an interrupt's responders.
Pure: parsing and header reading, no I/O.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from statehitl.responders import GROUP, bare_groups


@dataclass(frozen=True, slots=True)
class Identity:
    """Who a request comes from, as the inbox's authentication says: ``name`` (None: nobody known) and the
    groups they belong to."""

    name: str | None = None
    groups: tuple[str, ...] = ()

    @property
    def known(self) -> bool:
        return self.name is not None

    def describe(self) -> str:
        if self.name is None:
            return "someone this inbox does not know"
        return self.name + (f" (groups: {', '.join(self.groups)})" if self.groups else "")


ANONYMOUS = Identity()

_HEADER = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")


def header_name(value: str, option: str) -> str:
    """``value`` as an HTTP header name, or ``ValueError`` naming ``option``."""
    if not _HEADER.fullmatch(value):
        raise ValueError(f"{option} takes an HTTP header name (X-Forwarded-User), got {value!r}")
    return value


def _name(value: Any, where: str) -> str:
    if not isinstance(value, str) or not value or value != value.strip() or any(c.isspace() for c in value):
        raise ValueError(f"{where}: a name must be a non-empty string without spaces, got {value!r}")
    if value.startswith(GROUP):
        raise ValueError(f"{where}: {value!r} is a group ('{GROUP}NAME'), not a person's name")
    return value


def _groups(value: Any, where: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(g, str) for g in value):
        raise ValueError(f"{where}: groups must be a list of names, got {value!r}")
    return tuple(_name(g[len(GROUP):] if g.startswith(GROUP) else g, where) for g in (g.strip() for g in value))


def parse_token(line: str, where: str) -> tuple[str, Identity]:
    """One ``TOKEN [NAME [GROUP,GROUP...]]`` line: the token, and who holds it (anonymous without a name)."""
    fields = line.split()
    if not fields or len(fields) > 3:
        raise ValueError(f"{where}: expected 'TOKEN [NAME [GROUP,GROUP...]]', got {len(fields)} fields")
    token = fields[0]
    if len(fields) == 1:
        return token, ANONYMOUS
    groups = _groups(fields[2].split(","), where) if len(fields) == 3 else ()
    return token, Identity(_name(fields[1], where), groups)


def parse_tokens(text: str, where: str) -> dict[str, Identity]:
    """A tokens file's content: token -> identity. ``ValueError`` naming ``where`` (and the line) for a
    malformed entry, a repeated token, or a file that holds none."""
    found: list[tuple[str, Identity, str]] = []
    if text.lstrip().startswith("["):
        try:
            entries = json.loads(text)
        except ValueError as exc:
            raise ValueError(f"{where} is not valid JSON: {exc}") from None
        for n, entry in enumerate(entries, 1):
            at = f"{where}, entry {n}"
            if not isinstance(entry, dict) or not set(entry) <= {"token", "name", "groups"} or "token" not in entry:
                raise ValueError(f"{at}: expected {{\"token\": ..., \"name\": ..., \"groups\": [...]}}, got {entry!r}")
            token = entry["token"]
            if not isinstance(token, str) or not token or any(c.isspace() for c in token):
                raise ValueError(f"{at}: a token must be a non-empty string without spaces")
            name = entry.get("name")
            identity = ANONYMOUS if name is None else Identity(_name(name, at), _groups(entry.get("groups", []), at))
            found.append((token, identity, at))
    else:
        for n, line in enumerate(text.splitlines(), 1):
            if line.strip() and not line.lstrip().startswith("#"):
                at = f"{where}, line {n}"
                found.append((*parse_token(line, at), at))
    tokens: dict[str, Identity] = {}
    for token, identity, at in found:
        if token in tokens:
            raise ValueError(f"{at}: this token is given twice; each token names one holder")
        tokens[token] = identity
    if not tokens:
        raise ValueError(f"{where} holds no token")
    return tokens


def from_headers(headers: Mapping[str, str], identity_header: str, groups_header: str | None) -> Identity | None:
    """The identity a reverse proxy put in the request's headers (None: it named nobody)."""
    name = headers.get(identity_header, "").strip()
    if not name:
        return None
    raw = headers.get(groups_header, "") if groups_header is not None else ""
    return Identity(name, bare_groups(g.strip() for g in raw.split(",") if g.strip()))
