"""The child pipelines bundled with kfp-bench and the compiled YAML the package ships
(kfp_bench/compiled/, which the checkout's compiled/ links to)."""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

from kfp_bench.errors import ConfigError

#: The child pipelines bundled with kfp-bench (kfp_bench/pipelines/children.py), by name.
BUNDLED = ("noop", "fanout", "train")


def bundled_manifest(name: str) -> Path:
    """The compiled YAML of a bundled child pipeline, as the package ships it (compiled/)."""
    if name not in BUNDLED:
        raise ConfigError(
            f"pipeline parameter pipeline={name!r}: give one of {', '.join(BUNDLED)} or a URL"
        )
    return compiled_file(name)


def compiled_file(name: str) -> Path:
    """kfp_bench/compiled/<name>.yaml."""
    return Path(str(files("kfp_bench.compiled") / f"{name}.yaml"))
