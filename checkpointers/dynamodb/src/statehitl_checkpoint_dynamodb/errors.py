"""Errors of the DynamoDB backend: each one says what to change, not just what DynamoDB answered.

Every failure a caller of ``DynamoDBStorage`` can see is one of these or a ``CheckpointConflict`` (a
lost compare-and-set, nothing else). All are statehitl's shared ``StorageError``s, so one ``except``
serves S3, DynamoDB and the file store alike, and each carries ``store`` (the table), ``operation``
(the DynamoDB action), ``code`` (DynamoDB's error code or botocore's exception name) and
``transient`` (whether the same call may succeed later); the botocore exception is chained as
``__cause__``. Each is also the shared error of its meaning, so ``except StorageUnavailableError``
and ``except DynamoDBError`` both keep working::

    StorageError (statehitl.errors)
     └── DynamoDBError                                                 any other failure (not transient)
          ├── DynamoDBConfigError (StorageConfigError, a ValueError)    a bad URL, table name, option or key schema
          ├── DynamoDBTableNotFoundError (StorageNotFoundError)         the table does not exist
          ├── DynamoDBAccessDeniedError (StorageAccessError)            credentials or IAM policy refused
          ├── DynamoDBThrottledError (StorageThrottledError)            throttled past every retry (transient)
          └── DynamoDBUnavailableError (StorageUnavailableError)        5xx, resets, timeouts past every retry
                                                                        (transient)
"""

from __future__ import annotations

from statehitl.errors import (
    StorageAccessError,
    StorageConfigError,
    StorageError,
    StorageNotFoundError,
    StorageThrottledError,
    StorageUnavailableError,
)

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


class DynamoDBError(StorageError):
    """A DynamoDB request failed in a way the checkpoint engine cannot recover from by itself.

    A ``StorageError`` since the shared error tree: ``except StorageError`` catches every backend's
    failures, and ``transient`` says whether retrying later may help (only in the subclasses that say so).
    """


class DynamoDBConfigError(DynamoDBError, StorageConfigError):
    """The backend was configured wrongly: a bad URL, table name, option, endpoint or key schema."""


class DynamoDBTableNotFoundError(DynamoDBError, StorageNotFoundError):
    """The table does not exist (in that region / at that endpoint)."""


class DynamoDBAccessDeniedError(DynamoDBError, StorageAccessError):
    """The credentials in use were refused, or may not call an action the backend needs."""


class DynamoDBThrottledError(DynamoDBError, StorageThrottledError):
    """Requests were still throttled after every retry botocore was allowed."""


class DynamoDBUnavailableError(DynamoDBError, StorageUnavailableError):
    """DynamoDB did not answer, past every retry: a 5xx (InternalServerError, ServiceUnavailable), a
    connection refused or reset, a timeout. Nothing is misconfigured; the same call may succeed later.
    When ``write`` raises it, the table was read first and did not hold the write (an attempt still in
    flight could land later: its value chunks are left for it, and swept as orphans if it never does)."""
