"""Starting the kfp_bench pipeline on a KFP server: one run, or a recurring (cron) run.

``submit`` and ``schedule`` take the compiled pipeline (compiled/kfp_bench.yaml by default) and
parameters checked by ``parse_params``: a name the pipeline does not declare, a value that does
not parse as its type, or one the pipeline's first step would refuse (a gate on a figure the run
does not measure, a bad ``results_uri``), is refused with ``ConfigError`` before anything is
sent, and so is a KFP backend older than the pipeline needs (its healthz ``tag_name``;
``kfp_bench.kfp.backend``). They
use kfp.Client as examples/benchmark.ipynb does, built by ``kfp_bench.kfp.incluster.kfp_client``:
inside a pod the projected service-account token and, on multi-user KFP, the pod's namespace;
outside, ``--token-file`` and ``--namespace``.
"""

from __future__ import annotations

import json
import sys
import time
from dataclasses import dataclass, fields
from pathlib import Path
from urllib.error import HTTPError

from kfp_bench.errors import ConfigError, KfpApiError
from kfp_bench.redact import public_url, scrub
from kfp_bench.steps.bundled import compiled_file
from kfp_bench.steps.checks import ignored
from kfp_bench.steps.params import BenchParams

# Imports inside functions: the steps' modules must import in the pod of any step, which
# installs only its own extra (components/_step.py): what another extra's packages back is
# imported in the function that needs it (tests/test_imports.py checks the top).

#: compiled/kfp_bench.yaml, as the package ships it (kfp_bench.compiled).
DEFAULT_PACKAGE = compiled_file("kfp_bench")
EXPERIMENT = "kfp-bench"


def parse_params(pairs: list[str]) -> dict:
    """``["num_runs=5", "run_parameters={...}"]`` as typed pipeline arguments.

    Raises:
        ConfigError: a pair without ``=``, a name the pipeline does not declare, or a value
            that is not of the parameter's type; nothing has been sent.
    """
    types = {f.name: f.type for f in fields(BenchParams)}
    out: dict = {}
    for pair in pairs:
        name, eq, text = pair.partition("=")
        name = name.strip()
        if not eq:
            raise ConfigError(f"--param {pair!r}: write it as NAME=VALUE, e.g. --param num_runs=5")
        if name not in types:
            raise ConfigError(
                f"--param {name}: the kfp_bench pipeline has no such parameter; it takes "
                f"{', '.join(types)}"
            )
        out[name] = _typed(name, types[name], text)
    _check_values(out)
    return out


def _check_values(params: dict) -> None:
    """The values as the pipeline's first step checks them by their text (``BenchParams.check``
    without fetching anything: gates, the history's URI and baseline, URLs, limits), so that a
    schedule is refused now rather than at its first run in the night. The defaults are
    BenchParams'; a mesh package's ``mesh_route`` is checked in the run (sidecar adds rules)."""
    BenchParams.from_dict({**BenchParams().as_dict(), **params}).check(fetch=False)


def ignored_note(params: dict) -> str:
    """The first step's note (``steps.checks.ignored``) of the parameters ``params`` sets for a
    part switched off, told once the run is made; empty when there are none."""
    return ignored(BenchParams.from_dict({**BenchParams().as_dict(), **params}))


_EXAMPLES = {"int": "5", "float": "2.5", "bool": "true", "dict": "'{\"key\": 1}'"}


def _typed(name: str, kind: str, text: str):
    try:
        if kind == "int":
            return int(text)
        if kind == "float":
            return float(text)
        if kind == "bool":
            if text.lower() not in ("true", "false"):
                raise ValueError("not true or false")
            return text.lower() == "true"
        if kind == "dict":
            value = json.loads(text)
            if not isinstance(value, dict):
                raise ValueError("not a JSON object")
            return value
    except ValueError as exc:
        example = _EXAMPLES.get(kind, "text")
        raise ConfigError(
            f"--param {name}={text!r}: not {'an' if kind == 'int' else 'a'} {kind} ({exc}); "
            f"give e.g. --param {name}={example}"
        ) from None
    return text


