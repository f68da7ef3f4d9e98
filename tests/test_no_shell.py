"""Arguments never reach a shell: no shell in the sources, and hostile arguments stay data.

The scan reads every Python source of the project with ``ast`` and refuses any call that hands a
command to /bin/sh: a ``shell=`` keyword that is not the constant False (subprocess.run, Popen,
check_output, ... under any alias), ``os.system``, ``os.popen``, ``subprocess.getoutput`` and
``getstatusoutput``, and ``asyncio.create_subprocess_shell``. An argument list (``exec``, or
subprocess without a shell) is fine. The behavioural tests give ``kfp-bench`` arguments with shell
syntax in them and check that each is refused with one clear line or passed on as data, and that
no file PWNED appears."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.conftest import run_cli

ROOT = Path(__file__).resolve().parents[1]
SOURCES = ("kfp_bench", "bench", "scripts", "examples")
#: Calls that run their argument through /bin/sh, by module.
SHELL_CALLS = {
    "os": {"system", "popen"},
    "subprocess": {"getoutput", "getstatusoutput"},
    "asyncio": {"create_subprocess_shell"},
}
HOSTILE = ("; touch PWNED", "$(touch PWNED)", "`touch PWNED` && touch PWNED2")


def python_sources() -> list[Path]:
    files = [p for d in SOURCES if (ROOT / d).is_dir() for p in (ROOT / d).rglob("*.py")]
    return sorted(p for p in files if "__pycache__" not in p.parts)


def shell_calls(source: str, filename: str = "<source>") -> list[str]:
    """Every place in ``source`` that hands a command to a shell, as "line: what"."""
    tree = ast.parse(source, filename)
    # Names bound by `import os as o` / `from os import system as run`, to what they are.
    modules = {m: m for m in SHELL_CALLS}
    functions: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name in SHELL_CALLS:
                    modules[a.asname or a.name] = a.name
        elif isinstance(node, ast.ImportFrom) and node.module in SHELL_CALLS:
            for a in node.names:
                if a.name in SHELL_CALLS[node.module]:
                    functions[a.asname or a.name] = f"{node.module}.{a.name}"
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        for kw in node.keywords:
            if kw.arg == "shell" and not (
                isinstance(kw.value, ast.Constant) and kw.value.value is False
            ):
                found.append(f"{node.lineno}: shell={ast.unparse(kw.value)}")
        f = node.func
        if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name):
            module = modules.get(f.value.id)
            if module and f.attr in SHELL_CALLS[module]:
                found.append(f"{node.lineno}: {module}.{f.attr}")
        elif isinstance(f, ast.Name) and f.id in functions:
            found.append(f"{node.lineno}: {functions[f.id]}")
    return found


def test_the_scan_sees_the_project():
    files = python_sources()
    names = {p.relative_to(ROOT).parts[:2] for p in files}
    assert {("kfp_bench", "components"), ("kfp_bench", "pipelines")} <= names
    assert {"kfp_bench", "bench"} <= {name[0] for name in names}
    assert len(files) > 80


@pytest.mark.parametrize(
    "code",
    [
        "import subprocess\nsubprocess.run('ls', shell=True)",
        "import subprocess as sp\nsp.Popen(cmd, shell=flag)",
        "from subprocess import check_output\ncheck_output(c, shell=1)",
        "import os\nos.system('ls')",
        "import os as o\no.popen('ls')",
        "from os import system as run\nrun('ls')",
        "import subprocess\nsubprocess.getoutput('ls')",
        "import asyncio\nasyncio.create_subprocess_shell('ls')",
    ],
)
def test_the_scan_finds_a_shell(code):
    assert shell_calls(code)


@pytest.mark.parametrize(
    "code",
    [
        "import subprocess\nsubprocess.run(['ls', arg], shell=False)",
        "import subprocess\nsubprocess.Popen([sys.executable, '-m', 'x'])",
        "import os\nos.execvp('ls', ['ls'])",
        "system('ls')",  # not os.system
    ],
)
def test_the_scan_passes_an_argument_list(code):
    assert shell_calls(code) == []


def test_no_python_source_calls_a_shell():
    found = {
        str(p.relative_to(ROOT)): calls
        for p in python_sources()
        if (calls := shell_calls(p.read_text(encoding="utf-8"), str(p)))
    }
    assert found == {}


def _pwned(*dirs: Path) -> list[Path]:
    return [p for d in dirs for p in d.rglob("PWNED*")]


@pytest.mark.parametrize("evil", HOSTILE)
def test_a_hostile_benchmark_id_is_refused(evil, tmp_path):
    r = run_cli(
        "cleanup", "--host", "http://127.0.0.1:1", "--benchmark-id", "x" + evil, cwd=tmp_path
    )
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert r.stderr.startswith(f"kfp-bench: --benchmark-id {'x' + evil!r}: ")
    assert _pwned(tmp_path) == []


@pytest.mark.parametrize("evil", HOSTILE)
def test_hostile_text_in_a_url_and_a_header_is_sent_as_data(evil, tmp_path, fault_server):
    """The URL's path is percent-encoded (as hey's Go client does) and the header sent as it is:
    the server answers, and nothing ran them."""
    r = run_cli(
        "load",
        "-n",
        "2",
        "-c",
        "1",
        "-H",
        f"X-Note: {evil}",
        "-U",
        f"agent {evil}",
        f"{fault_server.url}/{evil}?q={evil}",
        cwd=tmp_path,
    )
    assert r.returncode == 0, r.stderr
    assert "  [200]\t2 responses" in r.stdout
    assert _pwned(tmp_path, ROOT) == []


@pytest.mark.parametrize("evil", HOSTILE)
def test_hostile_names_of_files_and_folders_are_paths(evil, tmp_path):
    """A results folder or output file named with shell syntax is a path like any other."""
    name = "r" + evil
    r = run_cli("report", name, cwd=tmp_path)
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert f"{name}: no such results directory" in r.stderr
    r = run_cli("merge", name + ".json", "-o", "o" + evil, cwd=tmp_path)
    assert r.returncode == 2 and f"{name}.json: no such results file" in r.stderr
    assert sorted(tmp_path.iterdir()) == []
