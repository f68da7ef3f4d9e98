"""Fixtures of the local KFP API server tests: real servers on loopback, real kfp.Client.

Each fixture starts ``python -m kfp_bench.sandbox.kfp_server`` in a child process; nothing is
mocked. Simulated runs are given short fixed durations so that the tests stay quick.
"""

from __future__ import annotations

import warnings

import pytest

from kfp_bench.sandbox.kfp_server import start_kfp_server
from tests.kfp_api.conftest import Listening


@pytest.fixture(scope="module")
def server(request):
    """A server that simulates container pipelines for 0.3 s and executes the rest; with
    ``--kfp-api-port``, the server already listening there (tests/kfp_api/conftest.py)."""
    port = request.config.getoption("--kfp-api-port")
    if port:
        yield Listening(port)
        return
    with start_kfp_server(simulate="auto:fixed(0.3)", max_parallel_runs=4, seed=7) as s:
        yield s


@pytest.fixture(scope="module")
def client(server):
    return make_client(server.url)


def make_client(url: str):
    import kfp

    with warnings.catch_warnings():
        # kfp.Client warns that it needs a v2 backend: this server is one.
        warnings.simplefilter("ignore", FutureWarning)
        return kfp.Client(host=url)
