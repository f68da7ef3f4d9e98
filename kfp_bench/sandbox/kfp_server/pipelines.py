"""The pipeline routes: multipart upload and upload_version, create, versions, get, list,
update (PATCH), delete (cascade).

This module owns pipelines and their versions in the API, after kubeflow/pipelines 7b70c7b95f
``backend/src/apiserver/server/pipeline_server.go`` and ``pipeline_upload_server.go``. Uploads
are ``multipart/form-data`` with the package in the field ``uploadfile`` and the rest in the
query (``name``, ``display_name``, ``description``, ``namespace``, ``tags``, ``pipelineid`` for
a version), as kfp.Client sends them; without a name, a pipeline or version is named after the
whole file name, extension included (buildPipelineName, pipeline_server.go:1320-1330). The JSON
creates take the package from ``package_url`` only (``package_url.py``): KFP has no inline
spec on input. Upload errors are answered as KFP's upload handler answers them
(``{"error_message", "error_details"}``, see ``UploadError``), the JSON routes' as google.rpc
Status. In single-user mode the namespace is blanked (ReplaceNamespace,
resource_manager.go:2723-2729), so a pipeline name is unique across the server; in multi-user
mode per namespace. A version name is unique per pipeline (409); names longer than KFP's
columns are refused (``validation.py``); tags are checked and filtered as ``tags.py`` says.
A version is found by its own id, whatever pipeline id the path gives (:937, :1093).
Deleting a pipeline that still has versions fails with 400 FAILED_PRECONDITION unless
``cascade=true``, as the real server does.
"""

from __future__ import annotations

import json
import posixpath

from aiohttp import web

from kfp_bench.sandbox.kfp_server import package_url, specs, tags
from kfp_bench.sandbox.kfp_server.gateway import UserError, rpc_error
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
_FAILED_VERSION = "Failed to create a pipeline version"


