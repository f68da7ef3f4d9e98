"""The HTTP routes of the local KFP API: the v2beta1 paths kfp.Client and the driver use.

This module owns request parsing, the answers, and the mapping from paths to the store, the run
queue (``executor.py``) and the scheduler (``cron.py``). Paths, JSON field names and error bodies
follow ``kfp_api_v2beta1.swagger.json``; handlers for pipelines live in ``pipelines.py``.
Errors: a ``gateway.UserError`` carries KFP's own code and wrapped message; a ``ValueError`` raised
while handling becomes 400 INVALID_ARGUMENT, a ``LookupError`` 404 NOT_FOUND, all with the
google.rpc.Status body ``{"code", "message", "details"}``; bodies are
decoded, and routing errors answered, as KFP's grpc-gateway does it (``gateway.py``).

Namespaces, as multi-user KFP has them (no access is checked): an experiment belongs to the
``namespace`` it was created with, a run or recurring run to its experiment's. ListExperiments,
ListRuns and ListRecurringRuns with ``namespace`` answer only that namespace's resources; with
``experiment_id`` ListRuns answers that experiment's runs, whatever ``namespace`` says (the real
server takes the namespace from the experiment). Without either, they answer every namespace, as
a single-user server does; a multi-user one (``--multi-user``) refuses what ``multiuser.py``
lists.
"""

from __future__ import annotations

import random
from collections import Counter
from pathlib import Path

from aiohttp import web

from kfp_bench.sandbox.kfp_server import authn, cron, multiuser, pipelines, specs
from kfp_bench.sandbox.kfp_server.executor import Executor
from kfp_bench.sandbox.kfp_server.faults import Faults, parse_ops
from kfp_bench.sandbox.kfp_server.gateway import UserError, rpc_error, status_body
from kfp_bench.sandbox.kfp_server.metrics import Metrics
from kfp_bench.sandbox.kfp_server.release import KFP_COMMIT, KFP_RELEASE
from kfp_bench.sandbox.kfp_server.replies import (
    errors_middleware,
    json_body,
    list_answer,
    list_rows,
    ok,
)
from kfp_bench.sandbox.kfp_server.simulate import SimulateSpec
from kfp_bench.sandbox.kfp_server.store import (
    DEFAULT_SERVICE_ACCOUNT,
    EXPERIMENT_FIELDS,
    RECURRING_FIELDS,
    RUN_FIELDS,
    Experiment,
    RecurringRun,
    Run,
    Store,
    new_id,
)
from kfp_bench.sandbox.kfp_server.timefmt import now_s
from kfp_bench.sandbox.kfp_server.validation import check_model, check_run_stored

API = "/apis/v2beta1"
API_KEY: web.AppKey[KfpApi] = web.AppKey("api")  # the handlers, for whoever holds the app
_ID = "[^/:]+"  # an id path segment: a custom verb (":terminate") follows a colon


