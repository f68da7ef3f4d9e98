"""The KFP v2beta1 REST calls the driver makes, each one HTTP request over urllib3.

kfp-server-api is an sdist only, which every pipeline step built at start just to use it as a
transport; this module sends what kfp-server-api 2.17.3 sent, request for request: the swagger's
paths, parameters and bodies (tests/data/kfp_api_v2beta1.swagger.json; methods named as in its
``*_service_api.py``), encoded as its api_client.py does (None parameters dropped, ``True`` for
a bool, path parameters quoted, JSON bodies, its default headers), uploads as multipart field
``uploadfile``. ``Retry(total=0, redirect=0)``: one call, one request; a 3xx is the answer.
Every call returns the response, body read; a transport failure raises."""

from __future__ import annotations

import json
import mimetypes
import os
import ssl
from urllib.parse import quote, urlencode

import urllib3

from kfp_bench.kfp.auth import Transport

API = "/apis/v2beta1"
USER_AGENT = "kfp-bench"
JSON = "application/json"
#: kfp_server_api's RESTClientObject default: connection pools kept, one per host.
NUM_POOLS = 4

#: (name, value) pairs; a None value is dropped.
Query = list[tuple[str, object]]


def _default_ca() -> str | None:
    """certifi's bundle, as kfp_server_api's rest.py uses; without certifi, the system's."""
    try:
        import certifi
    except ImportError:
        return None
    return certifi.where()


def _path(template: str, **params: str) -> str:
    """``template`` with each ``{name}`` replaced by its value, every character quoted
    (api_client.py: ``quote(str(v), safe=config.safe_chars_for_path_param)``, which is '')."""
    for name, value in params.items():
        template = template.replace(f"{{{name}}}", quote(str(value), safe=""))
    return API + template


class Rest:
    """One urllib3 pool to ``host``, shared by every thread (PoolManager is thread-safe).

    Args:
        host: base URL, without a trailing slash.
        transport: credentials, TLS and proxy (``Auth.configure``).
        pool_size: connections kept to the host.
        timeout: seconds each request may take (urllib3's ``Timeout(total=...)``).
    """

    def __init__(self, host: str, transport: Transport, *, pool_size: int, timeout: float):
        self.host = host
        # Any number of seconds: the generated rest.py made a Timeout only of an int, so a float
        # (the default 30.0, any --request-timeout) meant no timeout at all.
        self.timeout = urllib3.Timeout(total=timeout)
        self.retries = urllib3.Retry(total=0, redirect=0, raise_on_redirect=False)
        self.headers = {"User-Agent": USER_AGENT, **transport.headers}
        self.authorization = transport.authorization
        tls = {
            "cert_reqs": ssl.CERT_REQUIRED if transport.verify_ssl else ssl.CERT_NONE,
            "ca_certs": transport.ssl_ca_cert or _default_ca(),
        }
        kw = {"num_pools": NUM_POOLS, "maxsize": max(pool_size, 1), "retries": self.retries}
        if transport.proxy:
            self.pool = urllib3.ProxyManager(transport.proxy, **kw, **tls)
        else:
            self.pool = urllib3.PoolManager(**kw, **tls)

    def close(self) -> None:
        self.pool.clear()

    def request(
        self,
        method: str,
        path: str,
        query: Query = (),
        *,
        body: object = None,
        upload: str | None = None,
    ) -> urllib3.BaseHTTPResponse:
        """One request: ``body`` sent as JSON, or the file ``upload`` as the form field
        ``uploadfile``; the response whatever its status, its body read."""
        url = self.host + path
        pairs = [(k, v) for k, v in query if v is not None]
        if pairs:
            url += "?" + urlencode(pairs)
        # The generated header order: Accept, the declared Content-Type, the default headers,
        # authorization; rest.py then adds application/json to a call that declared none.
        headers = {"Accept": JSON}
        if body is not None:
            headers["Content-Type"] = JSON
        headers.update(self.headers)
        token = self.authorization() if self.authorization else None
        if token:
            headers["authorization"] = token
        kw = {"headers": headers, "timeout": self.timeout, "retries": self.retries}
        if upload is not None:  # urllib3 writes the multipart Content-Type with its boundary
            return self.pool.request(method, url, fields=[_file_field(upload)], **kw)
        headers.setdefault("Content-Type", JSON)
        data = json.dumps(body) if body is not None else None
        return self.pool.request(method, url, body=data, **kw)


