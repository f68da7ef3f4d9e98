"""One executed run, in a process of its own: kfp.local's SubprocessRunner on a stored spec.

The server starts ``python -m kfp_bench.sandbox.kfp_server._runner --spec S --params P --root R
--log L --python ENV_PYTHON`` in a new session (so terminating the run kills its whole process
group, components included). The orchestrator is the server's kfp (2.17), which runs loaded YAML
pipelines with ParallelFor, conditions and exit handlers; each task's command runs under
``ENV_PYTHON``, the isolated environment of ``envs.py``, never under the server's interpreter
(kfp.local substitutes ``sys.executable`` for the ``python3`` of a component's command).

Events go to stdout as JSON lines, one per change, for the server to apply as they happen::

    {"event": "task_start", "task": "add-numbers", "time": 1764486183.42}
    {"event": "task_end", "task": "add-numbers", "time": ..., "state": "SUCCEEDED"}
    {"event": "end", "time": ..., "state": "SUCCEEDED" | "FAILED", "error": "..."}

Everything kfp.local and the components print goes to the log file instead.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
import traceback
import types

from kfp_bench.sandbox.process import watch_parent

# Imports inside functions: kfp is imported once main has sent this process's output to the run's
# log (what the import prints lands there) and set the run's TMPDIR.


def _emitter(stream):
    def emit(event: str, **fields) -> None:
        stream.write(json.dumps({"event": event, "time": time.time(), **fields}) + "\n")
        stream.flush()

    return emit


def _trace_tasks(emit) -> None:
    """Emit task_start / task_end around each task kfp.local dispatches.

    kfp.local reports tasks only in its log; its orchestrator calls
    ``task_dispatcher.run_single_task_implementation`` through the module, so wrapping that
    function sees every task (ParallelFor iterations included) with its real start and end.
    """
    from kfp.local import status, task_dispatcher

    original = task_dispatcher.run_single_task_implementation

    def traced(*args, **kwargs):
        component = kwargs.get("component_name") or (args[1] if len(args) > 1 else "task")
        task = component.removeprefix("comp-")
        emit("task_start", task=task)
        try:
            outputs, task_status = original(*args, **kwargs)
        except BaseException as e:
            emit("task_end", task=task, state="FAILED", error=str(e)[:500])
            raise
        ok = task_status == status.Status.SUCCESS
        emit("task_end", task=task, state="SUCCEEDED" if ok else "FAILED")
        return outputs, task_status

    task_dispatcher.run_single_task_implementation = traced


def _job_id_is(run_id: str) -> None:
    """Make ``run_id`` the pipeline's job id (``dsl.PIPELINE_JOB_ID_PLACEHOLDER``), as KFP's
    driver makes it the run's id (backend/src/v2/driver/resolve.go: ``{{$.pipeline_job_uuid}}``
    is ``opts.RunID``, at 7b70c7b95f); kfp.local draws a random one. Only the orchestrator's
    draw, the pipeline's id, is replaced: the tasks' own ids stay random."""

    from kfp.local import pipeline_orchestrator, placeholder_utils

    own = types.SimpleNamespace(**vars(placeholder_utils))
    own.make_random_id = lambda: run_id
    pipeline_orchestrator.placeholder_utils = own


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--spec", required=True, help="the pipeline package (YAML) to run")
    parser.add_argument("--params", default="{}", help="the run's parameters, as JSON")
    parser.add_argument("--root", required=True, help="pipeline_root: a directory of this run")
    parser.add_argument("--log", required=True, help="file for kfp.local's and the tasks' output")
    parser.add_argument("--python", default="", help="interpreter the tasks run under")
    parser.add_argument("--use-venv", action="store_true", help="kfp.local's own venv per task")
    parser.add_argument("--run-id", default="", help="the server's run id: the pipeline's job id")
    args = parser.parse_args(argv)

    watch_parent()

    # Our stdout carries events only; the orchestrator's and the tasks' output goes to the log.
    events = os.fdopen(os.dup(1), "w", buffering=1)
    log = open(args.log, "a", buffering=1)  # noqa: SIM115 - lives as long as the process
    os.dup2(log.fileno(), 1)
    os.dup2(log.fileno(), 2)
    sys.stdout = sys.stderr = log
    emit = _emitter(events)
    if args.python:
        # kfp.local runs each task's "python3" as sys.executable: point it at the isolated env.
        sys.executable = args.python
    # The tasks' temporary files (KFP's launcher writes each step's code to a `mktemp -d`
    # folder) in a folder of the run's, removed with it, as a pod's /tmp goes with the pod.
    tmp = tempfile.mkdtemp(prefix="kfp-bench-run-")
    os.environ["TMPDIR"] = tmp
    try:
        from kfp import components, local

        _trace_tasks(emit)
        if args.run_id:
            _job_id_is(args.run_id)
        local.init(
            runner=local.SubprocessRunner(use_venv=args.use_venv),
            pipeline_root=args.root,
            raise_on_error=True,
        )
        pipeline = components.load_component_from_file(args.spec)
        pipeline(**json.loads(args.params))
    except Exception as e:
        traceback.print_exc()
        emit("end", state="FAILED", error=f"{type(e).__name__}: {e}"[:2000])
        return 1
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    emit("end", state="SUCCEEDED")
    return 0


if __name__ == "__main__":
    sys.exit(main())
