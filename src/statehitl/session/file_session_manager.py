"""``statehitl.session.file_session_manager``: Strands' path to ``FileSessionManager``.

Sessions as files on the local disk; the class is ``statehitl.session.manager.FileSessionManager``.
"""

from __future__ import annotations

from statehitl.session.manager import FileSessionManager

__all__ = ["FileSessionManager"]