def _file_field(path: str) -> tuple[str, tuple[str, bytes, str]]:
    """api_client.py's ``files_parameters``: (field, (base name, content, MIME type))."""
    with open(path, "rb") as f:
        data = f.read()
    name = os.path.basename(path)
    return "uploadfile", (name, data, mimetypes.guess_type(name)[0] or "application/octet-stream")


class RunService:
    """run_service_api.py: /apis/v2beta1/runs, /runs/{run_id}, /runs/{run_id}:terminate."""

    def __init__(self, rest: Rest):
        self.rest = rest

    def run_service_create_run(self, run: dict, experiment_id: str | None = None):
        return self.rest.request("POST", _path("/runs"), [("experiment_id", experiment_id)],
                                 body=run)  # fmt: skip

    def run_service_list_runs(
        self, namespace=None, experiment_id=None, page_token=None, page_size=None, sort_by=None,
        filter=None,
    ):  # fmt: skip
        query = [("namespace", namespace), ("experiment_id", experiment_id),
                 ("page_token", page_token), ("page_size", page_size), ("sort_by", sort_by),
                 ("filter", filter)]  # fmt: skip
        return self.rest.request("GET", _path("/runs"), query)

    def run_service_get_run(self, run_id: str, experiment_id: str | None = None):
        path = _path("/runs/{run_id}", run_id=run_id)
        return self.rest.request("GET", path, [("experiment_id", experiment_id)])

    def run_service_terminate_run(self, run_id: str, experiment_id: str | None = None):
        path = _path("/runs/{run_id}:terminate", run_id=run_id)
        return self.rest.request("POST", path, [("experiment_id", experiment_id)])

    def run_service_delete_run(self, run_id: str, experiment_id: str | None = None):
        path = _path("/runs/{run_id}", run_id=run_id)
        return self.rest.request("DELETE", path, [("experiment_id", experiment_id)])


class RecurringRunService:
    """recurring_run_service_api.py: /apis/v2beta1/recurringruns, /recurringruns/{id}."""

    def __init__(self, rest: Rest):
        self.rest = rest

    def recurring_run_service_list_recurring_runs(
        self, page_token=None, page_size=None, sort_by=None, namespace=None, filter=None,
        experiment_id=None,
    ):  # fmt: skip
        query = [("page_token", page_token), ("page_size", page_size), ("sort_by", sort_by),
                 ("namespace", namespace), ("filter", filter),
                 ("experiment_id", experiment_id)]  # fmt: skip
        return self.rest.request("GET", _path("/recurringruns"), query)

    def recurring_run_service_get_recurring_run(self, recurring_run_id: str):
        path = _path("/recurringruns/{recurring_run_id}", recurring_run_id=recurring_run_id)
        return self.rest.request("GET", path)

    def recurring_run_service_delete_recurring_run(self, recurring_run_id: str):
        path = _path("/recurringruns/{recurring_run_id}", recurring_run_id=recurring_run_id)
        return self.rest.request("DELETE", path)


