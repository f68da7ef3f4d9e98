"""`kfp-bench submit` and `schedule` refuse, before sending anything, a value the pipeline's
first step would refuse by its text: a schedule is refused when it is made, not at its first run
in the night. The KFP API is a loopback peer that records every request."""

from __future__ import annotations

import pytest

from kfp_bench.sandbox.kfp_server import start_kfp_server
from tests.conftest import run_cli
from tests.loopback import Handler, serving

SEEN: list[str] = []


class _Recorder(Handler):
    def do_GET(self):  # noqa: N802 - http.server's name
        SEEN.append(self.path)
        self.send(404, {"error_message": "not here"})

    do_POST = do_GET  # noqa: N815


@pytest.mark.parametrize(
    "param, said",
    [
        ("thresholds=load_p99<50", "did you mean load_p99_ms?"),
        ("thresholds=ttft_p99_ms<900", "a figure of the LLM load, which this benchmark does not"),
        ("fail_on_regression=true", "pipeline parameter fail_on_regression: regression is a"),
        ("results_uri=ftp://x/y", "results_uri"),
        ("pushgateway_url=pushgw:9091", "pushgateway_url"),
    ],
)
@pytest.mark.parametrize("command", ["submit", "schedule"])
def test_a_value_the_first_step_refuses_is_refused_before_anything_is_sent(command, param, said):
    SEEN.clear()
    with serving(_Recorder) as url:
        cron = ["--cron", "0 0 3 * * *"] if command == "schedule" else []
        p = run_cli(command, "--host", url, *cron, "--param", param)
    assert p.returncode == 2, p.stderr
    assert said in p.stderr and p.stderr.count("\n") == 1
    assert SEEN == []


def test_a_parameter_of_a_part_switched_off_is_noted_once_the_run_is_made():
    """Not refused: a schedule switches a part off by its switch and keeps its settings
    (kfp_bench/needs.py); the note names them, as the first step's log does."""
    with start_kfp_server(simulate="all:fixed(0.2)") as server:
        done = run_cli("submit", "--host", server.url, "--param", "llm_url=http://vllm:8000")
    assert done.returncode == 0, done.stderr
    created, note = done.stdout.splitlines()[-2:]
    assert created.startswith("Created run ")
    assert note.startswith("note: pipeline parameters of a part switched off")
    assert "llm_url (read only beside run_llm)" in note
