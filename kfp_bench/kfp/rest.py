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
import re
import ssl
from urllib.parse import quote, urlencode

import urllib3

from kfp_bench.kfp.auth import Transport

# Imports inside functions: certifi is optional: without it the system's CA bundle serves.

API = "/apis/v2beta1"
USER_AGENT = "kfp-bench"
JSON = "application/json"
#: kfp_server_api's RESTClientObject default: connection pools kept, one per host.
NUM_POOLS = 4


def _default_ca() -> str | None:
    """certifi's bundle, as kfp_server_api's rest.py uses; without certifi, the system's."""
    try:
        import certifi
    except ImportError:
        return None
    return certifi.where()


#: Each call of the generated ``*_service_api.py`` (named as there): its method, its path under
#: /apis/v2beta1 (each ``{name}`` a positional argument, in order), and its query parameters in
#: the order the generated method adds them.
CALLS: dict[str, tuple[str, str, str]] = {
    # run_service_api.py
    "run_service_create_run": ("POST", "/runs", "experiment_id"),
    "run_service_list_runs": (
        "GET",
        "/runs",
        "namespace experiment_id page_token page_size sort_by filter",
    ),
    "run_service_get_run": ("GET", "/runs/{run_id}", "experiment_id"),
    "run_service_terminate_run": ("POST", "/runs/{run_id}:terminate", "experiment_id"),
    "run_service_delete_run": ("DELETE", "/runs/{run_id}", "experiment_id"),
    # recurring_run_service_api.py
    "recurring_run_service_list_recurring_runs": (
        "GET",
        "/recurringruns",
        "page_token page_size sort_by namespace filter experiment_id",
    ),
    "recurring_run_service_get_recurring_run": ("GET", "/recurringruns/{recurring_run_id}", ""),
    "recurring_run_service_delete_recurring_run": (
        "DELETE",
        "/recurringruns/{recurring_run_id}",
        "",
    ),
    # pipeline_service_api.py
    "pipeline_service_list_pipelines": (
        "GET",
        "/pipelines",
        "namespace page_token page_size sort_by filter",
    ),
    "pipeline_service_list_pipeline_versions": (
        "GET",
        "/pipelines/{pipeline_id}/versions",
        "page_token page_size sort_by filter",
    ),
    "pipeline_service_get_pipeline": ("GET", "/pipelines/{pipeline_id}", ""),
    "pipeline_service_get_pipeline_version": (
        "GET",
        "/pipelines/{pipeline_id}/versions/{pipeline_version_id}",
        "",
    ),
    "pipeline_service_delete_pipeline": ("DELETE", "/pipelines/{pipeline_id}", "cascade"),
    "pipeline_service_delete_pipeline_version": (
        "DELETE",
        "/pipelines/{pipeline_id}/versions/{pipeline_version_id}",
        "",
    ),
    # pipeline_upload_service_api.py: multipart/form-data
    "upload_pipeline": ("POST", "/pipelines/upload", "name display_name description namespace"),
    "upload_pipeline_version": (
        "POST",
        "/pipelines/upload_version",
        "name display_name pipelineid description",
    ),
    # experiment_service_api.py
    "experiment_service_create_experiment": ("POST", "/experiments", ""),
    "experiment_service_list_experiments": (
        "GET",
        "/experiments",
        "page_token page_size sort_by filter namespace",
    ),
    "experiment_service_get_experiment": ("GET", "/experiments/{experiment_id}", ""),
    "experiment_service_delete_experiment": ("DELETE", "/experiments/{experiment_id}", ""),
}
_PARAM = re.compile(r"\{(\w+)\}")


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

    def call(
        self, endpoint: str, /, *ids: str, body: object = None, upload: str | None = None, **query
    ) -> urllib3.BaseHTTPResponse:
        """The generated method ``endpoint`` (``CALLS``) for the path parameters ``ids``, ``body``
        sent as JSON, or the file ``upload`` as the form field ``uploadfile``; the response
        whatever its status, its body read."""
        method, template, params = CALLS[endpoint]
        params = params.split()
        unknown = set(query) - set(params)
        if unknown:
            raise TypeError(f"{endpoint}() got unexpected query parameters {sorted(unknown)}")
        # api_client.py: ``quote(str(v), safe=config.safe_chars_for_path_param)``, which is ''
        values = iter(ids)
        path = _PARAM.sub(lambda m: quote(str(next(values)), safe=""), template)
        url = self.host + API + path
        pairs = [(k, query[k]) for k in params if query.get(k) is not None]
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
