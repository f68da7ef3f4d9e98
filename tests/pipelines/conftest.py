"""Fixtures of the pod-faithful runs: the steps' wheels and the wheel volume."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from kfp_bench.sandbox.pods import installed, wheelhouse

#: Where the steps' wheels are kept between runs: in this environment, as the demo keeps them.
WHEELS = Path(sys.prefix) / "kfp-bench-pod-wheels"


@pytest.fixture(scope="module")
def wheels() -> Path:
    """Every wheel the steps install but kfp-bench's (pip's folder, no index)."""
    return wheelhouse(WHEELS)


@pytest.fixture(scope="module")
def mounted(tmp_path_factory) -> Path:
    """What ``kfp-bench install`` writes into a namespace, laid out as the steps' volume."""
    return installed(tmp_path_factory.mktemp("volume"))
