"""The local servers behind ``kfp-bench demo`` and the tests, each run in a child process.

``model_server``: a real KServe model server with a tiny scikit-learn iris model (V1 and V2).
``fault_server``: a loopback HTTP/1.1 server with delays, stalls, errors, resets and hangs, which
measures the true hold time of every response. ``llm_server``: an OpenAI-compatible streaming
server (completions, chat) whose token timing and faults are set per request and logged as truth.
``process``: starting, health-checking and stopping them, so that nothing is left running.

The names below are imported on first use: ``python -m kfp_bench.sandbox.fault_server`` must not
find its own module already imported by this package, and kserve and scikit-learn are imported
only inside the server processes.
"""

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from kfp_bench.sandbox.fault_server import FaultModes, FaultServerHandle, start_fault_server
    from kfp_bench.sandbox.llm_server import LlmServerHandle, LlmServerOptions, start_llm_server
    from kfp_bench.sandbox.model_server import ModelServerHandle, start_model_server
    from kfp_bench.sandbox.process import ServerHandle, ServerSpec, free_port, start_server

_EXPORTS = {
    "FaultModes": "fault_server",
    "FaultServerHandle": "fault_server",
    "start_fault_server": "fault_server",
    "LlmServerHandle": "llm_server",
    "LlmServerOptions": "llm_server",
    "start_llm_server": "llm_server",
    "ModelServerHandle": "model_server",
    "start_model_server": "model_server",
    "ServerHandle": "process",
    "ServerSpec": "process",
    "free_port": "process",
    "start_server": "process",
}

__all__ = [
    "FaultModes",
    "FaultServerHandle",
    "LlmServerHandle",
    "LlmServerOptions",
    "ModelServerHandle",
    "ServerHandle",
    "ServerSpec",
    "free_port",
    "start_fault_server",
    "start_llm_server",
    "start_model_server",
    "start_server",
]


def __getattr__(name: str):
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{_EXPORTS[name]}"), name)


def __dir__() -> list[str]:
    return sorted([*globals(), *_EXPORTS])
