"""Shared-prefix prompts (``load/shared_prefix.py``): S system prompts of a given length, each
shared by U users with their own question, shuffled, repeatable from the seed."""

from __future__ import annotations

from collections import Counter

import pytest

from kfp_bench.errors import ConfigError
from kfp_bench.load.prompts import Dist
from kfp_bench.load.shared_prefix import SharedPrefix, shared_prefix_prompts, system_prompts


def test_every_prompt_is_its_groups_prefix_and_its_own_question():
    spec = SharedPrefix.parse("5,7,30,4")
    prompts = shared_prefix_prompts(spec, Dist.parse("uniform:2,9"), seed=2)
    prefixes = system_prompts(spec, seed=2)
    assert len(prompts) == 35 and len(set(prefixes)) == 5
    assert all(len(p.split()) == 30 for p in prefixes)
    group = [next(g for g, x in enumerate(prefixes) if p.text.startswith(x + " ")) for p in prompts]
    assert Counter(group) == dict.fromkeys(range(5), 7)
    assert group != sorted(group)  # shuffled: a group's requests spread over the run
    assert len({p.text for p in prompts}) == 35  # each user's own question
    assert all(p.input_tokens == 34 == len(p.text.split()) for p in prompts)
    assert {p.output_tokens for p in prompts} <= set(range(2, 10))
    assert shared_prefix_prompts(spec, Dist.parse("uniform:2,9"), seed=2) == prompts
    assert shared_prefix_prompts(spec, Dist.parse("uniform:2,9"), seed=3) != prompts


@pytest.mark.parametrize("text", ["", "1,2,3", "1,2,3,x", "0,2,3,4", "1,2,3,4,5"])
def test_a_bad_spec_is_refused(text):
    with pytest.raises(ConfigError, match="--shared-prefix .*S,U,PREFIX_LEN,QUESTION_LEN"):
        SharedPrefix.parse(text)
