"""Kubeflow's Istio mesh between the load pods and the model: what the sidecar route puts on a
pod, how a step ends its sidecar when its load is over, and how envoy's refusal reads.

The sources this rests on (file:line at the commit named) are cited where each is used, and in
docs/running-in-a-cluster.md, "Through the mesh".
"""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.request

#: The routes of the mesh_route parameter.
ROUTES = ("none", "sidecar")
#: The only port the sidecar route's pods send through their sidecar: a KServe predictor's
#: Service port. Everything else (the KFP API, the object store, MLMD) bypasses it, so the
#: launcher's uploads after the step still work once the step has ended the sidecar.
MESH_PORT = 80
#: pilot-agent's quit endpoint: POST only, from localhost only, answers 200 "OK" (istio/istio
#: 86c9f01fd73, pilot/cmd/pilot-agent/status/server.go:1056-1071), on the status port that the
#: injector gives every sidecar (status.sidecar.istio.io/port, 15020 by default).
QUIT_URL = "http://localhost:15020/quitquitquit"
#: Where a test puts a stand-in for pilot-agent (a pod never sets it).
QUIT_URL_ENV = "KFP_BENCH_QUIT_URL"
#: The body of envoy's RBAC filter when it denies a request: a local reply, 403, text/plain
#: (envoyproxy/envoy source/extensions/filters/http/rbac/rbac_filter.cc, decodeHeaders:
#: ``sendLocalReply(Http::Code::Forbidden, "RBAC: access denied", ...)``). An inbound sidecar
#: names itself "server: istio-envoy" (istio/istio pilot/pkg/networking/util/proxy_headers.go:50);
#: through the caller's own sidecar it reads "envoy" (ibid. :61-64), so only the body is telling.
RBAC_DENIED = b"RBAC: access denied"
#: The label that injects the sidecar. Istio prefers the label to the annotation when both are
#: set (pkg/kube/inject/inject.go:223-227), so it wins over the `sidecar.istio.io/inject: "false"`
#: annotation KFP puts on every pod template that has none (kubeflow/pipelines 7b70c7b95f,
#: backend/src/apiserver/template/v2_template.go:417; backend/src/common/util/workflow.go:606-618
#: compares the literal key, while a task's own annotations reach Argo as templated keys,
#: backend/src/v2/compiler/argocompiler/container.go:744-790). The injector's webhooks select
#: pods whose label is not "false" (kubeflow/manifests 009c88084,
#: common/istio/istio-install/base/install.yaml:3638-3643).
SIDECAR_LABELS = {"sidecar.istio.io/inject": "true"}
SIDECAR_ANNOTATIONS = {
    # The step starts once the proxy is ready, or its first requests would find no listener
    # (injection-template.yaml:72 reads it from the pod's proxy config).
    "proxy.istio.io/config": json.dumps({"holdApplicationUntilProxyStarts": True}),
    # Only the load's port goes through the sidecar (injection-template.yaml:59-60, 114-116).
    "traffic.sidecar.istio.io/includeOutboundPorts": str(MESH_PORT),
    # Should the step not end it, Argo ends an injected sidecar this way once the main container
    # is done (argoproj/argo-workflows f016ad89eb, docs/sidecar-injection.md:49-55).
    "workflows.argoproj.io/kill-cmd-istio-proxy": json.dumps(
        ["pilot-agent", "request", "POST", "quitquitquit"]
    ),
}


def is_mesh_refusal(status: int, body: bytes) -> bool:
    """Whether an answer is envoy's RBAC refusal (an Istio AuthorizationPolicy), not the
    server's own 403."""
    return status == 403 and body.strip().startswith(RBAC_DENIED)


def end_sidecar(route: str, url: str | None = None, timeout: float = 5.0) -> str:
    """End this pod's Istio sidecar when ``route`` is "sidecar": a pod whose sidecar is a plain
    container never completes while it runs. Returns a line saying what happened ("" for any
    other route); never raises: a sidecar that cannot be ended is a warning, not a failed load.

    With Kubernetes' native sidecars (Istio's default from kubelet 1.33, pkg/kube/inject/
    webhook.go:1308-1340) the kubelet restarts it and ends it with the pod: harmless.
    """
    if route != "sidecar":
        return ""
    url = url or os.environ.get(QUIT_URL_ENV) or QUIT_URL
    req = urllib.request.Request(url, data=b"", method="POST")
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(req, timeout=timeout) as resp:
            return f"mesh_route=sidecar: sidecar told to quit ({url}: HTTP {resp.status})"
    except urllib.error.HTTPError as exc:
        why = f"HTTP {exc.code} {exc.reason}"
    except (urllib.error.URLError, OSError) as exc:
        why = f"{getattr(exc, 'reason', exc)}: no sidecar in this pod?"
    return (
        f"warning: mesh_route=sidecar: could not end the sidecar ({url}: {why}); the pod "
        "completes when Argo ends it"
    )


def after_load(route: str) -> None:
    """The end of a step that sends load: end its sidecar, saying so in the step's log."""
    line = end_sidecar(route)
    if line:
        print(line)
