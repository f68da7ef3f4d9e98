"""The pipeline parameter llm_slo, refused by its own name and its text as given."""

from __future__ import annotations

import pytest

from kfp_bench.errors import ConfigError
from kfp_bench.steps.params import BenchParams

LLM = dict(run_benchmark=False, run_load=False, run_llm=True, llm_url="http://127.0.0.1:9/openai")


@pytest.mark.parametrize("text", ["ttft=fast", "ttft=1s,--slo itl=5ms", "itl"])
def test_a_bad_llm_slo_is_named_as_the_parameter_with_its_text_as_given(text):
    with pytest.raises(ConfigError) as err:
        BenchParams(**LLM, llm_slo=text).check(fetch=False)
    message = str(err.value)
    assert message.startswith(f"pipeline parameter llm_slo={text!r}: "), message
    if "--slo" not in text:  # the CLI's flag is not the input here
        assert "--slo" not in message, message
