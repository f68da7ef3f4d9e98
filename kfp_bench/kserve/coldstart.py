"""Cold start: from zero pods, the time to the first successful response, apart from warm latency.

With minReplicas 0 an InferenceService scales to zero when idle (Knative's scale-to-zero grace
period, 30 s by default). ``cold_start`` waits until its pods are at zero, then sends requests one
at a time until one succeeds, and records how long that took: pods starting and the model loading,
the ~10 s outliers of KServe's autoscaling guide. It then measures warm latency with a short
closed-loop load, so that the two are reported apart. The module never prints.
"""

from __future__ import annotations

import http.client
import socket
import time
from dataclasses import asdict, dataclass, replace

from kfp_bench.errors import NotReadyError
from kfp_bench.kserve.kube import Kube, selector
from kfp_bench.load.options import LoadOptions
from kfp_bench.load.workers import run_load
from kfp_bench.redact import public_url


@dataclass(frozen=True, slots=True)
class ColdStart:
    """What a cold start measured.

    Attributes:
        zero_wait_s: seconds waited for the pods to reach zero.
        first_success_s: seconds from the first request sent to the first success.
        attempts: requests sent until the first success (1 when the activator held the first).
        errors: the failures before it, as short texts.
        warm_requests: requests of the warm measurement after it.
        warm_p50_ms: warm median latency, ms.
        warm_p99_ms: warm 99th percentile latency, ms.
    """

    zero_wait_s: float
    first_success_s: float
    attempts: int
    errors: tuple[str, ...]
    warm_requests: int
    warm_p50_ms: float
    warm_p99_ms: float

    def as_dict(self) -> dict:
        """The fields as JSON values, the seconds and milliseconds to 3 decimals."""
        doc = {**asdict(self), "errors": list(self.errors)}
        return {k: round(v, 3) if k.endswith(("_s", "_ms")) else v for k, v in doc.items()}


def wait_for_zero(kube: Kube, name: str, *, component: str = "predictor",
                  timeout_s: float = 300.0, poll_s: float = 2.0) -> float:  # fmt: skip
    """Wait until ``name``'s component has no live pods; return the seconds waited.

    Raises:
        NotReadyError: pods still live after ``timeout_s`` (is minReplicas above 0?).
    """
    start = time.monotonic()
    while True:
        live = sum(p.live for p in kube.pods(selector(name, component)))
        if not live:
            return time.monotonic() - start
        if time.monotonic() - start >= timeout_s:
            raise NotReadyError(
                f"InferenceService {name}: {live} {component} pods still live after "
                f"{timeout_s:g}s; a cold start needs minReplicas 0 and no traffic for the "
                "scale-to-zero grace period (30 s by default)"
            )
        time.sleep(poll_s)


def first_success(opts: LoadOptions, *, timeout_s: float = 600.0, retry_s: float = 0.2):
    """Send ``opts``' request one at a time until a 1xx-3xx answer; return (seconds, attempts,
    errors). Raises ``NotReadyError`` when none succeeds within ``timeout_s``.

    The request is the load's own bytes (``LoadOptions.target``): its headers (-H, a bearer
    token, Knative's revision headers), Host, basic auth and TLS settings, so that the first
    request of a cold start is the one the load then sends."""
    target = opts.target()
    tls = opts.ssl_context() if target.scheme == "https" else None
    start = time.monotonic()
    errors: list[str] = []
    while True:
        left = max(0.1, timeout_s - (time.monotonic() - start))
        try:
            status = _send(target, tls, opts.method.upper(), left)
            if status < 400:
                return time.monotonic() - start, len(errors) + 1, tuple(errors)
            errors.append(f"HTTP {status}")
        except (OSError, http.client.HTTPException) as exc:
            errors.append(f"{type(exc).__name__}: {exc}")
        if time.monotonic() - start >= timeout_s:
            raise NotReadyError(
                f"{public_url(opts.url)}: no successful response in {timeout_s:g}s of cold start "
                f"({len(errors)} attempts, last: {errors[-1]}); check the predictor's logs"
            )
        time.sleep(retry_s)


def _send(target, tls, method: str, timeout_s: float) -> int:
    """One request of ``target``'s bytes on a new connection: the response's status."""
    with socket.create_connection((target.host, target.port), timeout=timeout_s) as raw:
        sock = tls.wrap_socket(raw, server_hostname=target.server_hostname) if tls else raw
        sock.sendall(target.request)
        response = http.client.HTTPResponse(sock, method=method)
        try:
            response.begin()
            return response.status
        finally:
            response.close()


def cold_start(kube: Kube, name: str, opts: LoadOptions, *, component: str = "predictor",
               zero_timeout_s: float = 300.0, first_timeout_s: float = 600.0,
               poll_s: float = 2.0, warm_requests: int = 50) -> ColdStart:  # fmt: skip
    """Wait for zero pods, time the first success from cold, then measure warm latency."""
    opts.validate()
    zero = wait_for_zero(kube, name, component=component, timeout_s=zero_timeout_s, poll_s=poll_s)
    took, attempts, errors = first_success(opts, timeout_s=first_timeout_s)
    warm_opts = replace(opts, requests=warm_requests, concurrency=1, duration=0.0, rate=0.0)
    warm = run_load(warm_opts.validate()).summary()
    return ColdStart(
        zero, took, attempts, errors, warm.requests, warm.latency_ms["p50"], warm.latency_ms["p99"]
    )
