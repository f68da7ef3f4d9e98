"""How a step's code reaches its pod: the kfp-bench package installed at start-up, or an image.

A component is a function over the engine marked with the extra of kfp-bench it needs,
``@step("kfp")``: that mark is the one place that says what a step installs. ``Delivery`` makes
the KFP component of a step, in one of two modes:

* package mode (the default; what compiled/ holds): the step runs in ``python:3.11-slim`` and
  installs ``kfp-bench[<extra>]==<version>`` (from ``index_url`` when the cluster has a mirror),
  then kfp's launcher installs ``kfp==<kfp version> --no-deps``, as for any lightweight component;
* image mode (``image``): the step runs in that image, built by the Dockerfile with every extra
  and kfp preinstalled, and installs nothing at start.

The pipeline is built under one delivery (``with delivery.active():``, see
``kfp_bench.pipelines.meta.build``); a step called outside that (a test that runs one component
with kfp.local) gets the default.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable
from dataclasses import dataclass

from kfp import dsl

import kfp_bench

#: The image of package mode: a bare Python, as the KFP SDK's own default.
BASE_IMAGE = "python:3.11-slim"
#: The extras of pyproject.toml that a step may name.
EXTRAS = ("history", "kfp", "kube", "load", "report", "stats")


@dataclass(frozen=True)
class Delivery:
    """Where the steps' code comes from.

    Attributes:
        image: run every step in this image with nothing installed at start (image mode);
            empty for package mode.
        index_url: package mode: the Python package index to install kfp-bench from (a
            mirror); empty for PyPI.
        version: package mode: the kfp-bench release the steps install.
    """

    image: str = ""
    index_url: str = ""
    version: str = kfp_bench.__version__

    def requirement(self, extras: tuple[str, ...]) -> str:
        """The pip requirement of a step that needs ``extras``.

        Spelt ``KFP-bench``: pip reads the name case-blind, but kfp's launcher skips its own
        ``kfp==<version> --no-deps`` install when a package name starts with lower-case "kfp"
        (kfp 2.17.3, dsl/component_factory.py, ``_get_packages_to_install_command``:
        ``kfp_in_user_pkgs``), and the step's executor needs that install.
        """
        if not extras:  # a step of the standard library alone: the package, nothing else
            return f"KFP-bench=={self.version}"
        return f"KFP-bench[{','.join(extras)}]=={self.version}"

    def component(self, step: Step):
        """The KFP component of ``step`` under this delivery."""
        return _component(self, step)

    def env(self) -> dict[str, str]:
        """The environment of a step's pod. Package mode: pip compiles no bytecode at install
        (``PIP_COMPILE=0``, pip's --no-compile; ``PIP_NO_COMPILE=1`` would mean the opposite,
        pip reads a --no-* option's variable inverted): it would compile every module of every
        package, where the step imports a few and Python compiles those as it imports them
        (BENCHMARKS.md, "Step start-up")."""
        return {} if self.image else {"PIP_COMPILE": "0"}

    @contextlib.contextmanager
    def active(self):
        """Make the steps called inside use this delivery (while a pipeline is built)."""
        _active.append(self)
        try:
            yield self
        finally:
            _active.pop()


_active: list[Delivery] = []


@functools.cache
def _component(delivery: Delivery, step: Step):
    if delivery.image:
        return dsl.component(step.func, base_image=delivery.image, install_kfp_package=False)
    component = dsl.component(
        step.func,
        base_image=BASE_IMAGE,
        packages_to_install=[delivery.requirement(step.extras)],
        pip_index_urls=[delivery.index_url] if delivery.index_url else None,
    )
    # dsl.component takes no environment; a task starts from a copy of its component's
    # container, env included (kfp 2.17.3, dsl/pipeline_task.py)
    component.component_spec.implementation.container.env = delivery.env()
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
        return self.component()(*args, **kwargs)

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
