"""The pipeline's first look at its targets: one request to each, before anything is created.

``probe`` tries the inference URL (unless the benchmark deploys the InferenceService) and the KFP
API's healthz; ``probe_llm`` reads the LLM server's ``/v1/models``. A target every request would
fail on stops the run with one ``ConfigError`` naming the parameter and the fix: no connection
(a refusal is retried ``REFUSED_FOR_S``: a port-forward or a pod starting), 404, 401/403 or a
redirect (no credentials are sent; envoy's "RBAC: access denied" names mesh_route), and for the
inference URL a refused body (400/413/415/422) or method (405). A 5xx, a 429 or a silent
connection is measured, not refused: a Knative service scaled to zero answers 502/503 and its
activator holds requests while a pod starts. For the KFP API anything but healthz's JSON stops
the run. It prints nothing."""

from __future__ import annotations

import json
import socket
import ssl
import time
import urllib.error
import urllib.request

from kfp_bench.errors import ConfigError
from kfp_bench.mesh import RBAC_DENIED, is_mesh_refusal
from kfp_bench.redact import public_url
from kfp_bench.steps.load_params import load_options
from kfp_bench.steps.params import BenchParams
from kfp_bench.steps.runs_params import runs_options

# Imports inside functions: the steps' modules must import in the pod of any step, which
# installs only its own extra (components/_step.py): what another extra's packages back is
# imported in the function that needs it (tests/test_imports.py checks the top).

#: Seconds one probe request may take (connect and answer).
TIMEOUT_S = 5.0
#: Seconds a refused connection is tried again before it stops the run.
REFUSED_FOR_S = 3.0
_RETRY_PAUSE_S = 0.25
_PAYLOAD_STATUSES = {400, 413, 415, 422}


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """A redirect is an answer to report (an auth gateway's login page), not one to follow."""

    def redirect_request(self, *args, **kwargs):
        return None


def probe(p: BenchParams) -> list[str]:
    """Send one request to each target ``p`` will use; return what was checked, one line each.

    Raises:
        ConfigError: a target unreachable, absent (404) or refusing (401/403, a redirect); the
            message names the parameter (inference_url, host_header, payload, kfp_host) and the fix.
    """
    lines = []
    if (p.run_load or p.sweep_rates) and not p.isvc:
        lines.append(_probe_inference(p))
    if p.run_benchmark:
        lines.append(_probe_kfp(p))
    return lines


def _retrying_refused(fn):
    """``fn()``, tried again while the connection is refused, for ``REFUSED_FOR_S``."""
    deadline = time.monotonic() + REFUSED_FOR_S
    while True:
        try:
            return fn()
        except urllib.error.HTTPError:
            raise
        except urllib.error.URLError as exc:
            if not isinstance(exc.reason, ConnectionRefusedError) or time.monotonic() >= deadline:
                raise
            time.sleep(_RETRY_PAUSE_S)


def _send(req: urllib.request.Request, context: ssl.SSLContext | None):
    """(status, reason, location, body) of one request, redirects not followed; the body's
    first 64 KiB.

    Raises:
        urllib.error.URLError: no connection (its ``reason`` says why).
        TimeoutError: connected, but no answer in ``TIMEOUT_S``.
    """
    # No proxies from the environment: the load engine uses none either.
    handlers = [urllib.request.ProxyHandler({}), _NoRedirect()]
    if context is not None:
        handlers.append(urllib.request.HTTPSHandler(context=context))
    opener = urllib.request.build_opener(*handlers)

    def once():
        try:
            with opener.open(req, timeout=TIMEOUT_S) as resp:
                return resp.status, resp.reason, "", resp.read(1 << 16)
        except urllib.error.HTTPError as exc:
            return exc.code, exc.reason, exc.headers.get("Location", ""), exc.read(1 << 16)

    return _retrying_refused(once)


def _why(exc: urllib.error.URLError) -> str:
    reason = exc.reason
    if isinstance(reason, socket.gaierror):
        return "its host name does not resolve"
    if isinstance(reason, ConnectionRefusedError):
        return f"connection refused (for {REFUSED_FOR_S:g} s)"
    if isinstance(reason, TimeoutError):
        return f"no connection in {TIMEOUT_S:g} s"
    if isinstance(reason, ssl.SSLError):
        return f"TLS failed ({reason})"
    return str(reason)


