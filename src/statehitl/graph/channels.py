"""Re-export: the channel logic lives in ``statehitl.channels``, shared by graphs and the agent loop."""

from __future__ import annotations

from statehitl.channels import StateSchema, append

__all__ = ["StateSchema", "append"]