@dataclass(frozen=True)
class Target:
    """Where to start the pipeline.

    Attributes:
        host: base URL of the KFP API, e.g. http://127.0.0.1:8888.
        namespace: the namespace of multi-user KFP (your profile); empty for standalone KFP,
            or inside a pod for its own when the server is multi-user.
        package: the compiled pipeline to start (default: compiled/kfp_bench.yaml).
        experiment: the experiment the runs go in.
        token_file: a file holding a KFP API bearer token; empty: inside a pod its projected
            service-account token (audience pipelines.kubeflow.org), outside none.
    """

    host: str
    namespace: str = ""
    package: str = str(DEFAULT_PACKAGE)
    experiment: str = EXPERIMENT
    token_file: str = ""

    def client(self):
        """``(kfp.Client, namespace)``: the namespace "" for single-user KFP."""
        from kfp_bench.kfp.api import check_host
        from kfp_bench.kfp.incluster import kfp_client

        check_host(self.host)
        if not Path(self.package).is_file():
            raise ConfigError(f"--package {self.package}: no such file; run kfp-bench compile")
        try:
            client, namespace = kfp_client(
                self.host, self.namespace, self.token_file, param="--namespace", log=_note
            )
        except ConfigError:
            raise
        except Exception as exc:  # kfp.Client's health check: urllib3 errors, ApiException
            raise _unreachable(self.host, exc) from None
        self.check_backend()
        return client, namespace

    def check_backend(self) -> None:
        """Refuse a KFP backend older than the pipeline needs (``kfp_bench.kfp.backend``), before
        anything is created; warn when it does not say its release."""

        from kfp_bench.kfp import backend

        try:
            version = backend.server_version(self.host)
        except HTTPError as exc:  # e.g. a proxy's login page: no reason to refuse the run
            return backend.warn_unknown(f"healthz answered HTTP {exc.code}", public_url(self.host))
        except ValueError:
            return backend.warn_unknown("healthz answered no JSON object", public_url(self.host))
        except OSError as exc:  # kfp.Client reached it a moment ago; or, with a namespace, never
            raise _unreachable(self.host, exc) from None
        backend.check_backend(version, host=public_url(self.host))


def submit(target: Target, params: dict, run_name: str = "") -> str:
    """Create one run of the pipeline; return its run id."""
    client, namespace = target.client()
    try:
        result = client.create_run_from_pipeline_package(
            target.package,
            arguments=params,
            run_name=run_name or None,
            experiment_name=target.experiment,
            namespace=namespace or None,
            enable_caching=False,
        )
    except Exception as exc:  # kfp.Client raises ApiException, urllib3 errors, ...
        raise KfpApiError(
            f"{public_url(target.host)}: could not create the run ({_short(exc)})"
        ) from None
    return result.run_id


def schedule(
    target: Target, params: dict, *, cron: str, max_concurrency: int = 1, name: str = ""
) -> str:
    """Create a recurring run on KFP's cron (robfig/cron v1: seconds first); return its id."""
    from kfp_bench.kfp.cron import check_user_cron

    try:
        check_user_cron(cron, int(time.time()))
    except ValueError as exc:
        raise ConfigError(f"--cron: {exc}") from None
    if max_concurrency < 1:
        raise ConfigError(f"--max-concurrency {max_concurrency}: give at least 1")
    client, namespace = target.client()
    try:
        exp = client.create_experiment(target.experiment, namespace=namespace or None)
        job = client.create_recurring_run(
            experiment_id=exp.experiment_id,
            job_name=name or "kfp-bench-schedule",
            cron_expression=cron,
            max_concurrency=max_concurrency,
            no_catchup=True,
            params=params,
            pipeline_package_path=target.package,
            enable_caching=False,
        )
    except Exception as exc:
        raise KfpApiError(
            f"{public_url(target.host)}: could not create the recurring run ({_short(exc)})"
        ) from None
    return job.recurring_run_id


def _note(text: str) -> None:
    print(f"kfp-bench: {text}", file=sys.stderr)


def _unreachable(host: str, exc: Exception) -> ConfigError:
    return ConfigError(
        f"--host {public_url(host)}: cannot reach the KFP API ({_short(exc)}); check the "
        "address, e.g. kubectl port-forward -n kubeflow svc/ml-pipeline 8888:8888 and --host "
        "http://127.0.0.1:8888"
    )


def _short(exc: Exception) -> str:
    text = scrub(str(exc)).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else ''}"[:300]
