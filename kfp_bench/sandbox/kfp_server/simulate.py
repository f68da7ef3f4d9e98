"""Deciding how a run executes, and drawing the duration and outcome of a simulated one.

This module owns the ``--simulate`` syntax and the test of whether kfp.local can execute a
pipeline spec. The syntax is ``SCOPE[:DIST][,fail=F]``:

* ``auto`` (default): execute what kfp.local's SubprocessRunner can run (lightweight Python
  components and importers), simulate the rest (container components, containerized Python
  components, resolvers). ``auto:uniform(1,3)`` sets the distribution of the simulated ones.
* ``all:DIST``: simulate every run, e.g. ``all:lognormal(2,0.5),fail=0.1`` for scale tests.
* ``none``: never simulate; a run kfp.local cannot execute FAILS with the reason as its error.

``DIST`` is ``fixed(s)``, ``uniform(a,b)`` (seconds) or ``lognormal(mean_s,sigma)`` (a lognormal
whose *mean* is ``mean_s`` seconds and whose log has standard deviation ``sigma``). ``fail=F`` is
the fraction of simulated runs that end FAILED. Without a DIST, simulated runs take
``uniform(0.5,1.5)`` s and never fail.
"""

from __future__ import annotations

import math
import random
import re
from collections import Counter
from dataclasses import dataclass

from kfp_bench.errors import ConfigError

_SCOPES = ("auto", "all", "none")
_DISTS = {"fixed": 1, "uniform": 2, "lognormal": 2}
_DIST_RE = re.compile(r"^(\w+)\(([^)]*)\)$")
_KFP_PIN = re.compile(r"kfp==([0-9][0-9A-Za-z.+-]*)")
EXECUTOR_MODULE = "kfp.dsl.executor_main"
_CONTAINERIZED = ["python3", "-m", EXECUTOR_MODULE]
_DEFAULT_DIST = ("uniform", (0.5, 1.5))


@dataclass(frozen=True, slots=True)
class SimulateSpec:
    """How runs are simulated; parse one from the command line with ``SimulateSpec.parse``.

    Attributes:
        scope: "auto" (simulate what kfp.local cannot run), "all" or "none".
        dist: the duration distribution: "fixed", "uniform" or "lognormal".
        params: the distribution's parameters, in seconds (sigma for lognormal's second).
        fail: the fraction of simulated runs that end FAILED.
    """

    scope: str = "auto"
    dist: str = _DEFAULT_DIST[0]
    params: tuple[float, ...] = _DEFAULT_DIST[1]
    fail: float = 0.0

    @classmethod
    def parse(cls, text: str) -> SimulateSpec:
        """Parse ``SCOPE[:DIST][,fail=F]``; raise ConfigError naming the part at fault."""
        head, tail = text.strip(), ""
        if ")," in head or (head.count(",") and "(" not in head):
            # the failure rate follows the distribution's closing parenthesis, or the scope
            cut = head.index("),") + 1 if ")," in head else head.index(",")
            head, tail = head[:cut], head[cut + 1 :]
        scope, _, dist_text = head.partition(":")
        if scope not in _SCOPES:
            raise ConfigError(f"--simulate {text!r}: scope {scope!r} must be one of {_SCOPES}")
        dist, params = _DEFAULT_DIST  # slotted: class attributes are descriptors, not defaults
        if dist_text:
            dist, params = _parse_dist(text, dist_text)
        fail = 0.0
        if tail:
            key, _, value = tail.partition("=")
            if key.strip() != "fail" or not _is_fraction(value):
                raise ConfigError(
                    f"--simulate {text!r}: expected ',fail=F' with F in [0, 1] after the "
                    f"distribution, got {tail!r}"
                )
            fail = float(value)
        if scope == "all" and not dist_text:
            raise ConfigError(
                f"--simulate {text!r}: 'all' needs a distribution, e.g. all:fixed(1) or "
                "all:lognormal(2,0.5)"
            )
        return cls(scope, dist, params, fail)

    def draw(self, rng: random.Random) -> tuple[float, bool]:
        """A duration (s) and whether the run fails."""
        if self.dist == "fixed":
            duration = self.params[0]
        elif self.dist == "uniform":
            duration = rng.uniform(*self.params)
        else:
            mean, sigma = self.params
            duration = rng.lognormvariate(math.log(mean) - sigma * sigma / 2, sigma)
        return max(0.0, duration), rng.random() < self.fail

    def __str__(self) -> str:
        args = ",".join(f"{p:g}" for p in self.params)
        fail = f",fail={self.fail:g}" if self.fail else ""
        return f"{self.scope}:{self.dist}({args}){fail}"


def _is_fraction(value: str) -> bool:
    try:
        return 0.0 <= float(value) <= 1.0
    except ValueError:
        return False


def _parse_dist(text: str, dist_text: str) -> tuple[str, tuple[float, ...]]:
    m = _DIST_RE.match(dist_text.replace(" ", ""))
    if not m or m.group(1) not in _DISTS:
        raise ConfigError(
            f"--simulate {text!r}: distribution {dist_text!r} must be fixed(s), uniform(a,b) "
            "or lognormal(mean_s,sigma)"
        )
    name = m.group(1)
    try:
        params = tuple(float(p) for p in m.group(2).split(",") if p)
    except ValueError:
        params = ()
    ok = len(params) == _DISTS[name] and all(math.isfinite(p) and p >= 0 for p in params)
    if ok and name == "uniform":
        ok = params[0] <= params[1]
    if ok and name == "lognormal":
        ok = params[0] > 0
    if not ok:
        raise ConfigError(
            f"--simulate {text!r}: {name} takes {_DISTS[name]} number(s) >= 0"
            + (" with a <= b" if name == "uniform" else "")
            + (" and mean_s > 0" if name == "lognormal" else "")
        )
    return name, params


def local_blocker(spec: dict) -> str:
    """Why kfp.local's SubprocessRunner cannot execute ``spec`` (a PipelineSpec dict); "" if it can.

    It runs lightweight Python components (their command runs ``kfp.dsl.executor_main``) and
    importers; it refuses container components and containerized Python components.
    """
    executors = spec.get("deploymentSpec", {}).get("executors", {})
    if not executors:
        return "the pipeline has no executors"
    for name, executor in sorted(executors.items()):
        if "importer" in executor:
            continue
        container = executor.get("container")
        if container is None:
            kind = next(iter(executor), "unknown")
            return f"executor {name} is a {kind}, which kfp.local does not run"
        command = [*container.get("command", []), *container.get("args", [])]
        if command[:3] == _CONTAINERIZED:
            return f"executor {name} is a containerized Python component"
        if not any(EXECUTOR_MODULE in part for part in command):
            return f"executor {name} is a container component ({container.get('image', '?')})"
    return ""


def kfp_pin(spec: dict) -> str | None:
    """The kfp version the spec's components pip-install (the most common one), or None."""
    pins: Counter[str] = Counter()
    for executor in spec.get("deploymentSpec", {}).get("executors", {}).values():
        container = executor.get("container", {})
        for part in [*container.get("command", []), *container.get("args", [])]:
            pins.update(_KFP_PIN.findall(part))
    return pins.most_common(1)[0][0] if pins else None
