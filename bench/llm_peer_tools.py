"""The tools ``bench/llm_peers.py`` runs: for each, its pinned install (a virtualenv of its own
under ``bench/.peers/``), its command for a case, and the reading of what it wrote into a
``Seen``: per-request send times and TTFTs where it exports them, its ITL samples or its own
percentiles, its own scheduling-lag figure.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PEERS_DIR = ROOT / "bench" / ".peers"
KFP = Path(sys.executable).parent / "kfp-bench"
PY312 = Path.home() / ".pyenv/versions/3.12.1/bin/python3.12"


@dataclass(frozen=True)
class Plan:
    """One case for one tool: where the server is and what load to put on it."""

    case: str  # c16, rate8 or c200
    url: str  # the server's base, without /v1
    model: str
    tokenizer: Path
    work: Path  # the tool's working folder: its outputs go here
    seconds: float
    concurrency: int  # 0 in the rate case
    rate: float  # 0 in the concurrency cases
    output_tokens: int
    input_words: int


@dataclass
class Seen:
    """What a tool reported, in seconds; empty where it has no such figure."""

    requests: int = 0
    sends: list = field(default_factory=list)  # (send time s, ttft s) per request
    clock: str = "perf_counter"  # the clock of sends: perf_counter or epoch
    by_id: dict = field(default_factory=dict)  # X-Request-Id: (sent, first), perf_counter
    ttfts: list = field(default_factory=list)  # ttft s per request, send times unknown
    ttft_ms: dict = field(default_factory=dict)  # its own {"p50": ms, "p99": ms}
    itls: list = field(default_factory=list)  # its ITL samples (s), pooled
    itl_ms: dict = field(default_factory=dict)  # its own ITL percentiles (ms)
    itl_per_gap: str = ""  # "yes", or how it computes ITL otherwise
    own_lag: dict | None = None
    note: str = ""


class Peer:
    """A tool: ``venv`` its virtualenv (None: the project's own), ``install`` its commands."""

    name = ""
    version = ""

    @property
    def venv(self) -> Path:
        return PEERS_DIR / self.name

    def exe(self) -> Path:
        raise NotImplementedError

    def install_commands(self) -> list[list[str]]:
        raise NotImplementedError

    def installed(self) -> bool:
        return self.exe().exists()

    def install(self) -> None:
        for cmd in self.install_commands():
            print("  $ " + " ".join(map(str, cmd)), flush=True)
            subprocess.run(list(map(str, cmd)), check=True)

    def size_mb(self) -> float | None:
        if not self.venv.exists():
            return None
        out = subprocess.run(["du", "-sm", str(self.venv)], capture_output=True, text=True)
        return float(out.stdout.split()[0]) if out.returncode == 0 else None

    def env(self, plan: Plan) -> dict:
        return {}

    def cannot_run(self) -> str:
        """Why the installed tool cannot run here; "" when it can."""
        return ""

    def version_text(self) -> str:
        return self.version

    def command(self, plan: Plan) -> list[str]:
        raise NotImplementedError

    def parse(self, plan: Plan) -> Seen:
        raise NotImplementedError


def _venv(python: Path | str, venv: Path) -> list[str]:
    return [str(python), "-m", "venv", str(venv)]


def _pip(venv: Path, *args: str) -> list[str]:
    return [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", *args]


# --- kfp-bench ---------------------------------------------------------------------------------


class KfpBench(Peer):
    name = "kfp-bench"

    def version_text(self) -> str:
        from kfp_bench import __version__

        return __version__

    @property
    def venv(self) -> Path:
        return Path(sys.executable).parents[1]

    def exe(self) -> Path:
        return KFP

    def install_commands(self) -> list[list[str]]:
        return [["make", "setup"]]

    def command(self, plan: Plan) -> list[str]:
        cmd = [str(KFP), "llm", plan.url + "/openai", "-z", f"{plan.seconds:g}s"]
        cmd += ["--model", plan.model, "--max-tokens", str(plan.output_tokens), "--ignore-eos"]
        cmd += ["--input-tokens", f"fixed:{plan.input_words}"]
        cmd += ["--output-tokens", f"fixed:{plan.output_tokens}"]
        if plan.rate:
            cmd += ["--rate", f"{plan.rate:g}"]
        else:
            cmd += ["-c", str(plan.concurrency)]
        return [*cmd, "--json-out", str(plan.work / "kfp.json")]

    def parse(self, plan: Plan) -> Seen:
        from kfp_bench.stats.store import load

        s = load(plan.work / "kfp.json").summary()
        lat = s.latency_ms

        def pq(name: str) -> dict:
            return {"p50": lat[name]["p50"], "p99": lat[name]["p99"]}

        return Seen(
            requests=s.completed,
            ttft_ms=pq("ttft"),
            itl_ms=pq("itl"),
            itl_per_gap="yes (every gap between content chunks, pooled)",
            own_lag=pq("lag") if plan.rate else None,
            note="HDR histograms (3 significant digits): percentiles only, no per-request rows",
        )


class KfpRows(KfpBench):
    """kfp-bench's engine (one process, as ``kfp-bench llm`` runs it) with its rows kept
    (``bench/llm_kfp_rows.py``): each request pairs with the truth by its X-Request-Id."""

    name = "kfp-bench-rows"

    def command(self, plan: Plan) -> list[str]:
        script = ROOT / "bench" / "llm_kfp_rows.py"
        args = [plan.url + "/openai", plan.model, plan.concurrency or 1, plan.rate, plan.seconds]
        return [sys.executable, str(script), *map(str, args), str(plan.work / "rows.jsonl")]

    def parse(self, plan: Plan) -> Seen:
        rows = [json.loads(x) for x in (plan.work / "rows.jsonl").read_text().splitlines()]
        ok = {r["id"]: (r["sent"], r["first"]) for r in rows if r["outcome"] == 0 and r["first"]}
        lag = [r["sent"] - r["intended"] for r in rows] if plan.rate else None
        return Seen(
            requests=len(ok),
            by_id=ok,
            itl_per_gap="(rows keep no token times: see kfp-bench)",
            own_lag={"p50": quantile_ms(lag, 0.5), "p99": quantile_ms(lag, 0.99)} if lag else None,
        )


# --- guidellm -----------------------------------------------------------------------------------


class GuideLlm(Peer):
    """guidellm 0.8.1: per-request epoch timings (``info.timings``), its ITL per request.

    Its ITL is one value per request, (last token - first) / (tokens - 1), repeated per token
    (``inter_token_latency_ms`` count = requests x 63 here): not one sample per gap.
    """

    name, version = "guidellm", "0.8.1"

    def exe(self) -> Path:
        return self.venv / "bin" / "guidellm"

    def install_commands(self) -> list[list[str]]:
        # torch first, from this machine's CPU wheel: guidellm needs torch, and a bare resolve
        # takes a CUDA build of several GB
        return [
            _venv(sys.executable, self.venv),
            _pip(self.venv, "torch==2.13.0"),
            _pip(self.venv, f"guidellm=={self.version}"),
        ]

    def command(self, plan: Plan) -> list[str]:
        if plan.rate:
            profile = f"kind=constant,rate={plan.rate:g}"
        else:
            profile = f"kind=concurrent,streams={plan.concurrency}"
        return [
            str(self.exe()), "run",
            "--backend", f"kind=openai_http,target={plan.url},model={plan.model},"
            "request_format=/v1/completions",
            "--profile", profile,
            "--constraint", f"kind=max_duration,seconds={plan.seconds:g}",
            "--data", f"kind=synthetic_text,prompt_tokens={plan.input_words},"
            f"output_tokens={plan.output_tokens}",
            "--tokenizer", f"kind=hf_auto,model={plan.tokenizer}",
            "--output", f"kind=json,path={plan.work / 'guidellm.json'}",
            "--disable-console-interactive",
        ]  # fmt: skip

    def parse(self, plan: Plan) -> Seen:
        b = load_json(plan.work / "guidellm.json")["benchmarks"][0]
        ok = b["requests"]["successful"]
        sends = []
        for r in ok:
            t = r["info"]["timings"]
            if t.get("first_token_iteration") and t.get("request_start"):
                sends.append((t["request_start"], t["first_token_iteration"] - t["request_start"]))
        m = b["metrics"]
        itl = m["inter_token_latency_ms"]["successful"]["percentiles"]
        lag = m["request_dispatch_delay"]["successful"]["percentiles"] if plan.rate else None
        return Seen(
            requests=len(ok),
            sends=sends,
            clock="epoch",
            itl_ms={"p50": itl["p50"], "p99": itl["p99"]},
            itl_per_gap="no: one mean per request, (last - first) / (tokens - 1)",
            own_lag={"p50": lag["p50"], "p99": lag["p99"], "what": "request_dispatch_delay"}
            if lag
            else None,
        )


# --- inference-perf ------------------------------------------------------------------------------


class InferencePerf(Peer):
    """inference-perf 0.7.0: per-request ``start_time`` and ``chunk_times`` (perf_counter) in
    ``per_request_lifecycle_metrics.json``; ITL deltas per chunk (reportgen/base.py,
    ``compute_request_latency_metrics``); its own ``load_summary.schedule_delay``."""

    name, version = "inference-perf", "0.7.0"

    def exe(self) -> Path:
        return self.venv / "bin" / "inference-perf"

    def install_commands(self) -> list[list[str]]:
        return [_venv(PY312, self.venv), _pip(self.venv, f"inference-perf=={self.version}")]

    def cannot_run(self) -> str:
        return "" if PY312.exists() else f"needs Python >= 3.12 at {PY312}"

    def command(self, plan: Plan) -> list[str]:
        fixed = lambda n: {"min": n, "max": n, "mean": n, "std_dev": 0, "type": "fixed"}  # noqa: E731
        if plan.rate:
            stage = {"rate": plan.rate, "duration": int(plan.seconds)}
            load = {"type": "constant", "stages": [stage]}
        else:
            n = plan.concurrency * max(1, round(plan.seconds / 1.46))  # one stream: 1.46 s
            stage = {"num_requests": n, "concurrency_level": plan.concurrency}
            load = {"type": "concurrent", "stages": [stage]}
        config = {
            "api": {"type": "completion", "streaming": True},
            "data": {
                "type": "random",
                "input_distribution": fixed(plan.input_words),
                "output_distribution": fixed(plan.output_tokens),
            },
            "load": load,
            "server": {
                "type": "vllm",
                "model_name": plan.model,
                "base_url": plan.url,
                "ignore_eos": True,
            },  # fmt: skip
            "tokenizer": {"pretrained_model_name_or_path": str(plan.tokenizer)},
            "report": {
                "request_lifecycle": {"summary": True, "per_stage": True, "per_request": True}
            },
            "storage": {"local_storage": {"path": str(plan.work / "ip")}},
        }
        path = plan.work / "inference-perf.yaml"
        path.write_text(json.dumps(config))  # JSON is YAML
        return [str(self.exe()), "-c", str(path)]

    def parse(self, plan: Plan) -> Seen:
        rows = load_json(plan.work / "ip" / "per_request_lifecycle_metrics.json")
        sends, itls = [], []
        for r in rows:
            times = r["info"]["response_metrics"].get("chunk_times") or []
            if r.get("error") or not times:
                continue
            sends.append((r["start_time"], times[0] - r["start_time"]))
            itls += [b - a for a, b in zip(times, times[1:], strict=False)]
        own = None
        if plan.rate:
            d = load_json(plan.work / "ip" / "summary_lifecycle_metrics.json")
            lag = d["load_summary"]["schedule_delay"]
            own = {"p50": lag["median"] * 1e3, "p99": lag["p99"] * 1e3, "what": "schedule_delay"}
        # its "constant" load draws exponential gaps (loadgen/load_timer.py, ConstantLoadTimer):
        # a Poisson schedule, so the lag against a constant one measures the draw, not the tool
        note = "constant load type draws exponential gaps (Poisson)" if plan.rate else ""
        return Seen(
            requests=len(sends), sends=sends, itls=itls, itl_per_gap="yes (chunk_times deltas)",
            own_lag=own, note=note,
        )  # fmt: skip


# --- vllm bench serve ----------------------------------------------------------------------------


class VllmBench(Peer):
    """``vllm bench serve`` of vllm 0.33.0: per-request ``start_times`` (perf_counter), ``ttfts``
    and ``itls`` (one per gap) with ``--save-detailed``. vllm 0.33.0 pins torch 2.14.0 and CUDA
    kernels; the bench client needs neither, so it is installed without its dependencies, over
    this machine's CPU torch 2.13.0, with the pure-Python ones its import chain needs."""

    name, version = "vllm", "0.33.0"
    DEPS = (
        "regex cachetools psutil sentencepiece numpy requests tqdm blake3 py-cpuinfo "
        "transformers<5.21.0,>=5.16.1 huggingface_hub tokenizers safetensors protobuf "
        "fastapi[standard]<0.137.0,>=0.133.0 aiohttp>=3.14.4 openai>=2.25.0 pydantic orjson "
        "prometheus_client pillow prometheus-fastapi-instrumentator tiktoken msgspec pyzmq "
        "cloudpickle pyyaml einops cbor2 pybase64 setproctitle partial-json-parser filelock "
        "jsonschema watchfiles python-json-logger ijson oss-harmony>=0.0.11 mcp<3.0.0,>=2.2.0 "
        "anthropic>=0.71.0 model-hosting-container-standards<1.0.0,>=0.1.14 opentelemetry-sdk "
        "opentelemetry-api opentelemetry-exporter-otlp opentelemetry-semantic-conventions-ai "
        "mistral_common[image]>=1.11.6 lm-format-enforcer==0.11.3 lark==1.2.2 "
        "compressed-tensors==0.17.0 depyf==0.20.0 ninja xgrammar==0.2.8 "
        "llguidance<1.8.0,>=1.7.0 outlines_core==0.2.14"
    ).split()

    def exe(self) -> Path:
        return self.venv / "bin" / "vllm"

    def install_commands(self) -> list[list[str]]:
        return [
            _venv(sys.executable, self.venv),
            _pip(self.venv, "torch==2.13.0"),
            _pip(self.venv, "--no-deps", f"vllm=={self.version}"),
            _pip(self.venv, *self.DEPS),
        ]

    def command(self, plan: Plan) -> list[str]:
        cmd = [
            str(self.exe()), "bench", "serve", "--backend", "vllm", "--base-url", plan.url,
            "--endpoint", "/v1/completions", "--model", plan.model,
            "--tokenizer", str(plan.tokenizer), "--dataset-name", "random",
            "--random-input-len", str(plan.input_words),
            "--random-output-len", str(plan.output_tokens), "--ignore-eos",
            "--save-result", "--save-detailed", "--result-dir", str(plan.work),
            "--result-filename", "vllm.json",
        ]  # fmt: skip
        if plan.rate:
            # vllm draws gaps from a gamma of shape `burstiness` (1: Poisson); 1e6 makes them
            # 1/rate within 0.1 %: the constant schedule the other tools keep
            n = int(plan.rate * plan.seconds)
            return [*cmd, "--num-prompts", str(n), "--request-rate", f"{plan.rate:g}",
                    "--burstiness", "1e6"]  # fmt: skip
        n = plan.concurrency * max(1, round(plan.seconds / 1.46))
        return [*cmd, "--num-prompts", str(n), "--max-concurrency", str(plan.concurrency),
                "--request-rate", "inf"]  # fmt: skip

    def parse(self, plan: Plan) -> Seen:
        d = load_json(plan.work / "vllm.json")
        sends, itls = [], []
        for start, ttft, gaps, err in zip(
            d["start_times"], d["ttfts"], d["itls"], d["errors"], strict=False
        ):
            if err or not ttft:
                continue
            sends.append((start, ttft))
            itls += gaps
        own = None
        if plan.rate and d.get("queue_times"):
            q = [x for x in d["queue_times"] if x is not None]
            own = {"p50": quantile_ms(q, 0.5), "p99": quantile_ms(q, 0.99), "what": "queue_times"}
        return Seen(
            requests=len(sends), sends=sends, itls=itls, itl_per_gap="yes (itls per request)",
            own_lag=own,
        )  # fmt: skip


def quantile_ms(values: list[float], q: float) -> float | None:
    from llm_truth import quantile

    v = quantile(values, q)
    return None if v is None else v * 1e3


PEERS: dict[str, Peer] = {
    p.name: p for p in (KfpBench(), KfpRows(), GuideLlm(), InferencePerf(), VllmBench())
}


def which(name: str) -> str | None:
    return shutil.which(name)


def load_json(path: Path):
    return json.loads(Path(path).read_text())
