"""Options of a load attack, their validation, and the request they describe.

``LoadOptions`` holds every knob with hey's meaning (``-n -c -q -z ...``) plus kfp-bench's own
(``--rate``, ``--workers`` ...). Its docstring is the source of the CLI's help text. ``validate()``
raises ``ConfigError`` naming the flag and the fix before anything is sent; ``target()`` parses the
URL and builds the request bytes once, so the request loop only writes a ready buffer.
``parse_rates`` reads a rate sweep's rates (``sweep.py``), here so that checking them does not
import the request loop.
"""

from __future__ import annotations

import base64
import math
import re
import ssl
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace
from urllib.parse import quote, urlsplit

from kfp_bench import __version__
from kfp_bench.errors import ConfigError
from kfp_bench.load.stages import peak_rate, total_s
from kfp_bench.redact import HIDDEN, header, public_url

_HEADER = re.compile(r"^([\w-]+):\s*(.+)$")
_HOST = re.compile(r"[A-Za-z0-9._~-]+(:\d{1,5})?|\[[0-9A-Fa-f:.]+\](:\d{1,5})?")
_CONTROL = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")
#: What stays as it is in a request path or query; the rest is percent-encoded (UTF-8), as Go's
#: net/url does for hey, so that a space or a non-ASCII letter in the URL is data, not syntax.
_PATH_SAFE = "/%!$&'()*+,;=:@~"
_QUERY_SAFE = _PATH_SAFE + "?"
METHODS = ("GET", "POST", "PUT", "DELETE", "HEAD", "OPTIONS", "PATCH")
#: Safety caps: past these an explicit --i-know flag is needed (see ``validate``).
MAX_RATE_PER_WORKER = 5000.0
MAX_DURATION_S = 3600.0
MAX_STEPS = 50  # rates in a sweep (sweep.py)


