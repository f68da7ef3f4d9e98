"""The KFP backend that runs compiled/kfp_bench.yaml, and the check submit and schedule make.

``FEATURES`` is the one record of it: each KFP feature the compiled pipeline uses, the first
backend release (kubeflow/pipelines: its driver, Argo compiler or API server) that has it, and
the evidence, a PR and its commit, with the CHANGELOG.md entry where there is one. Older servers
refuse the run (2.x before 2.14.0: "task final status not supported yet") or fail it midway.
``MIN_BACKEND`` is the newest of those releases.

A server's release is the ``tag_name`` of ``GET {host}/apis/v2beta1/healthz``: the API server's
TAG_NAME build argument, "2.16.0" for a release, "master" for a nightly build and "unknown" for
an image built without one (backend/Dockerfile; the handler is in backend/src/apiserver/main.go).
"""

from __future__ import annotations

import json
import re
import sys
import urllib.request
from typing import NamedTuple

from kfp_bench.errors import ConfigError


class Feature(NamedTuple):
    since: str  # the first KFP backend release that has it
    what: str  # what the pipeline uses
    cite: str  # kubeflow/pipelines PR (commit); CHANGELOG.md section where it is listed


FEATURES: dict[str, Feature] = {
    "resource-requests": Feature("2.0.0", "set_cpu_request/set_memory_request", "#9088 (37dac45)"),
    "secret-volume": Feature("2.0.0", "kubernetes.use_secret_as_volume", "#9178 (b8caf81)"),
    "parallel-for-over-output": Feature(
        "2.0.0",
        "dsl.ParallelFor over a task's output list, item fields by parseJson",
        "#7173 (1b107eb), the v2 driver's parameterIterator",
    ),
    "exit-handler": Feature(
        "2.0.0", "dsl.ExitHandler (ALL_UPSTREAM_TASKS_COMPLETED exit task)", "#7642 (98a58c7)"
    ),
    "pod-timeout": Feature(
        "2.1.0",
        "kubernetes.set_timeout (activeDeadlineSeconds)",
        "#10481 (b734420); CHANGELOG 2.1.0",
    ),
    # One label a step, as here; several on one step need 2.14.0 (#12049).
    "pod-label": Feature(
        "2.1.0", "kubernetes.add_pod_label (podMetadata)", "#10393 (b3978c1); CHANGELOG 2.1.0"
    ),
    # The token Secret of the KFP callers, and KFP's mlpipeline-minio-artifact Secret on the
    # report with history (minio://); not use_secret_as_env(optional=True): 2.15.0 (#12216).
    "optional-secret-volume": Feature(
        "2.2.0", "use_secret_as_volume(optional=True)", "#10550 (a78dc77); CHANGELOG 2.2.0"
    ),
    "exit-hook": Feature(
        "2.4.0",
        "the exit task as an Argo exit hook (a failed step fails the run)",
        "#11470 (3059f7c); CHANGELOG 2.4.0",
    ),
    "job-id-placeholder": Feature(
        "2.5.0",
        "dsl.PIPELINE_JOB_ID_PLACEHOLDER as a task input",
        "#11599 (6a13f4b); CHANGELOG 2.5.0",
    ),
    "secret-name-parameter": Feature(
        "2.5.0",
        "use_secret_as_volume with the secret name from a parameter (secretNameParameter)",
        "#11770 (fd1b48b); CHANGELOG 2.5.0",
    ),
    # kfp-bench's wheel, mounted into every step from the ConfigMap kfp-bench install writes
    # (kfp_bench/components/_step.py); the name is written as a constant parameter, which the
    # driver reads from 2.5.0 on (driver/k8s.go, ConfigMapNameParameter).
    "optional-configmap-volume": Feature(
        "2.5.0",
        "kubernetes.use_config_map_as_volume(optional=True), the name as a parameter",
        "#10550 (a78dc77), #11770 (fd1b48b); CHANGELOG 2.2.0, 2.5.0",
    ),
    "node-selector-json": Feature(
        "2.5.0",
        "kubernetes.add_node_selector_json (nodeSelectorJson)",
        "#11770 (fd1b48b); CHANGELOG 2.5.0",
    ),
    # The load workers' loop has no name of its own: the collected outputs of a named loop need
    # 2.16.0 (#12808, fdd799a): before it, the loop's executions carry its display name, not the
    # task key ("for-loop-2") that dsl.Collected's consumer looks up (issue #13239).
    "collected-artifacts": Feature(
        "2.14.0",
        "dsl.Collected over a dsl.ParallelFor's artifacts",
        "#11725 (ed828b5); CHANGELOG 2.14.0",
    ),
    "task-final-status": Feature(
        "2.14.0",
        "dsl.PipelineTaskFinalStatus input of the exit task",
        "#11953 (0d857b6); CHANGELOG 2.14.0",
    ),
    # The load workers' retry when their pod dies (kfp_bench/pipelines/meta.py, _worker): the
    # executor's Argo retryStrategy (argocompiler/container.go).
    "task-retry": Feature(
        "2.5.0", "set_retry on the load workers (Argo retryStrategy)", "#11673 (30210e33bf)"
    ),
}

