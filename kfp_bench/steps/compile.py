"""Compiling the pipelines to compiled/: deterministic YAML that carries no engine code.

``compile_all(out_dir)`` writes ``<name>.yaml`` for every pipeline in ``kfp_bench.pipelines``;
the same sources give byte-identical files (the golden test in tests/pipelines/ compares them
with compiled/). The steps get their code as ``delivery`` says (``kfp_bench.components._step``):
by default each installs kfp-bench's wheel pinned by its sha256 (``kfp_bench.artifact``) from
the ConfigMap ``kfp-bench install`` writes, or from ``wheel_url``, its dependencies from PyPI
(or ``index_url``); with ``image``, pinned by digest, every step runs in that image and installs
nothing.
"""

from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path
from urllib.parse import urlsplit

from kfp_bench.errors import ConfigError
from kfp_bench.redact import public_url

# Imports inside functions: the steps' modules must import in the pod of any step, which
# installs only its own extra (components/_step.py): what another extra's packages back is
# imported in the function that needs it (tests/test_imports.py checks the top).

#: kfp_bench/compiled/ (the checkout's compiled/ links to it): the golden files the tests compare
#: a fresh compile with.
DEFAULT_OUT = Path(__file__).resolve().parents[1] / "compiled"
#: An image by digest: a tag can be moved to other code, a digest cannot.
_IMAGE_REF = re.compile(r"^[a-z0-9][a-z0-9._/:-]*@sha256:[0-9a-f]{64}$")
_SHA256 = re.compile(r"^[0-9a-f]{64}$")


def delivery_for(image: str = "", index_url: str = "", wheel_url: str = "", sha256: str = ""):
    """The ``Delivery`` of ``--image`` / ``--pip-index-url`` / ``--wheel-url`` / ``--sha256``,
    checked.

    Raises:
        ConfigError: an image reference, URL or hash that cannot be right, or an image given
            with a package-mode option.
    """
    from kfp_bench.components._step import Delivery

    if image and (index_url or wheel_url or sha256):
        raise ConfigError(
            "--image with --pip-index-url, --wheel-url or --sha256: give one mode; an image "
            "installs nothing at start"
        )
    if image and not _IMAGE_REF.match(image):
        raise ConfigError(
            f"--image {image!r}: give the image by its digest, e.g. "
            "ghcr.io/you/kfp-bench@sha256:<64 hex digits> (docker buildx imagetools inspect "
            "IMAGE:TAG prints it): a tag can be moved to other code"
        )
    _url(index_url, "--pip-index-url", "a package index, e.g. https://pypi.example.com/simple")
    _url(wheel_url, "--wheel-url", "kfp-bench's wheel (kfp_bench-VERSION-py3-none-any.whl)")
    if sha256 and not _SHA256.match(sha256):
        raise ConfigError(f"--sha256 {sha256!r}: give the wheel's sha256, 64 hex digits")
    if wheel_url and not sha256:
        raise ConfigError(
            f"--wheel-url {public_url(wheel_url)!r} needs --sha256: the wheel there is installed "
            "only if it is the one you pin (sha256sum FILE)"
        )
    return Delivery(image=image, index_url=index_url, wheel_url=wheel_url, sha256=sha256)


def _url(value: str, flag: str, what: str) -> None:
    url = urlsplit(value)
    if value and (url.scheme not in ("http", "https") or not url.netloc):
        raise ConfigError(f"{flag} {public_url(value)!r}: give the http(s) URL of {what}")


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