@dataclass(frozen=True)
class LoadOptions:
    """What to send, how often and for how long.

    Attributes:
        url: the URL to load, http:// or https://.
        method: HTTP method, one of GET, POST, PUT, DELETE, HEAD, OPTIONS, PATCH.
        headers: extra headers as "Name: value" strings; repeat -H for more than one.
        body: the request body.
        content_type: Content-Type of the body (hey's default, text/html).
        accept: HTTP Accept header.
        basic_auth: basic authentication as username:password; never printed or saved.
        host: HTTP Host header, for a virtual host behind an ingress (KServe's SERVICE_HOSTNAME).
        user_agent: User-Agent header; kfp-bench/VERSION when empty.
        requests: number of requests to run (hey's -n); ignored when a duration is given.
        concurrency: number of workers (connections) sending at once; -n cannot be smaller.
        qps: rate limit in queries per second PER WORKER, as hey means it (closed-loop; total is
            c x q). Use --rate for an open-loop total rate.
        duration: how long to send, in seconds (hey's -z, e.g. 30s, 2m); 0 means use -n.
        timeout: timeout of each request in seconds; 0 means none.
        disable_keepalive: open a new connection for every request.
        disable_compression: do not send Accept-Encoding: gzip.
        rate: open-loop total rate in requests/s across all workers and processes; latency is
            measured from the intended send time (coordinated-omission corrected).
        arrival: spacing of open-loop requests, constant or poisson.
        max_inflight: in rate mode, the most requests in flight at once (connections are opened
            on demand up to this); requests due beyond it wait, and their wait counts.
        workers: worker processes; use as many as cores to go beyond one core.
        insecure: skip TLS certificate verification (off by default).
        cacert: a PEM file of extra CA certificates to trust for TLS.
        i_know: allow going past the safety caps (5000 req/s per worker process, 1 hour).
        seed: random seed of the Poisson arrivals, for a repeatable schedule.
        stages: open-loop load in stages instead of one --rate, e.g. "30s@10,60s@10-100,idle
            30s,30s@100": DURATION@RATE is constant, DURATION@FROM-TO (or ramp DURATION
            FROM-TO) a linear ramp, idle DURATION sends nothing; the run lasts their sum (no -z
            or -n beside it). --arrival applies.
        trace: the intended send times (seconds from the start) of a trace replay, in order:
            open loop, one request per offset (``load/trace.py`` reads the file).
        trace_speed: how fast the trace plays: 2 sends it in half its time.
        lane: (index, of): the worker process of a staged attack takes requests index,
            index + of, ... (set by ``share``).
    """

    url: str
    method: str = "GET"
    headers: tuple[str, ...] = ()
    body: bytes = b""
    content_type: str = "text/html"
    accept: str = ""
    basic_auth: str = field(default="", repr=False)
    host: str = ""
    user_agent: str = ""
    requests: int = 200
    concurrency: int = 50
    qps: float = 0.0
    duration: float = 0.0
    timeout: float = 20.0
    disable_keepalive: bool = False
    disable_compression: bool = False
    rate: float = 0.0
    arrival: str = "constant"
    max_inflight: int = 1000
    workers: int = 1
    insecure: bool = False
    cacert: str = ""
    i_know: bool = False
    seed: int | None = None
    stages: tuple = ()
    trace: tuple = field(default=(), repr=False)
    trace_speed: float = 1.0
    lane: tuple = (0, 1)

    def validate(self) -> LoadOptions:
        """Check every option; raise ``ConfigError`` naming the flag and the fix."""
        self._check_header_values()
        self.target()  # URL, scheme, headers
        if self.method.upper() not in METHODS:
            raise ConfigError(
                f"-m {self.method!r}: unknown method; use one of {', '.join(METHODS)}"
            )
        if self.concurrency < 1:
            raise ConfigError(f"-c {self.concurrency}: concurrency must be at least 1")
        if self.duration < 0:
            raise ConfigError(f"-z {self.duration}: duration must be positive, e.g. -z 30s")
        if not self.duration:
            if self.requests < 1:
                raise ConfigError(f"-n {self.requests}: the number of requests must be at least 1")
            if self.requests < self.concurrency and not self.open_loop:
                raise ConfigError(
                    f"-n {self.requests} is less than -c {self.concurrency}: "
                    "raise -n or lower -c (hey's rule)"
                )
        if self.qps < 0:
            raise ConfigError(f"-q {self.qps}: the per-worker rate must be positive")
        if self.rate < 0 or self.rate != self.rate:
            raise ConfigError(f"--rate {self.rate}: the rate must be a positive number of req/s")
        if self.rate and self.qps:
            raise ConfigError(
                "--rate and -q both given: -q is hey's closed-loop rate per worker, --rate the "
                "open-loop total; use one"
            )
        if self.arrival not in ("constant", "poisson"):
            raise ConfigError(f"--arrival {self.arrival!r}: use constant or poisson")
        if self.max_inflight < 1:
            raise ConfigError(f"--max-inflight {self.max_inflight}: must be at least 1")
        if self.workers < 1:
            raise ConfigError(f"--workers {self.workers}: must be at least 1")
        if self.timeout < 0:
            raise ConfigError(f"-t {self.timeout}: the timeout must be 0 (none) or positive")
        self._check_schedule()
        self._check_caps()
        if self.cacert:
            self.ssl_context()
        return self

    def _check_header_values(self) -> None:
        """What goes into the request head verbatim: a CR or LF there would start another
        header or request, so it is refused as Go's net/http (hey) refuses it."""
        if self.host and not _HOST.fullmatch(self.host):
            raise ConfigError(
                f"-host {self.host!r}: not a host name; give e.g. iris.default.example.com"
            )
        for flag, value in (
            ("-T", self.content_type),
            ("-A", self.accept),
            ("-U", self.user_agent),
            *(("-H", h) for h in self.headers),
        ):
            if _CONTROL.search(value):
                shown = header(value) if flag == "-H" else value
                raise ConfigError(f"{flag} {shown!r}: holds a control character; remove it")

    def _check_schedule(self) -> None:
        """--stages and --trace each are the whole schedule: no other pacing beside them."""
        for flag, given in (("--stages", self.stages), ("--trace", self.trace)):
            if not given:
                continue
            if self.rate or self.qps:
                raise ConfigError(f"{flag} and {'--rate' if self.rate else '-q'} both given: "
                                  f"{flag} sets the rate; drop the other")  # fmt: skip
        if self.stages and self.trace:
            raise ConfigError("--stages and --trace both given: a trace has its own times; use one")
        if self.stages and self.duration != total_s(self.stages):
            raise ConfigError(
                "-z beside --stages: the run lasts the stages' sum; drop -z (an idle stage at "
                "the end makes it longer)"
            )
        if self.trace and (self.duration or self.requests != len(self.trace)):
            raise ConfigError("-z or -n beside --trace: the trace sends one request per line; "
                              "drop them")  # fmt: skip
        if not self.trace_speed > 0 or not math.isfinite(self.trace_speed):
            raise ConfigError(f"--trace-speed {self.trace_speed}: give a positive factor, e.g. 2")

    def _check_caps(self) -> None:
        if self.i_know:
            return
        if self.trace and self.trace[-1] / self.trace_speed > MAX_DURATION_S:
            raise ConfigError(
                f"--trace spans {self.trace[-1] / self.trace_speed:g}s at --trace-speed "
                f"{self.trace_speed:g}, longer than the safety cap of 1h: raise --trace-speed "
                "or pass --i-know"
            )
        # A lane of a staged attack (``share``) sends 1/of of the stages' rate: its peak is that.
        peak = peak_rate(self.stages) / self.lane[1] if self.stages else self.rate
        per_worker = peak / self.workers
        if per_worker > MAX_RATE_PER_WORKER:
            flag = "--stages' peak" if self.stages else "--rate"
            raise ConfigError(
                f"{flag} {per_worker * self.workers:g} is {per_worker:g} req/s per worker "
                f"process, above the safety cap of {MAX_RATE_PER_WORKER:g}: add --workers or "
                "pass --i-know"
            )
        if self.duration > MAX_DURATION_S:
            raise ConfigError(
                f"-z {self.duration:g}s is longer than the safety cap of 1h: pass --i-know"
            )

    @property
    def open_loop(self) -> bool:
        return self.rate > 0 or bool(self.stages) or bool(self.trace)

    def share(self, index: int, of: int) -> LoadOptions:
        """This worker process's part: its connections, requests and rate."""

        def part(total: int) -> int:
            return total // of + (1 if index < total % of else 0)

        trace = self.trace[index::of]  # as the stages' lanes: every of-th request
        return replace(
            self,
            concurrency=max(1, part(self.concurrency)),
            requests=len(trace) if self.trace else part(self.requests),
            trace=trace,
            lane=(index, of),
            rate=self.rate / of,
            max_inflight=max(1, part(self.max_inflight)),
            workers=1,
        )

    def redacted(self) -> dict:
        """The options as a dict fit for a report: credentials and secret headers masked."""
        d = asdict(self)
        d["body"] = f"<{len(self.body)} bytes>"
        d["basic_auth"] = HIDDEN if self.basic_auth else ""
        d["headers"] = [header(h) for h in self.headers]
        d["url"] = public_url(self.url)
        d["stages"] = [s.text for s in self.stages]
        d["trace"] = len(self.trace)  # the offsets themselves: the trace file
        del d["lane"]
        return d

    def target(self) -> Target:
        """Parse the URL and build the request bytes."""
        return Target.build(self)

    def ssl_context(self) -> ssl.SSLContext | None:
        if urlsplit(self.url).scheme != "https":
            return None
        ctx = ssl.create_default_context()
        if self.cacert:
            try:
                ctx.load_verify_locations(cafile=self.cacert)
            except (OSError, ssl.SSLError) as exc:
                raise ConfigError(
                    f"--cacert {self.cacert}: cannot load CA certificates ({exc}); give a PEM file"
                ) from None
        if self.insecure:
            ctx.check_hostname = False
            ctx.verify_mode = ssl.CERT_NONE
        return ctx


