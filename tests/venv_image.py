"""This test environment standing in for image mode's image, for runs with kfp.local inside it.

The in-venv runs (``SubprocessRunner(use_venv=False)``) run each step in this environment, as a
pod of image mode runs it in the image: they are built under ``DELIVERY``, so no step installs
anything at start. Package mode's pinned install would put kfp-bench's wheel over this
environment's editable install; it is proven where each step has an environment of its own
(tests/pipelines/test_pods.py, test_pinned_install.py).
"""

from __future__ import annotations

import functools

from kfp_bench.components._step import Delivery

#: kfp.local warns about an image whose name lacks "python"; the digest is never pulled.
DELIVERY = Delivery(image="localhost/python-kfp-bench-test-venv@sha256:" + "0" * 64)


@functools.cache
def pipeline(variant: str = "kfp_bench"):
    """The meta-pipeline built for this environment."""
    from kfp_bench.pipelines.meta import build

    return build(DELIVERY, variant)
