"""``statehitl.models.model``: Strands' path to the model contract (``from strands.models.model import Model``).

The contract itself lives in ``statehitl.models.base``; subclass ``Model`` to add a provider.
"""

from __future__ import annotations

from statehitl.models.base import Model

__all__ = ["Model"]
