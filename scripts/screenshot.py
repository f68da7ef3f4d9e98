"""The README's and the docs' picture of the report: the demo's report.html (``make demo``) as
Debian's headless Chromium renders it, the page's first screen, in 256 colours to keep it small.

    python scripts/screenshot.py [REPORT_HTML] [OUT_PNG]
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from PIL import Image

ROOT = Path(__file__).resolve().parents[1]
REPORT = ROOT / "results" / "demo" / "report.html"
OUT = ROOT / "docs" / "report.png"
SIZE = (1100, 1400)
#: Debian Chromium's headless flags for the report, here and in tests/report/test_html_chromium.py.
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    # Wait until the page (and an iframe's srcdoc) has loaded and painted, however busy the
    # machine: the screenshot is taken after this much virtual time.
    "--run-all-compositor-stages-before-draw",
    "--virtual-time-budget=10000",
    # A sandboxed iframe otherwise gets a process of its own, which the headless screenshot does
    # not always wait for (a blank frame on a busy machine).
    "--disable-features=IsolateSandboxedIframes",
    "--disable-site-isolation-trials",
]


def main(report: Path = REPORT, out: Path = OUT) -> int:
    chromium = shutil.which("chromium")
    if chromium is None:
        print("screenshot: no chromium; scripts/system-deps.sh installs it", file=sys.stderr)
        return 2
    if not report.is_file():
        print(f"screenshot: no {report}; make demo writes it", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="kfp-bench-chromium-") as tmp:
        raw = Path(tmp) / "raw.png"
        subprocess.run(
            [chromium, *FLAGS, "--hide-scrollbars", f"--user-data-dir={tmp}/profile"]
            + [
                f"--screenshot={raw}",
                f"--window-size={SIZE[0]},{SIZE[1]}",
                report.resolve().as_uri(),
            ],
            check=True,
            capture_output=True,
            timeout=120,
        )
        img = Image.open(raw).convert("RGB").quantize(256, dither=Image.Dither.NONE)
        img.save(out, optimize=True)
    print(f"{out.relative_to(ROOT)}  {out.stat().st_size // 1024} kB")
    return 0


if __name__ == "__main__":
    sys.exit(main(*(Path(a) for a in sys.argv[1:3])))