@dataclass(frozen=True)
class Target:
    """Where to connect and the exact bytes of the request."""

    scheme: str
    host: str
    port: int
    request: bytes
    server_hostname: str

    @classmethod
    def build(cls, o: LoadOptions) -> Target:
        shown = public_url(o.url)
        try:
            parts = urlsplit(o.url)
            port = parts.port
        except ValueError as exc:
            raise ConfigError(f"URL {shown!r}: {exc}; give e.g. http://host:8080/path") from None
        if parts.scheme not in ("http", "https"):
            what = f"scheme {parts.scheme!r}" if parts.scheme else "no scheme"
            raise ConfigError(f"URL {shown!r}: {what}; use http:// or https://")
        if not parts.hostname:
            raise ConfigError(f"URL {shown!r}: no host; give e.g. http://127.0.0.1:8080/")
        port = port or (443 if parts.scheme == "https" else 80)
        path = quote(parts.path or "/", safe=_PATH_SAFE)
        if parts.query:
            path += "?" + quote(parts.query, safe=_QUERY_SAFE)
        default_port = port == (443 if parts.scheme == "https" else 80)
        netloc = parts.hostname if default_port else f"{parts.hostname}:{port}"
        if ":" in parts.hostname:  # IPv6 literal
            netloc = f"[{parts.hostname}]" + ("" if default_port else f":{port}")

        head = {"Host": o.host or netloc, "User-Agent": o.user_agent or f"kfp-bench/{__version__}"}
        if o.body or o.method.upper() in ("POST", "PUT", "PATCH"):
            head["Content-Type"] = o.content_type
            head["Content-Length"] = str(len(o.body))
        if o.accept:
            head["Accept"] = o.accept
        if not o.disable_compression:
            head["Accept-Encoding"] = "gzip"
        userinfo = o.basic_auth or (
            f"{parts.username}:{parts.password or ''}" if parts.username else ""
        )
        if userinfo:
            head["Authorization"] = "Basic " + base64.b64encode(userinfo.encode()).decode()
        for h in o.headers:
            m = _HEADER.match(h)
            if not m:
                raise ConfigError(f"-H {header(h)!r}: not a header; write it as -H 'Name: value'")
            head[_canonical(m.group(1), head)] = m.group(2).strip()
        if o.disable_keepalive:
            head["Connection"] = "close"
        lines = [f"{o.method.upper()} {path} HTTP/1.1"] + [f"{k}: {v}" for k, v in head.items()]
        request = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + o.body
        return cls(parts.scheme, parts.hostname, port, request, parts.hostname)


