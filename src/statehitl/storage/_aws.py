"""What the S3 and DynamoDB stores share: importing their backend, and the arguments Strands takes."""

from __future__ import annotations

from typing import Any

from statehitl.checkpoint.url import install_hint
from statehitl.errors import CheckpointerNotFoundError, StorageConfigError


def backend_module(store: str, module: str, scheme: str) -> Any:
    """The backend distribution ``module`` (imported now, so boto3 loads only for a store that uses it), or
    a ``CheckpointerNotFoundError`` saying what to install."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError:
        raise CheckpointerNotFoundError(f"{store} needs the {scheme} backend ({module}); {install_hint(scheme)}") \
            from None


def check_session_options(region_name: str | None, boto_session: Any, options: dict[str, Any]) -> None:
    """Refuse what Strands refuses (a region and a session: the session has its region) and a ``client=``
    beside either (a client has both already)."""
    if region_name is not None and boto_session is not None:
        raise StorageConfigError("Cannot specify both region_name and boto_session", code="InvalidOption")
    if options.get("client") is not None and (region_name is not None or boto_session is not None):
        raise StorageConfigError("pass client= alone: region_name and boto_session build a new client",
                                 code="InvalidOption")
