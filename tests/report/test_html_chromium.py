"""report.html in a real browser: headless Debian Chromium renders it to a PNG, on its own and
inside a sandboxed iframe (as the KFP UI shows HTML artifacts), and PIL checks the screenshot."""

from __future__ import annotations

import re
import runpy
import shutil
import subprocess
import tempfile
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
_SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "screenshot.py"
#: The headless flags make screenshot renders the README's picture with (scripts/screenshot.py).
FLAGS = runpy.run_path(str(_SCRIPT), run_name="flags")["FLAGS"]
pytestmark = pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="Debian chromium not installed")


def screenshot(url: str, out: Path, size: str = "900,3000") -> Image.Image:
    """The page rendered by headless Chromium. A Chromium that has not returned after 90 s is
    started once more with a fresh profile: in a fresh-clone ``make test`` one screenshot of the
    sandboxed-iframe page never returned (the process still running at 90 s, two cores busy),
    while the same page rendered in seconds before and after; a second hang fails the test."""
    try:
        return _screenshot(url, out, size)
    except subprocess.TimeoutExpired:
        return _screenshot(url, out, size)


def _screenshot(url: str, out: Path, size: str) -> Image.Image:
    with tempfile.TemporaryDirectory(prefix="kfp-bench-chromium-") as profile:
        subprocess.run(
            [
                CHROMIUM,
                *FLAGS,
                f"--user-data-dir={profile}",
                f"--screenshot={out}",
                f"--window-size={size}",
                url,
            ],
            check=True,
            capture_output=True,
            timeout=90,
        )
    return Image.open(out).convert("RGB")


def _check(img: Image.Image) -> None:
    a = np.asarray(img, dtype=np.int16)
    non_white = (a < 245).any(axis=2).mean()
    # Saturated pixels (channels far apart) come from the charts: the text and tables are grey.
    colour = (a.max(axis=2) - a.min(axis=2) > 60).mean()
    assert img.size == (900, 3000)
    assert non_white > 0.05, f"the page looks blank ({non_white:.1%} non-white)"
    assert colour > 0.02, f"no charts visible ({colour:.2%} coloured pixels)"


def test_report_renders_in_chromium(bundle, tmp_path):
    page = bundle["report.html"].read_text()
    assert len(re.findall(r"<img ", page)) >= 8
    _check(screenshot(bundle["report.html"].as_uri(), tmp_path / "report.png"))


def test_report_renders_in_a_sandboxed_iframe(bundle, tmp_path):
    """A sandbox with no permissions at all: no scripts, an opaque origin, as strict as it gets."""
    host = bundle["report.html"].parent / "iframe-host.html"
    host.write_text(
        '<!DOCTYPE html><html><body style="margin:0">'
        '<iframe sandbox="" src="report.html" style="border:0;width:880px;height:3000px">'
        "</iframe></body></html>"
    )
    try:
        _check(screenshot(host.as_uri(), tmp_path / "iframe.png"))
    finally:
        host.unlink()


def test_llm_report_renders_in_chromium(llm_bundle, tmp_path):
    """The LLM report's page: its three charts (TTFT, ITL, tokens and requests over time)."""
    page = llm_bundle["report.html"].read_text()
    assert len(re.findall(r"<img ", page)) == 3
    _check(screenshot(llm_bundle["report.html"].as_uri(), tmp_path / "llm.png"))
