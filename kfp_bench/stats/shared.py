"""What every load's aggregate shares, whatever its protocol: the start and duration, options
(the cost per hour among them), statuses, errors, workers, flags, client CPU and stages.

``Shared`` holds those fields and merges, saves and reads them; a protocol's stats
(``stats.load.LoadStats``, ``stats.llm.LlmStats``) derive from it and add only their own
figures. ``SharedSummary`` is the same for the finished figures.
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field

from kfp_bench.stats.stages import StageStats

#: The flag of a load some of whose workers' results are missing (``kfp_bench.outcome``).
WORKERS_LOST = "workers-lost"


@dataclass
class Shared:
    """The fields of every load's aggregate. ``corrected``: open loop, latency measured from the
    intended send time; ``options`` are redacted (the price per hour among them); ``client_cpu``
    is the load generator's own CPU while it sent (``load.cpu.client_cpu``), merged over its
    processes ({}: not measured); ``stages`` the figures of a --stages load (``stats.stages``).
    """

    corrected: bool = False
    started_at: float = field(default_factory=time.time)
    duration_s: float = 0.0
    options: dict = field(default_factory=dict)
    status_codes: Counter = field(default_factory=Counter)
    errors: Counter = field(default_factory=Counter)
    workers: dict = field(default_factory=lambda: {"expected": 1, "reported": 1, "missing": []})
    flags: list = field(default_factory=list)
    client_cpu: dict = field(default_factory=dict)
    stages: StageStats | None = None

    def flag(self, *names: str) -> None:
        """Add flags (``interrupted``, ``engine-error``, ...), each once, kept sorted."""
        self.flags = sorted(set(self.flags).union(names))

    def merge(self, other: Shared) -> None:
        """Add another process's or pod's stats of the same load; the duration spans both."""
        end = max(self.started_at + self.duration_s, other.started_at + other.duration_s)
        self.started_at = min(self.started_at, other.started_at)
        self.duration_s = end - self.started_at
        self.corrected = self.corrected or other.corrected
        self.status_codes.update(other.status_codes)
        self.errors.update(other.errors)
        if self.stages is not None and other.stages is not None:
            self.stages.merge(other.stages)
        self.workers = merge_workers(self.workers, other.workers)
        self.flag(*other.flags)
        self.client_cpu = merge_client_cpu(self.client_cpu, other.client_cpu)

    def note_missing(self, missing: list[int]) -> None:
        """Name the workers whose results are missing, flagged ``workers-lost`` (a failure)."""
        if missing:
            self.workers["expected"] += len(missing)
            self.workers["missing"] += missing
            self.flag(WORKERS_LOST)

    def shared_dict(self) -> dict:
        """The shared fields as the JSON results document has them."""
        doc = {
            "corrected": self.corrected,
            "started_at": self.started_at,
            "duration_s": self.duration_s,
            "status_codes": {str(k): v for k, v in sorted(self.status_codes.items())},
            "errors": dict(self.errors.most_common()),
            "workers": self.workers,
            "flags": self.flags,
            "client_cpu": self.client_cpu,
            "options": self.options,
        }
        if self.stages is not None:
            doc["stages"] = self.stages.to_dict()
        return doc

    @classmethod
    def shared_fields(cls, doc: dict) -> dict:
        """The constructor's shared arguments from a results document (``KeyError``,
        ``TypeError`` or ``ValueError`` when malformed)."""
        return {
            "corrected": bool(doc["corrected"]),
            "started_at": float(doc["started_at"]),
            "duration_s": float(doc["duration_s"]),
            "options": dict(doc.get("options", {})),
        }

    def read_shared(self, doc: dict, source: str) -> None:
        """The shared counts, lists and stages of a results document read back."""
        self.status_codes = Counter({int(k): int(v) for k, v in doc["status_codes"].items()})
        self.errors = Counter({str(k): int(v) for k, v in doc["errors"].items()})
        self.workers = dict(doc["workers"])
        self.flags = list(doc.get("flags", []))
        self.client_cpu = read_client_cpu(doc.get("client_cpu") or {})
        if doc.get("stages"):
            self.stages = StageStats.from_dict(doc["stages"], source)


@dataclass(frozen=True, slots=True)
class SharedSummary:
    """The finished figures every load has: requests, duration, their rate, and whether the
    latencies are from the intended send times."""

    requests: int
    duration_s: float
    rps: float
    corrected: bool


_CPU_KEYS = ("user_s", "system_s", "processes", "busiest")


def merge_workers(a: dict, b: dict) -> dict:
    """Two results' ``workers``: the counts add up; the lists of worker indexes ("missing";
    "partial": died, but what it measured is in; "late": [index, s] started past the common
    start) join."""
    out = {
        **a,
        "expected": a["expected"] + b["expected"],
        "reported": a["reported"] + b["reported"],
    }
    for k in ("missing", "partial", "late"):
        if b.get(k):
            out[k] = a.get(k, []) + b[k]
    return out


def merge_client_cpu(a: dict, b: dict) -> dict:
    """Processes add their CPU times; ``busiest`` is the busiest one's share of a core. A side
    that did not measure (``{}``) adds nothing: ``processes`` says how many did. Throttling is
    the most throttled process's (processes of one pod share one cgroup and its counters), and
    ``cpu_limit`` the smallest limit."""
    if not a or not b:
        return dict(a or b)
    out = {
        "user_s": a["user_s"] + b["user_s"],
        "system_s": a["system_s"] + b["system_s"],
        "processes": a["processes"] + b["processes"],
        "busiest": max(a["busiest"], b["busiest"]),
    }
    if "throttled_s" in a or "throttled_s" in b:
        limits = [x["cpu_limit"] for x in (a, b) if x.get("cpu_limit") is not None]
        out["cpu_limit"] = min(limits) if limits else None
        out["throttled_s"] = max(a.get("throttled_s", 0.0), b.get("throttled_s", 0.0))
        out["throttled_periods"] = max(a.get("throttled_periods", 0), b.get("throttled_periods", 0))
    return out


def read_client_cpu(d) -> dict:
    """A saved ``client_cpu`` checked and typed ({} for results that did not measure it);
    ``ValueError`` naming the field at fault."""
    if not d:
        return {}
    number = int | float
    if not isinstance(d, dict) or any(not isinstance(d.get(k), number) for k in _CPU_KEYS):
        raise ValueError("client_cpu")
    out = {k: (int if k == "processes" else float)(d[k]) for k in _CPU_KEYS}
    if "throttled_s" in d:
        limit, periods = d.get("cpu_limit"), d.get("throttled_periods")
        if not (isinstance(d["throttled_s"], number) and isinstance(periods, int)):
            raise ValueError("client_cpu throttling")
        if limit is not None and not isinstance(limit, number):
            raise ValueError("client_cpu cpu_limit")
        out.update(
            cpu_limit=None if limit is None else float(limit),
            throttled_s=float(d["throttled_s"]),
            throttled_periods=d["throttled_periods"],
        )
    return out
