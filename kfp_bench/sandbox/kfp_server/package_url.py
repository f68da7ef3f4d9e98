"""Fetching a pipeline version's ``package_url``, as KFP's API server checks and fetches it.

After kubeflow/pipelines 7b70c7b95f ``backend/src/apiserver/validation/pipeline_url.go``:
ValidatePipelineURL (https only, http with ``PIPELINE_URL_ALLOW_HTTP``; the scheme's default
port only; a host in the allowlist, storage.googleapis.com, s3.amazonaws.com, github.com,
raw.githubusercontent.com and ``PIPELINE_URL_ALLOWED_DOMAINS``, ``*`` a wildcard; no address in
a loopback, private, link-local or metadata range) and SafePipelineHTTPClient (a timeout of
``PIPELINE_URL_TIMEOUT`` seconds, 30 by default; no proxy; at most 10 redirects, each checked
again). ``PIPELINE_URL_VALIDATION_ENABLED=false`` turns the checks off, as KFP's own CI does for
its URL tests (.github/workflows/integration-tests-v1.yml:76). The settings are environment
variables, read at start as KFP's viper reads them. Schemes other than http and https fail as
Go's client fails them. KFP reads the body whole (server/util.go:30-45); this server stops at
32 MiB (common/const.go:67, MaxFileLength, the upload limit) and says so.
"""

from __future__ import annotations

import asyncio
import ipaddress
import os
import re
import socket
import urllib.parse
from dataclasses import dataclass, field

import aiohttp

from kfp_bench.sandbox.kfp_server.gateway import UserError

MAX_BYTES = 32 << 20  # common/const.go:67
_DOMAINS = ("storage.googleapis.com", "s3.amazonaws.com", "github.com",
            "raw.githubusercontent.com")  # fmt: skip
_BLOCKED = tuple(ipaddress.ip_network(n) for n in (
    "127.0.0.0/8", "::1/128", "10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "fc00::/7",
    "169.254.0.0/16", "fe80::/10", "169.254.169.254/32", "fd00:ec2::254/128", "0.0.0.0/8",
    "::/128"))  # fmt: skip
_PORTS = {"https": "443", "http": "80"}
_TRUE = {"1", "t", "T", "TRUE", "true", "True"}
_FALSE = {"0", "f", "F", "FALSE", "false", "False"}


def _bool(env, name: str, default: bool) -> bool:
    """common.GetBoolConfigWithDefault: Go's ParseBool; anything else stops the server."""
    text = env.get(name)
    if text is None:
        return default
    if text not in _TRUE | _FALSE:
        raise ValueError(f"{name}={text!r}: give true or false")
    return text in _TRUE


@dataclass(frozen=True, slots=True)
class UrlPolicy:
    enabled: bool = True
    allow_http: bool = False
    domains: tuple[str, ...] = _DOMAINS
    timeout_s: int = 30
    patterns: tuple[re.Pattern, ...] = field(default=(), compare=False)

    @classmethod
    def from_env(cls, env=None) -> UrlPolicy:
        env = os.environ if env is None else env
        extra = [d.strip() for d in env.get("PIPELINE_URL_ALLOWED_DOMAINS", "").split(",")]
        domains = _DOMAINS + tuple(d for d in extra if d)
        try:
            timeout = int(env.get("PIPELINE_URL_TIMEOUT", "30"))
        except ValueError:
            timeout = 0  # viper.GetInt of a non-number is 0
        # pipeline_url.go:102: the domain quoted, ``*`` matching anything
        patterns = tuple(re.compile("^" + re.escape(d).replace(r"\*", ".*") + "$") for d in domains)
        return cls(
            enabled=_bool(env, "PIPELINE_URL_VALIDATION_ENABLED", True),
            allow_http=_bool(env, "PIPELINE_URL_ALLOW_HTTP", False),
            domains=domains,
            timeout_s=timeout if timeout >= 1 else 30,  # pipeline_url.go:201-204
            patterns=patterns,
        )

    async def check(self, url: str) -> None:
        """ValidatePipelineURL (pipeline_url.go:114-156): UserError 400 with its reason."""
        if not self.enabled:
            return
        if not parses(url):
            raise UserError.invalid_input(f"invalid URL: parse {_q(url)}: invalid URI for request")
        parsed = urllib.parse.urlsplit(url)
        scheme = parsed.scheme
        if scheme != "https" and (scheme != "http" or not self.allow_http):
            raise UserError.invalid_input(f"URL scheme {_q(scheme)} not allowed, use https")
        port = _port(parsed)
        if port and port != _PORTS[scheme]:
            raise UserError.invalid_input(
                f"{scheme.upper()} requires port {_PORTS[scheme]}, got {_q(port)}"
            )
        host = (parsed.hostname or "").rstrip(".").lower()
        if not any(p.match(host) for p in self.patterns):
            raise UserError.invalid_input(f"URL domain {_q(host)} not in allowlist")
        for ip in await _resolve(host):
            if any(ip in net for net in _BLOCKED if net.version == ip.version):
                raise UserError.invalid_input(f"URL resolves to blocked IP range: {ip}")


