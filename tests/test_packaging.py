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


def test_the_lazy_packages_give_every_name_they_list():
    """kfp_bench.kfp and kfp_bench.load import their names on first use (kfp_bench._lazy)."""
    script = """
import sys
import kfp_bench.load.options, kfp_bench.kfp.options
assert "kfp_bench.load.workers" not in sys.modules and "kfp_bench.kfp.driver" not in sys.modules
import kfp_bench.kfp as k, kfp_bench.load as l
for package in (k, l):
    for name in package.__all__:
        value = getattr(package, name)
        assert value.__module__.startswith(package.__name__ + "."), (name, value.__module__)
from kfp_bench.kfp import run_benchmark
from kfp_bench.kfp.driver import run_benchmark as direct
assert run_benchmark is direct
try:
    k.nothing
except AttributeError as exc:
    assert "kfp_bench.kfp" in str(exc) and "nothing" in str(exc)
else:
    raise AssertionError("no AttributeError")
"""
    subprocess.run([sys.executable, "-c", script], check=True, timeout=120)
