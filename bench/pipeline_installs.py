"""The pip installs of a compiled KFP pipeline's steps, read from its YAML: what bench/startup.py
times.

``read_pipeline(text)`` gives a ``Step`` per executor: the pip install commands of its container
(the lightweight-component launcher's ``sh -c`` script, split as the shell splits it, with the
variables the script and the container's own environment set, and the shell variables the
script assigned before each, which ``Install.expanded`` puts in) and how many tasks of a default
run use it: a ParallelFor's once per iteration, none for a task whose condition
(``triggerPolicy.condition``, ``dsl.If``/``dsl.Else``) is false for the pipeline's defaults.
"""

from __future__ import annotations

import json
import os
import re
import shlex
from dataclasses import dataclass, field

import yaml

#: ``pip install`` options that take a value as the next word (``--opt=value`` needs no entry).
PIP_VALUE_OPTIONS = frozenset(
    "-r --requirement -c --constraint -e --editable -t --target --platform --python-version "
    "--implementation --abi --root --prefix --src --upgrade-strategy -C --config-settings "
    "--global-option --install-option --no-binary --only-binary --progress-bar "
    "--root-user-action --report -i --index-url --extra-index-url -f --find-links "
    "--trusted-host --proxy --retries --timeout --exists-action --cert --client-cert "
    "--cache-dir --log --keyring-provider --use-feature --use-deprecated --python "
    "--resume-retries --group -d --download --src".split()
)
#: Options a venv cannot honour: a venv has no user site, so pip refuses ``--user`` in one.
PIP_DROPPED = frozenset({"--user"})
#: ``$NAME``, ``${NAME}`` and ``${NAME:-default}`` in a word.
SHELL_VARIABLE = re.compile(
    r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}|\$([A-Za-z_][A-Za-z0-9_]*)"
)
#: The conditions the SDK writes for ``dsl.If(p == value)`` and ``dsl.If(p != value)``.
CONDITION = re.compile(
    r"inputs\.parameter_values\['pipelinechannel--([A-Za-z0-9_]+)'\] (==|!=) "
    r"(true|false|'[^']*'|-?[0-9]+(?:\.[0-9]+)?)"
)
SHELL_KEYWORDS = frozenset("if then else elif fi do done while until ! { } time exec".split())
ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
PYTHON = re.compile(r"^python[0-9.]*$")
PIP = re.compile(r"^pip[0-9.]*$")
REDIRECT = re.compile(r"^([0-9]*(?:>>|>&|<&|>\||<>|>|<)|&>>?)(.*)$")


@dataclass
class Install:
    """One ``pip install`` of a step's script: its words after ``install``, and its variables."""

    args: list[str]
    env: dict[str, str] = field(default_factory=dict)
    dropped: list[str] = field(default_factory=list)
    #: The shell variables the script assigned before this command (``wheel=...``).
    variables: dict[str, str] = field(default_factory=dict)

    def expanded(self, environ: dict[str, str]) -> list[str]:
        """``args`` with the script's variables put in, as the shell expands them: each
        assigned variable first, else ``environ``'s (the pod's, e.g. KFP_BENCH_WHEEL_DIR),
        else the ``:-`` default, else empty. (The quoting was removed when the words were
        split, so a ``$`` inside single quotes is expanded too; the KFP scripts have none.)"""

        def value(name: str, default: str | None, depth: int) -> str:
            if depth > 20:
                raise ValueError(f"shell variable ${name} expands itself")
            if name in self.variables:
                return expand(self.variables[name], depth + 1)
            if name in environ:
                return environ[name]
            return expand(default, depth + 1) if default is not None else ""

        def expand(word: str, depth: int = 0) -> str:
            return SHELL_VARIABLE.sub(
                lambda m: value(m.group(1) or m.group(3), m.group(2), depth), word
            )

        return [expand(a) for a in self.args]

    @property
    def requirements(self) -> list[str]:
        reqs, skip = [], False
        for a in self.args:
            if skip:
                skip = False
            elif a.startswith("-"):
                skip = a in PIP_VALUE_OPTIONS
            else:
                reqs.append(a)
        return reqs


@dataclass
class Step:
    """An executor of the pipeline: its installs and how many tasks of a default run use it."""

    name: str  # the executor label without ``exec-``
    executor: str
    image: str
    installs: list[Install]
    tasks: int = 0
    in_loop: bool = False


