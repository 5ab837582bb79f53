"""The digest of a tool call, which binds an approval to the exact action it approved.

An interrupt raised about a tool call (from its ``BeforeToolCallEvent`` hook or from inside the tool)
records ``sha256`` of the canonical JSON of the tool's name and input. The digest is stored with the
interrupt and shown to the human's UI; a resume whose answer quotes another digest, or whose re-run
would run a call with another digest than the one answered, is refused. Canonical JSON (sorted keys,
no spaces, UTF-8) makes the digest the same in every process and for every equal input.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

__all__ = ["tool_call_digest"]


def tool_call_digest(name: str, input: Any) -> str:
    """``sha256:<hex>`` of the tool call ``name(input)``."""
    text = json.dumps({"input": input, "name": name}, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                      default=repr)
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()
