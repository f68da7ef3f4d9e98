"""JSON Schemas (draft 2020-12) of kfp-bench's result files, published with the package
(``NAMES``): a load or LLM result and their sweeps; a results directory's summary.json and the
lines of its runs.jsonl and api_calls.jsonl; a report's metrics.json; a line of ``--requests-out``
(load, LLM). A sweep's steps refer to the result schemas by their relative ``$id``;
``registry`` resolves them."""

from __future__ import annotations

import json
from importlib import resources

# Imports inside functions: referencing comes with jsonschema, which only the checks of a saved file
# need; kfp-bench itself depends on nothing.

NAMES = (
    "load-result",
    "llm-result",
    "llm-sweep",
    "rate-sweep",
    "results-summary",
    "run-record",
    "api-call",
    "report-metrics",
    "load-request",
    "llm-request",
)


def schema(name: str) -> dict:
    """The schema ``name`` (one of ``NAMES``)."""
    return json.loads(resources.files(__name__).joinpath(f"{name}.schema.json").read_text())


def registry():
    """A ``referencing.Registry`` holding every schema under its ``$id`` (needs the referencing
    package, which jsonschema brings)."""
    from referencing import Registry, Resource

    docs = [schema(n) for n in NAMES]
    return Registry().with_resources((d["$id"], Resource.from_contents(d)) for d in docs)
