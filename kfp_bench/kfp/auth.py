"""How the driver authenticates to the KFP API, and in which namespace it works.

Modes: ``none`` (standalone KFP, a port-forward), ``token-file`` (re-read when the kubelet
rotates it), ``sa-token`` (the projected service-account token, audience
``pipelines.kubeflow.org``) and ``kfp-client`` (whatever ``kfp.Client`` finds itself); ``auto``
picks the first that applies. A token is never printed, logged or saved: ``Auth`` keeps the file
name, ``describe()`` and ``why_refused()`` say where it came from and what it claims, ``redact()``
scrubs text. ``Auth.configure`` gives ``kfp.rest`` the headers, token, TLS and proxy settings
kfp-server-api 2.17.3's Configuration held, without that package."""

from __future__ import annotations

import base64
import binascii
import dataclasses
import json
import os
import threading
import time
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from kfp_bench.errors import ConfigError
from kfp_bench.redact import scrub

# Imports inside functions: the kfp SDK, in no extra of kfp-bench (a step's launcher installs it),
# only for its in-cluster credentials.

#: The variable and default path kfp's ServiceAccountTokenVolumeCredentials read.
SA_TOKEN_ENV = "KF_PIPELINES_SA_TOKEN_PATH"
SA_TOKEN_PATH = "/var/run/secrets/kubeflow/pipelines/token"
#: The audience KFP's API server asks of a projected service-account token (its TokenReview;
#: kubeflow/pipelines 7b70c7b95f68 backend/src/apiserver/common/const.go,
#: DefaultTokenReviewAudience).
AUDIENCE = "pipelines.kubeflow.org"
MODES = ("auto", "none", "token-file", "sa-token", "kfp-client")
AUTH_HINT = (
    "pass --token-file FILE (a bearer token), run in the cluster with the service-account token at "
    f"${SA_TOKEN_ENV} (audience pipelines.kubeflow.org), or --auth kfp-client; in multi-user KFP "
    "also give --namespace"
)


class _TokenFile:
    """A bearer token from a file, re-read when its mtime changes (rotated in place)."""

    def __init__(self, path: str, flag: str):
        self.path, self.flag = path, flag
        self._lock = threading.Lock()
        self._mtime = None
        self.token = ""
        self.refresh()

    def refresh(self) -> str:
        try:
            mtime = os.stat(self.path).st_mtime_ns
            if mtime != self._mtime:
                with self._lock, open(self.path) as f:
                    token = f.read().strip()
                if not token:
                    raise ConfigError(f"{self.flag} {self.path}: the token file is empty")
                self.token, self._mtime = token, mtime
        except OSError as exc:
            if not self.token:  # a rotation mid-benchmark keeps the token we have
                raise ConfigError(
                    f"{self.flag} {self.path}: cannot read the token ({exc.strerror}); {AUTH_HINT}"
                ) from None
        return self.token

    def authorization(self) -> str:
        """The Authorization header of one call, the file re-read first if it changed."""
        return f"Bearer {self.refresh()}"


def sa_token_path() -> str:
    """Where kfp (and the driver) look for the projected service-account token."""
    return os.environ.get(SA_TOKEN_ENV) or SA_TOKEN_PATH


def jwt_claims(token: str) -> dict | None:
    """The payload of a JWT, decoded WITHOUT verifying it (only to say why a server may refuse
    it); None when ``token`` is no JWT."""
    parts = token.split(".")
    if len(parts) != 3:
        return None
    try:
        payload = base64.urlsafe_b64decode(parts[1] + "=" * (-len(parts[1]) % 4))
        claims = json.loads(payload)
    except (binascii.Error, ValueError):
        return None
    return claims if isinstance(claims, dict) else None


def token_hint(path: str, now: float | None = None) -> str:
    """What the token in ``path`` says of its expiry and audience, fit to print: never the
    token itself."""
    try:
        with open(path) as f:
            claims = jwt_claims(f.read().strip())
    except OSError as exc:
        return f"cannot read it ({exc.strerror})"
    if claims is None:
        return "not a JWT, so its expiry and audience cannot be told"
    out = []
    exp = claims.get("exp")
    if isinstance(exp, int | float):
        left = exp - (time.time() if now is None else now)
        when = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(exp))
        state = f"expired {-left / 3600:.1f} h ago" if left <= 0 else f"{left / 3600:.1f} h left"
        out.append(f"exp {when} ({state})")
    else:
        out.append("no exp")
    aud = claims.get("aud")
    auds = [aud] if isinstance(aud, str) else aud if isinstance(aud, list) else []
    fit = "" if AUDIENCE in auds else f", not {AUDIENCE}"
    out.append(f"aud {', '.join(map(str, auds)) or 'none'}{fit}")
    return "JWT " + "; ".join(out)


@dataclass(frozen=True)
class Transport:
    """What the driver's HTTP client needs of the credentials: see ``kfp_bench.kfp.rest``.

    Attributes:
        headers: sent with every call (kfp.Client's saved header, its Cookie). They may hold a
            credential, so they are left out of the repr, as ``authorization`` is.
        authorization: the ``authorization`` header of each call, asked again at each call (a
            token file rotates); None or a None answer sends none.
        verify_ssl: verify the server's TLS certificate.
        ssl_ca_cert: a CA bundle to verify it with; None: certifi's, as kfp_server_api used.
        proxy: an HTTP(S) proxy URL every call goes through.
    """

    headers: Mapping[str, str] = field(default_factory=dict, repr=False)
    authorization: Callable[[], str | None] | None = field(default=None, repr=False)
    verify_ssl: bool = True
    ssl_ca_cert: str | None = None
    proxy: str | None = None


