"""The run queue: at most ``max_parallel_runs`` runs execute at once, really or simulated.

This module owns a run's life after it is created. A new run is PENDING in a FIFO queue; when a
slot frees up it is admitted, and ``report_delay`` seconds later (what the Argo workflow takes to
start and KFP's persistence agent to report it; the create answer is PENDING even at 0, as
kubeflow/pipelines 7b70c7b95f resource/resource_manager.go:764 sets it) it becomes RUNNING and
either

* executes: ``_runner.py`` runs it with kfp.local in a process of its own (new session), its
  tasks under the isolated environment of ``envs.py`` for the kfp version the manifest pins;
  task_details and the final state follow the runner's events as they arrive; or
* is simulated: a duration and an outcome drawn from ``SimulateSpec``, applied by timers (no
  process); its task_details list the root DAG's tasks, spanning the run.

Which one is ``simulate.SimulateSpec.scope`` and ``simulate.local_blocker``: ``auto`` executes
what kfp.local can run and simulates the rest. Terminate: a PENDING run becomes CANCELED at once;
a RUNNING one becomes CANCELING, its process group gets SIGTERM (SIGKILL 3 s later), then
CANCELED. The slot is held while a run's environment is made (first use of a kfp version).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import random
import shutil
import signal
import sys
import time
from collections import deque
from importlib import metadata
from pathlib import Path

from kfp_bench.sandbox.kfp_server import envs
from kfp_bench.sandbox.kfp_server.simulate import SimulateSpec, kfp_pin, local_blocker
from kfp_bench.sandbox.kfp_server.store import Run, Store, Task
from kfp_bench.sandbox.process import PARENT_ENV

_KILL_GRACE = 3.0


class Executor:
    """Queues runs and executes or simulates them, ``slots`` at a time."""

    def __init__(
        self,
        store: Store,
        *,
        slots: int,
        simulate: SimulateSpec,
        state_dir: Path,
        rng: random.Random,
        use_venv: bool = False,
        env_root: Path | None = None,
        report_delay: float = 0.0,
    ) -> None:
        self.store = store
        self.slots = slots
        self.simulate = simulate
        self.state_dir = state_dir
        self.rng = rng
        self.use_venv = use_venv
        self.env_root = env_root
        self.report_delay = report_delay
        self.pending: deque[str] = deque()
        self.active: dict[str, asyncio.Task | asyncio.TimerHandle] = {}
        self.procs: dict[str, asyncio.subprocess.Process] = {}
        self.on_finish = None  # called with each run that reaches a final state
        self._env_locks: dict[str, asyncio.Lock] = {}

    def submit(self, run: Run) -> None:
        self.pending.append(run.run_id)
        self._pump()

    def _pump(self) -> None:
        while self.pending and len(self.active) < self.slots:
            run = self.store.runs.get(self.pending.popleft())
            if run is None or run.done:
                continue  # deleted or terminated while it waited
            # The slot is held from now on; the run shows RUNNING once the agent reports it. A
            # timer in ``active`` is what terminate cancels, for this wait as for a simulation.
            loop = asyncio.get_running_loop()
            self.active[run.run_id] = loop.call_later(self.report_delay, self._start, run)

    def retry(self, run: Run) -> None:
        """Run ``run`` (FAILED or CANCELED) again from the start: back to PENDING with no finish
        time (storage/run_store.go:984-995), then queued as a new run is. Argo keeps the
        succeeded nodes of a retried workflow; here every task runs again."""
        run.set_state("PENDING")
        run.finished_at, run.error, run.tasks = None, "", []
        self.submit(run)

    def _start(self, run: Run) -> None:
        self.active.pop(run.run_id, None)  # the report timer that called us
        blocker = local_blocker(run.package.pipeline_spec)
        simulate = self.simulate.scope == "all" or (self.simulate.scope == "auto" and blocker)
        if simulate:
            run.execution = "simulated"
            run.set_state("RUNNING")
            duration, fails = self.simulate.draw(self.rng)
            loop = asyncio.get_running_loop()
            self.active[run.run_id] = loop.call_later(duration, self._end_simulated, run, fails)
            started = run.history[-1][0]
            for name in run.package.pipeline_spec.get("root", {}).get("dag", {}).get("tasks", {}):
                task = Task(f"{run.run_id}-{name}", name, started, started)
                task.history.append((started, "RUNNING"))
                run.tasks.append(task)
        elif blocker:
            run.execution = "executed"
            run.error = f"kfp.local cannot execute this pipeline: {blocker} (--simulate none)"
            run.set_state("FAILED")
            self._release(run)
        else:
            run.execution = "executed"
            self.active[run.run_id] = asyncio.ensure_future(self._execute(run))

    def _end_simulated(self, run: Run, fails: bool) -> None:
        state = "FAILED" if fails else "SUCCEEDED"
        now = time.time()
        for task in run.tasks:
            task.end_time, task.state = now, state
            task.history.append((now, state))
        if fails:
            run.error = "simulated failure (--simulate fail rate)"
        run.set_state(state, now)
        self._release(run)

    def _release(self, run: Run) -> None:
        self.active.pop(run.run_id, None)
        self._finished(run)
        self._pump()

    def _finished(self, run: Run) -> None:
        if self.on_finish is not None:
            self.on_finish(run)

    async def _execute(self, run: Run) -> None:
        run_dir = self.state_dir / "runs" / run.run_id
        try:
            python = await self._env_python(run)
            if run.done or run.state == "CANCELING":  # terminated while its env was made
                return
            await self._run_process(run, run_dir, python)
        except Exception as e:
            if not run.done:
                run.error = f"kfp server: {type(e).__name__}: {e}"
                run.set_state("FAILED")
        finally:
            self.procs.pop(run.run_id, None)
            if run.state == "CANCELING":
                run.set_state("CANCELED")
            self._release(run)

    async def _env_python(self, run: Run) -> str:
        if self.use_venv:
            return ""
        version = kfp_pin(run.package.pipeline_spec) or _own_kfp_version()
        lock = self._env_locks.setdefault(version, asyncio.Lock())
        async with lock:
            path = await asyncio.to_thread(envs.ensure_env, version, self.env_root)
        return str(path)

    async def _run_process(self, run: Run, run_dir: Path, python: str) -> None:
        run_dir.mkdir(parents=True, exist_ok=True)
        spec_path = run_dir / "pipeline.json"
        docs = [run.package.pipeline_spec]
        spec_path.write_text(json.dumps(docs[0]))
        argv = [
            sys.executable, "-m", "kfp_bench.sandbox.kfp_server._runner",
            "--spec", str(spec_path),
            "--params", json.dumps(run.params),
            "--root", str(run_dir / "root"),
            "--log", str(run_dir / "log.txt"),
            "--run-id", run.run_id,
        ]  # fmt: skip
        argv += ["--use-venv"] if self.use_venv else ["--python", python]
        proc = await asyncio.create_subprocess_exec(
            *argv,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
            start_new_session=True,
            cwd=str(run_dir),
            # The runner kills its own group if this server dies (process.watch_parent).
            env={**os.environ, PARENT_ENV: str(os.getpid())},
        )
        self.procs[run.run_id] = proc
        run.set_state("RUNNING")
        ended = False
        assert proc.stdout is not None
        async for line in proc.stdout:
            ended = _apply_event(run, line) or ended
        code = await proc.wait()
        if run.state == "CANCELING":
            return
        if not ended:
            run.error = f"the run's process exited with code {code} before it reported an end"
            run.set_state("FAILED")

    def terminate(self, run: Run) -> None:
        """Cancel ``run``: at once if PENDING, by killing its process or timer if RUNNING.

        A run already final or CANCELING is left alone: ``app.terminate_run`` answers that 400
        before it gets here, as KFP does; a delete (``forget``) of such a run needs no more.
        KFP's TerminateRun sets CANCELING whatever the run's state, and the persistence agent
        later CANCELED (storage/run_store.go:1389-1400 at 7b70c7b95f); a PENDING run here has
        no process to wait for, so it becomes CANCELED at once."""
        if run.done or run.state == "CANCELING":
            return
        active = self.active.get(run.run_id)
        if active is None:  # still queued
            run.set_state("CANCELED")
            self._finished(run)
            return
        if isinstance(active, asyncio.TimerHandle):
            active.cancel()
            run.set_state("CANCELING")
            now = time.time()
            for task in run.tasks:
                task.end_time, task.state = now, "CANCELED"
                task.history.append((now, "CANCELED"))
            run.set_state("CANCELED", now)
            self._release(run)
            return
        run.set_state("CANCELING")
        proc = self.procs.get(run.run_id)
        if proc is None:  # making its environment: _execute sees the state and stops
            return
        _killpg(proc.pid, signal.SIGTERM)
        asyncio.get_running_loop().call_later(_KILL_GRACE, _killpg, proc.pid, signal.SIGKILL)

    def forget(self, run: Run) -> None:
        """Stop ``run`` if it is live and remove its files (the run is being deleted)."""
        self.terminate(run)
        shutil.rmtree(self.state_dir / "runs" / run.run_id, ignore_errors=True)

    async def close(self) -> None:
        for proc in list(self.procs.values()):
            _killpg(proc.pid, signal.SIGKILL)
        for active in list(self.active.values()):
            active.cancel()
        await asyncio.sleep(0)

    @property
    def executing(self) -> int:
        return len(self.active)


def _apply_event(run: Run, line: bytes) -> bool:
    """Apply one runner event to ``run``; True if it was the run's end."""
    try:
        event = json.loads(line)
        kind, at = event["event"], float(event["time"])
    except (ValueError, KeyError, TypeError):
        return False
    if kind == "task_start":
        n = sum(1 for t in run.tasks if t.display_name == event["task"])
        task = Task(f"{run.run_id}-{event['task']}-{n}", event["task"], at, at)
        task.history.append((at, "RUNNING"))
        run.tasks.append(task)
    elif kind == "task_end":
        task = next(
            (t for t in reversed(run.tasks) if t.display_name == event["task"] and not t.end_time),
            None,
        )
        if task is not None:
            task.end_time, task.state = at, event.get("state", "FAILED")
            task.error = event.get("error", "")
            task.history.append((at, task.state))
    elif kind == "end":
        if run.state == "CANCELING":
            return True
        run.error = event.get("error", "")
        run.set_state(event.get("state", "FAILED"), at)
        return True
    return False


def _killpg(pid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, sig)


def _own_kfp_version() -> str:

    return metadata.version("kfp")
