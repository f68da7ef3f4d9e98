"""Servers of the ported KFP API tests: the real local server, a child process on loopback.

``server`` is shared by a module (the Ginkgo suites of backend/test/v2/api name every resource
uniquely); ``fresh`` is one per test, for the integration suites, which count what the whole
server holds, with the package URL checks off as KFP's CI has them. Every run is simulated
for 0.3 s: the tests need runs to exist and end, not to execute.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from kfp_bench.sandbox.kfp_server import start_kfp_server

_OPTIONS = {"simulate": "all:fixed(0.3)", "max_parallel_runs": 8, "seed": 7}


@dataclass(frozen=True)
class Listening:
    """A KFP API server this suite did not start (``--kfp-api-port``), on loopback."""

    port: int

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"


@pytest.fixture(scope="module")
def server(request):
    port = request.config.getoption("--kfp-api-port")
    if port:
        yield Listening(port)
        return
    with start_kfp_server(**_OPTIONS) as s:
        yield s


@pytest.fixture
def fresh(monkeypatch, request):
    """The integration suites' server. KFP's CI turns the package URL checks off for them
    (.github/workflows/integration-tests-v1.yml:75-76, ``PIPELINE_URL_VALIDATION_ENABLED=false``
    on ml-pipeline), since their files are served from inside the cluster; the child process
    inherits it here, as the API server reads it from its environment."""
    port = request.config.getoption("--kfp-api-port")
    if port:
        yield Listening(port)
        return
    monkeypatch.setenv("PIPELINE_URL_VALIDATION_ENABLED", "false")
    with start_kfp_server(**_OPTIONS) as s:
        yield s