def _segments(script: str) -> list[str]:
    """A shell script cut at its unquoted control operators (``;``, ``&&``, ``||``, ``|``,
    ``&``, parentheses) and newlines, comments left out. Quotes, backslashes and ``$( )`` are
    tracked so that an operator inside them does not cut; the words are split by ``shlex``."""
    segs, cur, i, n = [], [], 0, len(script)
    quote, depth = "", 0  # quote: "'" or '"' while inside one; depth: nesting of $( )

    def cut() -> None:
        segs.append("".join(cur))
        cur.clear()

    while i < n:
        c = script[i]
        if quote == "'":
            quote = "" if c == "'" else quote
        elif c == "\\" and i + 1 < n:
            if script[i + 1] == "\n":  # a line continuation joins the lines
                i += 2
                continue
            cur.append(c + script[i + 1])
            i += 2
            continue
        elif quote == '"':
            if c == '"' and not depth:
                quote = ""
            elif c == "$" and script[i + 1 : i + 2] == "(":
                depth += 1
            elif c == ")" and depth:
                depth -= 1
        elif c in "'\"":
            quote = c
        elif c == "$" and script[i + 1 : i + 2] == "(":
            depth += 1
        elif c == ")" and depth:
            depth -= 1
        elif depth:
            pass
        elif c == "#" and (not cur or cur[-1] in " \t"):
            while i < n and script[i] != "\n":
                i += 1  # a comment runs to the end of the line
            continue
        elif c in ";|()\n" or (
            c == "&" and script[i - 1 : i] not in "<>" and script[i + 1 : i + 2] != ">"
        ):
            cut()
            i += 1
            continue
        cur.append(c)
        i += 1
    cut()
    return segs


def simple_commands(script: str) -> list[list[str]]:
    """The words of each simple command of a shell script, quotes removed as the shell does."""
    commands = []
    for seg in _segments(script):
        try:
            words = shlex.split(seg)
        except ValueError as e:  # an unclosed quote: the script is broken, say where
            raise ValueError(f"cannot split shell command {seg.strip()[:200]!r}: {e}") from e
        if words:
            commands.append(words)
    return commands


def pip_install(words: list[str]) -> Install | None:
    """The ``Install`` of one simple command, or None when it is not a ``pip install``."""
    i, env = 0, {}
    while i < len(words) and (words[i] in SHELL_KEYWORDS or ASSIGNMENT.match(words[i])):
        if ASSIGNMENT.match(words[i]):
            k, v = words[i].split("=", 1)
            env[k] = v
        i += 1
    rest = words[i:]
    if not rest:
        return None
    prog = os.path.basename(rest[0])
    j = 1
    if PYTHON.match(prog):
        while j < len(rest) and rest[j].startswith("-") and rest[j] != "-m":
            j += 1  # interpreter flags (-u, -I, ...)
        if rest[j : j + 2] != ["-m", "pip"]:
            return None
        j += 2
    elif not PIP.match(prog):
        return None
    general = []
    while j < len(rest) and rest[j].startswith("-"):
        general.append(rest[j])  # pip's general options before the subcommand
        j += 1
    if j >= len(rest) or rest[j] != "install":
        return None
    args, dropped, rest = [], [], rest[j + 1 :]
    n = 0
    while n < len(rest):
        a = rest[n]
        redirect = REDIRECT.match(a)
        if redirect:  # a redirection and its target are the shell's, not pip's
            n += 1 if redirect.group(2) else 2
            continue
        (dropped if a in PIP_DROPPED else args).append(a)
        n += 1
    return Install(args=general + args, env=env, dropped=dropped)


def container_installs(container: dict) -> list[Install]:
    """The pip installs of an executor's container, in the order its command runs them."""
    argv = [str(a) for a in [*container.get("command", []), *container.get("args", [])]]
    scripts: list[str] = []
    i = 0
    while i < len(argv):
        if os.path.basename(argv[i]) in ("sh", "bash", "dash", "ash") and i + 2 < len(argv):
            flags = argv[i + 1]
            if flags.startswith("-") and "c" in flags:
                scripts.append(argv[i + 2])
                i += 3
                continue
        i += 1
    commands = [w for s in scripts for w in simple_commands(s)] if scripts else [argv]
    # the container's own environment (the pipeline spec's env, e.g. PIP_COMPILE) is the
    # pod's: pip sees it under the script's own assignments
    pod_env = {e["name"]: str(e.get("value", "")) for e in container.get("env") or ()}
    installs, variables = [], {}
    for words in commands:
        if all(ASSIGNMENT.match(w) for w in words):  # ``name=value``: a shell variable
            variables.update(w.split("=", 1) for w in words)
        elif inst := pip_install(words):
            inst.env, inst.variables = {**pod_env, **inst.env}, dict(variables)
            installs.append(inst)
    return installs


