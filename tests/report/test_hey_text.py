"""hey's text summary: kfp-bench's line on its own CPU, and the note when that CPU was the limit."""

import io
import json

import pytest

from kfp_bench.load.cgroup import CgroupCpu
from kfp_bench.load.cpu import client_cpu
from kfp_bench.records import Result
from kfp_bench.report import hey
from kfp_bench.stats.load import LoadStats


def _text(cpu: dict) -> str:
    s = LoadStats(started_at=1_700_000_000.0)
    for i in range(100):
        s.add(Result(i, i * 0.01, i * 0.01, 0.002, 200, 10, 40))
    s.close(1.0)
    s.client_cpu = cpu
    out = io.StringIO()
    hey.write_text(s, out)
    return out.getvalue()


@pytest.mark.parametrize(
    "cpu, bound",
    [(client_cpu(0.30, 0.65, 1.0), True), (client_cpu(0.10, 0.20, 1.0), False)],
)
def test_the_generators_cpu_follows_heys_sections(cpu, bound):
    text = _text(cpu)
    busy = round(100 * (cpu["user_s"] + cpu["system_s"]))
    assert text.index("Load generator CPU") > text.index("Status code distribution:")
    assert f"busiest process {busy}% of a core" in text
    per_request = (cpu["user_s"] + cpu["system_s"]) / 100 * 1e6
    assert f"Per request:\t{per_request:.1f} us (user" in text
    notes = text.partition("Notes:")[2]
    assert ("the load generator was CPU-bound" in notes) is bound


def test_a_throttled_generator_is_told_to_raise_its_limit_not_to_add_workers():
    text = _text(client_cpu(0.05, 0.05, 1.0, CgroupCpu(0.1, 0.5, 5), CgroupCpu(0.1, 1.3, 13)))
    assert "Cgroup limit:\t0.1 cores; throttled 0.80 s in 8 periods" in text
    notes = text.partition("Notes:")[2]
    assert "held it back for 0.80 s (8 periods at its 0.1-core limit)" in notes
    assert "raise the CPU limit of the load pods" in notes
    assert "add --workers" not in notes  # CPU-bound at its limit, but workers share that limit


def test_results_without_the_figure_print_no_cpu_section():
    text = _text({})
    assert "Load generator CPU" not in text and "CPU-bound" not in text


def test_no_cgroup_line_without_a_limit_or_throttling():
    unlimited = CgroupCpu(None, 0.0, 0)
    assert "Cgroup limit" not in _text(client_cpu(0.1, 0.1, 1.0, unlimited, unlimited))
    limited = CgroupCpu(2.0, 0.0, 0)
    assert "Cgroup limit:\t2 cores; throttled 0.00 s in 0 periods" in _text(
        client_cpu(0.1, 0.1, 1.0, limited, limited)
    )


def test_throttling_by_a_limit_above_its_own_cgroup_is_said_so():
    none = (CgroupCpu(None, 0.0, 0), CgroupCpu(None, 0.4, 4))
    notes = _text(client_cpu(0.05, 0.05, 1.0, *none)).partition("Notes:")[2]
    assert "held it back for 0.40 s (4 periods at a limit above it)" in notes


def _errors_text(errors: dict) -> str:
    lines: list[str] = []
    hey.write_distributions({500: sum(errors.values())}, errors, lines.append)
    return "".join(lines)


def test_errors_alike_but_for_their_numbers_are_one_line_with_their_count():
    """KServe answers a context overflow with a 500 naming each prompt's token count (its
    huggingfaceserver's generative_model.py lines 612-619 at aaac4e29): 50 texts, one kind. The
    engine keeps the first 200 characters of a body, so texts whose numbers differ in width end
    at different words: they are still one kind."""
    said = (
        "This model's maximum context length is 64 tokens. However, you requested {} tokens "
        "({} in the messages, 16 in the completion). Please reduce the length of the messages "
        "or completion."
    )

    def text(n: int) -> str:
        doc = {"error": {"message": said.format(n + 16, n), "type": "OpenAIError"}}
        return f"http 500: {json.dumps(doc)[:200]}"

    errors = {text(n): 1 + (n == 99) for n in range(60, 110)}
    errors["http 400: model m not found"] = 3
    errors["http 404: model m not found"] = 2  # another status: another kind
    lines = _errors_text(errors).split("Error distribution:\n")[1].splitlines()
    assert lines[0] == f"  [51]\t{text(99)}  (and 49 more like it)"
    assert lines[1:] == ["  [3]\thttp 400: model m not found", "  [2]\thttp 404: model m not found"]
    assert text(99)[-3:] != text(70)[-3:]  # cut at another word


def test_at_most_ten_kinds_of_error_are_printed_and_the_rest_summed():
    errors = {f"stream: error event: kind {chr(97 + k)} number {k}": 20 - k for k in range(14)}
    lines = _errors_text(errors).split("Error distribution:\n")[1].splitlines()
    assert len(lines) == hey.MAX_ERROR_LINES + 1
    assert lines[0] == "  [20]\tstream: error event: kind a number 0"
    assert lines[-1] == f"  [{7 + 8 + 9 + 10}]\tand 4 more kinds of error"


def test_the_saved_errors_keep_every_text_and_count():
    """Grouping is the text's: the result (and so a merge of workers) keeps each error."""
    s = LoadStats(started_at=1_700_000_000.0)
    for i in range(30):
        s.add(Result(i, i * 0.01, i * 0.01, 0.002, 0, 0, 0, error=f"dial tcp 10.0.0.{i}: refused"))
    s.close(1.0)
    assert len(s.to_dict()["errors"]) == 30
    out = io.StringIO()
    hey.write_text(s, out)
    assert "  [30]\tdial tcp 10.0.0.0: refused  (and 29 more like it)\n" in out.getvalue()
