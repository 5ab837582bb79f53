"""What every benchmark script shares, so that each script holds only its own workloads.

- `timing`: trials, interleaved repetitions on a quiet disk, medians.
- `peers`: rows that put statehitl beside a peer framework (LangGraph, Strands), their ratio, the
  results table and its JSON, and the targets table.
- `workers`: each framework in a worker process of its own, driven command by command.
- `fsync_floor`: the least a durable write of the same bytes costs on the same disk.
- `cold_import`: how long a fresh interpreter takes to import a framework.
- `cli`: the flags every script takes, so `./dev.sh bench ARGS` can pass the same ARGS to each.
- `environment`: where a run happens (machine, versions, scratch directory and its filesystem) and writing its JSON.
- `graphs`: the graph shapes, state classes and LangGraph sqlite setup that more than one script runs.

The scripts run as `python benchmarks/bench_*.py`, which puts `benchmarks/` on `sys.path`: that is how
they import this package.
"""
