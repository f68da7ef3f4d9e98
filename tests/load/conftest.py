"""Real servers on loopback for the load engine's tests: the fault server and the KServe model."""

import pytest

from kfp_bench.sandbox.fault_server import start_fault_server
from kfp_bench.sandbox.model_server import start_model_server


@pytest.fixture(scope="session")
def fault_server():
    """A fault server with no server-wide modes; tests steer it with query parameters."""
    with start_fault_server() as server:
        yield server


@pytest.fixture(scope="session")
def model_server():
    """The sandbox KServe model server (a real kserve.ModelServer serving iris)."""
    with start_model_server() as server:
        yield server
