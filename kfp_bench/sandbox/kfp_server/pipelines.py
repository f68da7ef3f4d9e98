"""The pipeline routes: multipart upload and upload_version, versions, get, list, delete (cascade).

This module owns pipelines and their versions in the API. Uploads are ``multipart/form-data``
with the package in the field ``uploadfile`` and the rest in the query (``name``,
``display_name``, ``description``, ``namespace``, ``pipelineid`` for a version), as kfp.Client
sends them; without a name, a pipeline is named after the whole file name. The package is
validated with kfp's own protobuf messages (``specs.py``). Upload errors are answered as KFP's
upload handler answers them (``{"error_message", "error_details"}``, see ``UploadError``), the
JSON routes' as google.rpc Status. A pipeline name is unique per namespace and a version name
unique per pipeline (409); names longer than KFP's columns are refused (``validation.py``).
Deleting a pipeline that still has versions fails with 400 FAILED_PRECONDITION unless
``cascade=true``, as the real server does.
"""

from __future__ import annotations

import json

from aiohttp import web

from kfp_bench.sandbox.kfp_server import specs
from kfp_bench.sandbox.kfp_server.gateway import ApiError, rpc_error
from kfp_bench.sandbox.kfp_server.metrics import Metrics
from kfp_bench.sandbox.kfp_server.replies import json_body, list_answer, list_rows, ok
from kfp_bench.sandbox.kfp_server.store import (
    PIPELINE_FIELDS,
    VERSION_FIELDS,
    Pipeline,
    Store,
    Version,
    new_id,
)
from kfp_bench.sandbox.kfp_server.validation import check_model, too_long

_ID = "[^/:]+"


