"""Errors of the DynamoDB backend: each one says what to change, not just what DynamoDB answered.

All are ``CheckpointError``s, so code (and the CLI) that handles statehitl's checkpoint errors handles
these too; the original botocore exception is chained as ``__cause__``. The three a deployment most
often meets are also statehitl's shared storage errors, so one ``except`` serves S3 and DynamoDB
alike, and they carry ``store`` (the table), ``operation`` (the DynamoDB action) and ``code``::

    CheckpointError (statehitl.errors)
     └── DynamoDBError
          ├── DynamoDBConfigError (ValueError)                         a bad URL, table name, option or key schema
          ├── DynamoDBTableNotFoundError (StorageNotFoundError)         the table does not exist
          ├── DynamoDBAccessDeniedError (StorageAccessError)            credentials or IAM policy refused
          └── DynamoDBThrottledError (StorageThrottledError)            throttled past every retry
"""

from __future__ import annotations

from statehitl.errors import CheckpointError, StorageAccessError, StorageNotFoundError, StorageThrottledError

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


class DynamoDBTableNotFoundError(DynamoDBError, StorageNotFoundError):
    """The table does not exist (in that region / at that endpoint)."""


class DynamoDBAccessDeniedError(DynamoDBError, StorageAccessError):
    """The credentials in use were refused, or may not call an action the backend needs."""


class DynamoDBThrottledError(DynamoDBError, StorageThrottledError):
    """Requests were still throttled after every retry botocore was allowed."""
