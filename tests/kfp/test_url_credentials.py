"""Credentials written into a URL (``--host https://user:password@...``) are kept out of all that
leaves, like a token: stdout, stderr, the summary, the records. The runs go to the local KFP API
(which asks for no credentials) with the userinfo in the URL, as a user would write it."""

from __future__ import annotations

import pytest

from kfp_bench.redact import public_url, scrub
from tests.conftest import run_cli
from tests.kfp.conftest import HELLO

SECRET = "S3cretPassw0rd"


def _with_userinfo(url: str) -> str:
    return url.replace("http://", f"http://alice:{SECRET}@")


def _everything(out_dir, proc) -> str:
    texts = [proc.stdout, proc.stderr]
    texts += [p.read_text(errors="replace") for p in out_dir.rglob("*") if p.is_file()]
    return "\n".join(texts)


def test_a_benchmark_with_userinfo_in_the_host_never_shows_it(kfp_server, tmp_path):
    out = tmp_path / "out"
    r = run_cli(
        "runs", "--host", _with_userinfo(kfp_server.url), "--pipeline", str(HELLO),
        "--num-runs", "2", "--poll-interval", "0.2", "--out", str(out),
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    seen = _everything(out, r)
    assert "alice" in _with_userinfo(kfp_server.url) and kfp_server.url.split("//")[1] in seen
    assert SECRET not in seen and "alice:" not in seen


@pytest.mark.parametrize(
    "host",
    ["http://alice:{s}@127.0.0.1:9", "http://alice:{s}@127.0.0.1:99999", "ftp://alice:{s}@h"],
    ids=["unreachable", "bad-port", "bad-scheme"],
)
def test_errors_about_such_a_host_do_not_quote_the_secret(host, tmp_path):
    r = run_cli(
        "runs", "--host", host.format(s=SECRET), "--pipeline", str(HELLO), "--num-runs", "1",
        "--retries", "0", "--out", str(tmp_path / "out"),
    )  # fmt: skip
    assert r.returncode == 2, r.stderr
    assert "--host" in r.stderr and SECRET not in r.stderr + r.stdout


def test_cleanup_errors_do_not_quote_it_either():
    r = run_cli("cleanup", "--host", f"http://alice:{SECRET}@127.0.0.1:9", "--benchmark-id", "x1")
    assert r.returncode == 2 and "cannot reach" in r.stderr and SECRET not in r.stderr


def test_public_url_and_scrub():
    assert (
        public_url(f"https://alice:{SECRET}@kfp.example:443/p?q=1")
        == "https://kfp.example:443/p?q=1"
    )
    assert public_url("http://127.0.0.1:8888") == "http://127.0.0.1:8888"
    text = f"GET 'https://alice:{SECRET}@a/b' then http://bob@c/d, mail a@b.c"
    assert scrub(text) == "GET 'https://a/b' then http://c/d, mail a@b.c"
