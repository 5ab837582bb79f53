"""``statehitl.experimental``: Strands' experimental features that statehitl has (``checkpoint``).

Strands' other experimental modules (agents from configuration files, bidirectional streaming,
steering) are not here, and importing them fails as it does for any feature statehitl lacks.
"""

from __future__ import annotations

__all__: list[str] = []