class PipelineHandlers:
    def __init__(self, store: Store, metrics: Metrics, multi_user: bool = False) -> None:
        self.store = store
        self.metrics = metrics
        self.multi_user = multi_user
        self.urls = package_url.UrlPolicy.from_env()

    def _namespace(self, namespace: str) -> str:
        """ReplaceNamespace (resource_manager.go:2723-2729): "" unless multi-user."""
        return namespace if self.multi_user else ""

    async def _upload(self, request: web.Request, no_file: str, bad_file: str):
        """(bytes, file name) of the upload, or UploadError as pipeline_upload_server.go:103-116
        answers: 400 ``no_file`` for no file in 'uploadfile', ``bad_file`` for a file that is
        not YAML/JSON by its name nor a zip or gzip by its bytes, or is over the size limit
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
        return data, filename

    def _add_pipeline(self, name: str, display: str, description: str, namespace: str,
                      tag_map: dict | None = None):  # fmt: skip
        if self.store.pipeline_by_name(name, namespace) is not None:
            return None
        pipeline = Pipeline(new_id(), name, display or name, description, namespace,
                            dict(tag_map or {}))  # fmt: skip
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
            data, filename = await self._upload(
                request, "Failed to read pipeline from file", "Failed to read a pipeline spec file"
            )
            return ok(self._upload_pipeline(request, data, filename).to_api())
        except UploadError as e:
            return e.answer()

    def _upload_pipeline(self, request: web.Request, data: bytes, filename: str) -> Pipeline:
        q = request.query
        _check_length("Pipeline", "Namespace", q.get("namespace", ""))
        namespace = self._namespace(q.get("namespace", ""))  # :124
        # buildPipelineName (pipeline_server.go:1320-1330): name, display_name, the file's name
        name = q.get("name") or q.get("display_name") or filename
        tag_map = _upload_tags(q.get("tags"))  # :156-166
        _check_length("Pipeline", "Name", name)
        _check_upload_tags(tag_map)  # CreatePipelineAndPipelineVersion, resource_manager.go:475
        package = _read_upload(data, filename)
        pipeline = self._add_pipeline(name, q.get("display_name") or name,
                                      q.get("description", ""), namespace, tag_map)  # fmt: skip
        if pipeline is None:
            raise UploadError(409, "Failed to create a pipeline and a pipeline version", True)
        self._add_version(pipeline, name, pipeline.display_name, package,
                          description=q.get("description", ""),
                          code_source_url=q.get("code_source_url", ""))  # fmt: skip
        return pipeline

    async def upload_version(self, request: web.Request) -> web.Response:
        """pipeline_upload_server.go:249-388: every failure but a length, tags or a duplicate
        name (409) is 400 "Failed to create a pipeline version"."""
        self.metrics.operation("pipeline_server_create_version_requests")
        try:
            data, filename = await self._upload(request, _FAILED_VERSION, _FAILED_VERSION)
            q = request.query
            if not q.get("pipelineid"):
                raise UploadError(400, _FAILED_VERSION)
            name = q.get("name") or q.get("display_name") or filename
            _check_length("PipelineVersion", "Name", name)
            pipeline = self.store.pipelines.get(q["pipelineid"])
            if pipeline is None:
                raise UploadError(400, _FAILED_VERSION)
            tag_map = _upload_tags(q.get("tags"))  # :316-325
            package = _read_upload(data, filename)
            _check_upload_tags(tag_map)  # CreatePipelineVersion, resource_manager.go:2456
            version = self._add_version(
                pipeline, name, q.get("display_name") or name, package,
                description=q.get("description", ""), code_source_url=q.get("code_source_url", ""),
                tags=dict(tag_map or {}),
            )  # fmt: skip
            if version is None:
                raise UploadError(409, _FAILED_VERSION, as_json=True)
        except UploadError as e:
            return e.answer()
        return ok(version.to_api())

    async def create(self, request: web.Request) -> web.Response:
        """CreatePipeline (pipeline_server.go:268-290): conversion, then createPipeline
        (:138-160), then the resource manager's (resource_manager.go:442-470)."""
        self.metrics.operation("pipeline_server_create_requests")
        body = await json_body(request, "V2beta1Pipeline")
        name, display, namespace = _model_pipeline(
            body, "Failed to create a pipeline as pipeline conversion failed"
        )
        context = "Failed to create a pipeline due to server error"
        if not name:
            raise UserError.invalid_input("name is required").wrap(context)
        try:
            tags.check(body.get("tags"))
        except UserError as e:
            raise e.wrap(context) from None
        pipeline = self._add_pipeline(name, display, body.get("description") or "",
                                      self._namespace(namespace), body.get("tags"))  # fmt: skip
        if pipeline is None:
            return rpc_error(6, f"a pipeline named {name!r} already exists")
        return ok(pipeline.to_api())

    async def create_and_version(self, request: web.Request) -> web.Response:
        """CreatePipelineAndVersion (pipeline_server.go:740-763) and
        createPipelineAndPipelineVersion (:164-238): the version takes the pipeline's name,
        display name and description; its body gives the package URL and tags only."""
        self.metrics.operation("pipeline_server_create_requests")
        body = await json_body(request, "V2beta1CreatePipelineAndVersionRequest")
        p_body, v_body = body.get("pipeline") or {}, body.get("pipeline_version") or {}
        name, display, namespace = _model_pipeline(
            p_body, "Failed to create a pipeline due to pipeline conversion error"
        )
        url = (v_body.get("package_url") or {}).get("pipeline_url") or ""
        context = "Failed to create a pipeline"
        name = name or posixpath.basename(url) or "."  # Go's path.Base("") is "."
        display = display or name
        description = p_body.get("description") or ""
        try:
            if not package_url.parses(url):
                raise UserError.invalid_input(f"invalid pipeline spec URL: {url}")
            package = await self._fetch(url, "error downloading the pipeline spec from",
                                        "error fetching pipeline spec from {} - request returned",
                                        None)  # fmt: skip
            tags.check(p_body.get("tags"))  # resource_manager.go:475-480
            tags.check(v_body.get("tags"))
        except UserError as e:
            raise e.wrap(context) from None
        pipeline = self._add_pipeline(name, display, description, self._namespace(namespace),
                                      p_body.get("tags"))  # fmt: skip
        if pipeline is None:
            return rpc_error(6, f"a pipeline named {name!r} already exists")
        self._add_version(pipeline, name, display, package, description=description,
                          package_url=url, tags=dict(v_body.get("tags") or {}))  # fmt: skip
        return ok(pipeline.to_api())

    async def _fetch(self, url: str, transport: str, status: str, read: str | None):
        """The package at ``url``, checked and fetched as pipeline_server.go:201-229 and
        :791-821 do; ``transport`` and ``status`` are their words for a failed GET and a
        non-200 answer (``{}``: the URL), ``read`` the wrap of a file that does not read."""
        try:
            await self.urls.check(url)
        except UserError:  # the reason goes to KFP's log only (:206-209, :798-801)
            raise UserError.invalid_input("Pipeline URL validation failed") from None
        try:
            data = await package_url.fetch(self.urls, url)
        except package_url.FetchError as e:
            if e.status:
                raise UserError.invalid_input(f"{status.format(url)} {e.status}") from None
            raise UserError.internal_error(e.reason, f"{transport} {url}") from None
        filename = posixpath.basename(url)
        try:
            if not _known_format(filename, data):  # util.go:171-172
                raise UserError.invalid_input(
                    "Unexpected pipeline file format. Support .zip, .tar.gz, .json or YAML"
                )
            return specs.read_package(data, filename)
        except ValueError as e:
            raise UserError.invalid_input(str(e)) from None
        except UserError as e:
            raise (e.wrap(read) if read else e) from None

    async def create_version(self, request: web.Request) -> web.Response:
        """CreatePipelineVersion (pipeline_server.go:885-924) and createPipelineVersion
        (:767-832)."""
        self.metrics.operation("pipeline_server_create_version_requests")
        pipeline_id = request.match_info["pipeline_id"]
        body = await json_body(request, "V2beta1PipelineVersion")
        url_field = body.get("package_url")
        failed = "Failed to create a pipeline version."
        if url_field is None:
            raise UserError.invalid_input(f"{failed} Package URL is nil")
        url = url_field.get("pipeline_url") or ""
        if not url:
            raise UserError.invalid_input(f"{failed} Package URL is empty")
        if not body.get("pipeline_id"):
            raise UserError.invalid_input(f"{failed} Parent pipeline id is empty")
        name = body.get("name") or body.get("display_name") or ""
        try:
            check_model("PipelineVersion", name)
        except UserError as e:  # :902-905
            raise e.wrap("Failed to create a pipeline version due to conversion error") from None
        pipeline = self.store.get("pipelines", pipeline_id, "pipeline")
        context = "Failed to create a pipeline version. Check error stack"
        try:
            if not name:
                raise UserError.invalid_input("name is required")
            if not package_url.parses(url):
                raise UserError.invalid_input(
                    "Failed to create a pipeline version due to invalid pipeline spec URI. "
                    f"PipelineSpecURI: {url}. Please specify a valid URL"
                )
            package = await self._fetch(
                url,
                "Failed to create a pipeline version due error downloading the pipeline spec from",
                "Failed to fetch pipeline spec with url: {}. Request returned",
                "Failed to create a pipeline version due error reading the pipeline spec",
            )
            tags.check(body.get("tags"))  # resource_manager.go:2456
        except UserError as e:
            raise e.wrap(context) from None
        version = self._add_version(pipeline, name, body.get("display_name") or name, package,
                                    description=body.get("description") or "",
                                    code_source_url=body.get("code_source_url") or "",
                                    package_url=url, tags=dict(body.get("tags") or {}))  # fmt: skip
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
        namespace = self._namespace(request.query.get("namespace", ""))  # :368
        pipeline = self.store.pipeline_by_name(name, namespace)
        if pipeline is None:
            raise LookupError(f"pipeline named {name!r} not found")
        return ok(pipeline.to_api())

    async def list(self, request: web.Request) -> web.Response:
        self.metrics.operation("pipeline_server_list_requests")
        rest, wanted = _tag_filter(request, "Failed to list pipelines")
        namespace = self._namespace(request.query.get("namespace", ""))  # :432
        rows = [p for p in self.store.pipelines.values() if p.namespace == namespace]
        rows = [p for p in rows if tags.matches(p.tags, wanted)]
        return list_answer("pipelines", *list_rows(request, rows, PIPELINE_FIELDS, rest))

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
        rest, wanted = _tag_filter(request, "Failed to list pipeline versions")
        pipeline = self.store.get("pipelines", request.match_info["pipeline_id"], "pipeline")
        rows = [v for v in self.store.versions_of(pipeline.pipeline_id)
                if tags.matches(v.tags, wanted)]  # fmt: skip
        return list_answer("pipeline_versions", *list_rows(request, rows, VERSION_FIELDS, rest))

    def _version(self, request: web.Request) -> Version:
        """The version of the path's version id; its pipeline id is not looked at
        (getPipelineVersion, pipeline_server.go:928-938; deletePipelineVersion, :1075-1094)."""
        key = request.match_info["pipeline_version_id"]
        return self.store.get("versions", key, "pipeline version")

    async def get_version(self, request: web.Request) -> web.Response:
        self.metrics.operation("pipeline_server_get_version_requests")
        return ok(self._version(request).to_api())

    async def delete_version(self, request: web.Request) -> web.Response:
        self.metrics.operation("pipeline_server_delete_version_requests")
        del self.store.versions[self._version(request).pipeline_version_id]
        return ok({})

    async def update(self, request: web.Request) -> web.Response:
        """UpdatePipeline (pipeline_server.go:1174-1199, resource_manager.go:408-421)."""
        self.metrics.operation("pipeline_server_update_requests")
        key = request.match_info["pipeline_id"]
        body = await json_body(request, "V2beta1Pipeline")
        new_tags = await _patch_tags(request, body)
        context = f"Failed to update pipeline {key}. Check error stack"
        pipeline = self.store.pipelines.get(key)
        _update(pipeline, body, new_tags, context, "Pipeline", "pipeline_tags", key)
        return ok(pipeline.to_api())

    async def update_version(self, request: web.Request) -> web.Response:
        """UpdatePipelineVersion (pipeline_server.go:1203-1233, resource_manager.go:425-438):
        the version is found by its id alone."""
        self.metrics.operation("pipeline_server_update_version_requests")
        key = request.match_info["pipeline_version_id"]
        body = await json_body(request, "V2beta1PipelineVersion")
        new_tags = await _patch_tags(request, body)
        context = f"Failed to update pipeline version {key}. Check error stack"
        version = self.store.versions.get(key)
        _update(version, body, new_tags, context, "PipelineVersion", "pipeline_version_tags", key)
        return ok(version.to_api())

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
            web.patch(one, self.update),
            web.get(f"{one}/versions", self.list_versions),
            web.post(f"{one}/versions", self.create_version),
            web.get(version, self.get_version),
            web.delete(version, self.delete_version),
            web.patch(version, self.update_version),
        ]


