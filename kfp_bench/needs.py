"""What needs what: the flags, and the pipeline parameters, that mean something only beside
another. Given alone, each is refused rather than ignored: the CLI's by ``cli.checks``, the
parameters by the pipeline's first step (``steps.checks.check_needs``). One table for both.

Standard library only: the first step's pod installs the ``kfp`` extra alone.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Needs:
    """``flag`` (parsed as ``dest``) means something only beside one of ``needs`` (each a
    flag as the fix writes it, e.g. ``--fill K``, and its dest), on the ``commands``;
    ``pipeline``: the pipeline's parameters of the same names (``parameter``) obey it too."""

    commands: tuple[str, ...]
    flag: str
    dest: str
    needs: tuple[tuple[str, str], ...]
    pipeline: bool = False


def _needs(commands: str, flags: str, needs: str, pipeline: bool = False) -> list[Needs]:
    """The rules of ``flags`` (space-separated), each needing one of ``needs``
    (``|``-separated, e.g. ``--sweep-rates R,R|--sweep-concurrency C,C``), on ``commands``."""
    wanted = tuple((n, dest(n.split()[0])) for n in needs.split("|"))
    return [Needs(tuple(commands.split()), f, dest(f), wanted, pipeline) for f in flags.split()]


def dest(flag: str) -> str:
    """A flag's argparse dest: ``--fill-steps`` -> ``fill_steps``."""
    return flag.lstrip("-").replace("-", "_")


#: The pipeline parameter of a flag whose name it does not share (by its dest); the others are
#: named as their flag's dest.
PARAMETER = {
    "fill": "fill_runs",
    "metrics_var": "metrics_vars",
    "scrape": "metrics_scrape",
    # a credential sent to the scrapes: the header given, or the pod's own token
    "scrape_header": "metrics_scrape_token",
}

#: Every "only beside" relation of the newer flags (runs/fill, llm, metrics, push).
NEEDS = [
    *_needs("runs", "--fill-steps", "--fill K", pipeline=True),
    *_needs("runs", "--fill-mode --fill-repeats --fill-page-sizes", "--fill K"),
    *_needs("runs", "--fill-timeout", "--fill K"),
    *_needs("runs", "--metrics-profile", "--fill K"),
    *_needs("runs", "--prometheus-url --metrics-var --metrics-step", "--metrics-profile FILE"),
    *_needs("load llm", "--prometheus-url --metrics-var", "--metrics-profile FILE", pipeline=True),
    *_needs("load llm", "--metrics-step", "--metrics-profile FILE|--scrape URL"),
    *_needs("load llm", "--scrape-header", "--scrape URL", pipeline=True),
    *_needs("load llm", "--trace-speed", "--trace FILE"),
    *_needs("llm", "--prompts-format", "--prompts-file FILE"),
    *_needs("llm", "--knee-factor --knee-good", "--sweep-rates R,R|--sweep-concurrency C,C"),
    *_needs("report", "--push-label", "--pushgateway-url URL"),
]


def parameter(dest_: str) -> str:
    """The pipeline parameter of the flag parsed as ``dest_``."""
    return PARAMETER.get(dest_, dest_)


def parameter_rules() -> dict[str, tuple[str, ...]]:
    """The pipeline's form of the rules marked ``pipeline``: each parameter and those it needs
    one of, in the table's order."""
    rules: dict[str, tuple[str, ...]] = {}
    for rule in NEEDS:
        if rule.pipeline:
            rules[parameter(rule.dest)] = tuple(parameter(d) for _, d in rule.needs)
    return rules
