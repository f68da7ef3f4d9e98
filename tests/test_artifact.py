"""The steps' artifact (kfp_bench.artifact) and ``kfp-bench install``, which puts it in a namespace.

The wheel must be the same bytes wherever it is built from the same sources: from this
checkout, from a copy of it elsewhere, and from a kfp-bench installed by pip (a laptop after a
release), or ``kfp-bench install`` would write a wheel the compiled pipeline does not pin. The
ConfigMap it writes is checked against Kubernetes' own schemas, and the install runs through the
real kubernetes client against a loopback API server of ConfigMaps (tests/fake_config_maps.py):
no cluster can run here, so that server is the one mock.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tomllib
import venv
import zipfile
from pathlib import Path

import kubernetes_validate
import pytest
import yaml

from kfp_bench import artifact
from kfp_bench.cli import main
from kfp_bench.sandbox.pods import build_wheel
from tests.conftest import copy_of_checkout
from tests.fake_config_maps import config_map_api

ROOT = Path(__file__).resolve().parents[1]


def test_the_same_sources_give_the_same_bytes(tmp_path):
    own = artifact.build()
    assert artifact.build().data == own.data
    assert artifact.build(copy_of_checkout(tmp_path / "copy")).sha256 == own.sha256


def test_the_wheel_leaves_out_the_pipeline_that_pins_it_and_keeps_the_children():
    names = zipfile.ZipFile(__import__("io").BytesIO(artifact.build().data)).namelist()
    assert "kfp_bench/compiled/kfp_bench.yaml" not in names
    assert {"kfp_bench/compiled/noop.yaml", "kfp_bench/components/_step.py"} <= set(names)
    assert not [n for n in names if "__pycache__" in n]


def test_it_leaves_out_exactly_the_compiled_files_that_pin_it():
    pinning = {
        f"kfp_bench/compiled/{path.name}"
        for path in (ROOT / "compiled").glob("*.yaml")
        if artifact.pins(path)
    }
    assert pinning == set(artifact.LEFT_OUT)


def test_its_packages_are_pyproject_s():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert list(artifact.PACKAGES) == project["tool"]["setuptools"]["packages"]


def _python_with(tmp_path: Path, wheel: Path) -> Path:
    """A fresh environment (no system site-packages) with ``wheel`` and packaging installed by
    pip: the suite's own, pointed at it (``--python``), so no pip is bootstrapped into it."""
    env = tmp_path / "env"
    venv.create(env, with_pip=False)
    python = env / "bin" / "python"
    subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "-q", "--no-deps",
         str(wheel), "packaging"],
        check=True, capture_output=True, timeout=300,
    )  # fmt: skip
    return python


def test_an_installed_kfp_bench_builds_the_same_wheel_as_its_checkout(tmp_path):
    """After a release, a laptop has kfp-bench from pip's wheel (setuptools'), not a checkout:
    its kfp-bench install must still write the wheel the released YAML pins."""
    wheel = build_wheel(tmp_path / "dist", ROOT)
    python = _python_with(tmp_path, wheel)
    done = subprocess.run(
        [str(python), "-c", "from kfp_bench import artifact; print(artifact.build().sha256)"],
        capture_output=True, text=True, timeout=120, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == artifact.build().sha256


def test_pip_reads_the_extras_of_the_wheel_as_pyproject_declares_them(tmp_path):
    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    wheel = artifact.build().write(tmp_path / "w")
    python = _python_with(tmp_path, wheel)
    done = subprocess.run(
        [str(python), "-c", "import importlib.metadata as m, json; "
         "print(json.dumps(m.requires('kfp-bench')))"],
        capture_output=True, text=True, timeout=120, cwd=tmp_path,
    )  # fmt: skip
    got = {str(Requirement(r)) for r in json.loads(done.stdout)}
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    want = set()
    for extra, reqs in project["optional-dependencies"].items():
        for r in reqs:
            req = Requirement(f'{r}; extra == "{extra}"')
            req.name = canonicalize_name(req.name)
            want.add(str(req))
    assert got == want


def test_the_config_map_validates_against_kubernetes_schemas():
    art = artifact.build()
    obj = artifact.config_map(art, "kubeflow-user-example-com", "kfp-bench-abc")
    kubernetes_validate.validate(obj, "1.30", strict=True)
    assert artifact.held_sha256(obj) == art.sha256
    assert obj["immutable"] is True
    (key,) = obj["binaryData"]
    assert key == art.filename
    # the API server's limit is on the stored bytes (apis/core/validation, ValidateConfigMap)
    assert len(key) + len(art.data) < artifact.MAX_CONFIG_MAP


def test_a_wheel_over_a_config_map_s_limit_is_refused():
    big = artifact.Artifact(
        "kfp_bench-0.1.0-py3-none-any.whl", b"x" * (artifact.MAX_CONFIG_MAP + 1)
    )
    with pytest.raises(artifact.ConfigError, match="over a ConfigMap's 1048576: use image mode"):
        artifact.config_map(big, "ns", "kfp-bench-x")


@pytest.fixture
def api(tmp_path):
    with config_map_api(tmp_path, allowed={"team"}) as (store, kubeconfig):
        yield store, kubeconfig


def test_install_writes_the_pinned_wheel_once_and_finds_it_the_second_time(api, capsys):
    store, kubeconfig = api
    art = artifact.build()
    name = f"kfp-bench-{art.sha256[:12]}"
    assert main(["install", "--namespace", "team", "--kubeconfig", kubeconfig]) == 0
    assert f"ConfigMap {name} in namespace team: created" in capsys.readouterr().out
    assert artifact.held_sha256(store[("team", name)]) == art.sha256
    assert main(["install", "--namespace", "team", "--kubeconfig", kubeconfig]) == 0
    assert f"ConfigMap {name} in namespace team: present" in capsys.readouterr().out
    # the name the compiled pipeline mounts
    assert f"configMapName: {name}" in (ROOT / "compiled" / "kfp_bench.yaml").read_text()


def test_install_never_overwrites_another_wheel_of_that_name(api, capsys):
    store, kubeconfig = api
    art = artifact.build()
    name = f"kfp-bench-{art.sha256[:12]}"
    other = artifact.config_map(artifact.Artifact(art.filename, b"not it"), "team", name)
    store[("team", name)] = other
    assert main(["install", "--namespace", "team", "--kubeconfig", kubeconfig]) == 2
    err = capsys.readouterr().err
    assert f"ConfigMap {name} in namespace team holds another wheel" in err
    assert f"kubectl delete configmap {name} -n team" in err
    assert store[("team", name)] is other


def test_install_where_the_user_may_not_write_fails_naming_the_namespace(api, capsys):
    _, kubeconfig = api
    assert main(["install", "--namespace", "other", "--kubeconfig", kubeconfig]) == 1
    err = capsys.readouterr().err
    assert "in namespace other: HTTP 403 Forbidden" in err and "t0ken" not in err


def test_install_dry_run_prints_the_object_and_writes_nothing(api, capsys):
    store, kubeconfig = api
    assert main(["install", "--namespace", "team", "--dry-run"]) == 0
    obj = yaml.safe_load(capsys.readouterr().out)
    assert obj["kind"] == "ConfigMap" and obj["metadata"]["namespace"] == "team"
    assert artifact.held_sha256(obj) == artifact.build().sha256
    assert not store


def test_install_refuses_a_bad_namespace_before_building(capsys):
    assert main(["install", "--namespace", "Team_A", "--dry-run"]) == 2
    assert "--namespace 'Team_A': not a DNS-1123 label" in capsys.readouterr().err
