"""``python -m statehitl.cli``: the same as the ``statehitl`` command."""

from __future__ import annotations

from statehitl.cli import main

raise SystemExit(main())
