"""Ready-made intervention handlers (Strands' ``strands.vended_interventions``): ``HumanInTheLoop``.

Strands' ``CedarAuthorization`` is not here: importing it fails as a missing feature does.
"""

from __future__ import annotations

from statehitl.vended_interventions.hitl import HumanInTheLoop

__all__ = ["HumanInTheLoop"]