def parses(url: str) -> bool:
    """Go's url.ParseRequestURI, near enough: an absolute URI or an absolute path."""
    return bool(re.match(r"[A-Za-z][A-Za-z0-9+.-]*:", url) or url.startswith("/"))


def _port(parsed) -> str:
    netloc = parsed.netloc.rsplit("@", 1)[-1]
    m = re.search(r":(\d*)$", netloc)
    return m.group(1) if m and not netloc.endswith("]") else ""


def _q(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


async def _resolve(host: str) -> list:
    loop = asyncio.get_running_loop()
    try:
        infos = await asyncio.wait_for(loop.getaddrinfo(host, None), 5)  # dnsLookupTimeout
    except (TimeoutError, OSError) as e:
        raise UserError.invalid_input(f"DNS resolution failed for {_q(host)}: {e}") from None
    return [ipaddress.ip_address(i[4][0].split("%")[0]) for i in infos if i[0] in
            (socket.AF_INET, socket.AF_INET6)]  # fmt: skip


class FetchError(Exception):
    """The GET failed: ``status`` (an HTTP status line, when the server answered non-200) or
    the transport's ``reason``."""

    def __init__(self, reason: str, status: str = "") -> None:
        super().__init__(reason)
        self.reason, self.status = reason, status


async def fetch(policy: UrlPolicy, url: str) -> bytes:
    """The body of GET ``url``; UserError 400 for a redirect the policy refuses (returned as
    the client's CheckRedirect error, pipeline_server.go:213-219), FetchError otherwise."""

    scheme = urllib.parse.urlsplit(url).scheme
    if scheme not in ("http", "https"):
        raise FetchError(f"Get {_q(url)}: unsupported protocol scheme {_q(scheme)}")
    timeout = aiohttp.ClientTimeout(total=policy.timeout_s)
    try:
        async with aiohttp.ClientSession(timeout=timeout, trust_env=False) as session:
            for _hop in range(11):
                async with session.get(url, allow_redirects=False) as resp:
                    if resp.status in (301, 302, 303, 307, 308) and "Location" in resp.headers:
                        if _hop == 10:
                            raise UserError.invalid_input("too many redirects")
                        url = urllib.parse.urljoin(url, resp.headers["Location"])
                        await policy.check(url)
                        continue
                    if resp.status != 200:
                        raise FetchError("", status=f"{resp.status} {resp.reason or ''}".strip())
                    return await _read(resp, url)
    except (TimeoutError, aiohttp.ClientError, OSError) as e:
        raise FetchError(f"Get {_q(url)}: {type(e).__name__}: {e}") from None
    raise AssertionError("unreachable")


async def _read(resp, url: str) -> bytes:
    data = await resp.content.read(MAX_BYTES + 1)
    if len(data) > MAX_BYTES:
        raise UserError.invalid_input(
            f"the pipeline spec at {url} is over {MAX_BYTES >> 20} MiB: this local server reads "
            "no more (KFP's upload limit); upload a smaller package"
        )
    return data