class PipelineHandlers:
    def __init__(self, store: Store, metrics: Metrics) -> None:
        self.store = store
        self.metrics = metrics

    async def _upload(
        self, request: web.Request, no_file: str, bad_file: str
    ) -> tuple[specs.Package, str]:
        """The uploaded package, or UploadError as pipeline_upload_server.go:103-116 answers:
        400 ``no_file`` for no file in 'uploadfile', ``bad_file`` for a file that is not
        YAML/JSON by its name nor a zip or gzip by its bytes, or is over the size limit
        (util.go:154-178)."""
        field = None
        if request.content_type.startswith("multipart/"):
            field = (await request.post()).get("uploadfile")
        if field is None or not hasattr(field, "file"):
            raise UploadError(400, no_file)
        filename = field.filename or ""
        data = field.file.read()
        if not _known_format(filename, data) or len(data) > specs.MAX_PACKAGE_BYTES:
            raise UploadError(400, bad_file)
        try:
            return specs.read_package(data, filename), filename
        except ValueError as e:  # the resource manager's InvalidArgument: its external text
            raise UploadError(400, str(e), as_json=True) from None

    def _add_pipeline(self, name: str, display: str, description: str, namespace: str):
        if self.store.pipeline_by_name(name, namespace) is not None:
            return None
        pipeline = Pipeline(new_id(), name, display or name, description, namespace)
        self.store.pipelines[pipeline.pipeline_id] = pipeline
        return pipeline

    def _add_version(self, pipeline: Pipeline, name: str, display: str, package, **extra):
        if any(v.name == name for v in self.store.versions_of(pipeline.pipeline_id)):
            return None
        version = Version(new_id(), pipeline.pipeline_id, name, display or name, package, **extra)
        self.store.versions[version.pipeline_version_id] = version
        return version

    async def upload(self, request: web.Request) -> web.Response:
        """pipeline_upload_server.go:97-230; errors are ``{"error_message", "error_details"}``
        (writeErrorToResponse, :426-435) or, for a length, Go's plain-text http.Error."""
        self.metrics.operation("pipeline_server_create_requests")
        try:
            package, filename = await self._upload(
                request, "Failed to read pipeline from file", "Failed to read a pipeline spec file"
            )
            return ok(self._upload_pipeline(request, package, filename).to_api())
        except UploadError as e:
            return e.answer()

    def _upload_pipeline(self, request: web.Request, package, filename: str) -> Pipeline:
        q = request.query
        namespace = q.get("namespace", "")
        _check_length("Pipeline", "Namespace", namespace)
        # buildPipelineName (pipeline_server.go:1320-1330): name, display_name, the file's name
        name = q.get("name") or q.get("display_name") or filename
        _check_length("Pipeline", "Name", name)
        pipeline = self._add_pipeline(
            name, q.get("display_name") or name, q.get("description", ""), namespace
        )
        if pipeline is None:
            raise UploadError(409, "Failed to create a pipeline and a pipeline version", True)
        self._add_version(pipeline, name, pipeline.display_name, package,
                          description=q.get("description", ""),
                          code_source_url=q.get("code_source_url", ""))  # fmt: skip
        return pipeline

    async def upload_version(self, request: web.Request) -> web.Response:
        """pipeline_upload_server.go:249-378: every failure but a length or a duplicate name
        (409) is 400 "Failed to create a pipeline version"."""
        self.metrics.operation("pipeline_server_create_version_requests")
        failed = "Failed to create a pipeline version"
        try:
            package, filename = await self._upload(request, failed, failed)
            q = request.query
            if not q.get("pipelineid"):
                raise UploadError(400, failed)
            name = q.get("name") or q.get("display_name") or filename
            _check_length("PipelineVersion", "Name", name)
            pipeline = self.store.pipelines.get(q["pipelineid"])
            if pipeline is None:
                raise UploadError(400, failed)
            version = self._add_version(
                pipeline, name, q.get("display_name") or name, package,
                description=q.get("description", ""), code_source_url=q.get("code_source_url", ""),
            )  # fmt: skip
            if version is None:
                raise UploadError(409, failed, as_json=True)
        except UploadError as e:
            return e.answer()
        return ok(version.to_api())

    async def create(self, request: web.Request) -> web.Response:
        self.metrics.operation("pipeline_server_create_requests")
        body = await json_body(request, "V2beta1Pipeline")
        pipeline = self._create_pipeline(body)
        return pipeline if isinstance(pipeline, web.Response) else ok(pipeline.to_api())

    def _create_pipeline(self, body: dict):
        name = body.get("name") or body.get("display_name") or ""
        if not name:
            raise ValueError("the pipeline name (name or display_name) is empty")
        try:
            check_model("Pipeline", name, body.get("namespace") or "")
        except ApiError as e:  # pipeline_server.go:275-278
            raise e.wrap("Failed to create a pipeline as pipeline conversion failed") from None
        pipeline = self._add_pipeline(
            name, body.get("display_name") or name, body.get("description") or "",
            body.get("namespace") or "",
        )  # fmt: skip
        if pipeline is None:
            return rpc_error(6, f"a pipeline named {name!r} already exists")
        return pipeline

    async def create_and_version(self, request: web.Request) -> web.Response:
        self.metrics.operation("pipeline_server_create_requests")
        body = await json_body(request, "V2beta1CreatePipelineAndVersionRequest")
        version_body = body.get("pipeline_version") or {}
        package = _version_package(version_body)
        pipeline = self._create_pipeline(body.get("pipeline") or {})
        if isinstance(pipeline, web.Response):
            return pipeline
        name = version_body.get("name") or version_body.get("display_name") or pipeline.name
        self._add_version(pipeline, name, version_body.get("display_name") or name, package)
        return ok(pipeline.to_api())

    async def create_version(self, request: web.Request) -> web.Response:
        self.metrics.operation("pipeline_server_create_version_requests")
        pipeline = self.store.get("pipelines", request.match_info["pipeline_id"], "pipeline")
        body = await json_body(request, "V2beta1PipelineVersion")
        package = _version_package(body)
        name = body.get("name") or body.get("display_name") or ""
        if not name:
            raise ValueError("the pipeline version name (name or display_name) is empty")
        try:
            check_model("PipelineVersion", name)
        except ApiError as e:  # pipeline_server.go:902-905
            raise e.wrap("Failed to create a pipeline version due to conversion error") from None
        version = self._add_version(pipeline, name, body.get("display_name") or name, package,
                                    description=body.get("description") or "")  # fmt: skip
        if version is None:
            return rpc_error(6, f"a version named {name!r} already exists")
        return ok(version.to_api())

    async def get(self, request: web.Request) -> web.Response:
        self.metrics.operation("pipeline_server_get_requests")
        key = request.match_info["pipeline_id"]
        return ok(self.store.get("pipelines", key, "pipeline").to_api())

    async def get_by_name(self, request: web.Request) -> web.Response:
        self.metrics.operation("pipeline_server_get_requests")
        name = request.match_info["name"]
        pipeline = self.store.pipeline_by_name(name, request.query.get("namespace", ""))
        if pipeline is None:
            raise LookupError(f"pipeline named {name!r} not found")
        return ok(pipeline.to_api())

    async def list(self, request: web.Request) -> web.Response:
        self.metrics.operation("pipeline_server_list_requests")
        namespace = request.query.get("namespace", "")
        rows = [p for p in self.store.pipelines.values() if p.namespace == namespace]
        return list_answer("pipelines", *list_rows(request, rows, PIPELINE_FIELDS))

    async def delete(self, request: web.Request) -> web.Response:
        self.metrics.operation("pipeline_server_delete_requests")
        pipeline = self.store.get("pipelines", request.match_info["pipeline_id"], "pipeline")
        versions = self.store.versions_of(pipeline.pipeline_id)
        if versions and request.query.get("cascade", "").lower() not in ("true", "1"):
            return rpc_error(
                9,
                f"pipeline {pipeline.pipeline_id} has {len(versions)} version(s): delete them "
                "first, or delete with cascade=true",
            )  # fmt: skip
        for v in versions:
            del self.store.versions[v.pipeline_version_id]
        del self.store.pipelines[pipeline.pipeline_id]
        return ok({})

    async def list_versions(self, request: web.Request) -> web.Response:
        self.metrics.operation("pipeline_server_list_versions_requests")
        pipeline = self.store.get("pipelines", request.match_info["pipeline_id"], "pipeline")
        rows = self.store.versions_of(pipeline.pipeline_id)
        return list_answer("pipeline_versions", *list_rows(request, rows, VERSION_FIELDS))

    def _version(self, request: web.Request) -> Version:
        pipeline_id = request.match_info["pipeline_id"]
        self.store.get("pipelines", pipeline_id, "pipeline")
        key = request.match_info["pipeline_version_id"]
        version = self.store.get("versions", key, "pipeline version")
        if version.pipeline_id != pipeline_id:
            raise LookupError(f"pipeline version {key!r} not found in pipeline {pipeline_id!r}")
        return version

    async def get_version(self, request: web.Request) -> web.Response:
        self.metrics.operation("pipeline_server_get_version_requests")
        return ok(self._version(request).to_api())

    async def delete_version(self, request: web.Request) -> web.Response:
        self.metrics.operation("pipeline_server_delete_version_requests")
        del self.store.versions[self._version(request).pipeline_version_id]
        return ok({})

    def routes(self, api: str) -> list[web.RouteDef]:
        one = f"{api}/pipelines/{{pipeline_id:{_ID}}}"
        version = f"{one}/versions/{{pipeline_version_id:{_ID}}}"
        return [
            web.post(f"{api}/pipelines/upload", self.upload),
            web.post(f"{api}/pipelines/upload_version", self.upload_version),
            web.post(f"{api}/pipelines/create", self.create_and_version),
            web.post(f"{api}/pipelines", self.create),
            web.get(f"{api}/pipelines", self.list),
            web.get(f"{api}/pipelines/names/{{name}}", self.get_by_name),
            web.get(one, self.get),
            web.delete(one, self.delete),
            web.get(f"{one}/versions", self.list_versions),
            web.post(f"{one}/versions", self.create_version),
            web.get(version, self.get_version),
            web.delete(version, self.delete_version),
        ]