class PipelineService:
    """pipeline_service_api.py: /apis/v2beta1/pipelines, /pipelines/{pipeline_id},
    /pipelines/{pipeline_id}/versions, /pipelines/{pipeline_id}/versions/{pipeline_version_id}."""

    def __init__(self, rest: Rest):
        self.rest = rest

    def pipeline_service_list_pipelines(
        self, namespace=None, page_token=None, page_size=None, sort_by=None, filter=None
    ):
        query = [("namespace", namespace), ("page_token", page_token),
                 ("page_size", page_size), ("sort_by", sort_by), ("filter", filter)]  # fmt: skip
        return self.rest.request("GET", _path("/pipelines"), query)

    def pipeline_service_list_pipeline_versions(
        self, pipeline_id: str, page_token=None, page_size=None, sort_by=None, filter=None
    ):
        path = _path("/pipelines/{pipeline_id}/versions", pipeline_id=pipeline_id)
        query = [("page_token", page_token), ("page_size", page_size), ("sort_by", sort_by),
                 ("filter", filter)]  # fmt: skip
        return self.rest.request("GET", path, query)

    def pipeline_service_get_pipeline(self, pipeline_id: str):
        return self.rest.request("GET", _path("/pipelines/{pipeline_id}", pipeline_id=pipeline_id))

    def pipeline_service_get_pipeline_version(self, pipeline_id: str, pipeline_version_id: str):
        path = _path(
            "/pipelines/{pipeline_id}/versions/{pipeline_version_id}",
            pipeline_id=pipeline_id,
            pipeline_version_id=pipeline_version_id,
        )
        return self.rest.request("GET", path)

    def pipeline_service_delete_pipeline(self, pipeline_id: str, cascade: bool | None = None):
        path = _path("/pipelines/{pipeline_id}", pipeline_id=pipeline_id)
        return self.rest.request("DELETE", path, [("cascade", cascade)])

    def pipeline_service_delete_pipeline_version(self, pipeline_id: str, pipeline_version_id: str):
        path = _path(
            "/pipelines/{pipeline_id}/versions/{pipeline_version_id}",
            pipeline_id=pipeline_id,
            pipeline_version_id=pipeline_version_id,
        )
        return self.rest.request("DELETE", path)


class PipelineUploadService:
    """pipeline_upload_service_api.py: POST /apis/v2beta1/pipelines/upload and
    /pipelines/upload_version, multipart/form-data."""

    def __init__(self, rest: Rest):
        self.rest = rest

    def upload_pipeline(
        self, uploadfile: str, name=None, display_name=None, description=None, namespace=None
    ):
        query = [("name", name), ("display_name", display_name), ("description", description),
                 ("namespace", namespace)]  # fmt: skip
        return self.rest.request("POST", _path("/pipelines/upload"), query, upload=uploadfile)

    def upload_pipeline_version(
        self, uploadfile: str, name=None, display_name=None, pipelineid=None, description=None
    ):
        query = [("name", name), ("display_name", display_name), ("pipelineid", pipelineid),
                 ("description", description)]  # fmt: skip
        path = _path("/pipelines/upload_version")
        return self.rest.request("POST", path, query, upload=uploadfile)


class ExperimentService:
    """experiment_service_api.py: /apis/v2beta1/experiments, /experiments/{experiment_id}."""

    def __init__(self, rest: Rest):
        self.rest = rest

    def experiment_service_create_experiment(self, experiment: dict):
        return self.rest.request("POST", _path("/experiments"), body=experiment)

    def experiment_service_list_experiments(
        self, page_token=None, page_size=None, sort_by=None, filter=None, namespace=None
    ):
        query = [("page_token", page_token), ("page_size", page_size), ("sort_by", sort_by),
                 ("filter", filter), ("namespace", namespace)]  # fmt: skip
        return self.rest.request("GET", _path("/experiments"), query)

    def experiment_service_get_experiment(self, experiment_id: str):
        path = _path("/experiments/{experiment_id}", experiment_id=experiment_id)
        return self.rest.request("GET", path)

    def experiment_service_delete_experiment(self, experiment_id: str):
        path = _path("/experiments/{experiment_id}", experiment_id=experiment_id)
        return self.rest.request("DELETE", path)
