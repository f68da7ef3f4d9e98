"""The metric names' reference (``report.metric_names``, from which the docs page is generated)
held to the names the code publishes: every published name is described by exactly one entry,
and every entry describes a name something publishes."""

from __future__ import annotations

import pytest

from kfp_bench import gates
from kfp_bench.outcome import FAILURES
from kfp_bench.report.metric_names import GROUPS, described, regex
from kfp_bench.report.metrics import collect
from kfp_bench.report.tables import build
from kfp_bench.results import read_results
from kfp_bench.stats.cost import Cost, llm_metrics
from kfp_bench.stats.llm import metric_values
from tests.report.llm_results import merged
from tests.synthetic import REPLICAS, SWEEP, make_results

#: A multi-turn load's names, as tests/load/test_multi_turn.py sees them published (that test
#: needs a streaming server; these three stand for the family here).
_TURNS = {"ttft_turn1_p50_ms", "ttft_turn3_p99_ms", "input_tokens_turn2_mean"}


@pytest.fixture(scope="module")
def published(tmp_path_factory) -> set[str]:
    res = make_results(
        tmp_path_factory.mktemp("r") / "r", extra={"sweep": SWEEP, "replicas": REPLICAS}
    )
    names = set(collect(build(read_results(res))))
    names |= set(metric_values(merged().summary()))
    names |= set(llm_metrics(Cost(1.0, 60.0, 100)))
    names |= set(gates.counts([]))
    names |= {f"flag_{f.replace('-', '_')}" for f in FAILURES}
    return names | set(gates.CATALOGUE) | _TURNS


def test_every_published_name_has_one_entry(published):
    """A name the code publishes and the reference does not describe (or describes twice) is a
    reference to update in report/metric_names.py."""
    assert {n: len(described(n)) for n in published if len(described(n)) != 1} == {}


def test_every_entry_describes_a_published_name(published):
    """An entry that matches nothing published is stale: a renamed or removed metric."""
    entries = [n.pattern for g in GROUPS for n in g.names]
    assert [p for p in entries if not any(regex(p).fullmatch(n) for n in published)] == []


@pytest.mark.parametrize(
    "pattern, name, matches",
    [
        ("run_duration_{mean,p50}_s", "run_duration_p50_s", True),
        ("run_duration_{mean,p50}_s", "run_duration_p5_s", False),
        ("api_<operation>_count", "api_create_run_count", True),
        ("api_<operation>_count", "api__count", False),
        ("load_p99.9_ms", "load_p99x9_ms", False),
    ],
)
def test_a_pattern_stands_for_its_names_only(pattern, name, matches):
    assert bool(regex(pattern).fullmatch(name)) is matches