def _model_pipeline(body: dict, context: str) -> tuple[str, str, str]:
    """(name, display name, namespace) as toModelPipeline (api_converter.go:193-240) makes
    them: each falls back on the other; ValidateModel's lengths, wrapped in ``context``."""
    name = body.get("name") or body.get("display_name") or ""
    namespace = body.get("namespace") or ""
    try:
        check_model("Pipeline", name, namespace)
    except UserError as e:
        raise e.wrap(context) from None
    return name, body.get("display_name") or name, namespace


def _tag_filter(request: web.Request, what: str) -> tuple[str, dict[str, str]]:
    """(the filter left for the lister, "" for none; the wanted tags): pipeline_server.go:521-527
    and :1048-1054."""
    try:
        rest, wanted = tags.split_filter(request.query.get("filter"))
    except UserError as e:
        raise e.wrap(f"{what} due to invalid tag filter in filter spec") from None
    return rest or "", wanted


async def _patch_tags(request: web.Request, body: dict) -> dict | None:
    """The tags a PATCH sets: None to leave them (an empty map does not survive protobuf),
    {} to clear them when the body's ``tags`` is the text ``{}`` (main.go:366-392,
    recoverClearTagsIntent, pipeline_server.go:1160-1170)."""
    given = body.get("tags")
    if given:
        return dict(given)
    return {} if tags.clears(await request.read()) else None


