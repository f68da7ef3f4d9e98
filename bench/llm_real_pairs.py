"""``kfp-bench llm``'s own rows beside the recording proxy's, request by request (paired by
``X-Request-Id``), against one real server of ``llm_real_servers.py``: whether each request's
outcome is the one the server's bytes say (completed: its message ended, or a finish_reason and
``[DONE]`` came before the close) and how its TTFT and E2E differ from the proxy's. Where the
summary table of ``llm_real_servers.py`` holds one or two completed streams (llama.cpp as
installed, which cuts streams short), its medians are single samples; this shows each one.

The load runs in this process (``StreamAttack`` with a sink that keeps its batches), with
``kfp-bench llm``'s defaults otherwise. Needs the venvs and model of ``llm_real_servers.py``.

Usage: ``.venv/bin/python bench/llm_real_pairs.py [--server llamacpp] [--endpoint chat]
[-n 16] [-c 4] [--root DIR]``
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import llm_real_envs as envs  # noqa: E402
from llm_real_wire import RecordingProxy  # noqa: E402

from kfp_bench.load.llm import LlmSink  # noqa: E402
from kfp_bench.load.openai import LlmOptions, request_id  # noqa: E402
from kfp_bench.load.stream import StreamAttack  # noqa: E402
from kfp_bench.load.workers import run_attack  # noqa: E402
from kfp_bench.records import STREAM_COLUMNS  # noqa: E402
from kfp_bench.stats.llm import LlmStats  # noqa: E402

COL = {c: i for i, c in enumerate(STREAM_COLUMNS)}


@dataclass(frozen=True)
class _Prompt:
    text: str
    output_tokens: int


def pairs(batches, exchanges, chat: bool) -> list[dict]:
    """One dict per kfp-bench row: its outcome and times beside the proxy's exchange."""
    by_id = {e.request_id: e for e in exchanges}
    out = []
    for b in batches:
        for r in b.rows():
            e = by_id.get(request_id(b.source, int(r[COL["seq"]])))
            row = {"seq": int(r[COL["seq"]]), "completed": not r[COL["outcome"]],
                   "ttft_ms": _ms(r[COL["first"]] - r[COL["sent"]]) if r[COL["first"]] else None,
                   "e2e_ms": _ms(r[COL["done"]] - r[COL["sent"]])}  # fmt: skip
            if e is not None:
                content = e.content(chat)
                last = e.events[-1][0] if e.events else e.done
                row["proxy"] = {"completed": e.status == 200 and e.whole(),
                                "ttft_ms": _ms(content[0][0] - e.sent) if content else None,
                                "e2e_ms": _ms(last - e.sent),
                                "read_late_ms": _ms(e.sent - r[COL["sent"]])}  # fmt: skip
            out.append(row)
    return sorted(out, key=lambda x: x["seq"])


def _ms(s: float) -> float:
    return round(s * 1e3, 1)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--server", default="llamacpp", choices=list(envs.SERVERS))
    p.add_argument("--endpoint", default="chat", choices=["completions", "chat"])
    p.add_argument("--root", type=Path, default=Path.home() / ".cache/kfp-bench-real")
    p.add_argument("-n", "--requests", type=int, default=16)
    p.add_argument("-c", "--concurrency", type=int, default=4)
    a = p.parse_args()
    server, model = envs.SERVERS[a.server], a.root / "model"
    if not (a.root / server.venv / "bin/python").exists() or not (model / "config.json").exists():
        print(f"llm_real_pairs: no venv or model under {a.root}; run llm_real_servers.py "
              f"--server {a.server} --root {a.root} first", file=sys.stderr)  # fmt: skip
        return 2
    with envs.started(server, a.root, model, a.root / "logs" / f"pairs-{a.server}.log") as (
        url,
        _,
    ):
        port = int(url.rsplit(":", 1)[1])
        with RecordingProxy(port) as proxy:
            opts = LlmOptions(url=f"http://127.0.0.1:{proxy.port}{server.prefix}",
                              model=envs.model_name(server, model), endpoint=a.endpoint,
                              concurrency=a.concurrency, requests=a.requests,
                              max_tokens=32).validate()  # fmt: skip
            sink = LlmSink(LlmStats(corrected=False), keep=True)
            run_attack(StreamAttack(opts, [_Prompt("word " * 24, 32)], sink))
            time.sleep(0.5)  # the proxy's last writes
    rows = pairs(sink.batches, proxy.exchanges, a.endpoint == "chat")
    for r in rows:
        print(r)
    agree = sum(1 for r in rows if r.get("proxy", {}).get("completed") == r["completed"])
    print(f"{a.server} {a.endpoint}: {len(rows)} requests, {sum(r['completed'] for r in rows)} "
          f"completed; outcome as the proxy saw it: {agree} of {len(rows)}")  # fmt: skip
    return 0 if agree == len(rows) else 1


if __name__ == "__main__":
    sys.exit(main())
