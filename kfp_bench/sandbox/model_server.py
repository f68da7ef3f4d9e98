"""The local KServe model server: a real ``kserve.ModelServer`` serving a tiny iris classifier.

This module owns the sandbox model: ``IrisModel`` (built by ``iris_model``), a
``LogisticRegression`` trained in ``load()`` on scikit-learn's bundled iris data (no download),
served as model "iris" over KServe's V1 protocol (``POST /v1/models/iris:predict``) and its
V2 / Open Inference Protocol (``POST /v2/models/iris/infer``). Run it as::

    python -m kfp_bench.sandbox.model_server --http_port 8080

Every flag of ``kserve.model_server.parser`` works. Three defaults differ from kserve's, to keep a
benchmark's server lean: ``--model_name iris``, ``--enable_grpc false`` (nothing here speaks gRPC)
and ``--enable_latency_logging false`` (kserve would log a line per request). ``start_model_server``
runs it in a child process and returns a handle with its URLs.

With ``--predictor_host HOST`` it is a transformer instead: a plain ``kserve.Model``, whose
``predict`` sends each request on to the predictor at HOST (kserve/model.py ``Model.predict``).
That is how an InferenceService's transformer container is started: KServe appends
``--model_name``, ``--predictor_host`` (NAME-predictor.NAMESPACE) and ``--http_port`` to its
arguments (pkg/apis/serving/v1beta1/transformer_custom.go ``GetContainer``, v0.15.2).

kserve and scikit-learn are imported only inside the child: importing this module is cheap.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from typing import TYPE_CHECKING

from kfp_bench.sandbox.process import ServerHandle, ServerSpec, start_server, watch_parent

if TYPE_CHECKING:
    import kserve

# Imports inside functions: kserve and scikit-learn are no dependencies of kfp-bench: they load in
# the server's own process only.

MODEL_NAME = "iris"
N_FEATURES = 4  # sepal length, sepal width, petal length, petal width (cm)
IRIS_CLASSES = ("setosa", "versicolor", "virginica")


class ModelServerHandle(ServerHandle):
    """A running sandbox model server, with the URLs of its model."""

    model_name = MODEL_NAME

    @property
    def v1_model_url(self) -> str:
        """GET: ``{"name": "iris", "ready": true}`` once the model is loaded."""
        return f"{self.url}/v1/models/{self.model_name}"

    @property
    def v1_predict_url(self) -> str:
        """POST ``{"instances": [[f1, f2, f3, f4], ...]}`` -> ``{"predictions": [class, ...]}``."""
        return f"{self.v1_model_url}:predict"

    @property
    def v2_infer_url(self) -> str:
        """POST an Open Inference Protocol request with one FP32 input of shape [n, 4]."""
        return f"{self.url}/v2/models/{self.model_name}/infer"

    @property
    def v2_ready_url(self) -> str:
        return f"{self.url}/v2/models/{self.model_name}/ready"


def start_model_server(
    port: int = 0, *, args: tuple[str, ...] = (), start_timeout: float = 60.0
) -> ModelServerHandle:
    """Run the model server in a child process and return once model "iris" is ready.

    Args:
        port: HTTP port; 0 picks a free one. kserve listens on every interface (it hard-codes
            0.0.0.0); the handle's URLs use 127.0.0.1.
        args: further kserve flags, e.g. ``("--enable_latency_logging", "true")``; keep the
            model name, which the handle's URLs assume.
        start_timeout: seconds to wait for readiness (a cold start takes a few seconds).

    Raises:
        ServerError: the server exited or was not ready in time; the message holds its stderr.
    """
    spec = ServerSpec(
        name="model server",
        module="kfp_bench.sandbox.model_server",
        port_flag="--http_port",
        health_path=f"/v1/models/{MODEL_NAME}",
        args=("--workers", "1", *args),
        start_timeout=start_timeout,
        # uvicorn's graceful shutdown waits for open keep-alive connections; don't wait long.
        stop_timeout=5.0,
    )
    return start_server(spec, port, ModelServerHandle)


def iris_model(name: str = MODEL_NAME) -> kserve.Model:
    """A ``kserve.Model`` classifying iris flowers; call ``load()`` to train it (milliseconds).

    Its ``predict`` is KServe's sklearnserver's (v0.15.2, Kubeflow 1.11's:
    python/sklearnserver/sklearnserver/model.py ``SKLearnModel.predict``): the payload through
    ``get_predict_input`` to the model, and any failure an ``InferenceError``, HTTP 500. So it
    refuses what a real sklearn InferenceService refuses, as that one answers (asked on the
    real-cluster tier, tests/sandbox/test_model_server.py): a body sent with a Content-Type
    other than JSON (hey's default text/html, as the KServe guide's hey command sends) reaches
    the model as bytes and is a 500; a row of the wrong length is a 500; kserve itself refuses
    a body it cannot parse (400)."""
    import kserve
    from kserve.errors import InferenceError
    from kserve.utils.utils import get_predict_input, get_predict_response

    class IrisModel(kserve.Model):
        """Logistic regression on the 150 iris rows; predicts an index into ``IRIS_CLASSES``."""

        def __init__(self, name: str) -> None:
            super().__init__(name)
            self._classifier = None

        def load(self) -> bool:
            from sklearn.datasets import load_iris
            from sklearn.linear_model import LogisticRegression

            features, labels = load_iris(return_X_y=True)
            self._classifier = LogisticRegression(max_iter=1000).fit(features, labels)
            self.ready = True
            return self.ready

        def predict(self, payload, headers=None):
            try:
                instances = get_predict_input(payload)
                result = self._classifier.predict(instances)
                return get_predict_response(payload, result, self.name)
            except Exception as e:
                raise InferenceError(str(e)) from e

    return IrisModel(name)


def main(argv: list[str] | None = None) -> None:
    """Train the model and serve it until SIGTERM; flags are kserve's (see module docstring)."""

    # kserve.model_server parses sys.argv when imported; make it see the same flags we parse.
    if argv is not None:
        sys.argv = [sys.argv[0], *argv]
    from kserve import ModelServer
    from kserve import model_server as kserve_server

    parser = argparse.ArgumentParser(
        prog="python -m kfp_bench.sandbox.model_server",
        description="Serve a scikit-learn iris classifier with KServe (V1 and V2 protocols).",
        parents=[kserve_server.parser],
    )
    parser.set_defaults(model_name=MODEL_NAME, enable_grpc=False, enable_latency_logging=False)
    args = parser.parse_args(argv)

    watch_parent()
    if args.predictor_host:
        from kserve import Model

        model = Model(args.model_name)  # ModelServer reads the predictor's address from argv
        model.ready = True
    else:
        model = iris_model(args.model_name)
        model.load()
    ModelServer(
        http_port=args.http_port,
        grpc_port=args.grpc_port,
        workers=args.workers,
        enable_grpc=args.enable_grpc,
        enable_latency_logging=args.enable_latency_logging,
    ).start([model])
    # Skip interpreter teardown: garbage-collecting kserve's module graph (kubernetes, pandas,
    # scipy) takes 1-2 s after the server has already stopped, and there is nothing left to save.
    logging.shutdown()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


if __name__ == "__main__":
    main()
