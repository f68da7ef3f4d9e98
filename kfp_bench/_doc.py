"""Help text taken from docstrings, so option help is written once, in the library."""

import inspect
import re

_SECTION = re.compile(r"^\s*(Attributes|Args):\s*$")
_ENTRY = re.compile(r"^(\s+)(\w+)(?:\s*\([^)]*\))?:\s*(.*)$")


def field_docs(obj) -> dict[str, str]:
    """Map each name in the ``Attributes:`` or ``Args:`` section of ``obj``'s docstring to its text;
    a class's own entries after its bases' (a dataclass's fields come in that order too).

    Continuation lines (indented deeper than the entry) are joined with single spaces.
    """
    if inspect.isclass(obj):
        bases = [c for c in reversed(obj.__mro__[1:]) if c is not object]
        return {k: v for c in bases for k, v in _docs(c.__doc__).items()} | _docs(obj.__doc__)
    return _docs(inspect.getdoc(obj))


def _docs(doc: str | None) -> dict[str, str]:
    doc = inspect.cleandoc(doc or "")
    docs: dict[str, str] = {}
    in_section, indent, current = False, None, None
    for line in doc.splitlines():
        if _SECTION.match(line):
            in_section, indent, current = True, None, None
            continue
        if not in_section:
            continue
        if line.strip() and not line.startswith(" "):
            in_section = False
            continue
        m = _ENTRY.match(line)
        if m and (indent is None or len(m.group(1)) == indent):
            indent = len(m.group(1))
            current = m.group(2)
            docs[current] = m.group(3).strip()
        elif current and line.strip():
            docs[current] = f"{docs[current]} {line.strip()}"
    return docs


def field_help(obj, name: str) -> str:
    """The docstring text for ``name``; a missing entry is a docstring bug: fail loudly."""
    try:
        return field_docs(obj)[name].replace("%", "%%")
    except KeyError:
        raise KeyError(f"{obj.__name__} documents no attribute {name!r}") from None
