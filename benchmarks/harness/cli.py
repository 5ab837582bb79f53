"""The flags every benchmark script takes: `./dev.sh bench ARGS` passes the same ARGS to each."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

RESULTS_DIR = Path(__file__).resolve().parents[1] / "results"
"""Where the scripts write their JSON by default (gitignored)."""

QUICK_HELP = "few repetitions: a smoke run, not numbers to quote"


class _OnlyPeer(argparse.Action):
    """`--only` of a script whose peer is not LangGraph: `--only langgraph` names the peer, stored as its name."""

    def __init__(self, *args: Any, peer: str, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.peer = peer

    def __call__(
        self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any, option_string: Any = None
    ) -> None:
        if values == "langgraph":
            print(
                f"{Path(parser.prog).stem}: --only langgraph means the peer framework here: "
                f"measuring {self.peer.capitalize()} only",
                file=sys.stderr,
            )
            values = self.peer
        setattr(namespace, self.dest, values)


def bench_arguments(
    description: str | None, results_name: str, quick_help: str = QUICK_HELP, peer: str = "langgraph"
) -> argparse.ArgumentParser:
    """The common flags; `--out` defaults to `results_name` in benchmarks/results/.

    `peer` is the framework the script measures statehitl against. Another peer than LangGraph adds its
    name to `--only`, which still takes `langgraph` (parsed as the peer), and `--lg-durability` is
    accepted and ignored, so the same ARGS suit every script.
    """
    results_path = RESULTS_DIR / results_name
    p = argparse.ArgumentParser(description=description, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--quick", action="store_true", help=quick_help)
    if peer == "langgraph":
        p.add_argument(
            "--only",
            choices=["statehitl", "langgraph"],
            help="measure one side only (the ratio column is then n/a)",
        )
        durability_help = "override LangGraph's durability mode (default: leave LangGraph's default)"
    else:
        name = peer.capitalize()
        p.add_argument(
            "--only",
            choices=["statehitl", peer, "langgraph"],
            action=_OnlyPeer,
            peer=peer,
            help=f"measure one side only: statehitl, or {peer} (langgraph means the peer, {name}, here)",
        )
        durability_help = "accepted for ./dev.sh bench and ignored here"
    p.add_argument("--tmpdir", help="parent dir for checkpoint files (default: system temp dir)")
    p.add_argument("--out", type=Path, default=results_path, help=f"JSON output (default: {results_path})")
    p.add_argument("--lg-durability", choices=["sync", "async", "exit"], help=durability_help)
    return p
