"""The ``kfp-bench`` command: parse, build options, call the engine, hand results to reporters.

One subcommand per job (vegeta's subcommand map), one module per group (``cli.commands`` lists
them), and a start imports only the module of the command given. Bad input prints one line naming
the input and the fix, and exits 2 with no traceback: a ``ConfigError`` (flags, files, parameters;
argparse's own errors become one too, without the usage lines) or a ``ResultsError`` (a saved result
given to report, compare or merge that is missing or is not one). Other errors exit 1, 4 when
something the benchmark created is left behind, a regression verdict 3; a result that could not be
written where asked, once the work is done, exits 5 and says where it is instead (``cli.outputs``);
``kfp_bench.outcome`` has them all. The first Ctrl-C stops a benchmark cleanly and still prints what
was measured, however SIGINT was inherited (``take_ctrl_c``); the exit code is then 130.
"""

from __future__ import annotations

import argparse
import importlib
import signal
import sys

from kfp_bench import __version__
from kfp_bench.cli.checks import before_work
from kfp_bench.cli.commands import GROUP, GROUPS
from kfp_bench.cli.common import Parser
from kfp_bench.errors import BenchError, ConfigError, ResultsError
from kfp_bench.load.cpu import one_blas_thread
from kfp_bench.outcome import EXIT_BAD_INPUT, EXIT_INTERRUPTED


def build_parser() -> argparse.ArgumentParser:
    """The parser of every command (the docs' reference, the tests)."""
    return _parser(set(GROUPS))


def parser_for(argv: list[str]) -> argparse.ArgumentParser:
    """The parser of ``kfp-bench ARGV``: the module of the command named there builds its
    commands, and every other command stands as its name and one line, as ``--help`` lists it.
    The command is the first argument that is not a flag (the top level's flags take no value);
    without one, no module is imported."""
    command = next((arg for arg in argv if not arg.startswith("-")), "")
    return _parser({GROUP[command]} if command in GROUP else set())


def _parser(groups: set[str]) -> argparse.ArgumentParser:
    """The parser, with the commands of the modules ``groups`` built in full."""
    parser = Parser(prog="kfp-bench", description="Benchmarks for Kubeflow Pipelines and KServe.")
    parser.add_argument("--version", action="version", version=f"kfp-bench {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=Parser)
    for group, commands in GROUPS.items():
        if group in groups:  # only the one needed: the six modules cost ~0.35 s of CPU at
            # each start (bench/cli_startup.py), and the tests start the command ~1000 times
            importlib.import_module(f"kfp_bench.cli.{group}").register(sub)
        else:
            for name, line in commands.items():
                sub.add_parser(name, help=line)
    return parser


def take_ctrl_c() -> None:
    """Make SIGINT a first Ctrl-C (KeyboardInterrupt) even when it was ignored at start: a shell
    that is not interactive starts background commands with SIGINT ignored (POSIX), and CPython
    then installs no handler, so the first Ctrl-C would be lost (Go's signal.Notify, as in hey
    and vegeta, un-ignores it likewise). A handler someone installed on purpose is kept."""
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


def main(argv: list[str] | None = None) -> int:
    take_ctrl_c()  # before any work, so that no command can start with Ctrl-C lost
    one_blas_thread()  # before a subcommand's module imports numpy; its workers inherit it
    try:
        argv = sys.argv[1:] if argv is None else argv
        parser = parser_for(argv)
        args = parser.parse_args(argv)
        before_work(args, parser)  # the flags' own checks, before the command does anything
        return args.func(args)
    except (ConfigError, ResultsError) as exc:
        print(f"kfp-bench: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except BenchError as exc:
        print(f"kfp-bench: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("kfp-bench: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except ModuleNotFoundError as exc:
        if (exc.name or "").split(".")[0] == "kfp_bench":
            raise
        # kfp-bench alone installs no dependencies (each pipeline step installs its extra)
        print(
            f"kfp-bench: this command needs {exc.name}, which comes with the cli extra: "
            "pip install 'kfp-bench[cli]'",
            file=sys.stderr,
        )
        return EXIT_BAD_INPUT
    except BrokenPipeError:  # the reader went away (| head): not an error of ours
        sys.stderr.close()
        return 0
