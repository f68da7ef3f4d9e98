"""Measurements are never lost at the end (issue 17): every output path is checked, and its folder
made, before the work; results appear whole or not at all; a write that fails after the work
keeps the measurements in a fallback file and exits 5, without a traceback.

Write errors are real ones, not mocks: the tests run as root on some machines, where a read-only
folder is still writable, so a folder is replaced by a file while the benchmark runs (the save
then cannot reach it), or the output is /dev/full (every write fails with ENOSPC, as on a full
disk). ``os.replace`` failing half-way through a bundle stands in for a crash between two renames.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from kfp_bench import atomic
from kfp_bench.outcome import EXIT_NOT_SAVED
from kfp_bench.results import read_results, write_results
from kfp_bench.sandbox.kfp_server import start_kfp_server
from kfp_bench.stats import store
from tests.conftest import fail_replace_after
from tests.paths import PIPELINES
from tests.synthetic import make_results

needs_full = pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full here")


def _full(tmp_path: Path) -> Path:
    """A file name that leads to /dev/full, where every write fails as on a full disk. Through a
    link in the test's own folder: a writer that replaced the name instead of writing into it
    replaces the link, never the machine's device."""
    link = tmp_path / "full.json"
    link.symlink_to("/dev/full")
    return link


def _env(tmpdir: Path) -> dict:
    tmpdir.mkdir(exist_ok=True)
    return dict(os.environ, TMPDIR=str(tmpdir))


def _cli(args, tmpdir: Path, **kwargs) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "kfp_bench.cli", *map(str, args)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=_env(tmpdir),
        **kwargs,
    )


def _run(args, tmpdir: Path) -> subprocess.CompletedProcess:
    proc = _cli(args, tmpdir)
    out, err = proc.communicate(timeout=120)
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def _kept(r, tmpdir: Path, command: str, flag: str) -> dict:
    """What a command that could not save left: exit 5, one line naming the flag and the
    fallback file, which holds the measurements with the not-saved flag."""
    assert "Traceback" not in r.stderr, r.stderr
    assert r.returncode == EXIT_NOT_SAVED, r.stderr
    fallback = sorted(tmpdir.glob(f"kfp-bench-{command}-*.json"))
    assert len(fallback) == 1, (sorted(tmpdir.iterdir()), r.stderr)
    lines = [line for line in r.stderr.splitlines() if str(fallback[0]) in line]
    assert len(lines) == 1 and flag in lines[0] and "could not" in lines[0], r.stderr
    doc = json.loads(fallback[0].read_text())
    assert "not-saved" in doc["flags"]
    return doc


def _replace_with_file_when(path: Path, ready, within: float = 60.0) -> None:
    """Once ``ready()``, replace the folder ``path`` by a file: the command's save at the end then
    finds a file where its folder was (what a folder removed meanwhile looks like)."""
    deadline = time.monotonic() + within
    while not ready():
        assert time.monotonic() < deadline, "the command never started its work"
        time.sleep(0.02)
    shutil.rmtree(path)
    path.write_text("not a folder any more\n")


# -- load, sweep, merge -------------------------------------------------------------------------
def test_sweep_json_out_in_a_new_folder(fault_server, tmp_path):
    out = tmp_path / "new" / "deeper" / "sweep.json"
    r = _run(
        ("sweep", "--rates", "20", "-z", "0.3s", "-m", "GET", "--json-out", out, fault_server.url),
        tmp_path / "tmp",
    )
    assert r.returncode == 0, r.stderr
    assert json.loads(out.read_text())["sweep"][0]["rate"] == 20


def test_load_keeps_its_result_when_the_folder_goes_away(fault_server, tmp_path):
    out, tmpdir = tmp_path / "out", tmp_path / "tmp"
    out.mkdir()
    start = fault_server.stats()["requests"]
    proc = _cli(
        ("load", "-z", "1.5s", "-c", "2", "--json-out", out / "r.json", fault_server.url), tmpdir
    )
    _replace_with_file_when(out, lambda: fault_server.stats()["requests"] > start + 20)
    stdout, stderr = proc.communicate(timeout=60)
    r = subprocess.CompletedProcess(proc.args, proc.returncode, stdout, stderr)
    doc = _kept(r, tmpdir, "load", "--json-out")
    assert doc["requests"] > 20 and "Summary:" in stdout
    assert out.read_text() == "not a folder any more\n"


@needs_full
def test_sweep_on_a_full_disk_keeps_its_rows(fault_server, tmp_path):
    tmpdir = tmp_path / "tmp"
    r = _run(
        (
            "sweep",
            "--rates",
            "20",
            "-z",
            "0.3s",
            "-m",
            "GET",
            "--json-out",
            _full(tmp_path),
            fault_server.url,
        ),
        tmpdir,
    )
    doc = _kept(r, tmpdir, "sweep", "--json-out")
    assert doc["sweep"][0]["rate"] == 20
    assert "20" in r.stdout  # the table was printed


