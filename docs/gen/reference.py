"""The reference pages written from the code: each command's flags from its argparse parser, the
pipeline's parameters from their groups (``steps.params.GROUPS``), the metric names from
``report.metric_names``, the exit codes' flags from ``kfp_bench.outcome``."""

from __future__ import annotations

import argparse
import json
import re
from dataclasses import MISSING, fields

from kfp_bench import outcome
from kfp_bench._doc import field_docs
from kfp_bench.cli import build_parser
from kfp_bench.report import metric_names
from kfp_bench.steps.params import GROUPS

#: Where the command reference's pages go, under docs/.
COMMANDS = "reference/commands"
#: Usage lines are wrapped at this width, whatever the terminal building the docs.
WIDTH = 96


def commands() -> dict[str, argparse.ArgumentParser]:
    """Each subcommand's name and parser, in the order ``kfp-bench --help`` lists them."""
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    return dict(sub.choices)


def summaries() -> dict[str, str]:
    """Each subcommand's one-line help, as ``kfp-bench --help`` shows it."""
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    return {a.dest: a.help or "" for a in sub._choices_actions}


def cell(text: str) -> str:
    """``text`` safe in a Markdown table cell, shown as written."""
    text = re.sub(r"\s+", " ", str(text))
    for ch in "\\|*_<>[]`":
        text = text.replace(ch, "\\" + ch)
    return text


def code(text: str) -> str:
    """``text`` as inline code in a table cell (a ``|`` in it escaped for the table)."""
    text = str(text).replace("|", "\\|")
    fence = "``" if "`" in text else "`"
    return f"{fence}{text}{fence}"


def _value(action: argparse.Action) -> str:
    if action.nargs == 0 or not action.option_strings and not action.choices:
        return ""
    if action.choices:
        return " ".join(code(c) for c in action.choices)
    metavar = action.metavar or (action.dest.upper() if action.option_strings else action.dest)
    return code(" ".join(metavar) if isinstance(metavar, tuple) else metavar)


def _default(action: argparse.Action) -> str:
    d = action.default
    if action.nargs == 0 or d is None or d is argparse.SUPPRESS or d in ([], ""):
        return ""
    return code(d)


def command_page(name: str, parser: argparse.ArgumentParser, summary: str) -> str:
    """One command's page: what it does, its usage, and every flag by group."""
    parser.formatter_class = lambda prog: argparse.HelpFormatter(prog, width=WIDTH)
    formatter = parser._get_formatter()
    out = [f"# kfp-bench {name}", "", parser.description or summary, ""]
    out += ["```", parser.format_usage().strip(), "```", ""]
    for group in parser._action_groups:
        actions = [
            a
            for a in group._group_actions
            if a.help is not argparse.SUPPRESS and not isinstance(a, argparse._HelpAction)
        ]
        if not actions:
            continue
        title = {"positional arguments": "Arguments", "options": "Options"}.get(group.title)
        title = title or group.title
        out += [f"## {title[:1].upper()}{title[1:]}", ""]
        if group.description:
            out += [group.description, ""]
        out += ["| flag | value | default | meaning |", "| --- | --- | --- | --- |"]
        for a in actions:
            flags = ", ".join(code(f) for f in a.option_strings) or code(a.metavar or a.dest)
            meaning = cell(formatter._expand_help(a)) if a.help else ""
            if a.required and a.option_strings:
                meaning = "**required.** " + meaning
            out.append(f"| {flags} | {_value(a)} | {_default(a)} | {meaning} |")
        out.append("")
    return "\n".join(out)


def commands_index(pages: dict[str, str]) -> str:
    """The reference's first page: every command with its one line, linked to its page."""
    out = ["# Commands", "", "Every `kfp-bench` command, each page written from its parser."]
    out += ["`kfp-bench COMMAND --help` prints the same.", "", "| command | what it does |"]
    out.append("| --- | --- |")
    for name, summary in summaries().items():
        out.append(f"| [`kfp-bench {name}`]({pages[name]}) | {cell(summary)} |")
    return "\n".join(out) + "\n"


def command_pages() -> dict[str, str]:
    """Every page of the command reference: its path under docs/ -> its Markdown."""
    parsers, helps = commands(), summaries()
    paths = {name: f"{name}.md" for name in parsers}
    pages = {
        f"{COMMANDS}/{paths[n]}": command_page(n, p, helps.get(n, "")) for n, p in parsers.items()
    }
    return {f"{COMMANDS}/index.md": commands_index(paths), **pages}


