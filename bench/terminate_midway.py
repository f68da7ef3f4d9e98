"""Terminate a benchmark (compiled/kfp_bench.yaml) mid-way on the local KFP API, which executes
it with kfp.local: its state, whether its exit handler ran, what it left, and what the next run's
check_params does. Run from the repository: ``.venv/bin/python bench/terminate_midway.py``; the
figures are in docs/running-in-a-cluster.md (issue 18, "Cancel still cleans")."""

import re
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository, for tests.kfp

from kfp_bench.sandbox.kfp_server import start_kfp_server  # noqa: E402
from kfp_bench.steps.compile import DEFAULT_OUT  # noqa: E402
from tests.kfp.conftest import kfp_client, remains  # noqa: E402

PACKAGE = str(DEFAULT_OUT / "kfp_bench.yaml")
FINAL = ("CANCELED", "FAILED", "SUCCEEDED")
PARAMS = {"num_runs": 3, "poll_interval_sec": 0.5, "run_load": False, "benchmark_id": "term",
          "run_timeout_sec": 120.0}  # fmt: skip


def _log(state: Path, run_id: str) -> str:
    return re.sub(r"\x1b\[[0-9;]*m", "", (state / "runs" / run_id / "log.txt").read_text())


def _final(client, run_id: str) -> str:
    while (state := client.get_run(run_id).state) not in FINAL:
        time.sleep(0.2)
    return state


def main() -> None:
    state = Path(tempfile.mkdtemp(prefix="kfp-bench-terminate-"))
    with start_kfp_server(
        simulate="auto:fixed(0.2)", max_parallel_runs=6, state_dir=str(state)
    ) as s:
        c = kfp_client(s.url)
        params = {**PARAMS, "kfp_host": s.url}
        run = c.create_run_from_pipeline_package(PACKAGE, arguments=params, experiment_name="term")
        log, t0 = state / "runs" / run.run_id / "log.txt", time.time()
        while not (log.exists() and "spawn-runs" in log.read_text()):
            assert time.time() - t0 < 120, "spawn-runs never started"
            time.sleep(0.2)
        t_term = time.time()
        print(f"spawn-runs seen at {t_term - t0:.1f}s; terminating")
        c.terminate_run(run.run_id)
        print(f"state {_final(c, run.run_id)} after {time.time() - t_term:.1f}s")
        time.sleep(2)
        text = _log(state, run.run_id)
        print("exit handler ran:", "benchmark ended" in text)
        bid = re.search(r"benchmark id (\S+)", text).group(1)
        print("benchmark id", bid, "left:", remains(s.url, bid))
        exps = c.list_experiments(page_size=100).experiments or []
        print(
            "leases left:", [e.display_name for e in exps if "kfp-bench-lease-" in e.display_name]
        )
        holder = re.search(r"pipeline run (\S+)\)", text)
        print("lease holder's run id:", holder and holder.group(1), "server's:", run.run_id)
        nxt = c.create_run_from_pipeline_package(
            PACKAGE, arguments={**params, "num_runs": 1}, experiment_name="term"
        )
        print("next run:", _final(c, nxt.run_id))
        for line in _log(state, nxt.run_id).splitlines():
            if "lease" in line and any(
                w in line for w in ("took over", "holds the", "taken until")
            ):
                print("  ", line.strip()[:400])
        print("left of the first after the next:", remains(s.url, bid))


if __name__ == "__main__":
    main()
