"""MkDocs hooks (mkdocs.yml): add the pages written from the code, fill the generated tables into
the hand-written pages, and show a link to a repository file outside docs/ as its path."""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

from mkdocs.plugins import get_plugin_logger
from mkdocs.structure.files import File

sys.path.insert(0, str(Path(__file__).parent))
import reference  # noqa: E402  (docs/gen/ is no package: MkDocs loads hooks by path)

log = get_plugin_logger("kfp_bench")
#: A marker in a hand-written page -> the generated Markdown that replaces it.
FILLS = {
    "<!-- gen:exit-codes -->": reference.exit_codes_table,
    "<!-- gen:flags -->": reference.flags_tables,
}
#: The nav section the command pages are listed under (mkdocs.yml).
COMMANDS_NAV = "Commands"
_LINK = re.compile(r"(?<!!)\[([^\]\n]+)\]\(([^)\s]+)\)")
_FENCE = re.compile(r"^[ \t]*(?P<f>```|~~~).*?^[ \t]*(?P=f)", re.M | re.S)


def _root(config) -> Path:
    """The repository: the folder of mkdocs.yml."""
    return Path(os.path.abspath(config.config_file_path)).parent


def pages(root: Path) -> dict[str, str]:
    """Every generated page: its path under docs/ -> its Markdown."""
    return {
        **reference.command_pages(),
        "reference/metric-names.md": reference.metrics_page(),
        "reference/pipeline-parameters.md": reference.parameters_page(),
        # tests/README.md as a page of docs/: its links into docs/ become the pages'
        "testing.md": (root / "tests" / "README.md").read_text().replace("](../docs/", "]("),
    }


def on_config(config):
    """List the command pages under the nav's Commands section, in ``--help``'s order."""
    index = f"{reference.COMMANDS}/index.md"
    pages = [{"All commands": index}] + [
        {f"kfp-bench {name}": f"{reference.COMMANDS}/{name}.md"} for name in reference.commands()
    ]

    def fill(items):
        for item in items if isinstance(items, list) else []:
            for title, value in item.items() if isinstance(item, dict) else ():
                if title == COMMANDS_NAV:
                    item[title] = pages
                else:
                    fill(value)

    fill(config.nav)
    return config


def on_files(files, config):
    for path, text in pages(_root(config)).items():
        files.append(File.generated(config, path, content=text))
    return files


def on_page_markdown(markdown, page, config, files):
    for marker, fill in FILLS.items():
        markdown = markdown.replace(marker, fill())
    docs, root = Path(os.path.abspath(config.docs_dir)), _root(config)
    here = (docs / page.file.src_uri).parent
    out, last = [], 0
    for m in _FENCE.finditer(markdown):  # a link inside fenced code is text: left alone
        out += [_repo_links(markdown[last : m.start()], here, docs, root, page), m[0]]
        last = m.end()
    return "".join(out) + _repo_links(markdown[last:], here, docs, root, page)


def _repo_links(text: str, here: Path, docs: Path, root: Path, page) -> str:
    """``text`` with each link to a repository file outside docs/ shown as that file's path (the
    site has no copy of it); a link that finds no file is a warning, which strict mode fails."""

    def swap(m: re.Match) -> str:
        label, target = m.groups()
        if re.match(r"[a-z]+:|#", target):
            return m[0]
        # normpath, not resolve: a link's meaning is the repository's layout, links not followed
        path = Path(os.path.normpath(here / target.split("#")[0]))
        if path.is_relative_to(docs):
            return m[0]  # MkDocs checks these itself, anchors too
        if not path.is_relative_to(root) or not path.exists():
            log.warning(
                "%s: the link to %s finds no file in the repository", page.file.src_uri, target
            )
            return m[0]
        rel = path.relative_to(root).as_posix()
        return label if rel in label else f"{label} (`{rel}`)"

    return _LINK.sub(swap, text)
