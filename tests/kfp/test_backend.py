"""The KFP backend the pipeline needs: the feature table, ``check_backend``, and submit/schedule
refusing an older server (the local KFP API started with an old ``tag_name``) before creating
anything."""

from __future__ import annotations

import json
import urllib.request

import pytest
import yaml

from kfp_bench.errors import ConfigError
from kfp_bench.kfp.backend import (
    ADVISED,
    FEATURES,
    MIN_BACKEND,
    Feature,
    check_backend,
    parse_version,
)
from kfp_bench.sandbox.kfp_server import start_kfp_server
from kfp_bench.steps.submit import DEFAULT_PACKAGE, Target
from tests.conftest import run_cli
from tests.kfp.conftest import counts
from tests.loopback import Handler, serving

OLD = "2.0.5"


# -- the table ------------------------------------------------------------------------------------


def test_min_backend_is_the_newest_feature_release():
    assert MIN_BACKEND == "2.14.0"
    assert parse_version(MIN_BACKEND) == max(parse_version(f.since) for f in FEATURES.values())
    for name, f in FEATURES.items():
        assert parse_version(f.since), name
        assert f.what and "\n" not in f.what, name
        assert "#" in f.cite, f"{name}: cite the PR"


def test_every_feature_in_the_table_is_in_the_compiled_pipeline():
    # If the pipeline stops using one, its row (and maybe MIN_BACKEND) should go.
    text = DEFAULT_PACKAGE.read_text()
    spec, platform = yaml.safe_load_all(text)
    marks = {
        "resource-requests": "cpuRequest",
        "secret-volume": "secretAsVolume",
        "parallel-for-over-output": "parameterIterator",
        "exit-handler": "ALL_UPSTREAM_TASKS_COMPLETED",
        "pod-timeout": "activeDeadlineSeconds",
        "pod-label": "podMetadata",
        "optional-secret-volume": "optional: true",
        "exit-hook": "exit-handler-1",
        "job-id-placeholder": "{{$.pipeline_job_uuid}}",
        "secret-name-parameter": "secretNameParameter",
        "optional-configmap-volume": "configMapNameParameter",
        "node-selector-json": "nodeSelectorJson",
        "collected-artifacts": "isArtifactList",
        "task-final-status": "taskFinalStatus",
        "task-retry": "maxRetryCount",
    }
    assert set(marks) == set(FEATURES)
    for name, mark in marks.items():
        assert mark in text, name
    loops = {
        key: task["taskInfo"]["name"]
        for comp in spec["components"].values()
        for key, task in comp.get("dag", {}).get("tasks", {}).items()
        if "parameterIterator" in task
    }
    # an unnamed loop: a named one's collected outputs need a 2.16.0 backend (backend.py)
    assert loops and all(key == name for key, name in loops.items()), loops


# -- check_backend --------------------------------------------------------------------------------


def test_an_older_backend_is_refused_naming_each_missing_feature(capsys):
    with pytest.raises(ConfigError) as err:
        check_backend(OLD, host="http://kfp:8888")
    msg = str(err.value)
    assert "\n" not in msg
    assert msg.startswith("--host http://kfp:8888: the KFP backend there is 2.0.5")
    missing = [f for f in FEATURES.values() if f.since != "2.0.0"]
    assert missing
    for f in missing:
        assert f"{f.what} ({f.since})" in msg
    for f in FEATURES.values():
        if f.since == "2.0.0":
            assert f.what not in msg
    assert msg.endswith(f"upgrade the KFP backend to at least {MIN_BACKEND}")
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize("version", ["2.5.0", "2.13.9", "v2.5.3", "2.14.0-rc.1"])
def test_a_backend_just_short_is_refused_for_what_it_lacks(version):
    with pytest.raises(ConfigError, match="upgrade the KFP backend to at least 2.14.0") as err:
        check_backend(version)
    msg = str(err.value)
    assert FEATURES["task-final-status"].what in msg
    assert FEATURES["node-selector-json"].what not in msg


@pytest.mark.parametrize("version", ["2.17.0", "v2.17.1", "3.0.0"])
def test_an_equal_or_newer_backend_passes_silently(version, capsys):
    check_backend(version)
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize("version", [MIN_BACKEND, "2.16.0"])
def test_a_backend_without_the_retry_index_passes_silently(version, capsys):
    """Kubeflow 1.11 ships KFP 2.16.0: a dead worker's retry is told by its start mark on the
    KFP API there (kfp_bench.kfp.start_mark), so no warning is due."""
    check_backend(version, host="http://kfp:8888")
    assert capsys.readouterr().err == ""


