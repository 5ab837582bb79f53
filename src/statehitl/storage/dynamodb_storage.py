"""``DynamoDBStorage``: a ``Storage`` in one DynamoDB table (statehitl's; Strands has none).

Values are items of the table ``statehitl-checkpoint-dynamodb`` makes (``create_table``), written with
conditional puts, values over the item limit split across items: the same table can hold an agent's
snapshot sessions too. ``prefix`` keeps this store's keys apart from other users of the table.
"""

from __future__ import annotations

from typing import Any

from statehitl.checkpoint.prefixed import PrefixedStorage
from statehitl.storage._aws import backend_module, check_session_options
from statehitl.storage.blob_store import BlobStore
from statehitl.storage.keys import encode_path, normalize_prefix
from statehitl.storage.search.types import SearchStrategy


class DynamoDBStorage(BlobStore):
    """Bytes under string keys in the DynamoDB table ``table_name``, under ``prefix``.

    ``region_name`` or a ``boto_session`` (not both), and ``search_strategy``, as the S3 store takes them;
    any other keyword goes to the DynamoDB backend's store (``endpoint_url=``, ``client=``,
    ``ttl_seconds=``...).
    """

    def __init__(self, table_name: str, *, prefix: str = "", region_name: str | None = None, boto_session: Any = None,
                 search_strategy: SearchStrategy | None = None, **options: Any) -> None:
        check_session_options(region_name, boto_session, options)
        dynamodb = backend_module("DynamoDBStorage", "statehitl_checkpoint_dynamodb", "dynamodb")
        table = dynamodb.DynamoDBStorage(table_name, session=boto_session, region_name=region_name, **options)
        key_prefix = encode_path(normalize_prefix(prefix).rstrip("/"))
        super().__init__(PrefixedStorage(table, key_prefix) if key_prefix else table, search_strategy=search_strategy)
        self.table_name = table_name
        self.prefix = key_prefix