class UploadError(Exception):
    """An upload refused as pipeline_upload_server.go refuses it: ``status`` and the message
    of writeErrorToResponse (:426-435). ``as_json``: the handler had set its JSON content type
    by then (:182, :334); before, Go's ResponseWriter sniffs the body as text/plain.
    ``plain``: Go's ``http.Error`` text instead (a length check, :119-123, :176-179)."""

    def __init__(self, status: int, message: str, as_json: bool = False, plain: bool = False):
        super().__init__(message)
        self.status, self.message, self.as_json, self.plain = status, message, as_json, plain

    def answer(self) -> web.Response:
        if self.plain:
            return web.Response(status=self.status, text=self.message + "\n",
                                content_type="text/plain", charset="utf-8",
                                headers={"X-Content-Type-Options": "nosniff"})  # fmt: skip
        # error_details is Go's "%+v" of a pkg/errors error: the message, then the Go stack
        # of the server, which this one has not; the message alone stands for both.
        body = json.dumps({"error_message": self.message, "error_details": self.message})
        ctype = "application/json" if self.as_json else "text/plain"
        return web.Response(status=self.status, text=body, content_type=ctype, charset="utf-8")


def _check_length(model: str, field: str, value: str) -> None:
    message = too_long(model, field, value)
    if message:
        raise UploadError(400, f"Invalid input error: {message}", plain=True)


def _known_format(filename: str, data: bytes) -> bool:
    """ReadPipelineFile's formats (server/util.go:161-173): YAML or JSON by the file's name,
    zip or gzipped tarball by the first bytes."""
    name = filename.lower()
    return (
        name.endswith((".yaml", ".yml", ".json"))
        or data[:4] == b"PK\x03\x04"
        or (data[:2] == b"\x1f\x8b")
    )


def _version_package(body: dict) -> specs.Package:
    if body.get("pipeline_spec"):
        return specs.from_api_view(body["pipeline_spec"])
    if (body.get("package_url") or {}).get("pipeline_url"):
        raise ValueError(
            "this local server cannot fetch package_url (no network); upload the package with "
            "POST /apis/v2beta1/pipelines/upload_version, or give pipeline_spec inline"
        )
    raise ValueError("the pipeline version has neither pipeline_spec nor package_url")