class KfpApi:
    """The handlers, over one store, run queue, scheduler and set of metrics."""

    def __init__(
        self,
        store: Store,
        executor: Executor,
        metrics: Metrics,
        version: str,
        commit: str,
        multi_user: bool = False,
    ) -> None:
        self.store = store
        self.executor = executor
        self.metrics = metrics
        self.scheduler = cron.Scheduler(store.recurring, self._live_runs, self._spawn_scheduled)
        self.k8s_names = random.Random()  # the generateName suffixes Kubernetes would draw
        metrics.state_source = self._states
        executor.on_finish = lambda run: None
        self.version, self.commit = version, commit
        self.multi_user = multi_user

    def _states(self) -> tuple[Counter, int]:
        return Counter(r.state for r in self.store.runs.values()), self.executor.executing

    # --- health ---------------------------------------------------------------------------

    async def healthz(self, request: web.Request) -> web.Response:
        # The real handler's fields (backend/src/apiserver/main.go), two of them not in the
        # swagger: clients read the backend's release from tag_name.
        body = {"commit_sha": self.commit, "tag_name": self.version, "multi_user": self.multi_user}
        # main.go:556-603: "database" unless PIPELINE_STORE says otherwise; the local server
        # tells itself apart by its runs' plugins_output marker (store.PLUGIN), not here.
        return ok({**body, "pipeline_store": "database"})

    async def internal_health(self, request: web.Request) -> web.Response:
        return web.Response(text="ok")

    async def internal_faults(self, request: web.Request) -> web.Response:
        """PUT /__faults {"rate", "ops", "after", "seed"}: change the injected faults from now on
        (a test turns a lasting fault off, then checks what a cleanup can still remove)."""
        try:
            doc = await request.json()
            faults = Faults(float(doc.get("rate", 0.0)), parse_ops(doc.get("ops", "")),
                            after=bool(doc.get("after")), seed=doc.get("seed"))  # fmt: skip
        except (ValueError, TypeError, AttributeError) as exc:
            return web.Response(status=400, text=f"bad fault settings: {exc}")
        self.metrics.faults = faults
        return web.Response(text="ok")

    # --- experiments ----------------------------------------------------------------------

    async def create_experiment(self, request: web.Request) -> web.Response:
        self.metrics.operation("experiment_server_create_requests")
        body = await json_body(request, "V2beta1Experiment")
        name = body.get("display_name") or ""
        namespace = body.get("namespace") or ""
        try:
            check_model("Experiment", name, namespace)
        except UserError as e:
            raise e.wrap("[ExperimentServer]: Failed to create a experiment due to conversion "
                         "error").wrap("Failed to create a experiment") from None  # fmt: skip
        if self.multi_user:
            multiuser.create_experiment(namespace)
        for e in self.store.experiments.values():
            if e.display_name == name and e.namespace == namespace:
                # kubeflow/pipelines 7b70c7b95f storage/experiment_store.go:261-264
                return rpc_error(6, f"Failed to create a new experiment. The name {name} already "
                                 "exists. Please specify a new name")  # fmt: skip
        exp = Experiment(new_id(), name, body.get("description") or "", namespace)
        self.store.experiments[exp.experiment_id] = exp
        return ok(exp.to_api())

    async def get_experiment(self, request: web.Request) -> web.Response:
        self.metrics.operation("experiment_server_get_requests")
        key = request.match_info["experiment_id"]
        return ok(self.store.get("experiments", key, "experiment").to_api())

    async def list_experiments(self, request: web.Request) -> web.Response:
        self.metrics.operation("experiment_server_list_requests")
        rows = list(self.store.experiments.values())
        namespace = request.query.get("namespace")
        if self.multi_user:
            multiuser.list_experiments(namespace or "")
        if namespace:
            rows = [e for e in rows if e.namespace == namespace]
        return list_answer("experiments", *list_rows(request, rows, EXPERIMENT_FIELDS))

    async def delete_experiment(self, request: web.Request) -> web.Response:
        self.metrics.operation("experiment_server_delete_requests")
        key = request.match_info["experiment_id"]
        if key == self.store.default_experiment_id:  # resource_manager.go:214-221
            raise UserError.with_details(
                f"Invalid input error: Experiment id cannot be equal to the default id {key}",
                f"Failed to delete experiment {key}. The default experiment cannot be deleted",
                "BadRequestError", 10,
            ).wrap("Failed to delete experiment")  # fmt: skip
        self.store.get("experiments", key, "experiment")
        del self.store.experiments[key]
        return ok({})

    async def archive_experiment(self, request: web.Request) -> web.Response:
        """storage/experiment_store.go:304-394: the experiment, every run of it, and its
        recurring runs disabled, in one transaction. KFP checks no id here (single-user): an
        unknown one archives nothing and answers 200."""
        self.metrics.operation("experiment_server_archive_requests")
        key = request.match_info["experiment_id"]
        exp = self.store.experiments.get(key)
        if exp is not None:
            exp.storage_state = "ARCHIVED"
        for run in self.store.runs.values():
            if run.experiment_id == key:
                run.storage_state = "ARCHIVED"
        now = now_s()
        for job in self.store.recurring.values():
            if job.experiment_id == key:
                job.enabled, job.updated_at = False, now
        return ok({})

    async def unarchive_experiment(self, request: web.Request) -> web.Response:
        """experiment_store.go:397-420: the experiment only; its runs stay archived and its
        recurring runs disabled. No id check either."""
        self.metrics.operation("experiment_server_unarchive_requests")
        exp = self.store.experiments.get(request.match_info["experiment_id"])
        if exp is not None:
            exp.storage_state = "AVAILABLE"
        return ok({})

    def _set_storage(self, table: str, request, key: str, state: str) -> web.Response:
        self.metrics.operation(
            f"{table[:-1]}_server_{'archive' if state == 'ARCHIVED' else 'unarchive'}_requests"
        )
        self.store.get(table, request.match_info[key], table[:-1]).storage_state = state
        return ok({})

    # --- runs -----------------------------------------------------------------------------

    def _package_of(self, body: dict) -> tuple[specs.Package, bool, dict | None]:
        """The package a run or recurring run executes: inline spec, or a pipeline version."""
        if body.get("pipeline_spec"):
            return specs.from_api_view(body["pipeline_spec"]), True, None
        ref = dict(body.get("pipeline_version_reference") or {})
        if not ref and body.get("pipeline_version_id"):
            version = self.store.get("versions", body["pipeline_version_id"], "pipeline version")
            ref = {"pipeline_id": version.pipeline_id}
            ref["pipeline_version_id"] = version.pipeline_version_id
        if not ref.get("pipeline_id") and not ref.get("pipeline_version_id"):
            raise ValueError(
                "the request has neither pipeline_spec nor pipeline_version_reference; "
                "give one of them"
            )
        if ref.get("pipeline_version_id"):
            version = self.store.get("versions", ref["pipeline_version_id"], "pipeline version")
        else:
            self.store.get("pipelines", ref["pipeline_id"], "pipeline")
            version = self.store.latest_version(ref["pipeline_id"])
        ref = {
            "pipeline_id": version.pipeline_id,
            "pipeline_version_id": version.pipeline_version_id,
        }
        return version.package, False, ref

    def new_run(
        self, body: dict, experiment_id: str | None, recurring_run_id: str = "", run_id: str = ""
    ) -> Run:
        name = body.get("display_name") or ""
        if not name:
            raise ValueError("the run name (display_name) is empty; give the run a name")
        if self.multi_user:
            multiuser.create_run(experiment_id or body.get("experiment_id") or "")
        package, inline, ref = self._package_of(body)
        config = body.get("runtime_config") or {}
        params = config.get("parameters") or {}
        if not isinstance(params, dict):
            raise ValueError("runtime_config.parameters must be an object")
        exp_id = self.store.resolve_experiment(experiment_id or body.get("experiment_id"))
        experiment = self.store.experiments[exp_id]
        check_run_stored(name)
        run = Run(
            run_id or new_id(),
            exp_id,
            name,
            package,
            description=body.get("description") or "",
            inline_spec=inline,
            version_ref=ref,
            params=params,
            pipeline_root=config.get("pipeline_root") or "",
            service_account=body.get("service_account") or DEFAULT_SERVICE_ACCOUNT,
            recurring_run_id=recurring_run_id,
            namespace=experiment.namespace,
        )
        self.store.runs[run.run_id] = run
        experiment.last_run_created_at = run.created_at
        self.metrics.run_count += 1
        self.executor.submit(run)
        return run

    async def create_run(self, request: web.Request) -> web.Response:
        self.metrics.operation("run_server_create_requests")
        body = await json_body(request, "V2beta1Run")
        run = self.new_run(body, request.query.get("experiment_id"))
        return ok(run.to_api())

    async def get_run(self, request: web.Request) -> web.Response:
        self.metrics.operation("run_server_get_requests")
        return ok(self.store.get("runs", request.match_info["run_id"], "run").to_api())

    async def list_runs(self, request: web.Request) -> web.Response:
        self.metrics.operation("run_server_list_requests")
        rows = self.store.runs.values()
        q = request.query
        experiment_id, namespace = q.get("experiment_id"), q.get("namespace")
        if self.multi_user:
            multiuser.list_runs(namespace or "", experiment_id or "")
        if experiment_id:
            self.store.get("experiments", experiment_id, "experiment")
            rows = [r for r in rows if r.experiment_id == experiment_id]
        elif namespace:
            rows = [r for r in rows if r.namespace == namespace]
        return list_answer("runs", *list_rows(request, list(rows), RUN_FIELDS))

    async def delete_run(self, request: web.Request) -> web.Response:
        self.metrics.operation("run_server_delete_requests")
        run = self.store.get("runs", request.match_info["run_id"], "run")
        self.executor.forget(run)
        del self.store.runs[run.run_id]
        self.metrics.run_count = max(0, self.metrics.run_count - 1)
        return ok({})

    async def terminate_run(self, request: web.Request) -> web.Response:
        self.metrics.operation("run_server_terminate_requests")
        run = self.store.get("runs", request.match_info["run_id"], "run")
        if run.done or run.state == "CANCELING":
            return _terminate_refused(run.run_id)
        self.executor.terminate(run)
        return ok({})

    async def archive_run(self, request: web.Request) -> web.Response:
        return self._set_storage("runs", request, "run_id", "ARCHIVED")

    async def unarchive_run(self, request: web.Request) -> web.Response:
        run_id = request.match_info["run_id"]
        run = self.store.runs.get(run_id)
        exp = self.store.experiments.get(run.experiment_id) if run else None
        if exp is not None and exp.storage_state == "ARCHIVED":  # resource_manager.go:885-907
            raise UserError.with_details(
                "Unarchive the experiment first to allow the run to be restored",
                f"Failed to unarchive run {run_id} as experiment {exp.experiment_id} must be "
                "un-archived first", "FailedPreconditionError", 9,
            ).wrap("Failed to unarchive a run")  # fmt: skip
        return self._set_storage("runs", request, "run_id", "AVAILABLE")

    async def retry_run(self, request: web.Request) -> web.Response:
        """resource_manager.go:1062-1100 and common/util/workflow.go:200-206: a run the agent
        has reported (its workflow manifest is stored) whose workflow is Failed or Error (a
        FAILED or a CANCELED run: Argo's terminate fails the workflow) runs again."""
        self.metrics.operation("run_server_retry_requests")
        run_id = request.match_info["run_id"]
        run = self.store.runs.get(run_id)
        if run is None:
            raise (
                UserError.not_found("Run", run_id)
                .wrap(f"Failed to retry run {run_id} due to error fetching the run")
                .wrap("Failed to retry a run")
            )
        if all(state == "PENDING" for _, state in run.history):
            raise UserError.with_details(
                "Invalid input error: Workflow manifest cannot be empty",
                f"Failed to retry run {run_id} due to error fetching workflow manifest",
                "BadRequestError", 10,
            ).wrap("Failed to retry a run")  # fmt: skip
        if run.state not in ("FAILED", "CANCELED"):
            raise UserError.with_details(
                "workflow cannot be retried", "Workflow must be Failed/Error to retry",
                "BadRequestError", 10,
            ).wrap(f"Failed to retry run {run_id}").wrap("Failed to retry a run")  # fmt: skip
        self.executor.retry(run)
        return ok({})

    # --- recurring runs -------------------------------------------------------------------

    def _live_runs(self, job_id: str) -> int:
        runs = self.store.runs.values()
        return sum(1 for r in runs if r.recurring_run_id == job_id and not r.done)

    def _spawn_scheduled(self, job: RecurringRun, due: int) -> bool:
        """The controller's run of ``job`` scheduled at ``due``; False if it could not be made
        (its experiment or pipeline is gone), to be tried again, as controller.go does. Named
        as its workflow is (``cron.workflow_name``), with no description of its own."""
        index = job.last_index + 1
        name = cron.workflow_name(job.k8s_name, index)
        body = {
            "display_name": name,
            "runtime_config": {"parameters": job.params, "pipeline_root": job.pipeline_root},
            "service_account": job.service_account,
        }
        if job.inline_spec:
            body["pipeline_spec"] = job.package.api_view()
        else:  # a pipeline id alone takes the pipeline's latest version now
            body["pipeline_version_reference"] = job.version_ref
        # A pinned recurring run's controller makes the workflow itself, labelled with a random
        # run id (scheduled_workflow.go:163-179); with a pipeline id alone it calls CreateRun
        # (controller.go:690-708), whose run id is derived from the name.
        requested = not (job.inline_spec or job.version_ref.get("pipeline_version_id"))
        run_id = cron.requested_run_id(job.recurring_run_id, name) if requested else new_id()
        try:
            run = self.new_run(body, job.experiment_id, job.recurring_run_id, run_id)
        except (LookupError, ValueError):
            return False
        if not requested:
            # the workflow's fire-time label is the run's scheduled_at (resource_manager.go:
            # 1889); a run asked of the API is scheduled when created (resource_manager.go:759)
            run.scheduled_at = due
        job.last_index = index  # scheduled_workflow.go UpdateStatus: LastIndex on submission
        return True

    async def create_recurring_run(self, request: web.Request) -> web.Response:
        self.metrics.operation("job_server_create_requests")
        body = await json_body(request, "V2beta1RecurringRun")
        name = body.get("display_name") or ""
        if not name:
            raise ValueError("the recurring run name (display_name) is empty")
        if self.multi_user:
            multiuser.create_run(body.get("experiment_id") or "", recurring=True)
        trigger = cron.Trigger.from_api(body.get("trigger"))
        max_concurrency = _max_concurrency(body.get("max_concurrency"))
        exp_id = self.store.resolve_experiment(body.get("experiment_id"))
        # toModelJob reads no top-level pipeline_version_id (api_converter.go:2025-2027)
        body.pop("pipeline_version_id", None)
        reference = body.get("pipeline_version_reference") or {}
        # resource_manager.go:1478-1479: pinned by a spec or a version id; else "always let the
        # ScheduledWorkflow controller pick the latest" version, at each run
        pinned = bool(body.get("pipeline_spec") or reference.get("pipeline_version_id"))
        if not pinned and not reference.get("pipeline_id"):
            return _no_pipeline_id()
        package, inline, ref = self._package_of(body)
        if not pinned:
            ref = {"pipeline_id": ref["pipeline_id"]}
        config = body.get("runtime_config") or {}
        # a pinned one has its workflow's service account, the default if none
        # (v2_template.go:172,190 and resource_manager.go:1588); else the one it was given
        default_account = DEFAULT_SERVICE_ACCOUNT if pinned else ""
        job = RecurringRun(
            new_id(),
            name,
            exp_id,
            trigger.to_api(),
            package,
            description=body.get("description") or "",
            inline_spec=inline,
            version_ref=ref,
            params=config.get("parameters") or {},
            pipeline_root=config.get("pipeline_root") or "",
            service_account=body.get("service_account") or default_account,
            max_concurrency=max_concurrency,
            no_catchup=bool(body.get("no_catchup")),
            # api_converter.go toModelJobEnabled: MODE_UNSPECIFIED is disabled
            enabled=body.get("mode") == "ENABLE",
            namespace=body.get("namespace") or self.store.experiments[exp_id].namespace,
            k8s_name=cron.swf_name(name, self.k8s_names),
        )
        self.store.recurring[job.recurring_run_id] = job
        self.metrics.job_count += 1
        return ok(job.to_api())

    async def get_recurring_run(self, request: web.Request) -> web.Response:
        self.metrics.operation("job_server_get_requests")
        key = request.match_info["recurring_run_id"]
        return ok(self.store.get("recurring", key, "recurring run").to_api())

    async def list_recurring_runs(self, request: web.Request) -> web.Response:
        self.metrics.operation("job_server_list_requests")
        rows = self.store.recurring.values()
        q = request.query
        experiment_id, namespace = q.get("experiment_id"), q.get("namespace")
        if experiment_id:
            rows = [j for j in rows if j.experiment_id == experiment_id]
        elif namespace:
            rows = [j for j in rows if j.namespace == namespace]
        return list_answer("recurringRuns", *list_rows(request, list(rows), RECURRING_FIELDS))

    async def delete_recurring_run(self, request: web.Request) -> web.Response:
        self.metrics.operation("job_server_delete_requests")
        key = request.match_info["recurring_run_id"]
        self.store.get("recurring", key, "recurring run")
        del self.store.recurring[key]
        self.metrics.job_count -= 1
        return ok({})

    async def enable_recurring_run(self, request: web.Request) -> web.Response:
        return self._enable(request, True)

    async def disable_recurring_run(self, request: web.Request) -> web.Response:
        return self._enable(request, False)

    def _enable(self, request: web.Request, enabled: bool) -> web.Response:
        op = "enable" if enabled else "disable"
        self.metrics.operation(f"job_server_{op}_requests")
        key = request.match_info["recurring_run_id"]
        job = self.store.get("recurring", key, "recurring run")
        # resource_manager.go ChangeJobMode patches spec.enabled only: the last fire time
        # stays, so a re-enabled recurring run catches up on what it missed
        job.enabled, job.updated_at = enabled, now_s()
        return ok({})

    # --- wiring ---------------------------------------------------------------------------

    def routes(self) -> list[web.RouteDef]:
        p = pipelines.PipelineHandlers(self.store, self.metrics, self.multi_user)
        run, job, exp = (
            f"{API}/runs/{{run_id:{_ID}}}",
            f"{API}/recurringruns/{{recurring_run_id:{_ID}}}",
            f"{API}/experiments/{{experiment_id:{_ID}}}",
        )  # noqa: E501
        return [
            web.get("/__health", self.internal_health),
            web.put("/__faults", self.internal_faults),
            web.get("/metrics", self.metrics.handle_metrics),
            web.get(f"{API}/healthz", self.healthz),
            *p.routes(API),
            web.post(f"{API}/experiments", self.create_experiment),
            web.get(f"{API}/experiments", self.list_experiments),
            web.get(exp, self.get_experiment),
            web.delete(exp, self.delete_experiment),
            web.post(f"{exp}:archive", self.archive_experiment),
            web.post(f"{exp}:unarchive", self.unarchive_experiment),
            web.post(f"{API}/runs", self.create_run),
            web.get(f"{API}/runs", self.list_runs),
            web.get(run, self.get_run),
            web.delete(run, self.delete_run),
            web.post(f"{run}:terminate", self.terminate_run),
            web.post(f"{run}:archive", self.archive_run),
            web.post(f"{run}:unarchive", self.unarchive_run),
            web.post(f"{run}:retry", self.retry_run),
            web.post(f"{API}/recurringruns", self.create_recurring_run),
            web.get(f"{API}/recurringruns", self.list_recurring_runs),
            web.get(job, self.get_recurring_run),
            web.delete(job, self.delete_recurring_run),
            web.post(f"{job}:enable", self.enable_recurring_run),
            web.post(f"{job}:disable", self.disable_recurring_run),
        ]


