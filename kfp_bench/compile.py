"""Compiling the pipelines to compiled/: deterministic YAML, each file under 1 MB.

A second bound is per step: a lightweight component's source, with the engine archive embedded
in it, is one argument of the step's command, and Linux refuses to start a program with any one
argument of 128 KiB or more (``MAX_ARG_STRLEN``: "Argument list too long"), in a pod as under
kfp.local. ``compile_all`` refuses such a step at compile time, naming it.

``compile_all(out_dir)`` writes ``<name>.yaml`` for every pipeline in ``kfp_bench.pipelines``.
The same sources give byte-identical files (the golden test in tests/pipelines/ compares them with
compiled/). ``base_image`` swaps the components' image for one with kfp-bench's requirements
installed (the repository's Dockerfile), for clusters that cannot reach PyPI: the components' pip
installs then find every pin already satisfied, and the engine still comes from the YAML.
"""

from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path

from kfp_bench.errors import ConfigError

MAX_BYTES = 1_000_000
MAX_ARG_BYTES = 32 * 4096  # Linux's MAX_ARG_STRLEN: the longest single argument execve takes
DEFAULT_OUT = Path(__file__).resolve().parent.parent / "compiled"
_IMAGE = re.compile(r"^(\s+image: )(\S+)$", re.MULTILINE)
_IMAGE_REF = re.compile(r"^[a-z0-9][a-z0-9._/:@-]*$", re.IGNORECASE)


def compile_all(
    out_dir: str | os.PathLike = DEFAULT_OUT, *, base_image: str = "", names=None
) -> dict[str, Path]:
    """Compile each pipeline to ``out_dir/<name>.yaml``; return the paths by name.

    Args:
        out_dir: the directory to write into (created when missing).
        base_image: the image every component runs in; empty for the components' own.
        names: the pipelines to compile; all when None.

    Raises:
        ConfigError: a bad image name, a file that would reach 1 MB (the size at which KFP's
            API server and UI stop taking it), or a step with a command argument too long to
            start (``longest_arguments``).
    """
    from kfp_bench.pipelines import PIPELINES, compile_pipeline

    if base_image and not _IMAGE_REF.match(base_image):
        raise ConfigError(f"--base-image {base_image!r}: give an image such as ghcr.io/you/img:tag")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    written = {}
    for name in names or PIPELINES:
        with tempfile.TemporaryDirectory(prefix="kfp-bench-compile-") as tmp:
            text = compile_pipeline(name, Path(tmp) / "p.yaml").read_text()
        if base_image:
            text = _IMAGE.sub(lambda m: m.group(1) + base_image, text)
        if len(text.encode()) >= MAX_BYTES:
            raise ConfigError(
                f"pipeline {name}: {len(text.encode())} bytes compiled, over the 1 MB that KFP "
                "takes; embed fewer engine parts in its components (components/_embed.py)"
            )
        for step, size in longest_arguments(text).items():
            if size >= MAX_ARG_BYTES:
                raise ConfigError(
                    f"pipeline {name}, step {step}: a command argument of {size} bytes, over the "
                    f"{MAX_ARG_BYTES} that Linux starts a program with; embed fewer engine parts "
                    "in that component (components/_embed.py)"
                )
        path = out / f"{name}.yaml"
        if not path.exists() or path.read_text() != text:
            path.write_text(text)
        written[name] = path
    return written


def longest_arguments(text: str) -> dict[str, int]:
    """The longest command or argument, in bytes, of each executor in a compiled pipeline."""
    import yaml

    spec = next(yaml.safe_load_all(text))
    longest = {}
    for name, executor in spec.get("deploymentSpec", {}).get("executors", {}).items():
        container = executor.get("container", {})
        strings = [*container.get("command", []), *container.get("args", [])]
        longest[name] = max((len(s.encode()) for s in strings), default=0)
    return longest
