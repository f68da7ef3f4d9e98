"""Every command of ``kfp-bench``: the module of ``kfp_bench.cli`` that defines it and its one
line, in the order ``kfp-bench --help`` lists them. Apart from those modules, so that the list
and the choice of a command import none of them."""

from __future__ import annotations

#: The modules of the commands, each with its commands' names and one-line helps.
GROUPS = {
    "load": {
        "load": "HTTP load with hey's flags, or open-loop at --rate.",
        "merge": "Merge load or LLM results of several processes or pods.",
        "llm-server": "Serve a local OpenAI-compatible streaming LLM whose token timing is known.",
    },
    "llm": {
        "llm": "Streaming load on an OpenAI-compatible server: TTFT, ITL, tokens/s, goodput.",
    },
    "runs": {
        "runs": "Benchmark KFP: upload a pipeline, spawn N runs, poll them, clean up.",
        "cleanup": "Delete what kfp-bench runs left on a KFP server (by benchmark id or age).",
        "kfp-server": "Serve a local KFP API (v2beta1) that runs or simulates pipelines.",
    },
    "pipeline": {
        "compile": "Compile the kfp_bench pipeline and the child pipelines to YAML (compiled/).",
        "install": "Put kfp-bench's wheel into a namespace, where the pipeline's steps install it.",
        "submit": "Start one run of the kfp_bench pipeline on a KFP server.",
        "schedule": "Create a recurring run of the kfp_bench pipeline on a KFP server.",
        "demo": "Run compiled/kfp_bench.yaml with kfp.local, each step in a fresh Python "
        "environment as a pod runs it, against a local KServe model server and a local KFP API "
        "(the embedded default).",
    },
    "report": {
        "report": "Rebuild the reports of saved results (no cluster needed).",
        "compare": "Print how results B differ from results A, with the regression verdict.",
    },
    "kserve": {
        "sweep": "Open-loop rate sweep: QPS x (mean, p50, p95, p99, success) and the knee.",
    },
}

#: Each command's one line, as ``kfp-bench --help`` shows it.
HELP = {name: line for commands in GROUPS.values() for name, line in commands.items()}
#: Each command's module.
GROUP = {name: group for group, commands in GROUPS.items() for name in commands}
