"""How a load or LLM worker's attempt knows it is the retry of one whose pod died, so that it
saves its worker lost instead of sending its share late (kfp_bench/pipelines/meta.py retries the
workers).

Three marks, any one sufficient: Argo's attempt index (KFP backend 2.17.0 on), a start mark at
the output path (kfp.local, whose retries reuse it) and a start mark on the KFP API
(``kfp_bench.kfp.start_mark``), the one that holds on every backend.
"""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime

from kfp_bench.errors import BenchError
from kfp_bench.jsonl import write_json_atomic
from kfp_bench.steps.auth import token_auth
from kfp_bench.steps.params import BenchParams

# Imports inside functions: the steps' modules must import in the pod of any step, which
# installs only its own extra (components/_step.py): what another extra's packages back is
# imported in the function that needs it (tests/test_imports.py checks the top).

#: Argo's attempt index of a step with a retry policy (``{{retries}}``, 0 on the first), which
#: KFP's compiler puts in the executor's environment from backend 2.17.0 on (kubeflow/pipelines
#: 7b70c7b95f backend/src/v2/compiler/argocompiler/common.go:58-67, container.go:586-592).
RETRY_INDEX_ENV = "KFP_RETRY_INDEX"


def worker_started(out: str, worker: int, who: str, p: BenchParams | None = None, kind="") -> str:
    """Start load worker ``worker`` whose result goes to ``out``: "" for a first attempt, which
    may load (a mark that it started is left at ``out``, and with ``p`` and ``kind`` on the KFP
    API); else why this attempt must not load.

    The load workers' steps are retried (kfp_bench/pipelines/meta.py): an attempt after one whose
    pod died
    (OOM-killed, evicted, past its deadline) would send its share late, beside no other worker
    or beside fewer, and merge a different load into the result. It saves the reason instead, as
    the worker's error, and succeeds, so that the loop ends, aggregate names the worker lost and
    check_outcome fails the run. A retry is known by ``RETRY_INDEX_ENV`` (KFP backend 2.17.0 on),
    by the mark an earlier attempt left at ``out`` where the output path outlives an attempt
    (kfp.local's retries, kfp/local/orchestrator/task_executor.py, rerun a task with the same
    paths), or, on every backend, by its start mark on the KFP API (``_api_mark``)."""

    attempt = os.environ.get(RETRY_INDEX_ENV, "").strip()
    earlier = None
    try:
        with open(out) as f:
            earlier = json.load(f)
    except (OSError, ValueError):
        pass
    if attempt.isdigit() and int(attempt) > 0:
        why = f"its pod died and KFP retried the step (attempt {int(attempt) + 1})"
    elif isinstance(earlier, dict) and earlier.get("started"):
        why = f"its pod died after it started at {earlier['started']} and the step was retried"
    elif not (why := _api_mark(p, kind, worker, who) if p and kind and p.benchmark_id else ""):
        now = datetime.now(UTC).isoformat(timespec="seconds")
        write_json_atomic({"worker": worker, "started": now}, out)
        return ""
    why = f"{who}lost: {why}; its share of the load is not rerun late"
    print(why)
    write_json_atomic({"worker": worker, "error": why}, out)
    return why


def _api_mark(p: BenchParams, kind: str, worker: int, who: str) -> str:
    """Leave this worker's start mark on the KFP API (``kfp_bench.kfp.start_mark``): "" when
    this attempt made it, why it is a retry when it was there. An API that cannot tell leaves
    the attempt a first one, said in the log: the load is the measurement, and a retry is then
    loud only through KFP_RETRY_INDEX (docs/running-in-a-cluster.md, "When a pod dies")."""
    from kfp_bench.kfp.start_mark import claim, mark_name

    name = mark_name(p.benchmark_id, kind, worker)
    try:
        auth = token_auth(p.namespace, p.kfp_host, p.token_secret)
        retry, why = claim(p.kfp_host, auth, name)
    except BenchError as exc:
        retry, why = None, f"{type(exc).__name__}: {exc}"
    if retry is None:
        print(f"{who}WARNING: no start mark on the KFP API ({why}); loading as a first "
              "attempt: were this a retry of a dead pod, its share would be sent late")  # fmt: skip
    return why if retry else ""
