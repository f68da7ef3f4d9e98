"""Report fixtures: one synthetic results directory (with a rate sweep and replicas) and its
bundle, rendered once per session because rendering the charts takes seconds."""

from __future__ import annotations

import pytest

from kfp_bench.report.bundle import write_bundle
from kfp_bench.results import read_results
from tests.synthetic import REPLICAS, SWEEP, make_results


@pytest.fixture(scope="session")
def results_dir(tmp_path_factory):
    return make_results(
        tmp_path_factory.mktemp("results") / "nightly",
        extra={"sweep": SWEEP, "replicas": REPLICAS},
    )


@pytest.fixture(scope="session")
def bundle(results_dir, tmp_path_factory):
    out = tmp_path_factory.mktemp("bundle")
    return write_bundle(read_results(results_dir), out)


@pytest.fixture(scope="session")
def llm_bundle(tmp_path_factory):
    """The bundle of two pods' LLM results merged (tests/report/llm_results.py)."""
    from kfp_bench.report.llm_bundle import write_llm_bundle
    from tests.report.llm_results import merged

    return write_llm_bundle(merged(), tmp_path_factory.mktemp("llm-bundle"), source="merged.json")
