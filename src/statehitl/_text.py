"""How moments are written, the same in the CLI and the inbox page. Imports nothing of statehitl's,
so the CLI's ``--help`` and the inbox both take it without loading the other."""

from __future__ import annotations

import time


def when_text(moment: float) -> str:
    """``2026-12-03 14:05:09``: a moment in local time, as every listing shows it."""
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(moment))
