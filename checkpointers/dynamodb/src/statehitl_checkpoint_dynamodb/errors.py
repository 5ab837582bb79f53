"""Errors of the DynamoDB backend: each one says what to change, not just what DynamoDB answered.

All are ``CheckpointError``s, so code (and the CLI) that handles statehitl's checkpoint errors handles
these too; the original botocore exception is chained as ``__cause__``.
"""

from __future__ import annotations

from statehitl.errors import CheckpointError

__all__ = [
    "REQUIRED_ACTIONS",
    "DynamoDBAccessDeniedError",
    "DynamoDBConfigError",
    "DynamoDBError",
    "DynamoDBTableNotFoundError",
    "DynamoDBThrottledError",
]

REQUIRED_ACTIONS: tuple[str, ...] = (
    "dynamodb:GetItem",
    "dynamodb:PutItem",
    "dynamodb:DeleteItem",
    "dynamodb:Query",
    "dynamodb:Scan",
    "dynamodb:BatchGetItem",
    "dynamodb:BatchWriteItem",
)
"""The IAM actions ``DynamoDBStorage`` uses on its table (``create_table`` also needs CreateTable,
DescribeTable and UpdateTimeToLive)."""


class DynamoDBError(CheckpointError):
    """A DynamoDB request failed in a way the checkpoint engine cannot recover from."""


class DynamoDBConfigError(DynamoDBError, ValueError):
    """The backend was configured wrongly: a bad URL, table name or option."""


class DynamoDBTableNotFoundError(DynamoDBError):
    """The table does not exist (in that region / at that endpoint)."""


class DynamoDBAccessDeniedError(DynamoDBError):
    """The credentials in use may not call an action the backend needs."""


class DynamoDBThrottledError(DynamoDBError):
    """Requests were still throttled after every retry botocore was allowed."""
