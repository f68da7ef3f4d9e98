"""Metrics profiles: a YAML list of named PromQL queries, read and checked before the load.

The shape is kube-burner's (docs/observability/metrics.md, kube-burner/kube-burner@bfb5794a)::

    - query: sum(vllm:num_requests_waiting{namespace="{{.namespace}}"})
      metricName: queueWaiting
      instant: false            # a range query over the load's window (the default)

and keys of our own: ``compare`` (a histogram query whose buckets give the server's own
percentiles beside the client's: ttft, itl, tpot, e2e or latency), ``panel`` (the report
draws the series under that client chart: ttft or latency) and ``figure`` (an instant query
whose one value the report shows as that figure of the load: prefix_hit_rate). Variables are
written as kube-burner's Go templates, ``{{.name}}``: ``elapsed`` is the load's length
(``61s``), every other one is given with ``--metrics-var name=value``. A profile is a file, or
the name of one built in (``BUILTIN``, YAML files beside this module).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from kfp_bench.errors import ConfigError, yaml_error

#: The client figures a server histogram can be set beside (``compare``).
COMPARE = ("ttft", "itl", "tpot", "e2e", "latency")
#: The client charts a series can be drawn under (``panel``).
PANELS = ("ttft", "latency")
#: The figures of the load an instant query's value can be (``figure``).
FIGURES = ("prefix_hit_rate",)
_KEYS = {"query", "metricName", "instant", "compare", "panel", "figure"}
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_VAR = re.compile(r"\{\{\s*\.([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")
_HERE = Path(__file__).parent
#: Built-in profiles: name -> the YAML file beside this module.
BUILTIN = {
    "kserve-predictor": "kserve_predictor.yaml",
    "kfp": "kfp_control_plane.yaml",
    "gpu": "gpu_dcgm.yaml",
}


@dataclass(frozen=True, slots=True)
class Query:
    """One entry of a profile: ``query`` still holds its ``{{.var}}`` templates."""

    metric_name: str
    query: str
    instant: bool = False
    compare: str = ""
    panel: str = ""
    figure: str = ""

    def variables(self) -> set[str]:
        return set(_VAR.findall(self.query))

    def render(self, values: dict[str, str]) -> str:
        """The query with every ``{{.var}}`` replaced; the caller checked they are all given."""
        return _VAR.sub(lambda m: values[m.group(1)], self.query)


@dataclass(frozen=True, slots=True)
class Profile:
    """A checked profile: where it came from (a file or ``builtin:NAME``) and its queries."""

    source: str
    queries: tuple[Query, ...]

    def variables(self) -> set[str]:
        return set().union(*(q.variables() for q in self.queries)) if self.queries else set()

    def check_variables(self, given: dict[str, str]) -> None:
        """``ConfigError`` naming the first entry whose variable is not given."""
        have = set(given) | {"elapsed"}
        for i, q in enumerate(self.queries):
            missing = sorted(q.variables() - have)
            if missing:
                raise ConfigError(
                    f"metrics profile {self.source}, entry {i + 1} ({q.metric_name}) uses "
                    f"{{{{.{missing[0]}}}}}: give --metrics-var {missing[0]}=VALUE"
                )


def load(spec: str) -> Profile:
    """The profile ``spec`` names: a built-in name (``BUILTIN``) or a YAML file's path.
    ``ConfigError`` naming the file, the entry and the fix when it is not a valid profile."""
    import yaml  # ~14 ms, only with a profile: not at each start of load, llm and runs

    if spec in BUILTIN:
        path, source = _HERE / BUILTIN[spec], f"builtin:{spec}"
    else:
        path, source = Path(spec), spec
        if not path.is_file():
            names = ", ".join(BUILTIN)
            raise ConfigError(
                f"--metrics-profile {spec}: no such file, nor a built-in profile ({names})"
            )
    try:
        doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        raise ConfigError(f"--metrics-profile {yaml_error(exc, source)}; {_FIX}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"metrics profile {source}: not readable ({exc}); {_FIX}") from None
    return parse(doc, source)


#: What a profile's YAML is, as a refusal says it.
_FIX = "fix the YAML: a list of '- query: ...' entries with 'metricName: ...'"


def from_text(text: str, where: str) -> Profile:
    """A built-in name or a profile's YAML text itself (the pipeline's metrics_profile: a pod
    has no local file); ``where`` names the input in the messages."""
    import yaml  # deferred, as in load

    text = text.strip()
    if text in BUILTIN:
        return load(text)
    if "\n" not in text and not text.startswith(("-", "[")):
        raise ConfigError(
            f"{where}{text[:60]!r}: neither a built-in profile ({', '.join(BUILTIN)}) nor a "
            "profile's YAML text (a list of '- query: ...' entries with 'metricName: ...')"
        )
    try:
        doc = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ConfigError(f"{yaml_error(exc, f'{where}(YAML text)')}; {_FIX}") from None
    return parse(doc, f"{where}(YAML text)")


def parse(doc, source: str) -> Profile:
    """A profile from its YAML document (a list of entries)."""
    if not isinstance(doc, list) or not doc:
        raise ConfigError(
            f"metrics profile {source}: give a YAML list of entries, each "
            "'- query: ...' with 'metricName: ...'"
        )
    queries, seen = [], set()
    for i, entry in enumerate(doc):
        q = _entry(entry, f"metrics profile {source}, entry {i + 1}")
        if q.metric_name in seen:
            raise ConfigError(
                f"metrics profile {source}, entry {i + 1}: metricName {q.metric_name} is "
                "used twice; give each entry its own name"
            )
        seen.add(q.metric_name)
        queries.append(q)
    return Profile(source, tuple(queries))


def _entry(entry, where: str) -> Query:
    if not isinstance(entry, dict):
        raise ConfigError(f"{where}: an entry is a mapping with 'query' and 'metricName'")
    unknown = sorted(set(entry) - _KEYS)
    if unknown:
        raise ConfigError(
            f"{where}: unknown key {unknown[0]!r}; the keys are {', '.join(sorted(_KEYS))}"
        )
    query, name = entry.get("query"), entry.get("metricName")
    if not isinstance(query, str) or not query.strip():
        raise ConfigError(f"{where}: 'query' must be a PromQL expression (a non-empty string)")
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise ConfigError(
            f"{where}: 'metricName' must be a name of letters, digits and _ (got {name!r})"
        )
    instant = entry.get("instant", False)
    if not isinstance(instant, bool):
        raise ConfigError(f"{where} ({name}): 'instant' must be true or false")
    compare, panel = entry.get("compare", ""), entry.get("panel", "")
    if compare and compare not in COMPARE:
        raise ConfigError(f"{where} ({name}): 'compare' must be one of {', '.join(COMPARE)}")
    if compare and not instant:
        raise ConfigError(
            f"{where} ({name}): a 'compare' entry is read once over the window: add "
            "'instant: true' (and sum its buckets by (le) over [{{.elapsed}}])"
        )
    if panel and panel not in PANELS:
        raise ConfigError(f"{where} ({name}): 'panel' must be one of {', '.join(PANELS)}")
    if panel and instant:
        raise ConfigError(f"{where} ({name}): 'panel' draws a range query: drop 'instant'")
    figure = entry.get("figure", "")
    if figure and figure not in FIGURES:
        raise ConfigError(f"{where} ({name}): 'figure' must be one of {', '.join(FIGURES)}")
    if figure and (not instant or compare):
        raise ConfigError(
            f"{where} ({name}): a 'figure' is one value over the window: add 'instant: true' "
            "(and no 'compare')"
        )
    return Query(name, query.strip(), instant, compare, panel, figure)


def parse_vars(items: list[str]) -> dict[str, str]:
    """``--metrics-var name=value`` flags as a dict; ``ConfigError`` naming a bad one."""
    out = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not _NAME.fullmatch(name) or name == "elapsed":
            raise ConfigError(
                f"--metrics-var {item!r}: give NAME=VALUE (NAME of letters, digits and _, "
                "not 'elapsed', which is the load's length)"
            )
        if '"' in value or "\\" in value:
            raise ConfigError(
                f'--metrics-var {item!r}: the value goes inside PromQL quotes: drop its " and \\'
            )
        out[name] = value
    return out
