"""Credentials and namespace of a caller inside a Kubernetes pod: a pipeline step, a notebook.

This module owns three choices, made the same way for the steps, ``kfp-bench submit`` /
``schedule`` and examples/benchmark.ipynb:

- The namespace. Multi-user KFP refuses an experiment, a run or a LIST without one (kubeflow/
  pipelines 7b70c7b95f68 backend/src/apiserver/server/experiment_server.go ``canAccessExperiment``
  and run_server.go). Whether the API is multi-user is read from its healthz (``multi_user``,
  main.go's handler), not guessed; when it is and no namespace is given, a pod takes its own,
  from the service-account namespace file (the file kfp.Client itself reads: kfp 2.17.3
  client.py ``Client._NAMESPACE_PATH``); with none to be found, a ``ConfigError`` names the
  parameter before anything is created.
- The token of a step (``step_auth``): the projected service-account token first, the one the
  kubelet keeps fresh; the Secret's token only when there is no projected one or the API refuses
  it (401). A ``kubectl create token --duration 24h`` Secret expires after a day, so preferring
  it failed every scheduled run from then on.
- kfp.Client's credentials (``kfp_client``): with an explicit host kfp.Client reads no token
  itself (client.py ``_load_config`` returns early ``if host``), so inside a cluster it gets
  ``ServiceAccountTokenVolumeCredentials`` on the projected token, outside the given token file.

No token is ever printed: messages name its source and what it claims (``auth.token_hint``).
"""

from __future__ import annotations

import os
import urllib.error
import urllib.request
from collections.abc import Callable
from urllib.parse import urlencode

from kfp_bench.errors import ConfigError
from kfp_bench.kfp.auth import Auth, sa_token_path, token_hint
from kfp_bench.redact import public_url

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
    from kfp_bench.kfp.backend import healthz

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


def refused(host: str, token_path: str, namespace: str, timeout: float = 10.0) -> bool:
    """True when the KFP API answers 401 to one authenticated read with the token in
    ``token_path`` (the driver's preflight call: ListExperiments, page size 1)."""
    try:
        with open(token_path) as f:
            token = f.read().strip()
    except OSError:
        return True
    query = urlencode({"page_size": 1, **({"namespace": namespace} if namespace else {})})
    req = urllib.request.Request(f"{host}/apis/v2beta1/experiments?{query}")
    req.add_header("Authorization", f"Bearer {token}")
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(req, timeout=timeout) as resp:
            resp.read()
    except urllib.error.HTTPError as exc:
        return exc.code == 401
    except OSError:  # unreachable: not a refusal; the driver reports it
        return False
    return False


def step_auth(
    host: str, namespace: str, secret_file: str, secret_name: str, log: Log = print
) -> Auth:
    """The driver's auth in a pipeline step: the namespace as ``resolve_namespace`` finds it
    (``namespace`` being the pipeline parameter), and the projected service-account token, or the
    Secret's at ``secret_file`` when there is no projected token or the API refuses it."""
    from kfp_bench.kfp.options import check_host

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
    import warnings

    import kfp

    credentials = client_credentials(token_file)
    ns = resolve_namespace(host, namespace, param, log)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # kfp.Client's v1-backend notice
        client = kfp.Client(host=host, namespace=ns or "kubeflow", credentials=credentials)
    return client, ns
