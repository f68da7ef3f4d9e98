"""Credentials and namespace of a caller inside a Kubernetes pod: a pipeline step, a notebook.

The namespace: multi-user KFP refuses calls without one (experiment_server.go
``canAccessExperiment`` at 7b70c7b95f68); whether it is multi-user is read from healthz, and a
pod then takes its own from the service-account namespace file (kfp 2.17.3
``Client._NAMESPACE_PATH``), else a ``ConfigError`` names the parameter. A step's token
(``step_auth``): the projected one first, kept fresh by the kubelet; a Secret's only without it
or on a 401 (a 24 h Secret preferred failed every scheduled run after a day). kfp.Client's
(``kfp_client``): with an explicit host it reads no token itself (``_load_config``), so it is
given one. No token is ever printed."""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.request
import warnings
from collections.abc import Callable
from urllib.parse import urlencode

from kfp_bench.errors import ConfigError
from kfp_bench.kfp.auth import Auth, sa_token_path, token_hint
from kfp_bench.kfp.backend import healthz
from kfp_bench.kfp.options import check_host
from kfp_bench.redact import public_url

# Imports inside functions: the kfp SDK, in no extra of kfp-bench (a step's launcher installs it),
# only for its in-cluster credentials.

#: The variable that moves the pod's namespace file (tests simulate a pod with it).
POD_NAMESPACE_ENV = "KFP_BENCH_POD_NAMESPACE_PATH"
POD_NAMESPACE_PATH = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"

Log = Callable[[str], object]


def pod_namespace_path() -> str:
    return os.environ.get(POD_NAMESPACE_ENV) or POD_NAMESPACE_PATH


def pod_namespace() -> str:
    """The namespace this pod runs in; "" outside a pod."""
    try:
        with open(pod_namespace_path()) as f:
            return f.read().strip()
    except OSError:
        return ""


def is_multi_user(host: str, timeout: float = 10.0) -> bool | None:
    """Whether ``host`` is multi-user KFP, by its healthz; None when healthz does not say."""
    try:
        return healthz(host, timeout).get("multi_user") is True
    except (OSError, ValueError):  # unreachable or no JSON: the driver's preflight says which
        return None


def resolve_namespace(host: str, namespace: str, param: str, log: Log) -> str:
    """``namespace``, else the pod's own when ``host`` is multi-user KFP, else "".

    Raises:
        ConfigError: ``host`` is multi-user and no namespace can be found; names ``param``.
    """
    if namespace or not is_multi_user(host):
        return namespace
    found = pod_namespace()
    where = public_url(host)
    if found:
        log(
            f"namespace {found}: {where} is multi-user KFP and {param} is empty, so this pod's "
            f"own namespace ({pod_namespace_path()}) is used"
        )
        return found
    raise ConfigError(
        f"{param} is empty, and {where} is multi-user KFP (healthz multi_user true), which "
        "refuses experiments and runs without a namespace; no pod namespace is at "
        f"{pod_namespace_path()}: set {param} to your profile's namespace"
    )


def send(host: str, auth: Auth, method: str, path: str, body=None, timeout: float = 30.0):
    """One request to the KFP API over plain urllib, with ``auth``'s token and no proxy from the
    environment: (HTTP status, 0 for no answer; the body or the error, redacted)."""
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(host.rstrip("/") + path, data=data, method=method)
    req.add_header("Content-Type", "application/json")
    header = auth.configure(host).authorization
    if header is not None and (value := header()):
        req.add_header("Authorization", value)
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(req, timeout=timeout) as resp:
            return resp.status, resp.read().decode(errors="replace")
    except urllib.error.HTTPError as exc:
        return exc.code, auth.redact(exc.read().decode(errors="replace"))[:300]
    except OSError as exc:  # unreachable
        return 0, auth.redact(str(exc))[:300]


def refused(host: str, token_path: str, namespace: str, timeout: float = 10.0) -> bool:
    """True when the KFP API answers 401 to one authenticated read with the token in
    ``token_path`` (the driver's preflight call: ListExperiments, page size 1)."""
    query = urlencode({"page_size": 1, **({"namespace": namespace} if namespace else {})})
    try:
        auth = Auth("token-file", token_path)
        status, _ = send(host, auth, "GET", f"/apis/v2beta1/experiments?{query}", None, timeout)
    except ConfigError:  # no token to send
        return True
    return status == 401  # no answer (0) is not a refusal: the driver reports it


def step_auth(
    host: str, namespace: str, secret_file: str, secret_name: str, log: Log = print
) -> Auth:
    """The driver's auth in a pipeline step: the namespace as ``resolve_namespace`` finds it
    (``namespace`` being the pipeline parameter), and the projected service-account token, or the
    Secret's at ``secret_file`` when there is no projected token or the API refuses it."""
    host = check_host(host)
    ns = resolve_namespace(host, namespace, "pipeline parameter namespace", log)
    projected = sa_token_path()
    secret = Auth("token-file", secret_file, ns, source=f"Secret {secret_name}")
    has_secret = bool(secret_file) and os.path.exists(secret_file)
    if not os.path.exists(projected):
        return secret if has_secret else Auth("none", "", ns)
    sa = Auth("sa-token", "", ns)
    if has_secret and refused(host, projected, ns):
        log(
            f"the KFP API refused the {sa.token_source()} (HTTP 401; {token_hint(projected)}): "
            f"using the {secret.token_source()}"
        )
        return secret
    return sa


def client_credentials(token_file: str = ""):
    """kfp.Client's ``credentials``: the token file given, else inside a pod the projected
    service-account token; None outside with none given. Each is re-read as kfp refreshes it."""
    from kfp.client import ServiceAccountTokenVolumeCredentials

    if token_file:
        try:
            with open(token_file) as f:
                ok = bool(f.read().strip())
        except OSError as exc:
            why = f"cannot read it ({exc.strerror})"
            raise ConfigError(f"--token-file {token_file}: {why}") from None
        if not ok:
            raise ConfigError(f"--token-file {token_file}: the file is empty; write the token")
        return ServiceAccountTokenVolumeCredentials(token_file)
    if os.path.exists(sa_token_path()):
        return ServiceAccountTokenVolumeCredentials(sa_token_path())
    return None


def kfp_client(
    host: str,
    namespace: str = "",
    token_file: str = "",
    *,
    param: str = "namespace",
    log: Log = print,
):
    """A ``kfp.Client`` for ``host`` with credentials (``client_credentials``) and the namespace
    (``resolve_namespace``); returns ``(client, namespace)``, the namespace "" for single-user
    KFP. What ``kfp-bench submit`` / ``schedule`` and examples/benchmark.ipynb use.

    Raises:
        ConfigError: an unreadable token file; multi-user KFP and no namespace (names ``param``).
    """
    import kfp

    credentials = client_credentials(token_file)
    ns = resolve_namespace(host, namespace, param, log)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # kfp.Client's v1-backend notice
        client = kfp.Client(host=host, namespace=ns or "kubeflow", credentials=credentials)
    return client, ns
