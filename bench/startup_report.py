"""bench/startup.py's figures: the medians of its rounds per step, the Markdown table, the
install failures and the results file for BENCHMARKS.md, with the goal of a default run."""

from __future__ import annotations

import statistics
from pathlib import Path

import result_files
from pipeline_installs import Step

from kfp_bench import __version__


def median(xs: list[float]) -> float:
    return statistics.median(xs) if xs else 0.0


def _imports(per: list[dict]) -> list[float]:
    return [p["import_s"] for p in per if p.get("import_s") is not None]


def summarise(steps: list[Step], rounds: list[dict[str, dict]]) -> list[dict]:
    rows = []
    for s in steps:
        per = [r[s.name] for r in rounds if s.name in r]
        if not per:
            continue
        secs = median([p["seconds"] for p in per])
        rows.append(
            {
                "step": s.name,
                "tasks_per_run": s.tasks,
                "in_parallel_for": s.in_loop,
                "installs": len(s.installs),
                "requirements": [r for i in s.installs for r in i.requirements],
                "packages": int(median([p["packages"] for p in per])),
                "mb": round(median([p["mb"] for p in per]), 1),
                "seconds": round(secs, 2),
                "seconds_per_install": [
                    round(
                        median(
                            [p["installs"][k]["seconds"] for p in per if k < len(p["installs"])]
                        ),
                        2,
                    )
                    for k in range(max(len(p["installs"]) for p in per))
                ],
                "seconds_per_run": round(secs * s.tasks, 2),
                "seconds_all_rounds": [p["seconds"] for p in per],
                "import_s": round(median(imports), 2) if (imports := _imports(per)) else None,
                "ok": all(p["ok"] for p in per),
            }
        )
    return rows


def markdown(rows: list[dict], info: dict) -> str:
    lines = [
        "| step | tasks per run | installs | packages | MB | seconds | seconds per run "
        "| first import s |",
        "|---|--:|--:|--:|--:|--:|--:|--:|",
    ]
    for r in rows:
        secs = " + ".join(f"{x:.1f}" for x in r["seconds_per_install"]) or "0"
        if len(r["seconds_per_install"]) > 1:
            secs += f" = {r['seconds']:.1f}"
        flag = "" if r["ok"] else " **FAILED**"
        loop = " (ParallelFor)" if r["in_parallel_for"] else ""
        lines.append(
            f"| {r['step']}{flag} | {r['tasks_per_run']}{loop} | {r['installs']} | "
            f"{r['packages']} | {r['mb']:.1f} | {secs} | {r['seconds_per_run']:.1f} | "
            f"{'-' if r['import_s'] is None else format(r['import_s'], '.1f')} |"
        )
    total = sum(r["seconds_per_run"] for r in rows)
    pkgs = sum(r["packages"] * r["tasks_per_run"] for r in rows)
    mb = sum(r["mb"] * r["tasks_per_run"] for r in rows)
    imported = sum((r["import_s"] or 0.0) * r["tasks_per_run"] for r in rows)
    lines.append(
        f"| **default run** (load_workers={info['load_workers']}) | "
        f"{sum(r['tasks_per_run'] for r in rows)} | | {pkgs} | {mb:.0f} | | **{total:.1f}** | "
        f"{imported:.1f} |"
    )
    return "\n".join(lines)


def failed_installs(done: list[dict[str, dict]]) -> list[str]:
    """Each step that failed in a round of ``done``, and why: its error or its failed install."""
    return sorted(
        {
            f"{name} (round {n}): "
            + (
                res.get("error")
                or next(
                    (
                        f"`{x['command']}` exit {x.get('exit_code')}"
                        for x in res["installs"]
                        if not x["ok"]
                    ),
                    "failed",
                )
            )
            for n, rr in enumerate(done, 1)
            for name, res in rr.items()
            if not res["ok"]
        }
    )


#: a default run's installs and first imports, summed over its tasks (package mode)
GOAL_S = 60.0


def result(
    doc: dict, path: Path, some_steps: str, started: str, commit: str
) -> result_files.Result:
    """The run as a results file: the default run's sum (the goal's figure, when every step ran)
    and each step's row (kept in the file)."""
    rows, installs = doc["steps"], doc["default_run_seconds"]
    imports = doc["default_run_first_import_seconds"]

    def n(key: str) -> float:  # over a run's tasks
        return sum(r[key] * r["tasks_per_run"] for r in rows)

    label = f"{path.name}, load_workers={doc['load_workers']}" + (
        " (some steps)" * bool(some_steps)
    )
    goals = [] if some_steps or doc["failed"] else [
        result_files.Goal(
            "a default run's installs + first imports",
            f"{installs + imports:.1f} s ({installs:.1f} + {imports:.1f})",
            f"<= {GOAL_S:g} s (package mode)",
            installs + imports <= GOAL_S,
        )
    ]  # fmt: skip
    steps = [
        [r["step"], r["tasks_per_run"], r["packages"], r["mb"],
         " + ".join(f"{x:.1f}" for x in r["seconds_per_install"]) or "0", r["seconds_per_run"],
         r["import_s"], "yes" if r["ok"] else "**FAILED**"]
        for r in rows
    ]  # fmt: skip
    return result_files.Result(
        benchmark="startup",
        title="Step start-up: installs per step",
        command=result_files.command(),
        started=started,
        commit=commit,
        machine=doc["machine"],
        versions={"kfp-bench": __version__},
        tables=[
            result_files.Table(
                f"a default run (medians of {doc['rounds_done']} round(s))",
                ["pipeline", "installs s", "first imports s", "packages", "MB"],
                [[label, installs, imports, n("packages"), round(n("mb"))]],
            ),
            result_files.Table(
                "each step",
                ["step", "tasks per run", "packages", "MB", "install s", "s per run"]
                + ["first import s", "ok"],
                steps,
                detail=True,
            ),
        ],
        goals=goals,
    )
