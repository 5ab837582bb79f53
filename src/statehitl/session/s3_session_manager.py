"""``statehitl.session.s3_session_manager``: Strands' path to ``S3SessionManager``.

Sessions in S3; the class is ``statehitl.session.aws.S3SessionManager`` (its backend, and boto3, load
when a manager is built, not when this module is imported).
"""

from __future__ import annotations

from statehitl.session.aws import S3SessionManager

__all__ = ["S3SessionManager"]