@needs_full
def test_merge_on_a_full_disk_keeps_the_merge(fault_server, tmp_path):
    tmpdir = tmp_path / "tmp"
    a = tmp_path / "a.json"
    r = _run(("load", "-n", "30", "-c", "2", "--json-out", a, fault_server.url), tmpdir)
    assert r.returncode == 0, r.stderr
    r = _run(("merge", a, a, "-o", _full(tmp_path)), tmpdir)
    assert _kept(r, tmpdir, "merge", "-o")["requests"] == 60


def test_merge_into_a_new_folder(tmp_path):
    a = tmp_path / "a.json"
    store.save(read_results(make_results(tmp_path / "r", runs=0, failed=0)).load, a)
    r = _run(("merge", a, a, "-o", tmp_path / "new" / "m.json"), tmp_path / "tmp")
    assert r.returncode == 0, r.stderr
    assert store.load(tmp_path / "new" / "m.json").requests == 2 * store.load(a).requests


# -- runs ---------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def kfp_server():
    """Runs of 1 s each: long enough to swap the output folder while they run."""
    with start_kfp_server(simulate="all:fixed(1)") as server:
        yield server


def _runs(url: str, out: Path) -> tuple:
    hello = PIPELINES / "hello_world.yaml"
    return ("runs", "--host", url, "--pipeline", hello, "--num-runs", "2", "--out", out,
            "--poll-interval", "0.2")  # fmt: skip


def _server_holds(url: str) -> list[int]:
    import urllib.request

    sizes = []
    for kind in ("experiments", "pipelines", "runs"):
        with urllib.request.urlopen(f"{url}/apis/v2beta1/{kind}?page_size=200", timeout=10) as r:
            sizes.append(json.load(r).get("total_size", 0))
    return sizes


@pytest.mark.parametrize("out", ["f", "f/o"])
def test_runs_out_at_a_file_is_refused_before_anything_is_sent(kfp_server, tmp_path, out):
    (tmp_path / "f").write_text("a file\n")
    before = _server_holds(kfp_server.url)
    r = _run(_runs(kfp_server.url, tmp_path / out), tmp_path / "tmp")
    assert "Traceback" not in r.stderr, r.stderr
    assert r.returncode == 2, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "--out" in lines[0] and "not a folder" in lines[0], r.stderr
    assert _server_holds(kfp_server.url) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f", "tmp"]


def test_runs_keeps_its_summary_when_the_folder_goes_away(kfp_server, tmp_path):
    out, tmpdir = tmp_path / "out", tmp_path / "tmp"
    proc = _cli(_runs(kfp_server.url, out), tmpdir)
    # runs.jsonl is made after api_calls.jsonl: once both are open, the records go on into them
    _replace_with_file_when(out, lambda: (out / "runs.jsonl").exists())
    stdout, stderr = proc.communicate(timeout=60)
    r = subprocess.CompletedProcess(proc.args, proc.returncode, stdout, stderr)
    doc = _kept(r, tmpdir, "runs", "--out")
    assert doc["runs"]["requested"] == 2 and "Wrote" not in stdout


def test_runs_whose_records_cannot_be_made_is_refused_before_anything_is_created(
    kfp_server, tmp_path
):
    """The folder changed between its check and the records' files (here runs.jsonl is taken by
    a folder): one line naming it, exit 2, nothing created on the server, no api_calls.jsonl."""
    out = tmp_path / "out"
    (out / "runs.jsonl").mkdir(parents=True)
    before = _server_holds(kfp_server.url)
    r = _run(_runs(kfp_server.url, out), tmp_path / "tmp")
    assert "Traceback" not in r.stderr, r.stderr
    assert r.returncode == 2, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and str(out) in lines[0] and "cannot write" in lines[0], r.stderr
    assert _server_holds(kfp_server.url) == before
    assert [p.name for p in out.iterdir()] == ["runs.jsonl"]


@pytest.mark.parametrize("command", ["load", "sweep"])
@pytest.mark.parametrize("why", ["a dangling link", "a name too long"])
def test_an_output_whose_folder_cannot_be_made_is_refused_before_anything_is_sent(
    fault_server, tmp_path, command, why
):
    if why == "a dangling link":  # the folder's name is taken by a link to nowhere
        (tmp_path / "gone").symlink_to(tmp_path / "nowhere" / "at-all")
        out = tmp_path / "gone" / "r.json"
    else:
        out = tmp_path / ("d" * 300) / "r.json"
    start = fault_server.stats()["requests"]
    pacing = ("-z", "0.3s", "-c", "1") if command == "load" else ("--rates", "20", "-z", "0.3s")
    r = _run((command, *pacing, "--json-out", out, fault_server.url), tmp_path / "tmp")
    assert "Traceback" not in r.stderr, r.stderr
    assert r.returncode == 2, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "--json-out" in lines[0] and str(out) in lines[0], r.stderr
    assert fault_server.stats()["requests"] == start
    assert not (tmp_path / "nowhere").exists()


# -- bundles: whole or not at all ---------------------------------------------------------------


