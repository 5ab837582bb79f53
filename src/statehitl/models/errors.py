"""Errors a model call raises, so an agent (or its caller) can react by meaning, not by provider.

The tree (under ``statehitl.errors.StatehitlError``)::

    ModelError                          the provider failed or refused: bad request, access, transport
     ├── ModelThrottledException        too many requests; back off and try again later
     └── ContextWindowOverflowException the conversation no longer fits the model's context window

The names are Strands' (``strands.types.exceptions``), so ``except`` clauses written for it still
catch. Each provider maps its own errors onto these and chains the original (``raise ... from``).
"""

from __future__ import annotations

from statehitl.errors import StatehitlError


class ModelError(StatehitlError):
    """A model call failed; the message names the provider, the model and what to check."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class ModelThrottledException(ModelError):
    """The provider is rate limiting this caller (Bedrock ``ThrottlingException``, HTTP 429).

    Retries inside the client have already been spent when this is raised, so retrying at once is
    unlikely to help: wait, lower the request rate, or raise the account's quota.
    """


class ContextWindowOverflowException(ModelError):
    """The request is longer than the model accepts; shorten or summarize the conversation."""