def metrics_page() -> str:
    """The metric names' reference: one table per group of names."""
    out = ["# Metric names", ""]
    out += [
        "The names of `metrics.json`, the KFP run's Metrics (Compare runs), the history's trend "
        "and the gates (`--threshold`, `thresholds`). They are stable: a name is only ever added. "
        "A metric whose value is unknown is left out, never NaN. `{a,b}` stands for either, "
        "`<word>` for a part the meaning explains. The LLM load's figures are explained in "
        "[The LLM load's metrics](../llm-metrics.md), the runs' in "
        "[The runs benchmark's figures](../run-figures.md).",
        "",
    ]
    for g in metric_names.GROUPS:
        out += [
            f"## {g.title}",
            "",
            f"Present {g.when}.",
            "",
            "| name | meaning |",
            "| --- | --- |",
        ]
        out += [f"| {code(n.pattern)} | {_inline(n.meaning)} |" for n in g.names]
        out.append("")
    return "\n".join(out)


def parameters_page() -> str:
    """The pipeline's parameters: one table per group, in the pipeline's order, each with the
    switches it is read beside."""
    out = ["# Pipeline parameters", ""]
    out += [
        "The parameters of `compiled/kfp_bench.yaml` (and `kfp_bench_mesh.yaml`), as the KFP "
        "UI's run form, `kfp-bench submit --param NAME=VALUE` and `kfp.Client` take them, by "
        "group. The first step, `check_params`, refuses a bad value in one line naming the "
        "parameter and the fix, before anything is created; one set for a part that is "
        "switched off is named in one note line of its log and ignored "
        "([Running in a cluster](../running-in-a-cluster.md#parameters-to-set)).",
        "",
    ]
    for g in GROUPS:
        docs = field_docs(g)
        out += [f"## {g.TITLE[0].upper()}{g.TITLE[1:]}", "", "| parameter | type | default | "
                "meaning |", "| --- | --- | --- | --- |"]  # fmt: skip
        for f in fields(g):
            value = f.default if f.default is not MISSING else f.default_factory()
            out.append(f"| {code(f.name)} | {f.type} | {code(json.dumps(value))} | "
                       f"{cell(docs[f.name])} |")  # fmt: skip
        beside = vars(g).get("READ_BESIDE", {})
        out += [""] + [
            f"Read only while {' or '.join(code(s) for s in on.split())} is on: "
            f"{', '.join(code(n) for n in names.split())}."
            for names, on in beside.items()
        ]
        out.append("")
    return "\n".join(out)


def _inline(text: str) -> str:
    """Text that keeps its `code` spans, other Markdown characters escaped for a table cell."""
    parts = re.split(r"(`[^`]*`)", re.sub(r"\s+", " ", text).strip())
    return "".join(p.replace("|", "\\|") if p.startswith("`") else cell(p) for p in parts)


def flags_tables() -> str:
    """The failure flags with their exit codes, and the warning flags, as Markdown tables."""
    out = ["| failure flag | exit code | meaning |", "| --- | --- | --- |"]
    out += [f"| {code(f)} | {c} | {cell(m)} |" for f, (c, m) in outcome.FAILURES.items()]
    out += ["", "| warning flag | meaning |", "| --- | --- |"]
    out += [f"| {code(f)} | {cell(m)} |" for f, m in outcome.WARNINGS.items()]
    return "\n".join(out) + "\n"


def exit_codes_table() -> str:
    """The exit codes as ``kfp_bench.outcome``'s docstring tables them, in Markdown."""
    doc = outcome.__doc__ or ""
    rows: list[list[str]] = []
    body = doc.split("====  ====")[1].split("\n====")[0]
    for line in body.splitlines()[1:]:
        code_, _, text = line.partition("  ")
        if code_.strip():
            rows.append([code_.strip(), text.strip()])
        elif rows and text.strip():
            rows[-1][1] += " " + text.strip()
    out = ["| exit code | meaning |", "| --- | --- |"]
    out += [f"| {c} | {_inline(t.replace('``', '`'))} |" for c, t in rows]
    return "\n".join(out) + "\n"
