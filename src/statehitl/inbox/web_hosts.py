"""The inbox server's rules about where it is served: which ``Host`` names it answers to, which addresses
serve this machine only, when serving elsewhere needs a token, and its cookie's name. Pure functions,
used by ``web.py`` and by ``statehitl inbox serve`` before anything is bound."""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable


def cookie_name(port: int) -> str:
    """The session cookie of the inbox on ``port``: cookies are not port-isolated, so two inboxes (or an
    inbox and another local app) on one host would otherwise overwrite each other's."""
    return f"statehitl_inbox_{port}"


def is_loopback(host: str) -> bool:
    """Whether binding ``host`` serves this machine only (``localhost``, 127.0.0.0/8, ``::1``)."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def exposure_error(host: str, token: str | bool | None, insecure_no_token: bool) -> str | None:
    """Why serving on ``host`` this way is refused (None: it is not): a non-loopback address without a
    token (``token``: the token, or whether there is one) lets anyone who reaches it read every reason
    and answer, so that takes an explicit opt-in. A proxy's identity header is no token: anyone who
    reaches the port directly can send it."""
    if not token and not is_loopback(host) and not insecure_no_token:
        return (f"--host {host} is reachable from other machines, and without a token anyone who reaches it can "
                "answer: give a token (--token-file PATH or STATEHITL_INBOX_TOKEN), or --insecure-no-token to "
                "serve it open anyway")
    return None


def allowed_host_names(names: Iterable[str]) -> frozenset[str]:
    """``names`` as the ``Host`` values they allow (lowercased); ``ValueError`` for one that is not a host
    name with an optional port (a URL, a path, a space), since it could never match."""
    allowed = set()
    for name in names:
        host = name.strip().lower()
        if not host or any(c in host for c in "/?#@ \t") or host.startswith(":"):
            raise ValueError(f"--allowed-host takes a name as the Host header carries it (inbox.example.com, "
                             f"inbox.example.com:8443), got {name!r}")
        allowed.add(host)
    return frozenset(allowed)