#: Features that a backend lacking them runs the pipeline without, worse: ``check_backend``
#: warns. None now: KFP_RETRY_INDEX (2.17.0, #13175) is no longer needed for a dead worker to be
#: named lost, since a retry also finds the start mark its first attempt left on the KFP API
#: (kfp_bench.kfp.start_mark), on every backend; the index is kept as a second sign.
ADVISED: dict[str, Feature] = {}

_VERSION = re.compile(r"v?(\d+)\.(\d+)\.(\d+)(?:-([0-9A-Za-z.-]+))?")
#: tag_name of builds that are no release: backend/Dockerfile's default, nightlies, local builds.
DEV_TAGS = frozenset({"", "unknown", "master", "main", "latest", "dev"})


def parse_version(text: str) -> tuple | None:
    """``"2.16.0"`` as a sortable tuple; a pre-release ("2.16.0-rc.1") sorts before its release.
    None for anything else."""
    m = _VERSION.fullmatch(text.strip())
    if not m:
        return None
    pre = m.group(4)
    return (*(int(g) for g in m.group(1, 2, 3)), 0 if pre else 1, pre or "")


MIN_BACKEND = max((f.since for f in FEATURES.values()), key=parse_version)


def check_backend(version: str, host: str = "") -> None:
    """Refuse a KFP backend older than ``MIN_BACKEND``; warn (stderr) when its version is unknown
    or older than an ``ADVISED`` feature's release.

    Raises:
        ConfigError: ``version`` is a release older than ``MIN_BACKEND``; the message names each
            missing feature and the release that brought it.
    """
    have = parse_version(version)
    if have is None:
        kind = "a development build" if version.strip().lower() in DEV_TAGS else "not a release"
        warn_unknown(f"healthz tag_name {version!r}: {kind}", host)
        return
    missing = [f for f in FEATURES.values() if parse_version(f.since) > have]
    if missing:
        needs = "; ".join(f"{f.what} ({f.since})" for f in missing)
        raise ConfigError(
            f"{_where(host)}the KFP backend there is {version}, older than the pipeline needs: "
            f"{needs}; upgrade the KFP backend to at least {MIN_BACKEND}"
        )
    for f in ADVISED.values():
        if parse_version(f.since) > have:
            print(
                f"kfp-bench: warning: {_where(host)}the KFP backend there is {version}; "
                f"{f.since} adds {f.what} ({f.cite})",
                file=sys.stderr,
            )


def warn_unknown(why: str, host: str = "") -> None:
    """Say on stderr that the backend's release could not be told, and what the pipeline needs."""
    print(
        f"kfp-bench: warning: {_where(host)}KFP backend version unknown ({why}); the pipeline "
        f"needs {MIN_BACKEND} or later",
        file=sys.stderr,
    )


def server_version(host: str, timeout: float = 10.0, headers: dict | None = None) -> str:
    """The ``tag_name`` of ``host``'s healthz ("" when it reports none); ``headers`` are sent
    with the request (a gateway in front of the API may want the driver's credentials).

    Raises:
        OSError: no answer, or an HTTP error (``urllib.error.HTTPError``).
        ValueError: an answer that is not a JSON object.
    """
    return str(healthz(host, timeout, headers).get("tag_name") or "")


def healthz(host: str, timeout: float = 10.0, headers: dict | None = None) -> dict:
    """``GET {host}/apis/v2beta1/healthz``: tag_name, commit_sha, multi_user (main.go's handler).

    Raises:
        OSError: no answer, or an HTTP error (``urllib.error.HTTPError``).
        ValueError: an answer that is not a JSON object.
    """
    # No proxies from the environment: kfp.Client (urllib3) uses none unless told to.
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    req = urllib.request.Request(f"{host}/apis/v2beta1/healthz", headers=headers or {})
    with opener.open(req, timeout=timeout) as resp:
        body = json.loads(resp.read())
    if not isinstance(body, dict):
        raise ValueError("healthz answered no JSON object")
    return body


def _where(host: str) -> str:
    return f"--host {host}: " if host else ""
