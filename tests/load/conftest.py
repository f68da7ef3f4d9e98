"""The load tests' shared fixture: ``llm``, a ``kfp-bench llm-server`` in a child process with a
truth log, one per test module (20 ms to the first token, 5 ms gaps, 4 tokens). A module that
needs other timings defines its own ``llm``."""

import pytest

from kfp_bench.sandbox.llm_server import start_llm_server


@pytest.fixture(scope="module")
def llm(tmp_path_factory):
    truth = tmp_path_factory.mktemp("llm") / "truth.jsonl"
    with start_llm_server(
        truth_log=truth, first_token_ms=20.0, token_gap_ms=5.0, max_tokens=4
    ) as server:
        yield server
