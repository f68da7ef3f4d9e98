"""The flags ``load``, ``llm`` and ``sweep`` share are defined once (cli/common.py, cli/load.py):
the same option strings, destination, type and help everywhere, defaults differing only where a
command says so."""

import argparse

from kfp_bench.cli import build_parser
from kfp_bench.cli.kserve import _options

#: The defaults a command sets apart, by design: (command, dest) -> default.
OWN_DEFAULTS = {
    ("llm", "concurrency"): 16,
    ("llm", "timeout"): 600.0,
    ("sweep", "duration"): 30.0,
    ("sweep", "method"): "POST",
    ("sweep", "content_type"): "application/json",
}
#: Help texts a command sets apart: a sweep's -z is the length of each step, its -T default
#: and --json-out document its own.
OWN_HELP = {("sweep", "duration"), ("sweep", "content_type"), ("sweep", "json_out")}


def _actions(command: str) -> dict[str, argparse.Action]:
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    return {a.dest: a for a in sub.choices[command]._actions if a.dest != "help"}


def test_a_flag_shared_by_two_commands_is_one_definition():
    load, checked = _actions("load"), 0
    for command in ("llm", "sweep"):
        for dest, action in _actions(command).items():
            if dest not in load:
                continue
            theirs = load[dest]
            assert action.option_strings == theirs.option_strings, (command, dest)
            assert action.type == theirs.type and action.nargs == theirs.nargs, (command, dest)
            assert type(action) is type(theirs), (command, dest)
            if (command, dest) not in OWN_HELP and command == "sweep":
                assert action.help == theirs.help, (command, dest)
            want = OWN_DEFAULTS.get((command, dest), theirs.default)
            assert action.default == want, (command, dest)
            checked += 1
    assert checked > 20


def test_a_sweep_takes_the_shared_tls_and_pacing_flags():
    args = build_parser().parse_args(
        ["sweep", "https://127.0.0.1:1/", "--rates", "5", "--insecure", "--arrival", "poisson"]
        + ["--seed", "7", "-z", "2s", "-H", "A: b"]
    )
    opts = _options(args)
    assert (opts.insecure, opts.arrival, opts.seed, opts.duration) == (True, "poisson", 7, 2.0)
    assert (opts.method, opts.content_type, opts.headers) == ("POST", "application/json", ("A: b",))
