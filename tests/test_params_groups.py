"""The pipeline's parameters in groups by concern (``kfp_bench.steps.params.GROUPS``): each
group's fields are BenchParams' in their order, documented in the group, with the group's title
and check; the parameters read only beside a switch are named by the groups that hold them."""

from __future__ import annotations

from dataclasses import fields

import pytest

from kfp_bench._doc import field_docs
from kfp_bench.errors import ConfigError
from kfp_bench.steps.params import GROUPS, BenchParams


def test_the_groups_fields_are_the_pipelines_parameters_in_order():
    names = [f.name for g in GROUPS for f in fields(g)]
    assert names == BenchParams.names()
    assert len(set(names)) == len(names)  # one group each


@pytest.mark.parametrize("group", GROUPS, ids=lambda g: g.__name__)
def test_each_group_documents_its_fields_and_has_a_title_and_a_check(group):
    docs = field_docs(group)
    assert [f.name for f in fields(group)] == list(docs)  # each field's help, in the group
    assert vars(group).get("TITLE") and callable(vars(group).get("check_group"))


@pytest.mark.parametrize("group", GROUPS, ids=lambda g: g.__name__)
def test_a_group_reads_beside_a_switch_only_its_own_fields(group):
    own = {f.name for f in fields(group)}
    for names, switches in vars(group).get("READ_BESIDE", {}).items():
        assert set(names.split()) <= own
        assert set(switches.split()) <= set(BenchParams.names())


def test_a_groups_check_runs_its_part_and_names_the_parameter():
    """The KServe group's own check, run on the whole parameters as check() runs it."""
    kserve = next(g for g in GROUPS if g.__name__ == "KServe")
    kserve.check_group(BenchParams())
    with pytest.raises(ConfigError, match="pipeline parameter cost_per_hour"):
        kserve.check_group(BenchParams(cost_per_hour=-1.0))