def _update(row, body: dict, new_tags, context: str, model: str, table: str, key: str) -> None:
    """The shared steps of the two updates (resource_manager.go:408-438, pipeline_store.go
    updateEntityFields :838-885): tags checked first; a missing row is 404 when read back,
    but a tag written for it breaks the tag table's foreign key (500)."""
    try:
        tags.check(new_tags)
    except UserError as e:
        raise e.wrap(context) from None
    if row is None:
        if new_tags:
            first = next(iter(new_tags))
            cause = (f"Error 1452 (23000): Cannot add or update a child row: a foreign key "
                     f"constraint fails ({table})")  # fmt: skip
            what = "pipeline" if model == "Pipeline" else "pipeline version"
            upsert = f"Failed to upsert tag {json.dumps(first)} for {table} {key}"
            raise (
                UserError.internal_error(cause, upsert)
                .wrap(f"Failed to update {what}")
                .wrap(context)
            )
        raise UserError.not_found(model, key).wrap(context)
    if body.get("display_name"):
        row.display_name = body["display_name"]
    if new_tags is not None:
        row.tags = dict(new_tags)


class UploadError(Exception):
    """An upload refused as pipeline_upload_server.go refuses it: ``status`` and the message
    of writeErrorToResponse (:426-435). ``as_json``: the handler had set its JSON content type
    by then (:182, :327); before, Go's ResponseWriter sniffs the body as text/plain.
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


def _upload_tags(text: str | None) -> dict | None:
    try:
        return tags.from_query(text)
    except ValueError as e:  # before the JSON content type is set: text/plain
        raise UploadError(400, str(e)) from None


def _check_upload_tags(tag_map: dict | None) -> None:
    """ValidateTags' InvalidArgument: 400 with its external message (:190-193, :346-349)."""
    try:
        tags.check(tag_map)
    except UserError as e:
        raise UploadError(400, e.external, as_json=True) from None


def _read_upload(data: bytes, filename: str) -> specs.Package:
    try:
        return specs.read_package(data, filename)
    except ValueError as e:  # the resource manager's InvalidArgument: its external text
        raise UploadError(400, str(e), as_json=True) from None


def _known_format(filename: str, data: bytes) -> bool:
    """ReadPipelineFile's formats (server/util.go:161-173): YAML or JSON by the file's name,
    zip or gzipped tarball by the first bytes."""
    name = filename.lower()
    return (
        name.endswith((".yaml", ".yml", ".json"))
        or data[:4] == b"PK\x03\x04"
        or (data[:2] == b"\x1f\x8b")
    )
