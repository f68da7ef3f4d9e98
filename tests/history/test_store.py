"""The results history in a local folder, in GCS (gcp-storage-emulator, real client) and on S3 (a
real SeaweedFS, tests/seaweedfs.py): keys, write-once, archive, baselines, and the messages for a
URI that cannot work. The S3 store's own cases are in test_s3.py."""

from __future__ import annotations

import json

import pytest

from kfp_bench import history as hist
from kfp_bench.errors import ConfigError, HistoryError
from kfp_bench.history.s3 import S3Store
from kfp_bench.history.uri import GcsStore, LocalStore, open_store
from kfp_bench.report.rebuild import rebuild
from kfp_bench.results import read_results
from tests.history.conftest import BUCKET
from tests.synthetic import T0, make_results


@pytest.fixture(params=["local", "gcs", "s3"])
def store_uri(request, tmp_path):
    if request.param == "gcs":
        request.getfixturevalue("gcs")
        return f"gs://{BUCKET}/{tmp_path.name}"
    if request.param == "s3":
        return f"s3://{request.getfixturevalue('s3').bucket}/{tmp_path.name}"
    return (tmp_path / "hist").as_uri()


def test_write_never_replaces(store_uri):
    store = open_store(store_uri)
    kind = {"gs": GcsStore, "s3": S3Store}.get(store_uri.split(":")[0], LocalStore)
    assert isinstance(store, kind)
    assert store.keys() == {}
    assert store.write("k1", "a.json", b"first")
    assert not store.write("k1", "a.json", b"second")
    assert store.read("k1", "a.json") == b"first"
    assert store.keys() == {"k1": ["a.json"]}
    with pytest.raises(HistoryError, match="no k1/missing"):
        store.read("k1", "missing")


def _fake_bundle(tmp_path, metrics: dict):
    out = tmp_path / "bundle"
    out.mkdir(exist_ok=True)
    (out / "metrics.json").write_text(json.dumps(metrics))
    (out / "report.html").write_text("<html></html>")
    (out / "summary.md").write_text("# x\n")
    return {p.name: p for p in out.iterdir()}


def test_archive_and_baseline(store_uri, tmp_path):
    """Three nights archived (nothing overwritten); the fourth is compared with the last two."""
    store = open_store(store_uri)
    keys = []
    for night in range(3):
        res = read_results(
            make_results(tmp_path / f"n{night}", seed=night, start=T0 + night * 86400)
        )
        key = hist.key_of(res)
        assert hist.archive(store, key, res, _fake_bundle(tmp_path, {"load_p99_ms": night}))
        assert not hist.archive(store, key, res, _fake_bundle(tmp_path, {"load_p99_ms": 99}))
        keys.append(key)
    assert sorted(keys) == keys and len(set(keys)) == 3
    stored = store.keys()
    assert set(stored[keys[0]]) == {
        "summary.json",
        "runs.jsonl",
        "api_calls.jsonl",
        "load.json",
        "report.html",
        "summary.md",
        "metrics.json",
    }
    assert [e.metrics["load_p99_ms"] for e in hist.entries(store)] == [0, 1, 2]

    tonight = read_results(make_results(tmp_path / "n3", seed=3, slow=1.5, start=T0 + 3 * 86400))
    h = hist.prepare(store, tonight, "last:2")
    assert [e.key for e in h.entries] == keys
    assert h.verdict.baseline == tuple(keys[1:]) and h.verdict.regression
    pinned = hist.prepare(store, tonight, keys[0])
    assert pinned.verdict.baseline == (keys[0],)
    with pytest.raises(HistoryError, match="no such complete result"):
        hist.prepare(store, tonight, "20000101T000000Z-deadbeef")
    with pytest.raises(ConfigError, match="last:5"):
        hist.prepare(store, tonight, "last:zero")


def test_rebuild_with_gcs_history(gcs, tmp_path):
    """The whole path on the emulator: two nights, the second shows the trend and the verdict."""
    uri = f"gs://{BUCKET}/rebuild"
    first = rebuild(make_results(tmp_path / "a", seed=1), tmp_path / "ra", results_uri=uri)
    assert first.archived is True and first.history.entries == []
    again = make_results(tmp_path / "b", seed=2, slow=1.5, start=T0 + 86400)
    second = rebuild(again, tmp_path / "rb", results_uri=uri, baseline="last:3")
    assert second.archived and second.history.verdict.regression
    metrics = json.loads(second.files["metrics.json"].read_text())
    assert metrics["regression"] == 1 and metrics["baseline_results"] == 1
    page = second.files["report.html"].read_text()
    assert 'class="verdict bad"' in page and 'id="fig-trend"' in page
    assert "REGRESSION" in second.files["summary.md"].read_text()
    assert set(open_store(uri).keys()) == {first.key, second.key}


def test_a_bucket_that_does_not_exist(gcs):
    with pytest.raises(HistoryError, match="bucket no-such-bucket does not exist"):
        open_store("gs://no-such-bucket/x")


def test_gs_uri_without_a_bucket():
    with pytest.raises(ConfigError, match="no bucket"):
        open_store("gs:///prefix")


def test_gs_without_credentials(no_gcp_credentials):
    with pytest.raises(HistoryError, match="no Google Cloud credentials"):
        open_store(f"gs://{BUCKET}/x")


@pytest.mark.parametrize("uri, match", [("ftp://b/p", "not supported"), ("", "empty")])
def test_unsupported_uris(uri, match):
    with pytest.raises(ConfigError, match=match):
        open_store(uri)


def test_an_entry_another_writer_holds_is_not_claimed_as_archived(store_uri, tmp_path):
    """A name of the key already there with other bytes (a second writer, or another results'
    entry under the same key) is a conflict: archive raises and writes no completion marker,
    instead of reporting success over someone else's files. The same bytes (an archive cut off
    and run again) complete it."""
    store = open_store(store_uri)
    res = read_results(make_results(tmp_path / "r", seed=7, start=T0))
    key = hist.key_of(res)
    bundle = _fake_bundle(tmp_path, {"load_p99_ms": 1})
    assert store.write(key, "summary.json", b'{"someone": "else"}')
    with pytest.raises(HistoryError, match=f"{key}/summary.json is there with other content"):
        hist.archive(store, key, res, bundle)
    assert hist.MARKER not in store.keys()[key]


def test_an_archive_cut_off_and_run_again_completes(store_uri, tmp_path):
    store = open_store(store_uri)
    res = read_results(make_results(tmp_path / "r", seed=8, start=T0))
    key = hist.key_of(res)
    assert store.write(key, "summary.json", (res.path / "summary.json").read_bytes())
    assert hist.archive(store, key, res, _fake_bundle(tmp_path, {"load_p99_ms": 1}))
    assert hist.MARKER in store.keys()[key]
