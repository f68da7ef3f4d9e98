"""Step environments reused by install command (kfp_bench.sandbox.step_envs) stay a pod's own.

Real kfp.local runs (``pods.as_pods``, the wheel folder of the pipeline tests): a task that
writes into its site-packages, a new module and an edit of an installed one, leaves the next
task of the same install script a clean environment, whether the tasks' environments are
overlays of the template or copies; a script that differs by one package gets
an environment of its own, and the tasks of one script share one template.
"""

# (no "from __future__ import annotations": KFP reads the components' annotations as types)
import re
from pathlib import Path

import pytest
import yaml
from kfp import dsl

from kfp_bench.sandbox import pods
from kfp_bench.sandbox.pods import as_pods, install_scripts, step_envs
from kfp_bench.sandbox.step_envs import StepEnvs, overlays
from kfp_bench.steps.bundled import compiled_file

pytestmark = pytest.mark.slow
_PBR = ["pbr==7.1.3"]
_IMAGE = "python:3.11-slim"  # what the steps use (kfp_bench/components/_step.py)


@dsl.component(base_image=_IMAGE, packages_to_install=_PBR)
def write_site() -> str:
    """Add a module to this environment's site-packages and edit an installed one in place."""
    import pathlib
    import sys

    import pbr

    site = pathlib.Path(pbr.__file__).parents[1]
    (site / "stepenv_leak.py").write_text("LEAKED = True\n")
    with open(pbr.__file__, "a") as f:  # in place: a hardlinked copy would share this inode
        f.write("\nLEAKED = True\n")
    return sys.prefix


@dsl.component(base_image=_IMAGE, packages_to_install=_PBR)
def read_site(after: str) -> str:
    """What this environment holds of the writer's changes, and where it lives."""
    import importlib.util
    import sys

    import pbr

    leaks = [
        *(["a new module"] if importlib.util.find_spec("stepenv_leak") else []),
        *(["an edited pbr"] if hasattr(pbr, "LEAKED") else []),
        *(["six"] if importlib.util.find_spec("six") else []),
    ]
    return f"{sys.prefix}|{after}|{','.join(leaks)}"


@dsl.component(base_image=_IMAGE, packages_to_install=[*_PBR, "six==1.17.0"])
def with_six(after: str) -> str:
    """A script one package longer (six must be there); passes ``after`` on."""
    import six

    assert six.__name__ == "six"
    return after


@dsl.pipeline
def writes_then_reads() -> str:
    w = write_site()
    s = with_six(after=w.output)
    return read_site(after=s.output).output


@pytest.fixture(scope="module")
def cache(tmp_path_factory) -> Path:
    """The templates' folder of both views: a template is the same whatever view a task gets
    of it, so the second view's run reuses the first's (and a write that reached a template
    through the first would show in the second)."""
    return tmp_path_factory.mktemp("envs")


@pytest.mark.parametrize("view", ["an overlay", "a copy"])
def test_a_step_writing_its_site_packages_leaves_the_next_step_clean(
    wheels, mounted, cache, tmp_path, capfd, view
):
    envs = step_envs(wheels, mounted, cache, copy=view == "a copy")
    if view == "an overlay" and not overlays(envs.cache):
        pytest.skip("this kernel mounts no overlayfs in a user namespace here: tasks get copies")
    with as_pods(wheels, tmp_path / "root", mounted, envs=envs):
        out = writes_then_reads().output
    # every task had the view asked for
    views = re.findall(r"step environment \S+: (an overlay|a copy) of", "".join(capfd.readouterr()))
    assert views == [view] * 3, views
    reader, writer, leaks = out.split("|")
    assert leaks == "", f"the reader's environment holds the writer's {leaks}"
    assert reader != writer
    # kfp.local's new venv and one template per distinct script (write_site and read_site
    # share one), none left of the tasks' copies
    built = sorted(p.stem for p in envs.cache.glob("*.ok"))
    assert len(built) == 3 and envs.base_name in built
    assert sorted(p.name for p in envs.cache.iterdir() if p.is_dir()) == built
    assert not Path(reader).exists() and not Path(writer).exists()


def _envs(tmp_path, wheel=b"v1", env=None) -> StepEnvs:
    (tmp_path / "w").mkdir(exist_ok=True)
    (tmp_path / "m").mkdir(exist_ok=True)
    (tmp_path / "w" / "a-1.0-py3-none-any.whl").write_bytes(wheel)
    return StepEnvs(tmp_path / "envs", tmp_path / "w", tmp_path / "m", env or {"PIP_NO_INDEX": "1"})


@pytest.mark.parametrize(
    "change",
    ["script", "wheel", "pip setting"],
)
def test_a_template_is_reused_only_for_the_same_script_wheels_and_settings(tmp_path, change):
    script = 'python3 -m pip install \'a==1.0\' && "$0" "$@"'
    same = _envs(tmp_path).key(script)
    assert _envs(tmp_path).key(script) == same
    if change == "script":
        other = _envs(tmp_path).key(script.replace("a==1.0", "a==1.0 "))
    elif change == "wheel":
        other = _envs(tmp_path, wheel=b"v2").key(script)
    else:
        other = _envs(tmp_path, env={"PIP_NO_INDEX": "0"}).key(script)
    assert other != same


def test_the_scripts_prepared_are_those_of_the_tasks_that_always_run_first_needed_first():
    spec = next(yaml.safe_load_all(compiled_file("kfp_bench").read_text()))
    extras = [re.search(r'"KFP-bench(\S*) @', s).group(1) for s in install_scripts(spec)]
    # check-params first; report (report) or report-history (history,report) by results_uri
    assert extras[0] == "[kfp]"
    assert "[history,report]" not in extras and "[report]" not in extras
    assert len(extras) == len(set(extras)) == 6


def test_kfp_locals_new_environment_is_one_for_any_volume_but_not_for_other_wheels(tmp_path):
    """Its build runs pip alone (the upgrades): the steps' volume and its path are no input."""
    base = _envs(tmp_path).base_name
    (tmp_path / "m2").mkdir()
    (tmp_path / "m2" / "kfp_bench-0.1.0-py3-none-any.whl").write_bytes(b"other")
    env = {"PIP_NO_INDEX": "1", "KFP_BENCH_WHEEL_DIR": str(tmp_path / "m2")}
    other_volume = StepEnvs(tmp_path / "envs", tmp_path / "w", tmp_path / "m2", env)
    assert other_volume.base_name == base
    assert other_volume.key("x") != _envs(tmp_path).key("x")
    assert _envs(tmp_path, wheel=b"v2").base_name != base
    assert _envs(tmp_path, env={"PIP_NO_INDEX": "0"}).base_name != base


def test_a_filled_wheel_folder_is_filled_again_once_a_wheel_is_gone(wheels, tmp_path):
    """``pods.wheelhouse`` skips pip only for a folder whose wheels are those it filled."""
    folder = tmp_path / "wheels"
    folder.mkdir()
    for f in wheels.iterdir():
        (folder / f.name).hardlink_to(f)
    assert pods._filled(folder) is not None  # the same files: nothing to do
    next(folder.glob("numpy-*.whl")).unlink()
    assert pods._filled(folder) is None
