"""bench/startup.py's parser, bench/pipeline_installs.py: the pip installs of each step and the
tasks per run, from YAML that kfp compiles here. Nothing is installed: no network.

No ``from __future__ import annotations`` here: kfp reads the components' annotations as types.
"""

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def parser():
    path = ROOT / "bench" / "pipeline_installs.py"
    spec = importlib.util.spec_from_file_location("bench_pipeline_installs", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # dataclasses look their module up
    spec.loader.exec_module(mod)
    yield mod
    sys.modules.pop(spec.name, None)


def _compile(tmp_path: Path, **component_options) -> str:
    from kfp import compiler, dsl

    @dsl.component(base_image="python:3.11-slim", **component_options)
    def work(x: int) -> int:
        return x

    @dsl.component(base_image="python:3.11-slim", **component_options)
    def split(n: int) -> list:
        return list(range(n))

    @dsl.component(base_image="python:3.11-slim", **component_options)
    def tidy() -> None:
        pass

    @dsl.pipeline(name="tiny")
    def tiny(load_workers: int = 3):
        with dsl.ExitHandler(tidy()):
            work(x=load_workers)
            with dsl.ParallelFor(items=[1, 2]) as i:
                work(x=i)
            with dsl.ParallelFor(items=split(n=load_workers).output) as j:  # known at run time
                work(x=j)

    out = tmp_path / "tiny.yaml"
    compiler.Compiler().compile(tiny, str(out))
    return out.read_text()


def test_packages_found_and_tasks_counted(parser, tmp_path):
    steps, info = parser.read_pipeline(_compile(tmp_path, packages_to_install=["six==1.16.0"]))
    assert info["load_workers_default"] == info["load_workers"] == 3
    # kfp gives each use of `work` its own executor: once plainly, twice over [1, 2], and 3 times
    # over a task's output (one per load worker); split and tidy (the exit handler) once
    tasks = {s.name: s.tasks for s in steps}
    assert tasks == {"work": 1, "work-2": 2, "work-3": 3, "split": 1, "tidy": 1}
    assert [s.name for s in steps if s.in_loop] == ["work-2", "work-3"]
    for s in steps:
        reqs = [r for i in s.installs for r in i.requirements]
        assert "six==1.16.0" in reqs
        assert any(r.startswith("kfp==") for r in reqs)
        six = next(i for i in s.installs if "six==1.16.0" in i.requirements)
        kfp = next(i for i in s.installs if any(r.startswith("kfp==") for r in i.requirements))
        assert "--no-deps" in kfp.args and "--no-deps" not in six.args
        assert six.args[-1] == "six==1.16.0" and "--quiet" in six.args
        assert six.env.get("PIP_DISABLE_PIP_VERSION_CHECK") == "1"
    # --load-workers overrides the default for the run-time ParallelFor only
    steps, _ = parser.read_pipeline(
        _compile(tmp_path, packages_to_install=["six==1.16.0"]), load_workers=1
    )
    assert {s.name: s.tasks for s in steps}["work-3"] == 1


def test_an_executor_of_several_tasks_counts_once_per_task(parser):
    doc = {
        "components": {
            "comp-a": {"executorLabel": "exec-a"},
            "comp-loop": {"dag": {"tasks": {"a": {"componentRef": {"name": "comp-a"}}}}},
        },
        "root": {
            "dag": {
                "tasks": {
                    "a": {"componentRef": {"name": "comp-a"}},
                    "a-again": {"componentRef": {"name": "comp-a"}},
                    "loop": {
                        "componentRef": {"name": "comp-loop"},
                        "parameterIterator": {"items": {"raw": "[1, 2, 3]"}},
                    },
                }
            }
        },
    }
    assert parser.count_tasks(doc, load_workers=1) == ({"exec-a": 5}, {"exec-a"})


def test_no_packages_no_installs(parser, tmp_path):
    text = _compile(tmp_path, install_kfp_package=False)
    steps, _ = parser.read_pipeline(text)
    assert steps and all(s.installs == [] for s in steps)


def test_shell_parsing(parser):
    script = (
        'if ! [ -x "$(command -v pip)" ]; then\n  python3 -m ensurepip\nfi\n'
        "# python3 -m pip install commented==1\n"
        "PIP_DISABLE_PIP_VERSION_CHECK=1 python3 -m pip install --quiet "
        "--index-url https://example.org/simple --trusted-host example.org "
        "'a==1' 'b; x<\"3\" && y' "
        "2>/dev/null && pip3 install --user --no-deps c==2 \\\n  d==3; python3 -m pip list\n"
        '"$0" "$@"\n'
    )
    installs = parser.container_installs({"command": ["sh", "-c", script, "prog"]})
    assert [i.args for i in installs] == [
        [
            "--quiet",
            "--index-url",
            "https://example.org/simple",
            "--trusted-host",
            "example.org",
            "a==1",
            'b; x<"3" && y',
        ],
        ["--no-deps", "c==2", "d==3"],
    ]
    assert installs[0].requirements == ["a==1", 'b; x<"3" && y']
    assert installs[1].dropped == ["--user"]
    assert parser.container_installs({"command": ["python3", "-m", "kfp.dsl.executor_main"]}) == []


def test_the_containers_environment_reaches_each_install(parser):
    """A pod's environment (the executor's env, e.g. PIP_COMPILE) is under the script's own
    variables."""
    script = "PIP_DISABLE_PIP_VERSION_CHECK=1 python3 -m pip install 'six==1.16.0'"
    container = {
        "command": ["sh", "-c", script, "prog"],
        "env": [{"name": "PIP_COMPILE", "value": "0"}],
    }
    (install,) = parser.container_installs(container)
    assert install.env == {"PIP_COMPILE": "0", "PIP_DISABLE_PIP_VERSION_CHECK": "1"}


def test_the_scripts_variables_are_put_in_as_the_shell_does(parser):
    """kfp-bench's package mode installs ``file://$wheel``, a variable the script assigned from
    the pod's KFP_BENCH_WHEEL_DIR (kfp_bench/components/_step.py)."""
    script = (
        'wheel="${KFP_BENCH_WHEEL_DIR:-/kfp-bench/wheel}/w.whl"\n'
        'python3 -m pip install --quiet "kfp-bench[kfp] @ file://$wheel#sha256=ab" || exit 1\n'
    )
    (install,) = parser.container_installs({"command": ["sh", "-c", script, "prog"]})
    assert install.expanded({}) == [
        "--quiet",
        "kfp-bench[kfp] @ file:///kfp-bench/wheel/w.whl#sha256=ab",
    ]
    here = install.expanded({"KFP_BENCH_WHEEL_DIR": "/opt/w"})
    assert here[-1] == "kfp-bench[kfp] @ file:///opt/w/w.whl#sha256=ab"


def test_a_task_its_condition_skips_in_a_default_run_counts_none(parser, tmp_path):
    from kfp import compiler, dsl

    @dsl.component(base_image="python:3.11-slim")
    def work(x: int) -> int:
        return x

    @dsl.pipeline(name="branches")
    def branches(run_llm: bool = False, results_uri: str = ""):
        with dsl.If(run_llm == True):  # noqa: E712 - a pipeline condition
            work(x=1)
        with dsl.Else():
            work(x=2)
        with dsl.If(results_uri != ""):
            work(x=3)

    out = tmp_path / "branches.yaml"
    compiler.Compiler().compile(branches, str(out))
    steps, _ = parser.read_pipeline(out.read_text())
    assert {s.name: s.tasks for s in steps} == {"work": 0, "work-2": 1, "work-3": 0}


def test_a_condition_it_cannot_read_is_refused(parser):
    params = {"flag": True}
    assert (
        parser.condition_holds(
            "!(inputs.parameter_values['pipelinechannel--flag'] == true)", params
        )
        is False
    )
    with pytest.raises(ValueError, match="cannot evaluate"):
        parser.condition_holds(
            "inputs.parameter_values['pipelinechannel--task-Output'] == 1", params
        )


def test_a_pipeline_pinned_to_another_kfp_bench_is_refused_before_any_install(tmp_path):
    """The wheel this checkout builds is what a step would install: another pin is named, exit 2."""
    import subprocess

    text = (ROOT / "compiled" / "kfp_bench.yaml").read_text()
    pin = text.split("#sha256=", 1)[1][:64]
    other = tmp_path / "other.yaml"
    other.write_text(text.replace(pin, "0" * 64))
    out = tmp_path / "startup.json"
    cmd = [
        sys.executable,
        str(ROOT / "bench" / "startup.py"),
        str(other),
        "--steps",
        "check-params",
    ]
    cmd += ["--json-out", str(out), "--results", str(tmp_path / "results")]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert p.returncode == 2, p.stderr
    assert f"pins kfp-bench's wheel to sha256 {'0' * 64}; this checkout builds" in p.stderr
    assert "kfp-bench compile --out compiled" in p.stderr
    assert not out.exists()