def _max_concurrency(value) -> int:
    """api_converter.go:2085: required (0 when unset), 1..10."""
    try:
        number = int(value or 0)
    except (TypeError, ValueError):
        number = 0
    if not 1 <= number <= 10:
        raise ValueError(
            "Max concurrency of a recurring run must be at least 1 and at most 10. "
            f"Received {number}"
        )
    return number


def build_app(
    *,
    max_parallel_runs: int = 4,
    persistence_delay: float = 0.0,
    latency_ms: float = 0.0,
    error_rate: float = 0.0,
    error_ops: str = "",
    error_after: bool = False,
    simulate: SimulateSpec | None = None,
    state_dir: Path,
    seed: int | None = None,
    use_venv: bool = False,
    token: bytes | None = None,
    version: str = KFP_RELEASE,
    commit: str = KFP_COMMIT,
    multi_user: bool = False,
) -> web.Application:
    """The aiohttp application; the run queue and scheduler start and stop with it.

    ``token``: the bearer token every /apis/ request must carry (``authn``); None: no auth.
    ``version``, ``commit``: the release and commit healthz reports (tag_name, commit_sha).
    ``multi_user``: act as multi-user KFP (``multiuser``).
    ``persistence_delay``: seconds from a run's admission to RUNNING (``executor``).
    """
    store = Store()
    faults = Faults(error_rate, parse_ops(error_ops), after=error_after, seed=seed)
    metrics = Metrics(latency_ms=latency_ms, faults=faults)
    executor = Executor(
        store,
        slots=max_parallel_runs,
        simulate=simulate or SimulateSpec(),
        state_dir=state_dir,
        rng=random.Random(seed),
        use_venv=use_venv,
        report_delay=persistence_delay,
    )
    api = KfpApi(store, executor, metrics, version, commit, multi_user)
    auth = [authn.token_middleware(token)] if token else []
    app = web.Application(
        middlewares=[metrics.middleware, *auth, errors_middleware],
        client_max_size=specs.MAX_PACKAGE_BYTES + 1024 * 1024,
    )
    app.add_routes(api.routes())
    app[API_KEY] = api

    async def lifecycle(app: web.Application):
        api.scheduler.start()
        yield
        await api.scheduler.stop()
        await executor.close()

    app.cleanup_ctx.append(lifecycle)
    return app


