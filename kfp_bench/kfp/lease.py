"""The lease a running benchmark holds on the KFP server, so that two never overlap (issue 18).

Two benchmarks against one server measure each other (a recurring run catching up, a second
manual run). The first step takes the lease, the exit handler gives it back. A lease is an
experiment ``kfp-bench-lease-<prefix>`` whose description holds its holder and expiry; the
create is the only arbiter, since KFP refuses a second experiment of one name in a namespace
(unique index ``idx_name_namespace``, backend/src/apiserver/model/experiment.go at 7b70c7b95f).
An expired lease, or one whose holder's run is over, is taken over by deleting it by id and
creating it again: of two takers only one's create succeeds. The expiry is the longest the
benchmark can take (``lease_ttl``), so a live benchmark is never taken over."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass

from kfp_bench.errors import KfpApiError, LeaseError
from kfp_bench.kfp import convert
from kfp_bench.kfp.api import KfpApi
from kfp_bench.kfp.options import NAME_PREFIX

LEASE_PREFIX = NAME_PREFIX + "lease-"
#: The prefix of a lease taken with no benchmark_id: the pipeline's fixed name.
DEFAULT_PREFIX = "kfp-bench"
_DESC = "kfp-bench lease "
#: Beyond the steps' own work: the pods' start, installs, report and cleanup (s).
TTL_MARGIN_S = 3600.0
#: A deploy_isvc step's timeout (kfp_bench/pipelines/meta.py: 2 * _SHORT).
ISVC_DEPLOY_S = 1800.0
#: Creates tried while the lease vanishes between a refused create and its read.
_TRIES = 5


def lease_name(prefix: str) -> str:
    return LEASE_PREFIX + (prefix or DEFAULT_PREFIX)


def lease_ttl(p) -> float:
    """The longest benchmark ``p`` (a ``BenchParams``) can take, in seconds: the runs (created,
    then polled, each up to run_timeout_sec), the sweep and the load, the InferenceService's
    deploy, and a margin for the steps' pods."""
    runs = 2 * p.run_timeout_sec if p.run_benchmark else 0.0
    steps = len([r for r in p.sweep_rates.split(",") if r.strip()]) if p.sweep_rates else 0
    load = (p.duration_sec if p.run_load else 0.0) + steps * p.sweep_step_sec
    return runs + load + (ISVC_DEPLOY_S if p.isvc else 0.0) + TTL_MARGIN_S


@dataclass(frozen=True)
class Lease:
    """One lease as the server holds it (``experiment_id`` empty before it is created)."""

    name: str
    holder: str
    run_id: str
    expires: float
    experiment_id: str = ""

    def description(self) -> str:
        doc = {"holder": self.holder, "run_id": self.run_id, "expires": round(self.expires)}
        return _DESC + json.dumps(doc, sort_keys=True)

    @classmethod
    def of(cls, exp: dict) -> Lease:
        """The lease an experiment holds; ``LeaseError`` when the name is taken by another."""
        name, text = exp.get("display_name") or "", exp.get("description") or ""
        try:
            doc = json.loads(text[len(_DESC) :]) if text.startswith(_DESC) else None
            holder, run_id, expires = str(doc["holder"]), str(doc.get("run_id", "")), doc["expires"]
            return cls(name, holder, run_id, float(expires), exp.get("experiment_id"))
        except (ValueError, TypeError, KeyError):
            raise LeaseError(
                f"experiment {name!r} ({exp.get('experiment_id')}) is not a kfp-bench lease "
                f"(its description is {text[:80]!r}); delete it or give another benchmark_id"
            ) from None

    def expired(self, now: float) -> bool:
        return self.expires <= now

    def describe(self) -> str:
        when = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(self.expires))
        run = f" (pipeline run {self.run_id})" if self.run_id else ""
        return f"benchmark {self.holder}{run}, until {when} ({self.expires:.0f})"


