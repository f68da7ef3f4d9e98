"""What importing kfp-bench does and does not do: the request loop stands below the statistics,
an import changes no process state, and no two modules of the package import each other.

Each import check runs in a fresh interpreter (a subprocess): this one has imported most of the
package already.
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import kfp_bench

PACKAGE = Path(kfp_bench.__file__).parent


def _fresh(code: str, **env) -> subprocess.CompletedProcess:
    """Run ``code`` in a fresh interpreter of this environment; fail with its stderr."""
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return done


def test_the_request_loop_imports_neither_numpy_nor_the_statistics():
    out = _fresh(
        "import sys, kfp_bench.load.engine, kfp_bench.load.stream\n"
        "print(sorted(m for m in sys.modules if m == 'numpy' or m.startswith('kfp_bench.stats')))"
    )
    assert out.stdout.strip() == "[]"


#: The packages of kfp-bench's extras (pyproject.toml) that a step's pod may lack.
EXTRAS_PACKAGES = ("yaml", "numpy", "urllib3", "kubernetes", "hdrh", "httptools", "scipy",
                   "google", "boto3", "prometheus_client", "matplotlib")  # fmt: skip


def test_the_pipelines_modules_import_without_any_extra():
    # A step's pod installs kfp-bench with its own extra only (kfp_bench/components/_step.py): what
    # a step module imports at its top must be there in every pod; the rest is imported where used.
    modules = [m for m in _modules() if m.startswith("kfp_bench.steps.")]
    _fresh(
        "import importlib, sys\n"
        f"for name in {EXTRAS_PACKAGES!r}:\n"
        "    sys.modules[name] = None\n"
        f"for name in {modules!r}:\n"
        "    importlib.import_module(name)\n"
    )


def _modules() -> list[str]:
    """Every module of the package but ``__main__``s (which run a command when imported)."""
    return sorted(_name(p) for p in PACKAGE.rglob("*.py") if p.name != "__main__.py")


def _name(path: Path) -> str:
    parts = ("kfp_bench",) + path.relative_to(PACKAGE).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def test_importing_any_module_changes_no_environment_variable():
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENBLAS")}
    code = (
        "import importlib, os, sys\n"
        "before = dict(os.environ)\n"
        f"for name in {_modules()!r}:\n"
        "    importlib.import_module(name)\n"
        "changed = sorted(k for k in before.keys() | os.environ.keys()\n"
        "                 if before.get(k) != os.environ.get(k))\n"
        "print(changed)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "[]"


def test_the_command_limits_openblas_to_one_thread_before_numpy_is_imported():
    # numpy's OpenBLAS reads the variable once, when numpy is first imported: the command sets
    # it before any subcommand's module (and numpy with it) is imported; a user's setting wins.
    code = (
        "import os, sys\n"
        "from kfp_bench.cli import main\n"
        "assert 'numpy' not in sys.modules\n"
        "try:\n"
        "    main(['load', '--help'])\n"
        "except SystemExit:\n"
        "    pass\n"
        "print('numpy' in sys.modules, os.environ.get('OPENBLAS_NUM_THREADS'))\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == "True 1"
    done = _fresh(code, OPENBLAS_NUM_THREADS="2")
    assert done.stdout.splitlines()[-1] == "True 2"


# -- import cycles ---------------------------------------------------------------------------
def _imports(path: Path, name: str, known: set[str]) -> set[str]:
    """The package's modules that the module ``name`` (at ``path``) imports, at the top level or
    inside a function: ``import a.b``, ``from a import b`` (b a module of a, else a name in a's
    ``__init__``) and relative imports. A parent package that Python runs on the way to a module
    is not counted: every module would then depend on every ``__init__`` above it."""
    tree = ast.parse(path.read_text(), str(path))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(_owner(alias.name, known) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".")
                base = ".".join(up[: len(up) - node.level + 1] + ([base] if base else []))
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                out.add(sub if sub in known else _owner(base, known))
    return out - {None, name}


def _owner(module: str, known: set[str]) -> str | None:
    """The package module that ``module`` names: itself, or its nearest known parent."""
    while module and module not in known:
        module = module.rpartition(".")[0]
    return module or None


def import_graph() -> dict[str, set[str]]:
    files = {_name(p): p for p in PACKAGE.rglob("*.py")}
    known = set(files)
    return {name: _imports(path, name, known) for name, path in files.items()}


def cycles(graph: dict[str, set[str]]) -> set[frozenset[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index, low, stack, on, found = {}, {}, [], set(), set()

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            scc = set()
            while True:
                w = stack.pop()
                on.discard(w)
                scc.add(w)
                if w == v:
                    break
            if len(scc) > 1:
                found.add(frozenset(scc))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_cycles_finds_a_cycle_and_only_a_cycle():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": set(), "e": {"d"}}
    assert cycles(graph) == {frozenset("abc")}


def test_imports_in_functions_relative_ones_and_names_of_a_package_count(tmp_path):
    known = {"p", "p.a", "p.b", "p.sub", "p.sub.c"}
    f = tmp_path / "c.py"
    f.write_text("from .. import a, y\nfrom ..b import x\ndef f():\n    import p.sub\n")
    assert _imports(f, "p.sub.c", known) == {"p.a", "p", "p.b", "p.sub"}


def test_no_module_of_the_package_is_in_an_import_cycle():
    found = cycles(import_graph())
    assert not found, "import cycles: " + "; ".join(" <-> ".join(sorted(c)) for c in found)


# -- deferred imports ----------------------------------------------------------------------------
#: The module-level comment that gives the reason for a module's imports inside functions.
DEFERRED = "# Imports inside functions:"


def _unexplained(path: Path) -> list[int]:
    """The lines of the imports inside a function of ``path`` whose reason is written nowhere:
    not on their line, the line above, nor in the module's ``DEFERRED`` comment."""
    text = path.read_text()
    if any(line.startswith(DEFERRED) for line in text.splitlines()):
        return []
    lines = text.splitlines()
    found = []
    for node in ast.walk(ast.parse(text, str(path))):
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        for sub in ast.walk(node):
            if isinstance(sub, ast.Import | ast.ImportFrom):
                here, above = lines[sub.lineno - 1], lines[sub.lineno - 2].strip()
                if "#" not in here and not above.startswith("#"):
                    found.append(sub.lineno)
    return sorted(set(found))


def test_every_import_inside_a_function_says_why():
    # Imports sit at the top, where the import-cycle check and a reader see them; one inside a
    # function says why: a start-up cost measured, a package of another extra, a KFP component's
    # source shipped alone.
    missing = {
        str(p.relative_to(PACKAGE.parent)): lines
        for p in sorted(PACKAGE.rglob("*.py"))
        if (lines := _unexplained(p))
    }
    assert not missing, missing
