"""``pods.build_wheel`` (the wheel of make image and of the image-mode and packaging tests) is
built from the checkout's own files only: a ``build/`` left by an earlier in-tree build, where
setuptools' build_py copies modules and never removes one, must not reach the wheel."""

from __future__ import annotations

import subprocess
import zipfile

import pytest

from kfp_bench.sandbox.pods import build_wheel
from tests.conftest import copy_of_checkout

pytestmark = pytest.mark.slow
STALE = "kfp_bench/removed_since.py"


@pytest.mark.parametrize("git", [True, False], ids=["clone", "tarball"])
def test_a_module_left_in_a_stale_build_lib_is_not_in_the_wheel(tmp_path, git):
    src = copy_of_checkout(tmp_path / "src")
    if git:  # a clone: its files are git's, tracked or not ignored
        subprocess.run(["git", "init", "-q", str(src)], check=True)
        (src / "kfp_bench" / "added_now.py").write_text("X = 1\n")  # not yet added: still built
    else:
        (src / "kfp_bench" / "added_now.py").write_text("X = 1\n")
    # what `pip wheel .` leaves after building a tree that still had the module
    (src / "build" / "lib" / STALE).parent.mkdir(parents=True)
    (src / "build" / "lib" / STALE).write_text("GONE = True\n")
    names = zipfile.ZipFile(build_wheel(tmp_path / "dist", src)).namelist()
    assert "kfp_bench/added_now.py" in names and "kfp_bench/cli/__init__.py" in names
    assert STALE not in names
    assert not (src / "kfp_bench.egg-info").exists()  # the checkout is left as it was