def _no_pipeline_id() -> web.Response:
    """CreateJob's answer to a recurring run with no pipeline: a plain error
    (resource_manager.go:1503-1504), so 500 INTERNAL whose detail has code UNKNOWN
    (common/util/error.go:375-397); the real message goes on with the Go stack trace."""
    message = (
        "Internal error: Failed to create a recurring run: "
        "Cannot create a job with an empty pipeline ID"
    )
    body = status_body(13, message)
    body["details"][0]["code"] = 2
    return web.json_response(body, status=500)


def _terminate_refused(run_id: str) -> web.Response:
    """KFP's answer to terminating a run that is no longer PAUSED, PENDING, RUNNING or unset
    (kubeflow/pipelines 7b70c7b95f): the UPDATE of storage/run_store.go:1389-1400 matches no
    row, which :1406-1407 turn into InvalidInputError "Failed to terminate a run %s. Row not
    found"; resource/resource_manager.go:1046-1049 and server/run_server.go:622-625 wrap it.
    The status message is the wrapped chain, the detail the user-facing message
    (common/util/error.go:183-186, 274-282, 295-309)."""
    external = f"Failed to terminate a run {run_id}. Row not found"
    chain = (
        f"Failed to terminate a run: Failed to terminate run {run_id}: "
        f"Invalid input error: {external}"
    )
    body = status_body(3, chain)
    body["details"][0]["message"] = external
    return web.json_response(body, status=400)
