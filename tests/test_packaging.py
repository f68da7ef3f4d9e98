"""`pip install .` gives one import namespace, kfp_bench, and the kfp-bench console script."""

import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_wheel_installs_only_the_kfp_bench_namespace(tmp_path):
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(tmp_path),
            str(ROOT),
        ],
        check=True,
        timeout=300,
        cwd=tmp_path,
    )
    (wheel,) = tmp_path.glob("kfp_bench-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    tops = {n.split("/")[0] for n in names}
    others = {t for t in tops if t != "kfp_bench"}
    assert len(others) == 1 and others.pop().endswith(".dist-info"), tops
    assert "kfp_bench/components/__init__.py" in names
    assert "kfp_bench/pipelines/__init__.py" in names
    entry_points = next(n for n in names if n.endswith("entry_points.txt"))
    assert "kfp-bench = kfp_bench.cli:main" in zipfile.ZipFile(wheel).read(entry_points).decode()
