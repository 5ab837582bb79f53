"""``statehitl s3 create-bucket``: make the bucket an ``s3://`` store needs, beside ``dynamodb create-table``;
``statehitl s3 serve``: a local S3 to try it on (``statehitl.cli.local_servers``).

The backend lives in a separate distribution (``statehitl[s3]``), imported only when the command runs,
so the core CLI works without boto3 and says what to install when it is missing.
"""

from __future__ import annotations

import argparse
from typing import Any

from statehitl.cli._console import CliError, Console, url_query
from statehitl.cli.local_servers import add_s3_serve


def add_parser(commands: Any) -> None:
    """Register ``s3`` and its subcommands on the top-level subcommands."""
    parser = commands.add_parser(
        "s3",
        help="set up S3 for checkpoints, or run a local S3 to try it on (needs statehitl[s3])",
        description="Set up the S3 bucket used by s3:// checkpoint stores, or run a local S3-compatible server "
                    "(moto_server) with one.",
    )
    sub = parser.add_subparsers(dest="s3_command", metavar="{create-bucket,serve}", required=True)
    create = sub.add_parser(
        "create-bucket",
        help="create the checkpoint bucket; no-op if it is already yours",
        description="Create BUCKET in the region given (or the AWS configuration's). A bucket that exists and is "
                    "yours is left as it is; one that belongs to someone else is an error.",
    )
    create.add_argument("bucket", metavar="BUCKET")
    create.add_argument("--region", help="AWS region (default: from the AWS configuration)")
    create.add_argument("--endpoint-url", metavar="URL", help="an S3-compatible endpoint, e.g. MinIO or moto_server")
    create.add_argument("--profile", help="AWS profile for credentials")
    create.set_defaults(handler=cmd_create_bucket)
    add_s3_serve(sub)


def cmd_create_bucket(args: argparse.Namespace, console: Console) -> int:
    try:
        from statehitl_checkpoint_s3.bucket import create_bucket
    except ImportError:
        from statehitl.checkpoint.url import install_hint

        raise CliError(f"the s3 command needs the S3 backend; {install_hint('s3')}") from None
    created = create_bucket(args.bucket, region_name=args.region, endpoint_url=args.endpoint_url,
                            profile_name=args.profile)
    state = "created" if created else "already exists (and is yours)"
    query = url_query(region=args.region, endpoint_url=args.endpoint_url, profile=args.profile)
    console.print(f"bucket {args.bucket!r} {state}; use it as s3://{args.bucket}/PREFIX{query}")
    return 0
