"""A step installs kfp-bench only as the artifact its pipeline pins, run as a pod runs it.

compiled/kfp_bench.yaml as shipped, with kfp.local and a fresh environment per step
(``kfp_bench.sandbox.pods``): pip reads a folder of wheels with no index, and the steps' wheel
folder stands in for the ConfigMap volume that ``kfp-bench install`` fills. A wheel of the same
name and version but other bytes, in the volume, on the index or at the pinned URL, is never
installed: the first step fails, saying why. Each tampered wheel prints a marker when imported,
so a test also sees that its code never ran.
"""

from __future__ import annotations

import io
import re
import threading
import zipfile
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from kfp import components

from kfp_bench import artifact
from kfp_bench.sandbox.kfp_server import start_kfp_server
from kfp_bench.sandbox.pods import as_pods
from kfp_bench.steps.bundled import compiled_file
from kfp_bench.steps.compile import compile_all, delivery_for
from tests.pipelines.test_pods import _finished

pytestmark = pytest.mark.slow
MARK = "TAMPERED-KFP-BENCH-RAN"


def _tampered() -> artifact.Artifact:
    """kfp-bench's wheel, same file name and version, one module changed."""
    own = artifact.build()
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(own.data)) as src, zipfile.ZipFile(out, "w") as dst:
        for item in src.infolist():
            data = src.read(item)
            if item.filename == "kfp_bench/__init__.py":
                data += f"\nprint({MARK!r})\n".encode()
            dst.writestr(item, data)
    return artifact.Artifact(own.filename, out.getvalue())


def _run_first_step(pipeline_file: Path, wheels: Path, mounted: Path, root: Path, capfd) -> str:
    pipeline = components.load_component_from_file(str(pipeline_file))
    with start_kfp_server() as kfp_api, as_pods(wheels, root, mounted):
        with pytest.raises(RuntimeError, match="check-params"):
            pipeline(kfp_host=kfp_api.url, run_load=False, benchmark_id="pinned")
    out = capfd.readouterr()
    text = out.out + out.err
    assert ("check-params", "FAILURE") in _finished(text)
    assert MARK not in text
    return text


def test_a_tampered_wheel_in_the_volume_fails_the_first_step_on_its_pin(wheels, tmp_path, capfd):
    bad = _tampered()
    mounted = tmp_path / "volume"
    bad.write(mounted)
    text = _run_first_step(compiled_file("kfp_bench"), wheels, mounted, tmp_path / "root", capfd)
    want = f"does not match its pin: sha256 {bad.sha256}, this pipeline is pinned to " + (
        artifact.build().sha256
    )
    assert want in text


def test_without_the_volume_a_tampered_release_on_the_index_is_never_installed(
    wheels,
    tmp_path,
    capfd,
):
    index = tmp_path / "index"
    index.mkdir()
    for wheel in wheels.iterdir():
        (index / wheel.name).hardlink_to(wheel)
    _tampered().write(index)  # kfp-bench 0.1.0, as a squatter would publish it
    empty = tmp_path / "volume"
    empty.mkdir()
    text = _run_first_step(compiled_file("kfp_bench"), index, empty, tmp_path / "root", capfd)
    assert re.search(
        r"kfp_bench-0\.1\.0-py3-none-any\.whl is missing: this pipeline installs kfp-bench 0\.1\.0 "
        r"from the ConfigMap kfp-bench-[0-9a-f]{12}, which is not in this namespace; put it "
        r"there with: kfp-bench install --namespace <this namespace>",
        text,
    ), text[-3000:]


def test_a_wheel_url_serving_other_bytes_fails_the_first_step_on_its_pin(
    wheels,
    tmp_path,
    capfd,
):
    served = tmp_path / "served"
    bad = _tampered()
    bad.write(served)
    handler = partial(SimpleHTTPRequestHandler, directory=str(served))
    handler.log_message = lambda *a: None
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_port}/{bad.filename}"
        pin = artifact.build().sha256
        yaml_file = compile_all(
            tmp_path / "compiled", delivery=delivery_for(wheel_url=url, sha256=pin),
            names=["kfp_bench"],
        )["kfp_bench"]  # fmt: skip
        empty = tmp_path / "volume"
        empty.mkdir()
        text = _run_first_step(yaml_file, wheels, empty, tmp_path / "root", capfd)
    finally:
        server.shutdown()
        server.server_close()
    assert "THESE PACKAGES DO NOT MATCH THE HASHES" in text
    assert f"installing kfp-bench from {url} failed (pinned to sha256 {pin}" in text
