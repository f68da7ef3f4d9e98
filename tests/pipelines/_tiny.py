"""A one-line component for the small pipelines of test_pod_loss_rules (no ``from __future__
import annotations`` here: the KFP SDK reads the annotations as types)."""

from kfp import dsl


@dsl.component(base_image="python:3.11-slim")
def step(x: str = "") -> str:
    return x


@dsl.component(base_image="python:3.11-slim")
def gather(xs: list = []) -> str:  # noqa: B006 - a KFP default, never mutated
    return ",".join(xs)


@dsl.component(base_image="python:3.11-slim")
def make(out: dsl.Output[dsl.Dataset]):
    open(out.path, "w").close()


@dsl.component(base_image="python:3.11-slim")
def read(x: dsl.Input[dsl.Dataset]) -> str:
    return x.path