def _iterations(task: dict, load_workers: int) -> int | None:
    it = task.get("parameterIterator") or task.get("artifactIterator")
    if not it:
        return None
    raw = (it.get("items") or {}).get("raw")
    if raw is not None:
        items = json.loads(raw) if isinstance(raw, str) else raw
        return len(items)
    return load_workers  # items from a task's output: in this pipeline, one per load worker


def condition_holds(text: str, params: dict) -> bool:
    """Whether a task's condition holds for the pipeline's parameter values ``params``: the
    shapes the SDK writes for ``dsl.If(p == v)`` and ``dsl.If(p != v)`` on a pipeline
    parameter, and their negation ``!(...)`` (``dsl.Else``). ``ValueError`` for any other (a
    task's output, ``&&``): the count of a default run would be a guess."""
    if text.startswith("!(") and text.endswith(")"):
        return not condition_holds(text[2:-1], params)
    m = CONDITION.fullmatch(text)
    if m is None or m.group(1) not in params:
        raise ValueError(f"a task condition this script cannot evaluate: {text}")
    name, op, literal = m.groups()
    want = json.loads(literal) if literal[0] != "'" else literal[1:-1]
    equal = params[name] == want and type(params[name]) is type(want)
    return equal if op == "==" else not equal


def default_params(doc: dict) -> dict:
    """The pipeline's parameters with a default value, by name."""
    params = ((doc.get("root") or {}).get("inputDefinitions") or {}).get("parameters") or {}
    return {k: v["defaultValue"] for k, v in params.items() if "defaultValue" in v}


def count_tasks(doc: dict, load_workers: int) -> tuple[dict[str, int], set[str]]:
    """Tasks per executor in a default run, and the executors started inside a ParallelFor.

    Walks ``root.dag.tasks`` and every component DAG under it (the exit handler's, the
    ParallelFor's, a condition's when it holds for the defaults): a task's ``componentRef``
    names a component, which names an executor (``executorLabel``) or holds a DAG of its
    own."""
    components = doc.get("components", {})
    params = default_params(doc)
    counts: dict[str, int] = {}
    looped: set[str] = set()

    def walk(dag: dict, times: int, in_loop: bool, depth: int) -> None:
        if depth > 50:
            raise ValueError("component DAGs nest more than 50 deep: a cycle?")
        for task in (dag or {}).get("tasks", {}).values():
            ref = (task.get("componentRef") or {}).get("name")
            comp = components.get(ref)
            if comp is None:
                raise ValueError(f"task refers to unknown component {ref!r}")
            condition = (task.get("triggerPolicy") or {}).get("condition")
            if condition and not condition_holds(condition, params):
                continue  # skipped in a default run, with all it holds
            n = _iterations(task, load_workers)
            t, loop = times * (n if n is not None else 1), in_loop or n is not None
            if comp.get("executorLabel"):
                counts[comp["executorLabel"]] = counts.get(comp["executorLabel"], 0) + t
                if loop:
                    looped.add(comp["executorLabel"])
            if comp.get("dag"):
                walk(comp["dag"], t, loop, depth + 1)

    walk((doc.get("root") or {}).get("dag"), 1, False, 0)
    return counts, looped


def read_pipeline(text: str, load_workers: int | None = None) -> tuple[list[Step], dict]:
    """The steps of a compiled pipeline (first YAML document), and facts about it."""
    doc = next(iter(yaml.safe_load_all(text)), None)
    if not isinstance(doc, dict) or "deploymentSpec" not in doc:
        raise ValueError("not a compiled KFP pipeline: no deploymentSpec in the first document")
    given = default_params(doc).get("load_workers")
    default = None if given is None else int(given)
    workers = load_workers if load_workers is not None else (default if default else 1)
    counts, looped = count_tasks(doc, workers)
    steps = []
    for label, spec in (doc["deploymentSpec"].get("executors") or {}).items():
        container = spec.get("container") or {}
        steps.append(
            Step(
                name=label.removeprefix("exec-"),
                executor=label,
                image=container.get("image", ""),
                installs=container_installs(container),
                tasks=counts.get(label, 0),
                in_loop=label in looped,
            )
        )
    info = {
        "pipeline": (doc.get("pipelineInfo") or {}).get("name"),
        "sdk_version": doc.get("sdkVersion"),
        "load_workers_default": default,
        "load_workers": workers,
    }
    return steps, info
