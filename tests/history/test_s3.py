"""The S3 store against a real SeaweedFS (tests/seaweedfs.py) with the real boto3: two writers
racing on one key, KFP's minio:// alias and its Secret, and the messages for what cannot work."""

from __future__ import annotations

import threading

import pytest

from kfp_bench.errors import ConfigError, HistoryError
from kfp_bench.history import s3 as s3store
from kfp_bench.history.uri import open_store
from kfp_bench.sandbox.process import free_port
from tests.seaweedfs import ACCESS_KEY, SECRET_KEY


def test_two_writers_racing_on_one_key_exactly_one_stored(s3, tmp_path):
    """Eight writers (each its own client) put one key at once, each its own bytes: exactly one
    is told it wrote, and the store holds its bytes; repeated over a few keys."""
    uri = f"s3://{s3.bucket}/race-{tmp_path.name}"
    stores = [open_store(uri) for _ in range(8)]

    def put(start, won: dict, key: str, i: int, store) -> None:
        start.wait()
        won[i] = store.write(key, "summary.json", f"writer {i}".encode())

    for round_ in range(5):
        start, won = threading.Barrier(len(stores)), {}
        threads = [
            threading.Thread(target=put, args=(start, won, f"k{round_}", i, s))
            for i, s in enumerate(stores)
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        winners = [i for i, ok in won.items() if ok]
        assert len(won) == len(stores) and len(winners) == 1, won
        assert stores[0].read(f"k{round_}", "summary.json") == f"writer {winners[0]}".encode()


def test_the_query_endpoint_wins_over_the_environment(s3, monkeypatch, tmp_path):
    monkeypatch.setenv("AWS_ENDPOINT_URL", f"http://127.0.0.1:{free_port()}")
    store = open_store(f"s3://{s3.bucket}/q-{tmp_path.name}?endpoint={s3.endpoint}&region=r1")
    assert store.endpoint == s3.endpoint and store.write("k", "a", b"x")


def test_minio_alias_with_kfps_secret(s3, monkeypatch, tmp_path):
    """minio:// as KFP's pipeline root names its store; with no AWS key in the environment the
    key comes from the mlpipeline-minio-artifact Secret as the report step mounts it."""
    secret = tmp_path / "secret"
    secret.mkdir()
    (secret / "accesskey").write_text(ACCESS_KEY)
    (secret / "secretkey").write_text(SECRET_KEY + "\n")
    monkeypatch.setenv("KFP_BENCH_MINIO_SECRET_DIR", str(secret))
    monkeypatch.delenv("AWS_ACCESS_KEY_ID")
    monkeypatch.delenv("AWS_SECRET_ACCESS_KEY")
    store = open_store(f"minio://{s3.bucket}/minio-{tmp_path.name}")
    assert store.endpoint == s3.endpoint  # AWS_ENDPOINT_URL, as boto3 reads it
    assert store.write("k", "a", b"x") and open_store(store.uri).read("k", "a") == b"x"


def test_minio_alias_defaults_to_kfps_in_cluster_store(s3, monkeypatch):
    """Outside a cluster neither of KFP's Service names resolves: the first is used, and the
    message names it and the fix."""
    monkeypatch.delenv("AWS_ENDPOINT_URL")
    with pytest.raises(HistoryError) as err:
        open_store(f"minio://{s3.bucket}/p")
    message = str(err.value)
    assert "cannot reach the S3 endpoint http://minio-service.kubeflow:9000" in message
    assert "?endpoint=http://HOST:PORT or in AWS_ENDPOINT_URL" in message


@pytest.mark.parametrize(
    "key, secret, match",
    [
        (ACCESS_KEY, "wrong", r"the S3 credentials are refused \(SignatureDoesNotMatch\)"),
        ("nobody", SECRET_KEY, r"the S3 credentials are refused \(InvalidAccessKeyId\)"),
    ],
)
def test_refused_credentials(s3, monkeypatch, key, secret, match):
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", key)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", secret)
    with pytest.raises(HistoryError, match=match) as err:
        open_store(f"s3://{s3.bucket}/p")
    assert "set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY" in str(err.value)
    assert secret not in str(err.value).replace("SECRET_ACCESS_KEY", "")


def test_no_credentials(s3, monkeypatch):
    monkeypatch.delenv("AWS_ACCESS_KEY_ID")
    monkeypatch.delenv("AWS_SECRET_ACCESS_KEY")
    with pytest.raises(HistoryError, match=f"s3://{s3.bucket}/p: no S3 credentials; set AWS_"):
        open_store(f"s3://{s3.bucket}/p")


def test_a_bucket_that_does_not_exist(s3):
    with pytest.raises(HistoryError) as err:
        open_store("s3://no-such-bucket/p")
    assert f"bucket no-such-bucket does not exist at {s3.endpoint}; create it" in str(err.value)
    assert f"aws s3 mb s3://no-such-bucket --endpoint-url {s3.endpoint}" in str(err.value)


def test_an_endpoint_that_does_not_answer(s3, monkeypatch):
    closed = f"http://127.0.0.1:{free_port()}"
    monkeypatch.setenv("AWS_ENDPOINT_URL", closed)
    with pytest.raises(HistoryError, match=f"cannot reach the S3 endpoint {closed}"):
        open_store(f"s3://{s3.bucket}/p")


@pytest.mark.parametrize(
    "uri, match",
    [
        ("s3:///p", "no bucket; give s3://BUCKET/PREFIX"),
        ("minio:///p", "no bucket; give minio://BUCKET/PREFIX"),
        ("s3://b/p?endpont=http://x", "the query takes endpoint=URL and region=NAME"),
        ("s3://b/p?endpoint=", "the query takes endpoint=URL and region=NAME"),
    ],
)
def test_malformed_uris(uri, match):
    with pytest.raises(ConfigError, match=match):
        s3store.parse(uri)
