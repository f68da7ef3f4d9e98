"""What one start of ``kfp-bench`` imports: the module of the command given, and no other
command's (the suite starts the command about a thousand times; bench/cli_startup.py measures
what a start costs). Each check runs in a fresh interpreter: this one has imported them all."""

from __future__ import annotations

import argparse
import subprocess
import sys

import pytest

from kfp_bench.cli import build_parser, parser_for
from kfp_bench.cli.commands import GROUPS, HELP


def _imported_groups(*argv: str) -> set[str]:
    """The command groups' modules that ``kfp-bench ARGV`` imported, in a fresh process."""
    code = (
        "import sys\n"
        "from kfp_bench.cli import main\n"
        "try:\n"
        f"    main({list(argv)!r})\n"
        "except SystemExit:\n"
        "    pass\n"
        "print(' '.join(sorted(m for m in sys.modules if m.startswith('kfp_bench.cli.'))))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    modules = done.stdout.splitlines()[-1].split()
    return {m.removeprefix("kfp_bench.cli.") for m in modules} & set(GROUPS)


@pytest.mark.parametrize(
    ("argv", "groups"),
    [
        (["load", "--help"], {"load"}),
        (["llm", "--help"], {"llm"}),
        (["runs", "--help"], {"runs"}),
        (["compare", "--help"], {"report"}),
        (["--version"], set()),
        (["--help"], set()),
    ],
)
def test_a_start_imports_the_module_of_its_command_only(argv, groups):
    assert _imported_groups(*argv) == groups


def _commands(parser) -> dict:
    """Each command of ``parser``: its name -> (its one line, its parser)."""
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    lines = {a.dest: a.help for a in sub._choices_actions}
    return {name: (lines[name], p) for name, p in sub.choices.items()}


def test_the_table_lists_what_the_modules_define_in_their_order():
    assert {n: line for n, (line, _) in _commands(build_parser()).items()} == HELP
    assert list(_commands(build_parser())) == list(HELP)


@pytest.mark.parametrize("name", list(HELP))
def test_a_commands_parser_and_the_listing_are_those_of_the_whole_parser(name):
    whole, alone = build_parser(), parser_for([name, "--help"])
    assert alone.format_help() == whole.format_help()
    assert _commands(alone)[name][1].format_help() == _commands(whole)[name][1].format_help()


def test_without_a_command_no_module_builds_its_commands():
    for argv in ([], ["--help"], ["--version"], ["nosuch", "-n", "1"]):
        parser = parser_for(argv)
        assert parser.format_help() == build_parser().format_help()
        assert all(not p._actions[1:] for _, p in _commands(parser).values())  # -h alone
