"""The column lengths KFP's API server checks before it stores a resource.

After kubeflow/pipelines 7b70c7b95f ``backend/src/apiserver/validation/length.go:36-64``
(``LengthSpecs``): names and namespaces longer than their column are refused. The converters
that call ``ValidateModel`` wrap its error in ``NewInternalServerError``
(``server/api_converter.go:100-105``, ``:233-237``, ``:442-446``), so a JSON create answers 500;
the upload handler checks the same fields itself and answers a plain-text 400
(``server/pipeline_upload_server.go:119-123``, ``:176-179``, ``:286-290``). A run's display
name is not checked, but its column holds 255 characters (``model/run.go``:209, gorm's default
size): on MySQL a longer one fails the store with 500, as KFP 2.15.0 on MariaDB answered.
"""

from __future__ import annotations

from kfp_bench.sandbox.kfp_server.gateway import UserError

#: (model, field) -> the most characters it may hold
MAX_LENGTH = {
    ("Experiment", "Name"): 128,
    ("Experiment", "Namespace"): 63,
    ("Pipeline", "Name"): 128,
    ("Pipeline", "Namespace"): 63,
    ("PipelineVersion", "Name"): 127,
}
_CONVERT = {
    "Experiment": "Failed to convert API experiment to model experiment",
    "Pipeline": "Failed to convert API pipeline to model pipeline",
    "PipelineVersion": "Failed to convert API pipeline version to model pipeline version",
}


def too_long(model: str, field: str, value: str) -> str:
    """ValidateFieldLength's message (length.go:91-104) if ``value`` is too long, else ""."""
    limit = MAX_LENGTH[(model, field)]
    # Go's len() counts bytes
    if len(value.encode()) > limit:
        return f"{model}.{field} length cannot exceed {limit}"
    return ""


def check_model(model: str, name: str, namespace: str = "") -> None:
    """UserError (500, as the converters raise it) for an empty experiment name
    (api_converter.go:90-92) or a name or namespace over its length (ValidateModel)."""
    if model == "Experiment" and not name:
        raise UserError.internal_error(
            "Invalid input error: Experiment must have a non-empty name", _CONVERT[model]
        )
    for field, value in (("Name", name), ("Namespace", namespace)):
        message = too_long(model, field, value) if (model, field) in MAX_LENGTH else ""
        if message:
            raise UserError.internal_error(f"Invalid input error: {message}", _CONVERT[model])


#: run_details.DisplayName: varchar(255), counted in characters (KFP 2.15.0 on MariaDB 10.11)
RUN_DISPLAY_NAME_COLUMN = 255


def check_run_stored(name: str) -> None:
    """UserError (500) as MySQL's strict mode refuses a run display name over its column:
    storage/run_store.go CreateRun wraps the driver's error, and the resource manager and the
    run server wrap that (seen on KFP 2.15.0 with MariaDB)."""
    if len(name) > RUN_DISPLAY_NAME_COLUMN:
        raise (
            UserError.internal_error(
                "Error 1406 (22001): Data too long for column 'DisplayName' at row 1",
                f"Failed to store run {name} to table",
            )
            .wrap("Failed to create a run")
            .wrap("Failed to create a new run")
        )
