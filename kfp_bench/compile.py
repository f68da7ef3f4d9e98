"""Compiling the pipelines to compiled/: deterministic YAML that carries no engine code.

``compile_all(out_dir)`` writes ``<name>.yaml`` for every pipeline in ``kfp_bench.pipelines``;
the same sources give byte-identical files (the golden test in tests/pipelines/ compares them
with compiled/). The steps get their code as ``delivery`` says (``kfp_bench.components._step``):
by default each installs ``kfp-bench[<its extra>]==<this version>`` from PyPI (or from
``index_url``); with ``image`` every step runs in that image and installs nothing.
"""

from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path
from urllib.parse import urlsplit

from kfp_bench.errors import ConfigError

#: The checkout's compiled/ (the golden files the tests compare a fresh compile with).
DEFAULT_OUT = Path(__file__).resolve().parent.parent / "compiled"
_IMAGE_REF = re.compile(r"^[a-z0-9][a-z0-9._/:@-]*$", re.IGNORECASE)


def delivery_for(image: str = "", index_url: str = ""):
    """The ``Delivery`` of ``--image`` / ``--pip-index-url``, checked.

    Raises:
        ConfigError: an image reference or index URL that cannot be right, or both given.
    """
    from kfp_bench.components._step import Delivery

    if image and index_url:
        raise ConfigError(
            "--image and --pip-index-url: give one; an image installs nothing at start, so it "
            "reads no index"
        )
    if image and not _IMAGE_REF.match(image):
        raise ConfigError(f"--image {image!r}: give an image such as ghcr.io/you/kfp-bench:0.1.0")
    url = urlsplit(index_url)
    if index_url and (url.scheme not in ("http", "https") or not url.netloc):
        raise ConfigError(
            f"--pip-index-url {index_url!r}: give the http(s) URL of a package index, e.g. "
            "https://pypi.example.com/simple"
        )
    return Delivery(image=image, index_url=index_url)


def compile_all(
    out_dir: str | os.PathLike = DEFAULT_OUT, *, delivery=None, names=None
) -> dict[str, Path]:
    """Compile each pipeline to ``out_dir/<name>.yaml``; return the paths by name.

    Args:
        out_dir: the directory to write into (created when missing).
        delivery: how the meta-pipeline's steps get kfp-bench (``delivery_for``); None for
            package mode from PyPI, what compiled/ holds.
        names: the pipelines to compile; all when None.
    """
    from kfp_bench.pipelines import PIPELINES, compile_pipeline

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    written = {}
    for name in names or PIPELINES:
        with tempfile.TemporaryDirectory(prefix="kfp-bench-compile-") as tmp:
            text = compile_pipeline(name, Path(tmp) / "p.yaml", delivery).read_text()
        path = out / f"{name}.yaml"
        if not path.exists() or path.read_text() != text:
            path.write_text(text)
        written[name] = path
    return written