def _probe_inference(p: BenchParams) -> str:
    url, host = p.inference_url, p.host_header
    headers = {"Content-Type": "application/json", "User-Agent": "kfp-bench probe"}
    if host:
        headers["Host"] = host  # urllib sends the caller's Host instead of the URL's
    req = urllib.request.Request(url, data=p.payload.encode(), headers=headers, method="POST")
    url = public_url(url)  # what the messages below show (the request has the URL as given)
    where = f"pipeline parameter inference_url={url!r}"
    via = f" with host_header={host!r}" if host else ""
    fix = (
        "deploy the model there, give the URL of a running InferenceService (kubectl get "
        "inferenceservices -A), or give isvc to have the benchmark deploy one"
    )
    try:
        status, reason, location, body = _send(req, load_options(p).ssl_context())
    except urllib.error.URLError as exc:
        raise ConfigError(f"{where}: cannot reach it ({_why(exc)}); {fix}") from None
    except TimeoutError:
        return (
            f"inference_url {url}{via}: connected, no answer in {TIMEOUT_S:g} s (a service "
            "starting from zero?); the load goes on"
        )
    said = f"POST{via} answered HTTP {status} {reason}"
    if status == 404:
        hint = (
            "; or host_header names no service the ingress knows (kubectl get isvc NAME -o "
            "jsonpath='{.status.url}' gives it)"
            if host
            else ""
        )
        raise ConfigError(f"{where}: {said}: no model there; {fix}{hint}")
    if is_mesh_refusal(status, body):
        raise ConfigError(f"{where}: {said} ({RBAC_DENIED.decode()}): {_mesh_fix(p)}")
    if status in (401, 403) or 300 <= status < 400:
        to = f" to {location}" if location else ""
        what = "a redirect" + to if status < 400 else "credentials refused"
        raise ConfigError(
            f"{where}: {said} ({what}): the load sends no credentials; give the in-cluster URL "
            "of the predictor (http://NAME-predictor.NAMESPACE.svc.cluster.local/...), which "
            "needs none"
        )
    if status in _PAYLOAD_STATUSES:
        raise ConfigError(
            f"pipeline parameter payload={p.payload[:60]!r}: {url} {said}: the model refuses "
            "the request body; give one the model takes, e.g. KServe V1 "
            '{"instances": [[...]]}'
        )
    if status == 405:
        raise ConfigError(f"{where}: {said}: that route takes no POST; give the predict URL")
    if status >= 429:
        return (
            f"inference_url {url}{via}: HTTP {status} {reason}: a server fault or limit, not "
            "bad input; the load goes on and measures it"
        )
    return f"inference_url {url}{via}: HTTP {status} {reason}"


def _mesh_fix(p: BenchParams) -> str:
    """What to do when the predictor's Istio sidecar refused the probe (kfp_bench.mesh)."""
    if p.mesh_route != "sidecar":
        return (
            "the Istio mesh refused it: this pod has no sidecar, so no mesh identity (KFP "
            'starts every pod with sidecar.istio.io/inject "false"), and Kubeflow\'s '
            "policies deny such a caller; give mesh_route=sidecar and upload "
            "compiled/kfp_bench_mesh.yaml, whose load pods carry a sidecar "
            '(docs/running-in-a-cluster.md, "Through the mesh")'
        )
    return (
        "the Istio mesh refused it although mesh_route=sidecar: either this pod has no "
        "sidecar (upload compiled/kfp_bench_mesh.yaml, not kfp_bench.yaml; the namespace needs "
        "the istio-injection=enabled label), or the predictor is in another namespace or "
        "Serverless, where the call reaches it through a gateway: apply "
        'deploy/mesh/allow-load.yaml (docs/running-in-a-cluster.md, "Through the mesh")'
    )


