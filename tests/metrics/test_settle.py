"""A profile's instant entries count the whole load, its first and last scrape intervals too.
Real parts: Debian's Prometheus scraping, every second, a page whose two counters the test
moves; the Collector as the loads use it (``start``, the work, ``stop``)."""

from __future__ import annotations

import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from kfp_bench.metrics import profile as profiles
from kfp_bench.metrics.collect import Collector
from tests.metrics.prometheus_server import prometheus, query, wait_scraped
from tests.metrics.test_profiles import HAVE_PROMETHEUS

RATIO = "sum(increase(a_total[{{.elapsed}}])) / sum(increase(b_total[{{.elapsed}}]))"


class _Counters(BaseHTTPRequestHandler):
    counts = {"a_total": 0, "b_total": 0}

    def do_GET(self):  # noqa: N802 (http.server's name)
        body = "".join(f"# TYPE {k} counter\n{k} {v}\n" for k, v in self.counts.items())
        self.send_response(200)
        self.send_header("Content-Type", "text/plain; version=0.0.4")
        self.end_headers()
        self.wfile.write(body.encode())

    def log_message(self, *args):
        pass


@pytest.fixture
def page():
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Counters)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"127.0.0.1:{server.server_address[1]}", _Counters.counts
    server.shutdown()
    server.server_close()


def _scraped(prom: str, counts: dict) -> None:
    """Until Prometheus holds a sample of ``a_total`` at its current value."""
    deadline = time.monotonic() + 30
    while not any(float(r["value"][1]) == counts["a_total"] for r in query(prom, "a_total")):
        assert time.monotonic() < deadline, "Prometheus did not scrape the page"
        time.sleep(0.1)


def test_the_work_after_the_last_scrape_before_the_end_is_counted(page, tmp_path):
    if not HAVE_PROMETHEUS:
        pytest.skip("Debian prometheus not installed (scripts/system-deps.sh)")
    target, counts = page
    f = tmp_path / "p.yaml"
    f.write_text(f"- query: {RATIO}\n  metricName: ratio\n  instant: true\n")
    with prometheus(tmp_path, {target: {}}) as prom:
        wait_scraped(prom, 1)
        _scraped(prom, counts)
        c = Collector(profile=profiles.load(str(f)), prometheus_url=prom)
        c.start()
        counts["a_total"] += 10  # before the load's first scrape
        counts["b_total"] += 1
        _scraped(prom, counts)
        for _ in range(3):
            counts["a_total"] += 1
            counts["b_total"] += 1
            time.sleep(0.4)
        _scraped(prom, counts)
        counts["a_total"] += 20  # after the load's last scrape: in no sample at its end
        counts["b_total"] += 1
        out = c.stop()
    [row] = out.instant.values()
    # The counters grew by 33 and 5 over the load: increase() extrapolates both alike.
    assert row["value"] == pytest.approx(33 / 5), (row, out.notes)