def _canonical(name: str, head: dict) -> str:
    """Reuse the existing spelling of a header so that -H overrides a default."""
    for k in head:
        if k.lower() == name.lower():
            del head[k]
            return k
    return name


def parse_duration(text: str) -> float:
    """Seconds in a Go-style duration such as 30s, 1m30s, 500ms or 2h; a bare number is seconds."""
    m = re.fullmatch(r"((?:\d+(?:\.\d*)?|\.\d+)(?:h|ms|m|s|us|µs|ns))+", text.strip())
    if text.strip().replace(".", "", 1).isdigit():
        return float(text)
    if not m:
        raise ConfigError(f"duration {text!r}: write it like 30s, 2m or 1m30s")
    units = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 1e-3, "us": 1e-6, "µs": 1e-6, "ns": 1e-9}
    return sum(
        float(n) * units[u]
        for n, u in re.findall(r"(\d+(?:\.\d*)?|\.\d+)(h|ms|m|s|us|µs|ns)", text)
    )


def parse_rates(text: str, flag: str = "--rates") -> tuple[float, ...]:
    """Rates from ``"5,50,500"``: positive, increasing, at most ``MAX_STEPS`` of them."""
    parts = [p.strip() for p in str(text).split(",") if p.strip()]
    try:
        rates = tuple(float(p) for p in parts)
    except ValueError:
        raise ConfigError(
            f"{flag} {text!r}: not a list of numbers; give rates in requests/s, e.g. 5,50,500"
        ) from None
    check_rates(rates, flag)
    return rates


def check_rates(rates: Sequence[float], flag: str = "--rates") -> None:
    """Raise ``ConfigError`` unless ``rates`` are 1 to ``MAX_STEPS`` increasing positive numbers."""
    shown = ",".join(f"{r:g}" for r in rates)
    if not rates:
        raise ConfigError(f"{flag}: no rates; give rates in requests/s, e.g. 5,50,500")
    if len(rates) > MAX_STEPS:
        raise ConfigError(f"{flag} {shown}: {len(rates)} steps; give at most {MAX_STEPS}")
    if any(not (r > 0 and math.isfinite(r)) for r in rates):
        raise ConfigError(f"{flag} {shown}: every rate must be a positive number of requests/s")
    if any(b <= a for a, b in zip(rates, rates[1:], strict=False)):
        raise ConfigError(
            f"{flag} {shown}: give the rates in increasing order (the first is the low-load "
            "baseline of the knee)"
        )
