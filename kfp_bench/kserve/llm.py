"""An LLM InferenceService and the OpenAI route it serves: ``llm_isvc`` builds the ``IsvcSpec``
of a huggingface predictor (KServe's huggingfaceserver, vLLM inside when a GPU is there) or of a
user's own serving runtime; ``openai_base`` and ``served_model`` say where to send the LLM load
and which ``model`` to ask for.

KServe's huggingface runtime (kserve/kserve at aaac4e29, config/runtimes/
kserve-huggingfaceserver.yaml) selects itself for ``modelFormat: huggingface`` and passes
``--model_name={{.Name}}``, the InferenceService's name; python/huggingfaceserver/
huggingfaceserver/__main__.py loads ``--model_id`` from the Hugging Face hub, else the model
KServe's storage initializer put in ``--model_dir`` (/mnt/models) from ``storageUri``; its
README.md ("huggingface-llama2") gives the GPU as an ``nvidia.com/gpu`` limit.
"""

from __future__ import annotations

import dataclasses

from kfp_bench.errors import ConfigError
from kfp_bench.kserve.kube import DEFAULT_NAMESPACE
from kfp_bench.kserve.spec import IsvcSpec, ScaleSpec

#: Where KServe's model server mounts the OpenAI API: python/kserve/kserve/protocol/rest/openai/
#: endpoints.py (aaac4e29) ``OPENAI_ROUTE_PREFIX`` (the server's KSERVE_OPENAI_ROUTE_PREFIX, by
#: default /openai) before /v1/completions, /v1/chat/completions and /v1/models.
OPENAI_PREFIX = "/openai"
#: The arguments that name the served model: the runtime's own, and vLLM's, which wins
#: (__main__.py: ``args.model_name = args.served_model_name[0]`` with the vLLM backend).
_NAME_FLAGS = ("--served_model_name", "--served-model-name", "--model_name")


def llm_isvc(
    name: str,
    *,
    model_id: str = "",
    storage_uri: str = "",
    model_name: str = "",
    runtime: str = "",
    args: tuple[str, ...] = (),
    gpu: int = 1,
    cpu: str = "",
    memory: str = "",
    namespace: str = DEFAULT_NAMESPACE,
    deployment_mode: str = "",
    scale: ScaleSpec | None = None,
) -> IsvcSpec:
    """The validated ``IsvcSpec`` of an LLM predictor (``modelFormat: huggingface``).

    Args:
        name: the InferenceService's name; the served model's name unless ``model_name``.
        model_id: a Hugging Face model id (``--model_id``), fetched by the server itself;
            or give ``storage_uri`` (hf://, gs://, s3://, pvc://) for KServe to fetch it.
        storage_uri: where the model lives when not by ``model_id``.
        model_name: the name requests ask for (``--model_name``); empty: ``name``.
        runtime: a ServingRuntime of the user's to serve it; empty: KServe's huggingface one.
        args: more arguments for the model server, e.g. ``--max-model-len=4096``.
        gpu: nvidia.com/gpu limit (0 for the CPU image; vLLM needs one).
        cpu, memory: requests and limits; empty: the runtime's (huggingfaceserver: 1, 2Gi).
        namespace, deployment_mode: as in ``IsvcSpec``.
        scale: the predictor's scale settings; gpu, cpu and memory above replace its own.
    """
    if bool(model_id) == bool(storage_uri):
        raise ConfigError(
            f"llm isvc {name!r}: give one of model_id (a Hugging Face id, e.g. "
            "facebook/opt-125m) or storage_uri (e.g. hf://facebook/opt-125m), not "
            f"{'both' if model_id else 'neither'}"
        )
    model_args = [f"--model_name={model_name}"] if model_name else []
    if model_id:
        model_args.append(f"--model_id={model_id}")
    scale = dataclasses.replace(scale or ScaleSpec(), gpu=gpu, cpu=cpu, memory=memory)
    return IsvcSpec(
        name,
        namespace=namespace,
        model_format="huggingface",
        storage_uri=storage_uri,
        deployment_mode=deployment_mode,
        predictor=scale,
        runtime=runtime,
        model_args=(*model_args, *args),
    ).validate()


def openai_base(url: str) -> str:
    """The OpenAI base URL of an InferenceService at ``url`` (its status.url): the LLM load
    posts to ``<base>/v1/completions`` and ``<base>/v1/chat/completions``."""
    if "://" not in url:
        raise ConfigError(
            f"InferenceService url {url!r}: give its status.url, e.g. http://llm.default.example.com"
        )
    return url.rstrip("/") + OPENAI_PREFIX


def served_model(spec: IsvcSpec) -> str:
    """The ``model`` that requests name: vLLM's --served_model_name (its first name) before
    the runtime's --model_name, else the InferenceService's name (``--model_name={{.Name}}``)."""
    args = list(spec.model_args)
    found = {}
    for i, arg in enumerate(args):
        flag, eq, value = arg.partition("=")
        if flag in _NAME_FLAGS and not eq:
            value = args[i + 1] if i + 1 < len(args) else ""
        if flag in _NAME_FLAGS and value:
            found.setdefault(flag.replace("-", "_").lstrip("_"), value)
    return found.get("served_model_name") or found.get("model_name") or spec.name
