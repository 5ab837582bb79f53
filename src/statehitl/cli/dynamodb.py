"""``statehitl dynamodb create-table``: make the table the DynamoDB backend needs; ``statehitl dynamodb
local``: a local DynamoDB to try it on (``statehitl.cli.local_servers``).

The backend lives in a separate distribution (``statehitl[dynamodb]``), imported only when the
command runs, so the core CLI works without boto3 and says what to install when it is missing.
"""

from __future__ import annotations

import argparse
from typing import Any

from statehitl.cli._console import CliError, Console, url_query
from statehitl.cli.local_servers import add_dynamodb_local


def add_parser(commands: Any) -> None:
    """Register ``dynamodb`` and its subcommands on the top-level subcommands."""
    parser = commands.add_parser(
        "dynamodb",
        help="set up DynamoDB for checkpoints, or run DynamoDB Local to try it on (needs statehitl[dynamodb])",
        description="Set up the DynamoDB table used by dynamodb:// checkpoint stores, or run AWS's DynamoDB Local "
                    "with one.",
    )
    sub = parser.add_subparsers(dest="dynamodb_command", metavar="{create-table,local}", required=True)
    create = sub.add_parser(
        "create-table",
        help="create the checkpoint table (partition key pk, sort key sk); no-op if it exists",
        description="Create TABLE with the key schema statehitl needs (pk: S, sort key sk: S), wait until it "
                    "is active, and optionally turn on TTL and its stream (for statehitl worker). An existing table "
                    "with the right schema is left as it is, but for a stream --stream asks for.",
    )
    create.add_argument("table", metavar="TABLE")
    create.add_argument("--region", help="AWS region (default: from the AWS configuration)")
    create.add_argument("--endpoint-url", metavar="URL", help="a DynamoDB-compatible endpoint, e.g. DynamoDB Local")
    create.add_argument("--profile", help="AWS profile for credentials")
    create.add_argument("--billing-mode", choices=["PAY_PER_REQUEST", "PROVISIONED"], default="PAY_PER_REQUEST",
                        help="on-demand (default) or provisioned capacity")
    create.add_argument("--read-capacity", type=int, default=5, metavar="N", help="read units when PROVISIONED")
    create.add_argument("--write-capacity", type=int, default=5, metavar="N", help="write units when PROVISIONED")
    create.add_argument("--ttl-attribute", metavar="NAME",
                        help="turn on DynamoDB TTL for this attribute (pair with ?ttl_seconds= in the URL)")
    create.add_argument("--stream", action="store_true",
                        help="turn on the table's DynamoDB stream (KEYS_ONLY), which `statehitl worker` and its "
                             "Lambda handler read to resume threads as answers arrive; on an existing table "
                             "without one, it is added")
    create.set_defaults(handler=cmd_create_table)
    add_dynamodb_local(sub)


def cmd_create_table(args: argparse.Namespace, console: Console) -> int:
    try:
        from statehitl_checkpoint_dynamodb import create_table
    except ImportError:
        from statehitl.checkpoint.url import install_hint

        raise CliError(f"the dynamodb command needs the DynamoDB backend; {install_hint('dynamodb')}") from None
    created = create_table(
        {"region_name": args.region, "endpoint_url": args.endpoint_url, "profile_name": args.profile},
        args.table,
        args.billing_mode,
        args.ttl_attribute,
        read_capacity=args.read_capacity,
        write_capacity=args.write_capacity,
        stream=args.stream,
    )
    ttl = f", TTL on {args.ttl_attribute!r}" if args.ttl_attribute else ""
    ttl += ", stream on (KEYS_ONLY unless it had one)" if args.stream else ""
    state = "created" if created else "already exists"
    query = url_query(region=args.region, endpoint_url=args.endpoint_url, profile=args.profile)
    console.print(f"table {args.table!r} {state} (pk: S, sk: S{ttl}); use it as dynamodb://{args.table}{query}")
    return 0
