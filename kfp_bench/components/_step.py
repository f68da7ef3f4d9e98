"""How a step's code reaches its pod: kfp-bench's pinned wheel installed at start-up, or an image.

A component is a function over the engine marked with the extra of kfp-bench it needs,
``@step("kfp")``: that mark is the one place that says what a step installs. ``Delivery`` makes
the KFP component of a step, in one of two modes:

* package mode (the default; what compiled/ holds): the step runs in ``python:3.11-slim`` and
  installs ``kfp-bench[<extra>]`` from a direct reference checked by its sha256, never by a name
  an index could serve: the wheel ``kfp_bench.artifact`` builds, mounted from the ConfigMap
  ``kfp-bench-<sha256 prefix>`` that ``kfp-bench install`` writes (or from ``wheel_url``); its
  dependencies come from PyPI or ``index_url``; then kfp's launcher installs ``kfp==<kfp
  version> --no-deps``, as for any lightweight component;
* image mode (``image``, pinned by digest): the step runs in that image, built by the Dockerfile
  with every extra and kfp preinstalled, and installs nothing at start.

The pipeline is built under one delivery (``with delivery.active():``, see
``kfp_bench.pipelines.meta.build``); a step called outside that (a test that runs one component
with kfp.local) gets the default.
"""

from __future__ import annotations

import contextlib
import functools
import shlex
from collections.abc import Callable
from dataclasses import dataclass

from kfp import dsl, kubernetes

import kfp_bench
from kfp_bench.artifact import build, filename
from kfp_bench.load.cpu import BLAS_THREADS_ENV

#: The image of package mode: a bare Python, as the KFP SDK's own default.
BASE_IMAGE = "python:3.11-slim"
#: The extras of pyproject.toml that a step may name.
EXTRAS = ("history", "kfp", "kube", "llm", "load", "report", "stats")
#: Where a package-mode step finds the wheel: the ConfigMap's volume (``kfp-bench install``).
#: ``KFP_BENCH_WHEEL_DIR`` moves it, for a run outside a cluster (``kfp_bench.sandbox.pods``).
WHEEL_DIR = "/kfp-bench/wheel"
#: The install script of package mode, before kfp's own install of kfp (``{kfp}``). The wheel
#: is checked against the pin before pip runs, so that a mismatch is named as one; pip checks it
#: again (``#sha256=`` on a direct reference).
_FROM_CONFIG_MAP = """
wheel="${{KFP_BENCH_WHEEL_DIR:-{dir}}}/{file}"
if [ ! -f "$wheel" ]; then
    echo "kfp-bench: $wheel is missing: this pipeline installs kfp-bench {version} from the \
ConfigMap {config_map}, which is not in this namespace; put it there with: \
kfp-bench install --namespace <this namespace> (kfp-bench {version})" >&2
    exit 1
fi
python3 -c 'import hashlib, sys
got = hashlib.sha256(open(sys.argv[1], "rb").read()).hexdigest()
if got != sys.argv[2]:
    sys.exit(f"kfp-bench: {{sys.argv[1]}} does not match its pin: sha256 {{got}}, this pipeline is "
             f"pinned to {{sys.argv[2]}}; run kfp-bench install with the kfp-bench that compiled "
             "this pipeline")' "$wheel" {sha256} || exit 1
PIP_DISABLE_PIP_VERSION_CHECK=1 python3 -m pip install --quiet --no-warn-script-location \
{index}"{requirement} @ file://$wheel#sha256={sha256}" || exit 1
"""
_FROM_URL = """
PIP_DISABLE_PIP_VERSION_CHECK=1 python3 -m pip install --quiet --no-warn-script-location \
{index}{pinned} || {{ echo "kfp-bench: installing kfp-bench from {url} failed (pinned to sha256 \
{sha256}; pip said why above)" >&2; exit 1; }}
"""


@functools.cache
def own_sha256() -> str:
    """The sha256 of the artifact of the running kfp-bench (``kfp_bench.artifact.build``)."""
    return build().sha256


