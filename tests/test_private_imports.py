"""No module of kfp_bench imports another module's private names (``from kfp_bench.x import
_name``, or ``x._name`` of a module it imported): what two modules share is public in one of
them. Read with ``ast``, no import."""

from __future__ import annotations

import ast
from pathlib import Path

import kfp_bench

PACKAGE = Path(kfp_bench.__file__).parent

#: Private imports allowed for now, as (file, module, name): none since the pipeline layer moved
#: into one package (issue 27, part 1). The test fails once a listed import is gone, so that the
#: set only shrinks.
KNOWN: frozenset[tuple[str, str, str]] = frozenset()


def private_imports(root: Path) -> set[tuple[str, str, str]]:
    """(file, module, name) of each ``from kfp_bench... import _name`` under ``root``'s package,
    and of each ``mod._name`` where ``mod`` was imported from kfp_bench (dunders such as
    ``__version__`` are public)."""
    found = set()
    for path in sorted(root.rglob("*.py")):
        rel = f"kfp_bench/{path.relative_to(root).as_posix()}"
        tree = ast.parse(path.read_text(encoding="utf-8"), rel)
        ours = {}  # a name bound by an import from kfp_bench -> where it came from
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("kfp_bench"):
                for alias in node.names:
                    ours[alias.asname or alias.name] = f"{node.module}.{alias.name}"
                    if _private(alias.name):
                        found.add((rel, node.module, alias.name))
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
                if node.value.id in ours and _private(node.attr):
                    found.add((rel, ours[node.value.id], node.attr))
    return found


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def test_no_module_imports_another_modules_private_names():
    extra = sorted(private_imports(PACKAGE) - KNOWN)
    assert not extra, f"make these public where they are defined, or move them: {extra}"


def test_the_known_private_imports_are_still_there():
    gone = sorted(KNOWN - private_imports(PACKAGE))
    assert not gone, f"remove from KNOWN, they are fixed: {gone}"


def test_the_scan_finds_a_private_import(tmp_path):
    """The scan can fail: a package with one private import is caught, a dunder is not."""
    (tmp_path / "a.py").write_text(
        "from kfp_bench.b import _hidden, __version__, shown\n"
        "from kfp_bench import c\n"
        "c._inner(shown.__doc__)\n"
    )
    assert private_imports(tmp_path) == {
        ("kfp_bench/a.py", "kfp_bench.b", "_hidden"),
        ("kfp_bench/a.py", "kfp_bench.c", "_inner"),
    }
