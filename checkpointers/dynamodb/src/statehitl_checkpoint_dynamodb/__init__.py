"""DynamoDB checkpoint storage for statehitl: one table, conditional puts, large values split.

``Checkpointer.from_url("dynamodb://TABLE?region=eu-west-1")`` finds ``DynamoDBStorage`` through the
``statehitl.checkpointers`` entry point; ``create_table`` (or ``statehitl dynamodb create-table``) makes
the table it needs. Importing this package does not import boto3; the first request does.
"""

from statehitl_checkpoint_dynamodb.errors import (
    REQUIRED_ACTIONS,
    DynamoDBAccessDeniedError,
    DynamoDBConfigError,
    DynamoDBError,
    DynamoDBTableNotFoundError,
    DynamoDBThrottledError,
    DynamoDBUnavailableError,
)
from statehitl_checkpoint_dynamodb.storage import DynamoDBStorage
from statehitl_checkpoint_dynamodb.table import create_table

__all__ = [
    "REQUIRED_ACTIONS",
    "DynamoDBAccessDeniedError",
    "DynamoDBConfigError",
    "DynamoDBError",
    "DynamoDBStorage",
    "DynamoDBTableNotFoundError",
    "DynamoDBThrottledError",
    "DynamoDBUnavailableError",
    "create_table",
]