def test_a_backend_without_an_advised_feature_passes_with_a_warning(monkeypatch, capsys):
    monkeypatch.setitem(ADVISED, "x", Feature("2.99.0", "a thing", "#1 (abc)"))
    check_backend("2.16.0", host="http://kfp:8888")
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("kfp-bench: warning: --host http://kfp:8888")
    assert "2.99.0 adds a thing (#1 (abc))" in err


@pytest.mark.parametrize("version", ["", "unknown", "master", "latest", "dev"])
def test_a_dev_build_is_not_refused_but_warned_about(version, capsys):
    check_backend(version, host="http://kfp:8888")
    err = capsys.readouterr().err
    assert "warning" in err and "version unknown" in err and MIN_BACKEND in err
    assert err.count("\n") == 1


@pytest.mark.parametrize("version", ["2.x", "2.16", "banana", "2.16.0.1"])
def test_an_unreadable_version_is_not_refused_but_warned_about(version, capsys):
    check_backend(version)
    err = capsys.readouterr().err
    assert "version unknown" in err and repr(version) in err


# -- submit and schedule against the local KFP API ------------------------------------------------


def _health(url: str) -> dict:
    with urllib.request.urlopen(f"{url}/apis/v2beta1/healthz", timeout=10) as resp:
        return json.loads(resp.read())


def _recurring(url: str) -> int:
    with urllib.request.urlopen(f"{url}/apis/v2beta1/recurringruns", timeout=10) as resp:
        return len(json.loads(resp.read()).get("recurringRuns") or [])


@pytest.fixture(scope="module")
def old_server():
    with start_kfp_server(simulate="all:fixed(0.2)", backend_version=OLD) as server:
        yield server


@pytest.fixture(scope="module")
def new_server():
    with start_kfp_server(simulate="all:fixed(0.2)") as server:
        yield server


def test_the_local_api_reports_the_release_it_implements(new_server, old_server):
    health = _health(new_server.url)
    assert health["tag_name"] == "2.17.0"  # the swagger's info.version
    assert len(health["commit_sha"]) == 40 and health["multi_user"] is False
    assert _health(old_server.url)["tag_name"] == OLD


@pytest.mark.parametrize(
    "command", [("submit",), ("schedule", "--cron", "0 0 3 * * *")], ids=["submit", "schedule"]
)
def test_an_old_server_is_refused_before_anything_is_created(old_server, command):
    before = counts(old_server.url)  # the server's own "Default" experiment
    done = run_cli(*command, "--host", old_server.url, "--param", "num_runs=2")
    assert done.returncode == 2, done.stderr
    assert f"the KFP backend there is {OLD}" in done.stderr
    assert FEATURES["task-final-status"].what in done.stderr
    assert FEATURES["task-final-status"].what in done.stderr
    assert f"upgrade the KFP backend to at least {MIN_BACKEND}" in done.stderr
    assert "Traceback" not in done.stderr and done.stdout == ""
    assert counts(old_server.url) == before == (1, 0, 0)
    assert _recurring(old_server.url) == 0


def test_the_current_server_still_takes_the_run(new_server):
    done = run_cli("submit", "--host", new_server.url, "--param", "num_runs=2")
    assert done.returncode == 0, done.stderr
    assert "Created run " in done.stdout and "warning" not in done.stderr
    assert counts(new_server.url)[2] == 1


def test_a_dev_build_server_takes_the_run_with_a_warning():
    with start_kfp_server(simulate="all:fixed(0.2)", backend_version="master") as server:
        done = run_cli("submit", "--host", server.url, "--param", "num_runs=2")
        assert done.returncode == 0, done.stderr
        assert "Created run " in done.stdout
        assert "warning" in done.stderr and "'master'" in done.stderr
        assert counts(server.url)[2] == 1


class _LoginPage(Handler):
    """A gateway in front of KFP that wants a login first: 401 and a page, no JSON."""

    def do_GET(self):
        self.paths.append(self.path)
        self.send(401, b"<html>sign in</html>", "text/html")


def test_a_healthz_that_answers_401_is_not_refused(capsys):
    _LoginPage.paths = []
    with serving(_LoginPage) as url:
        Target(url).check_backend()
    assert _LoginPage.paths == ["/apis/v2beta1/healthz"]
    err = capsys.readouterr().err
    assert "version unknown (healthz answered HTTP 401)" in err and err.count("\n") == 1