def test_results_appear_whole_or_not_at_all(tmp_path, monkeypatch):
    """summary.json and load.json are one result: a failure between them keeps the old pair."""
    old = read_results(make_results(tmp_path / "old", seed=1))
    new = read_results(make_results(tmp_path / "new", seed=2, requests=900))
    out = tmp_path / "out"
    write_results(out, runs_summary={"flags": ["old"]}, load=old.load)
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    fail_replace_after(monkeypatch, 1)
    with pytest.raises(OSError, match="No space left"):
        write_results(out, runs_summary={"flags": ["new"]}, load=new.load)
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["new", "old", "out"]


def test_load_makes_the_json_out_folder_before_it_sends(fault_server, tmp_path):
    folder = tmp_path / "new" / "deeper"
    start = fault_server.stats()["requests"]
    proc = _cli(
        ("load", "-z", "1s", "-c", "2", "--json-out", folder / "r.json", fault_server.url),
        tmp_path / "tmp",
    )
    deadline = time.monotonic() + 60
    while fault_server.stats()["requests"] < start + 20:
        assert time.monotonic() < deadline, "the load never reached the server"
        time.sleep(0.02)
    made_before_the_end = folder.is_dir()
    stdout, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 0, stderr
    assert made_before_the_end
    assert store.load(folder / "r.json").requests > 20


# -- the atomic writers -------------------------------------------------------------------------
def test_a_link_to_a_file_is_kept_and_its_target_replaced(tmp_path):
    (tmp_path / "real.json").write_text("old\n")
    (tmp_path / "link.json").symlink_to("real.json")
    atomic.write_json({"a": 1}, tmp_path / "link.json")
    assert (tmp_path / "link.json").is_symlink()
    assert json.loads((tmp_path / "real.json").read_text()) == {"a": 1}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link.json", "real.json"]


def test_a_pipe_is_written_into_not_replaced(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    got = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()))
    reader.start()
    atomic.write_bytes(fifo, b"through the pipe\n")
    reader.join(10)
    assert got == [b"through the pipe\n"] and stat.S_ISFIFO(fifo.stat().st_mode)


@pytest.mark.parametrize("exchange", [True, False], ids=["exchange", "aside"])
def test_a_folder_is_swapped_whole_and_keeps_other_files(tmp_path, monkeypatch, exchange):
    if not exchange:  # a system without renameat2: the old folder is renamed aside first
        monkeypatch.setattr(atomic, "_renameat2", lambda: None)
    out = tmp_path / "out"
    out.mkdir()
    (out / "a.txt").write_text("old a\n")
    (out / "keep.txt").write_text("kept\n")
    (out / "sub").mkdir()
    (out / "sub" / "deep.txt").write_text("deep\n")
    with atomic.folder(out, fresh=("a.txt",)) as stage:
        assert not (stage / "a.txt").exists() and (stage / "keep.txt").exists()
        (stage / "a.txt").write_text("new a\n")
    assert (out / "a.txt").read_text() == "new a\n"
    assert (out / "keep.txt").read_text() == "kept\n"
    assert (out / "sub" / "deep.txt").read_text() == "deep\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


def test_a_failed_block_leaves_the_folder_and_no_stage(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "a.txt").write_text("old a\n")
    with pytest.raises(RuntimeError), atomic.folder(out, fresh=("a.txt",)) as stage:
        (stage / "a.txt").write_text("new a\n")
        raise RuntimeError("the render failed")
    assert [p.name for p in out.iterdir()] == ["a.txt"]
    assert (out / "a.txt").read_text() == "old a\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


def test_a_file_where_the_folder_should_be_is_refused(tmp_path):
    (tmp_path / "out").write_text("a file\n")
    with pytest.raises(NotADirectoryError), atomic.folder(tmp_path / "out"):
        pass
    assert (tmp_path / "out").read_text() == "a file\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


# -- report -------------------------------------------------------------------------------------
def test_a_report_that_cannot_be_written_exits_5_and_keeps_the_results(
    tmp_path, monkeypatch, capsys
):
    """The folder is replaced by a file while the charts render (a hook after the real render:
    the write then meets a real file), so the bundle cannot be written."""
    from kfp_bench.cli import main
    from kfp_bench.report import plots

    res = make_results(tmp_path / "r", runs=4, failed=0, requests=100)
    before = {p.name: p.read_bytes() for p in res.iterdir()}
    out = tmp_path / "out"
    render = plots.render

    def render_then_lose_the_folder(*args, **kwargs):
        figures = render(*args, **kwargs)
        shutil.rmtree(out, ignore_errors=True)
        out.write_text("not a folder any more\n")
        return figures

    monkeypatch.setattr(plots, "render", render_then_lose_the_folder)
    rc = main(["report", str(res), "--out", str(out)])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == EXIT_NOT_SAVED
    assert len(err) == 1 and f"--out {out}: could not write the report" in err[0]
    assert {p.name: p.read_bytes() for p in res.iterdir()} == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out", "r"]