def _probe_kfp(p: BenchParams) -> str:
    from kfp_bench.kfp.backend import server_version

    host = p.kfp_host.rstrip("/")
    url = public_url(f"{host}/apis/v2beta1/healthz")  # shown only: the check sends to host
    where = f"pipeline parameter kfp_host={public_url(p.kfp_host)!r}"
    # The driver's credentials: healthz itself wants none, but a gateway in front may.
    authorization = runs_options(p, "check").auth.configure(host).authorization
    token = authorization() if authorization else None
    headers = {"User-Agent": "kfp-bench probe", **({"Authorization": token} if token else {})}
    fix = (
        "give the KFP API's address, e.g. http://ml-pipeline.kubeflow.svc.cluster.local:8888 "
        "in the cluster"
    )
    try:
        tag = _retrying_refused(lambda: server_version(host, TIMEOUT_S, headers))
    except urllib.error.HTTPError as exc:
        said = f"GET {url} answered HTTP {exc.code} {exc.reason}"
        if exc.code == 404:
            raise ConfigError(f"{where}: {said}: no KFP 2.x API there; {fix}") from None
        if exc.code in (401, 403):
            raise ConfigError(
                f"{where}: {said}: it refuses the benchmark's credentials; give token_secret, "
                "a Secret holding a KFP API token, or the in-cluster address, "
                "http://ml-pipeline.kubeflow.svc.cluster.local:8888"
            ) from None
        raise ConfigError(f"{where}: {said}; {fix}") from None
    except urllib.error.URLError as exc:
        raise ConfigError(f"{where}: cannot reach {url} ({_why(exc)}); {fix}") from None
    except TimeoutError:
        raise ConfigError(f"{where}: {url} answered nothing in {TIMEOUT_S:g} s; {fix}") from None
    except ValueError:
        # server_version follows redirects: a gateway's login page is HTML, not healthz's JSON.
        raise ConfigError(f"{where}: GET {url} answered no JSON (a sign-in page?); {fix}") from None
    return f"kfp_host {public_url(p.kfp_host)}: healthz answered, KFP {tag or 'release unknown'}"


def probe_llm(p: BenchParams) -> tuple[str, str]:
    """GET ``<llm_url>/v1/models``, the list every OpenAI-compatible server serves (KServe:
    python/kserve/kserve/protocol/rest/openai/endpoints.py at aaac4e29, under its /openai
    prefix); return what was checked, in a line, and the model the load is to ask for
    (llm_model, else the one model listed).

    Raises:
        ConfigError: unreachable, 404, refusing, no JSON list, or llm_model not among the
            models listed (or, llm_model empty, none or several listed): naming the parameter.
    """

    url = p.llm_url.rstrip("/") + "/v1/models"
    where = f"pipeline parameter llm_url={public_url(p.llm_url)!r}"
    fix = "give the server's OpenAI base URL, without /v1 (KServe: http://NAME-predictor.NS/openai)"
    req = urllib.request.Request(url, headers={"User-Agent": "kfp-bench probe"})
    url = public_url(url)  # what the messages below show (the request has the URL as given)
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}), _NoRedirect())
    try:
        with _retrying_refused(lambda: opener.open(req, timeout=TIMEOUT_S)) as resp:
            names = [m["id"] for m in json.loads(resp.read(1 << 20))["data"]]
    except urllib.error.HTTPError as exc:
        said = f"GET {url} answered HTTP {exc.code} {exc.reason}"
        if is_mesh_refusal(exc.code, exc.read(1 << 16)):
            raise ConfigError(f"{where}: {said} ({RBAC_DENIED.decode()}): {_mesh_fix(p)}") from None
        raise ConfigError(f"{where}: {said}; {fix}") from None
    except urllib.error.URLError as exc:
        raise ConfigError(f"{where}: cannot reach {url} ({_why(exc)}); {fix}") from None
    except TimeoutError:
        raise ConfigError(f"{where}: {url} answered nothing in {TIMEOUT_S:g} s; {fix}") from None
    except (ValueError, KeyError, TypeError):
        raise ConfigError(f"{where}: GET {url} answered no OpenAI model list; {fix}") from None
    listed = ", ".join(names) or "none"
    if p.llm_model and p.llm_model not in names:
        raise ConfigError(
            f"pipeline parameter llm_model={p.llm_model!r}: {url} serves {listed}; give one of "
            "them, or leave llm_model empty for the one model listed"
        )
    if not p.llm_model and len(names) != 1:
        raise ConfigError(
            f"pipeline parameter llm_model is empty and {url} lists {listed}; give llm_model"
        )
    model = p.llm_model or names[0]
    llm_url = public_url(p.llm_url)
    return f"llm_url {llm_url}: /v1/models lists {listed}; the LLM load asks for {model}", model