@dataclass(frozen=True)
class Acquired:
    """A lease taken: ``taken_over``, the expired lease it replaced; ``waited`` seconds."""

    lease: Lease
    taken_over: Lease | None = None
    waited: float = 0.0


def read(api: KfpApi, name: str) -> Lease | None:
    """The lease named ``name``, or None when there is none."""
    known, exp = api.find_experiment(name)
    if not known:
        raise KfpApiError(f"lease {name}: cannot list the experiments to read it; try again")
    return Lease.of(exp) if exp is not None else None


def acquire(
    api: KfpApi,
    mine: Lease,
    *,
    wait_s: float = 0.0,
    poll_s: float = 2.0,
    clock: Callable[[], float] = time.time,
    sleep: Callable[[float], object] = time.sleep,
) -> Acquired:
    """Take the lease ``mine`` (its expiry counted from now), waiting up to ``wait_s`` while a
    live one holds it; ``LeaseError`` naming the holder when it is still held after that."""
    start, ttl = clock(), mine.expires - clock()
    taken_over, tries = None, 0
    while True:
        want = Lease(mine.name, mine.holder, mine.run_id, clock() + ttl)
        reply = api.create_experiment(want.name, want.description())
        if reply.ok:  # made, or adopted after a lost answer: whose it is, its description says
            got = Lease.of(reply.body)
            if got.holder == want.holder:
                return Acquired(got, taken_over, clock() - start)
            current = got
        elif reply.call.status == 409:  # ALREADY_EXISTS: held
            current = read(api, want.name)
        else:
            raise KfpApiError(f"lease {want.name}: create_experiment failed: {reply.call.error}")
        tries += 1
        if current is None or current.expired(clock()) or holder_done(api, current):
            if tries > _TRIES:
                raise KfpApiError(f"lease {want.name}: still changing after {_TRIES} tries")
            if current is not None:  # by its id: a second taker's delete finds it gone
                gone = api.delete_experiment(current.experiment_id)
                if not gone.ok:
                    raise KfpApiError(
                        f"lease {want.name}: expired, delete failed: {gone.call.error}"
                    )
                taken_over = current
            continue
        left = start + wait_s - clock()
        if left <= 0:
            raise LeaseError(_held(current, wait_s))
        sleep(min(poll_s, left))


def holder_done(api: KfpApi, lease: Lease) -> bool:
    """Whether the lease's holder is a pipeline run the server says is over (CANCELED after a
    terminate, FAILED, SUCCEEDED): then nobody holds it, whatever its expiry, and it is taken
    over at once. A run the server does not know (deleted, or a kfp.local run that never was a
    server run) proves nothing: its lease waits for its expiry."""
    if not lease.run_id:
        return False
    reply = api.get_run(lease.run_id)
    return bool(reply.ok and reply.body and convert.is_terminal(reply.body))


def _held(lease: Lease, wait_s: float) -> str:
    waited = f" after waiting {wait_s:g}s" if wait_s else ""
    return (
        f"another benchmark holds the lease {lease.name}{waited}: {lease.describe()}; two "
        "benchmarks of one benchmark_id would measure each other. Fix: wait for it (pipeline "
        "parameter lease_wait_sec), give another benchmark_id, or, when that run is gone "
        f"(terminated, deleted), delete experiment {lease.experiment_id} and run kfp-bench "
        f"cleanup --benchmark-id {lease.holder}. A recurring run: set max concurrency 1 and "
        "catch-up off"
    )


def release(api: KfpApi, name: str, holder: str) -> str:
    """Give the lease back when ``holder`` holds it (deleted by the id read, so a lease taken
    over meanwhile is left); what was done, in a few words."""
    current = read(api, name)
    if current is None:
        return f"lease {name}: none held"
    if current.holder != holder:
        return f"lease {name}: held by {current.describe()}, not ours: left"
    reply = api.delete_experiment(current.experiment_id)
    if not reply.ok:
        raise KfpApiError(f"lease {name}: release failed: {reply.call.error}")
    return f"lease {name}: released"
