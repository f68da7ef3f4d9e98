"""What needs what: the flags, and the pipeline parameters, that mean something only beside
another. One table (``NEEDS``) for both; the pipeline adds its parts' switches
(``steps.params.BenchParams.PARTS``, each group's ``READ_BESIDE``).

A flag given without the one it needs is refused (``cli.checks``, exit 2): flags are typed for
one command and nothing keeps them, so one alone is a slip, and refusing costs a retype.

A pipeline parameter set away from its default for a part that is switched off (llm_url with
run_llm false, fill_steps with fill_runs 0, prometheus_url with metrics_profile empty) is named
in one note line of the first step's log (``steps.checks.ignored``), and the run goes on. A run
carries every parameter, and a recurring run keeps them: a nightly schedule switches a part off
for a night by its one switch and keeps the part's settings for the next; refusing would fail
that night's whole benchmark and make the user blank each setting, then type it again. Ignored
in silence, though, a switch left off by mistake would go unseen: hence the note. A gate on a
figure no switched-on part measures is still refused (``steps.params.BenchParams.gates``): a
gate is a promise to fail the run, and one never checked would pass it unseen.

Standard library only: the first step's pod installs the ``kfp`` extra alone.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Needs:
    """``flag`` (parsed as ``dest``) means something only beside one of ``needs`` (each a
    flag as the fix writes it, e.g. ``--fill K``, and its dest), on the ``commands``;
    ``pipeline``: the pipeline's parameters of the same names (``parameter``) are read only
    beside each other too."""

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

#: The LLM load's other open loops: a sweep by rate, a search's probes.
_LLM_OPEN = "--sweep-rates R,R|--find-max AXIS"
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
    *_needs("llm", "--slo-share --find-start --find-limit --find-precision", "--find-max AXIS"),
    # open loop only: a trace plays its own offsets (no --arrival), but its requests in flight
    # are bounded as a rate's; an LLM sweep by rate and a search probe open loop too
    *_needs("load", "--arrival", "--rate R|--stages S"),
    *_needs("load", "--max-inflight", "--rate R|--stages S|--trace FILE"),
    *_needs("llm", "--arrival", f"--rate R|--stages S|{_LLM_OPEN}"),
    *_needs("llm", "--max-inflight", f"--rate R|--stages S|--trace FILE|{_LLM_OPEN}"),
    *_needs("report", "--push-label", "--pushgateway-url URL"),
]


def parameter(dest_: str) -> str:
    """The pipeline parameter of the flag parsed as ``dest_``."""
    return PARAMETER.get(dest_, dest_)


def parameter_rules(parts) -> dict[str, tuple[str, ...]]:
    """Each pipeline parameter read only beside others, and those others (it is read while one
    of them is on): the pipeline's ``parts`` (``steps.params.BenchParams.PARTS``: the
    parameters each reads, space-separated, and the switches that turn it on, any one of them),
    then the rules of ``NEEDS`` marked ``pipeline`` in the parameters' names."""
    rules = {name: tuple(on.split()) for names, on in parts for name in names.split()}
    for rule in NEEDS:
        if rule.pipeline:
            rules[parameter(rule.dest)] = tuple(parameter(d) for _, d in rule.needs)
    return rules