@dataclass(frozen=True)
class Auth:
    """Credentials and namespace of the driver.

    Attributes:
        mode: auto, none, token-file, sa-token or kfp-client (see kfp_bench.kfp.auth).
        token_file: a file holding a bearer token; never printed.
        namespace: the Kubernetes namespace of multi-user KFP; empty for standalone KFP.
        source: what the token file is, to name it in messages (e.g. "Secret kfp-bench-token");
            empty: the file's name says it.
    """

    mode: str = "auto"
    token_file: str = ""
    namespace: str = ""
    source: str = ""

    def resolved(self) -> Auth:
        """The same auth with ``auto`` replaced by the mode it stands for; checks the inputs."""
        if self.mode not in MODES:
            raise ConfigError(f"--auth {self.mode!r}: use one of {', '.join(MODES)}")
        if self.mode == "token-file" and not self.token_file:
            raise ConfigError("--auth token-file needs --token-file FILE")
        if self.token_file and self.mode not in ("auto", "token-file"):
            raise ConfigError(f"--token-file given with --auth {self.mode}: drop one of them")
        if self.mode != "auto":
            return self
        if self.token_file:
            return dataclasses.replace(self, mode="token-file")
        if os.path.exists(sa_token_path()):
            return dataclasses.replace(self, mode="sa-token")
        return dataclasses.replace(self, mode="none")

    def token_source(self) -> str:
        """Which token is sent, fit to print: "projected service-account token at PATH",
        "Secret NAME (PATH)", "token file PATH"; "" when none is."""
        a = self.resolved()
        if a.mode == "sa-token":
            return f"projected service-account token at {sa_token_path()}"
        if a.mode == "token-file":
            return f"{a.source} ({a.token_file})" if a.source else f"token file {a.token_file}"
        return ""

    def why_refused(self) -> str:
        """For a 401: the token tried and what it claims (expiry, audience), never the token."""
        a = self.resolved()
        if a.mode not in ("token-file", "sa-token"):
            return f"the request carried {a.describe()}"
        hint = token_hint(a.token_file or sa_token_path())
        return f"the token tried: {a.token_source()}, {hint}; KFP wants audience {AUDIENCE}"

    def describe(self) -> str:
        """Where the credentials come from, fit to print: never the token itself."""
        a = self.resolved()
        ns = f", namespace {a.namespace}" if a.namespace else ""
        if a.mode == "token-file":
            return f"bearer token from {a.source or a.token_file}{ns}"
        if a.mode == "sa-token":
            return f"service-account token from {sa_token_path()}{ns}"
        if a.mode == "kfp-client":
            return f"kfp.Client's credentials{ns}"
        return f"no auth{ns}"

    def configure(self, host: str) -> Transport:
        """What the driver's client must send to ``host`` and how it connects; reads the token
        file now (``ConfigError`` if it cannot), and again at each call once it changed."""
        a = self.resolved()
        if a.mode in ("token-file", "sa-token"):
            path = a.token_file or sa_token_path()
            flag = "--token-file" if a.mode == "token-file" else f"${SA_TOKEN_ENV}"
            return Transport(authorization=_TokenFile(path, flag).authorization)
        if a.mode == "kfp-client":
            return _borrow_kfp_client(host, a.namespace)
        return Transport()

    def redact(self, text: str) -> str:
        """``text`` with the token, if one is in use, replaced by ``<token>``, and no URL's
        userinfo (``kfp_bench.redact``)."""
        text = scrub(text)
        a = self.resolved()
        if a.mode not in ("token-file", "sa-token"):
            return text
        try:
            with open(a.token_file or sa_token_path()) as f:
                token = f.read().strip()
        except OSError:
            return text
        return text.replace(token, "<token>") if token else text


def _borrow_kfp_client(host: str, namespace: str) -> Transport:
    """Build a ``kfp.Client`` and take its credentials; the driver keeps its own client because
    it needs a connection pool as large as its concurrency. (kfp.Client brings kfp_server_api,
    but this mode needs the kfp SDK anyway; the other modes import neither.)"""
    import kfp

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # "only works with KFP v2.0.0-beta.2+"
        try:
            client = kfp.Client(host=host, namespace=namespace or "kubeflow")
        except Exception as exc:  # kfp.Client raises whatever its auth helpers raise
            raise ConfigError(
                f"--auth kfp-client: kfp.Client(host={host!r}) failed ({type(exc).__name__}); "
                f"{AUTH_HINT}"
            ) from None
    borrowed = client._existing_config
    api_client = client._run_api.api_client
    # Every default header but the User-Agent kfp_server_api sets itself: kfp.Client's
    # client_authentication_header (a saved context) is one of them, and taking only the last
    # header would take the User-Agent instead. The Cookie follows them, as ApiClient sends it.
    headers = {k: v for k, v in api_client.default_headers.items() if k.lower() != "user-agent"}
    if api_client.cookie:
        headers["Cookie"] = api_client.cookie

    def authorization() -> str | None:
        # Configuration.auth_settings(): the header only while api_key has one, and
        # get_api_key_with_prefix() runs kfp.Client's refresh hook (its credentials) first.
        if "authorization" not in borrowed.api_key:
            return None
        return borrowed.get_api_key_with_prefix("authorization")

    return Transport(
        headers=headers,
        authorization=authorization,
        verify_ssl=borrowed.verify_ssl,
        ssl_ca_cert=borrowed.ssl_ca_cert,
        proxy=borrowed.proxy,
    )
