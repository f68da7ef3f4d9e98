"""deploy_isvc with an LLM InferenceService (issue 19): with run_llm and no llm_url, the LLM
load streams from the deployed service's OpenAI routes and asks for the model it serves. The
cluster is ``fake_kube`` (no Kubernetes API can run here), reached through the default
kubeconfig as a step's pod reaches its own; the step and the kubernetes client are real."""

from __future__ import annotations

from kfp_bench.steps import llm_steps, serving
from kfp_bench.steps.llm_params import llm_options
from kfp_bench.steps.params import BenchParams
from tests.kserve.fake_kube import NS, READY, Scenario

LLM_ISVC = {
    "name": "bench-llm",
    "namespace": NS,
    "model_format": "huggingface",
    "model_args": ["--model_id=facebook/opt-125m", "--served-model-name", "opt"],
    "predictor": {"gpu": 1, "memory": "16Gi"},
}


def _params(**kw) -> BenchParams:
    return BenchParams(run_benchmark=False, run_load=False, run_llm=True, llm_workers=3,
                       llm_concurrency=6, benchmark_id="llm-1", isvc=LLM_ISVC, **kw)  # fmt: skip


def test_the_llm_load_targets_the_deployed_llm_isvc(fake_cluster, schema, capfd):
    s = fake_cluster.play(Scenario(conditions=[READY]))
    items = serving.deploy_isvc(_params().check(fetch=False), 5.0)
    (created,) = s.created
    schema.validate(created)  # KServe's CRD (tests/kserve/conftest.py)
    model = created["spec"]["predictor"]["model"]
    assert model["modelFormat"] == {"name": "huggingface"}
    assert created["spec"]["predictor"]["model"]["resources"]["limits"]["nvidia.com/gpu"] == "1"
    params = items[0]["params"]
    # its in-cluster address (status.address.url) + KServe's /openai prefix; vLLM's name wins
    assert params["llm_url"] == f"http://bench-llm-predictor.{NS}.svc.cluster.local/openai"
    assert params["llm_model"] == "opt"
    assert "LLM load: http://bench-llm-predictor" in capfd.readouterr().out
    fan = llm_steps.llm_items(params)
    assert [i["worker"] for i in fan] == [0, 1, 2]
    assert llm_options(BenchParams.from_dict(fan[2]["params"])).share(2, 3).validate()


def test_a_given_llm_url_and_model_are_kept(fake_cluster):
    fake_cluster.play(Scenario(conditions=[READY]))
    p = _params(llm_url="http://vllm.team.svc:8000", llm_model="mine").check(fetch=False)
    params = serving.deploy_isvc(p, 5.0)[0]["params"]
    assert (params["llm_url"], params["llm_model"]) == ("http://vllm.team.svc:8000", "mine")
