"""A bug in the load engine itself, as opposed to a fault of the server: an exception that escapes
one of its callbacks or tasks ends the attack (and a rate sweep) at once, flagged
``engine-error``, with its traceback logged and what was measured kept, instead of being counted
as a malformed response or leaving a slot busy forever (an ``-n`` run that never ends).

The bug is planted with subclasses of the engine's own classes, against the real fault server.
"""

import asyncio
import json
import logging

import pytest
import uvloop

from kfp_bench import cli
from kfp_bench.errors import EngineError
from kfp_bench.load import engine, workers
from kfp_bench.load.options import LoadOptions
from kfp_bench.load.sweep import run_sweep
from kfp_bench.load.workers import run_load
from kfp_bench.records import ENGINE_ERROR
from kfp_bench.stats.load import LoadStats

BUG_AT = 40  # responses before the planted bug


def _buggy(mod, where: str):
    """An Attack of ``mod`` whose connections raise in ``where`` after BUG_AT responses."""
    done = [0]

    class Conn(mod.RequestConnection):
        def on_message_complete(self):
            done[0] += 1
            if where == "response" and done[0] == BUG_AT:
                raise ZeroDivisionError("planted bug in on_message_complete")
            return super().on_message_complete()

        def connection_made(self, transport):
            if where == "connect" and done[0] >= BUG_AT:
                raise ZeroDivisionError("planted bug in connection_made")
            return super().connection_made(transport)

    class Attack(mod.Attack):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            self.conn_class = Conn

    return Attack


def _attack(attack_class, opts: LoadOptions) -> LoadStats:
    async def main():
        # a hang is the failure this guards against: bound it, so that the test fails instead
        stats = LoadStats()
        sink = workers.StatsSink(stats, corrected=opts.open_loop)
        return workers.apply_record(
            stats, await asyncio.wait_for(attack_class(opts, sink).run(), 30)
        )

    return uvloop.run(main())


def test_a_bug_in_a_response_callback_ends_the_attack_and_is_not_a_bad_response(
    fault_server, caplog
):
    opts = LoadOptions(url=fault_server.url + "/x?bytes=10", requests=2000, concurrency=4)
    with caplog.at_level(logging.ERROR, logger="asyncio"):
        stats = _attack(_buggy(engine, "response"), opts.validate())
    assert ENGINE_ERROR in stats.flags
    # the run stopped at the bug, keeping the requests answered before it
    assert BUG_AT - 1 <= stats.ok < BUG_AT + 4 and stats.requests < 100
    assert not [e for e in stats.errors if "malformed" in e], stats.errors
    assert set(stats.errors) <= {"abandoned: no response before the attack ended"}
    logged = [r for r in caplog.records if r.exc_info]
    assert logged and "a response callback failed" in logged[0].getMessage()
    assert isinstance(logged[0].exc_info[1], ZeroDivisionError)


def test_a_bug_while_connecting_does_not_leave_a_counted_run_waiting(fault_server, caplog):
    # A new connection per request: the bug strikes in connection setup, where the request's
    # slot would otherwise never be freed and this -n run would never end.
    opts = LoadOptions(
        url=fault_server.url + "/x", requests=500, concurrency=3, disable_keepalive=True
    )
    with caplog.at_level(logging.ERROR, logger="asyncio"):
        stats = _attack(_buggy(engine, "connect"), opts.validate())
    assert ENGINE_ERROR in stats.flags
    assert BUG_AT <= stats.ok < 500
    assert any(isinstance(r.exc_info[1], ZeroDivisionError) for r in caplog.records if r.exc_info)


def test_server_faults_are_not_engine_errors(fault_server):
    stats = run_load(LoadOptions(url=fault_server.url + "/x?reset=1", requests=60, concurrency=3))
    assert ENGINE_ERROR not in stats.flags and stats.errors and not stats.ok


@pytest.mark.parametrize("nworkers", [1, 2])
def test_run_load_raises_and_the_cli_still_prints_and_saves_what_was_measured(
    nworkers, fault_server, monkeypatch, tmp_path, capsys
):
    monkeypatch.setattr(workers, "Attack", _buggy(engine, "response"))
    opts = LoadOptions(url=fault_server.url + "/x", requests=3000, concurrency=4)
    if nworkers == 1:
        with pytest.raises(EngineError, match="a bug in kfp-bench") as err:
            run_load(opts)
        assert ENGINE_ERROR in err.value.stats.flags and err.value.stats.ok >= BUG_AT - 1
    monkeypatch.setattr(workers, "Attack", _buggy(engine, "response"))  # a fresh count
    out = tmp_path / "load.json"
    argv = ["load", "-n", "3000", "-c", "4", "--workers", str(nworkers), "--json-out", str(out)]
    rc = cli.main([*argv, fault_server.url + "/x"])
    stdout, stderr = capsys.readouterr()
    assert rc == 1
    assert "Summary:" in stdout and "the load engine failed (a bug in kfp-bench" in stdout
    assert "kfp-bench: the load engine failed mid-attack" in stderr
    doc = json.loads(out.read_text())
    assert ENGINE_ERROR in doc["flags"] and BUG_AT - 1 <= doc["ok"] < 3000


def test_a_bug_mid_sweep_keeps_the_steps_before_it(fault_server, monkeypatch, tmp_path, capsys):
    # The planted bug counts responses across steps: 20 req/s for 1 s answers fewer than BUG_AT,
    # so the first step finishes and the bug strikes in the second.
    monkeypatch.setattr(workers, "Attack", _buggy(engine, "response"))
    base = LoadOptions(url=fault_server.url + "/x")
    with pytest.raises(EngineError, match=r"step at 40 req/s: .*1 step\(s\) before it") as err:
        run_sweep(base, [20, 40, 80], 1.0)
    done = err.value.partial
    assert [s.rate for s in done.steps] == [20] and done.steps[0].requests >= 15
    assert ENGINE_ERROR in err.value.stats.flags

    monkeypatch.setattr(workers, "Attack", _buggy(engine, "response"))  # a fresh count
    out = tmp_path / "sweep.json"
    argv = ["sweep", "--rates", "20,40,80", "-z", "1s", "--json-out", str(out)]
    rc = cli.main([*argv, fault_server.url + "/x"])
    stdout, stderr = capsys.readouterr()
    assert rc == 1
    assert stdout.splitlines()[0].split()[:2] == ["QPS", "achieved"]
    assert stderr.splitlines()[-1].startswith("kfp-bench: the sweep's step at 40 req/s: the load")
    assert [r["rate"] for r in json.loads(out.read_text())["sweep"]] == [20]