@dataclass(frozen=True)
class Delivery:
    """Where the steps' code comes from.

    Attributes:
        image: run every step in this image, a reference with its digest
            (``REPO@sha256:...``), with nothing installed at start (image mode); empty for
            package mode.
        index_url: package mode: the Python package index of kfp-bench's dependencies and kfp
            (a mirror); empty for PyPI.
        wheel_url: package mode: the http(s) URL of kfp-bench's wheel (a release asset, a
            mirror's file); empty for the ConfigMap that ``kfp-bench install`` writes.
        sha256: package mode: the wheel's pin; empty for the running kfp-bench's own artifact.
        version: package mode: the kfp-bench release of the wheel.
    """

    image: str = ""
    index_url: str = ""
    wheel_url: str = ""
    sha256: str = ""
    version: str = kfp_bench.__version__

    def pin(self) -> str:
        """The sha256 every package-mode step checks the wheel against."""
        return self.sha256 or own_sha256()

    def config_map(self) -> str:
        """The ConfigMap that holds the wheel (package mode without ``wheel_url``), named by the
        pin, so that builds of one version never stand in for each other."""
        return f"kfp-bench-{self.pin()[:12]}"

    def requirement(self, extras: tuple[str, ...]) -> str:
        """The pip requirement's name part of a step that needs ``extras``.

        Spelt ``KFP-bench``: pip reads the name case-blind, but kfp's launcher skips its own
        ``kfp==<version> --no-deps`` install when a package name starts with lower-case "kfp"
        (kfp 2.17.3, dsl/component_factory.py, ``_get_packages_to_install_command``:
        ``kfp_in_user_pkgs``), and the step's executor needs that install.
        """
        return f"KFP-bench[{','.join(extras)}]" if extras else "KFP-bench"

    def install_script(self, extras: tuple[str, ...]) -> str:
        """The shell lines that install kfp-bench (and the dependencies of ``extras``), checked
        against the pin; they exit 1, saying why, when the wheel is missing or not the pinned
        one."""
        index = f"--index-url {shlex.quote(self.index_url)} " if self.index_url else ""
        fields = dict(
            index=index, requirement=self.requirement(extras), sha256=self.pin(),
            version=self.version,
        )  # fmt: skip
        if self.wheel_url:
            pinned = shlex.quote(
                f"{self.requirement(extras)} @ {self.wheel_url}#sha256={self.pin()}"
            )
            return _FROM_URL.format(pinned=pinned, url=self.wheel_url, **fields)
        return _FROM_CONFIG_MAP.format(
            dir=WHEEL_DIR, file=filename(self.version), config_map=self.config_map(), **fields
        )

    def component(self, step: Step):
        """The KFP component of ``step`` under this delivery."""
        return _component(self, step)

    def mount(self, task) -> None:
        """Mount the wheel's ConfigMap into ``task``'s pod (package mode without ``wheel_url``);
        optional, so that a missing one fails the step with the install script's message
        rather than leaving the pod waiting for its volume."""
        if self.image or self.wheel_url:
            return
        kubernetes.use_config_map_as_volume(task, self.config_map(), WHEEL_DIR, optional=True)

    def env(self) -> dict[str, str]:
        """The environment of a step's pod. Package mode: pip compiles no bytecode at install
        (``PIP_COMPILE=0``, pip's --no-compile; ``PIP_NO_COMPILE=1`` would mean the opposite,
        pip reads a --no-* option's variable inverted): it would compile every module of every
        package, where the step imports a few and Python compiles those as it imports them
        (BENCHMARKS.md, "Step start-up"). Both modes: numpy's OpenBLAS with one thread, set
        before the step imports numpy (``kfp_bench.load.cpu.one_blas_thread`` says why)."""
        blas = {BLAS_THREADS_ENV: "1"}
        return blas if self.image else {"PIP_COMPILE": "0", **blas}

    @contextlib.contextmanager
    def active(self):
        """Make the steps called inside use this delivery (while a pipeline is built)."""
        _active.append(self)
        try:
            yield self
        finally:
            _active.pop()


_active: list[Delivery] = []
#: Where kfp-bench's install goes in the launcher's script (kfp 2.17.3,
#: dsl/component_factory.py, ``_install_python_packages_script_template``): before its install
#: of kfp, which it writes after this.
_KFP_INSTALL = "\nPIP_DISABLE_PIP_VERSION_CHECK=1 "


@functools.cache
def _component(delivery: Delivery, step: Step):
    if delivery.image:
        return dsl.component(step.func, base_image=delivery.image, install_kfp_package=False)
    component = dsl.component(
        step.func,
        base_image=BASE_IMAGE,
        pip_index_urls=[delivery.index_url] if delivery.index_url else None,
    )
    container = component.component_spec.implementation.container
    script = container.command[2]
    if container.command[:2] != ["sh", "-c"] or script.count(_KFP_INSTALL) != 1:
        raise RuntimeError(f"kfp's install script is not the one kfp-bench knows: {script!r}")
    container.command[2] = script.replace(
        _KFP_INSTALL, delivery.install_script(step.extras) + _KFP_INSTALL
    )
    # dsl.component takes no environment; a task starts from a copy of its component's
    # container, env included (kfp 2.17.3, dsl/pipeline_task.py)
    container.env = delivery.env()
    return component


def current() -> Delivery:
    """The delivery the pipeline is being built under (the default outside a build)."""
    return _active[-1] if _active else Delivery()


class Step:
    """A component function and the extras it installs; called, it is the KFP component of the
    delivery the pipeline is being built under."""

    def __init__(self, func: Callable, extras: tuple[str, ...]):
        self.func = func
        self.extras = extras
        functools.update_wrapper(self, func)

    def component(self, delivery: Delivery | None = None):
        return (delivery or current()).component(self)

    @property
    def component_spec(self):
        return self.component().component_spec

    def __call__(self, *args, **kwargs):
        delivery = current()
        task = delivery.component(self)(*args, **kwargs)
        delivery.mount(task)
        return task

    def __repr__(self) -> str:
        return f"Step({self.func.__name__}, extras={self.extras})"


def step(*extras: str) -> Callable[[Callable], Step]:
    """Mark a component function with the kfp-bench extras its pod installs (none: kfp-bench
    alone, which has no dependencies)."""
    unknown = set(extras) - set(EXTRAS)
    if unknown:
        raise ValueError(f"step extras {extras}: give some of {', '.join(EXTRAS)}")

    def mark(func: Callable) -> Step:
        return Step(func, tuple(sorted(extras)))

    return mark
