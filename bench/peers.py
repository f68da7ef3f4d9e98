"""The peers of ``bench/run.py``: the machine, nginx, and hey, wrk, kfp-bench and the Python floor,
each run to a dict of figures (req/s, requests, errors, latencies), with the CPU each client and
nginx spent (``with_cpu``). Every command run is kept in ``COMMANDS`` for the report.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import platform
import re
import resource
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil

HERE = Path(__file__).resolve().parent
KFP = shutil.which("kfp-bench", path=str(Path(sys.executable).parent)) or "kfp-bench"
TOOLS = ("nginx", "hey", "wrk")
GRACE_S = 60  # added to every run's own duration before its timeout kills it
COMMANDS: list[str] = []  # every command run, in order, for the report
_NGINX: dict = {}  # {"master": psutil.Process} while nginx_server() runs

NGINX_CONF = """\
worker_processes {workers};
daemon off;
pid {tmp}/nginx.pid;
error_log {tmp}/error.log warn;
events {{ worker_connections 4096; }}
http {{
    access_log off;
    keepalive_requests 1000000;
    client_body_temp_path {tmp}/body;
    proxy_temp_path {tmp}/proxy;
    fastcgi_temp_path {tmp}/fastcgi;
    uwsgi_temp_path {tmp}/uwsgi;
    scgi_temp_path {tmp}/scgi;
    server {{
        listen 127.0.0.1:{port};
        location / {{ return 200 "hello world\\n"; }}
    }}
}}
"""


# --- running commands ----------------------------------------------------------------------


def run(cmd: list[str], timeout: float, check: bool = True) -> str:
    """Run ``cmd`` in its own process group; return stdout and stderr; kill the group on timeout."""
    COMMANDS.append(shlex.join(cmd))
    print(f"  $ {shlex.join(cmd)}", flush=True)
    proc = subprocess.Popen(
        cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True
    )
    try:
        out, _ = proc.communicate(timeout=timeout)
    except BaseException:  # a timeout or Ctrl-C: take the whole group down with us
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        raise
    if check and proc.returncode != 0:
        raise RuntimeError(f"exit {proc.returncode}: {shlex.join(cmd)}\n{out[-2000:]}")
    return out


# --- machine and tools ---------------------------------------------------------------------


def ensure_tools() -> None:
    """Install nginx, hey and wrk with apt when any of them is missing."""
    missing = [t for t in TOOLS if shutil.which(t) is None]
    if missing:
        print(f"missing {missing}: installing with apt-get", flush=True)
        run(["apt-get", "update"], 600)
        run(["apt-get", "install", "-y", "nginx-light", "hey", "wrk"], 900)


def host() -> dict:
    """The machine the figures hold for: cores, CPU model, kernel, load, Python."""
    cpuinfo = Path("/proc/cpuinfo").read_text()
    model = re.search(r"^model name\s*:\s*(.*)$", cpuinfo, re.M)
    return {
        "nproc": len(os.sched_getaffinity(0)),
        "cpu": model.group(1) if model else platform.processor(),
        "kernel": platform.release(),
        "loadavg_1m": os.getloadavg()[0],  # other work on the machine skews every figure
        "python": platform.python_version(),
    }


def machine() -> dict:
    """``host()`` and the versions of the tools side by side."""
    return {
        **host(),
        "nginx": run(["nginx", "-v"], 10).strip().removeprefix("nginx version: "),
        "wrk": run(["wrk", "-v"], 10, check=False).split(" Copyright")[0].strip(),
        "hey": _dpkg_version("hey"),
        "kfp-bench": run([KFP, "--version"], 30).strip(),
    }


def _dpkg_version(package: str) -> str:
    # hey has no --version flag; the package manager is the only place that knows it.
    if shutil.which("dpkg-query") is None:
        return "unknown"
    out = run(["dpkg-query", "-W", "-f=${Version}", package], 10, check=False)
    return f"hey {out.strip()}" if out.strip() else "unknown"


# --- servers -------------------------------------------------------------------------------


def free_loopback_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def nginx_server(workers: str = "auto"):
    """nginx on a free loopback port, from a temporary nginx.conf; yields its URL.

    ``workers`` is nginx's ``worker_processes``: "auto" (the default, as Debian ships it) starts
    one worker per core, sharing every core with the client; "1" keeps the server on one core.
    """
    with tempfile.TemporaryDirectory(prefix="bench-nginx-") as tmp:
        port = free_loopback_port()
        conf = Path(tmp) / "nginx.conf"
        conf.write_text(NGINX_CONF.format(tmp=tmp, port=port, workers=workers))
        cmd = ["nginx", "-p", tmp, "-c", str(conf)]
        COMMANDS.append(shlex.join(cmd))
        print(f"  $ {shlex.join(cmd)}", flush=True)
        proc = subprocess.Popen(cmd, start_new_session=True)
        atexit.register(_stop_nginx, proc, Path(tmp) / "nginx.pid")
        try:
            _wait_listening(port, proc, Path(tmp) / "error.log")
            _NGINX["master"] = psutil.Process(proc.pid)
            yield f"http://127.0.0.1:{port}/"
        finally:
            _NGINX.clear()
            _stop_nginx(proc, Path(tmp) / "nginx.pid")


def nginx_cpu_s() -> float:
    """CPU seconds (user + system) that the running nginx's processes have used so far."""
    master = _NGINX["master"]
    total = 0.0
    for p in (master, *master.children()):
        with contextlib.suppress(psutil.Error):
            t = p.cpu_times()
            total += t.user + t.system
    return total


def with_cpu(go) -> dict:
    """Run one client (``go``) against nginx and add to its figures the CPU per request, in µs, of
    the client (its whole process tree, start-up included: the same for every tool) and of
    nginx. Every client and nginx share the machine's cores, so these two explain its req/s."""
    before, n0 = resource.getrusage(resource.RUSAGE_CHILDREN), nginx_cpu_s()
    r = go()
    after, n1 = resource.getrusage(resource.RUSAGE_CHILDREN), nginx_cpu_s()
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    if r.get("requests"):
        r["client_cpu_us"] = cpu / r["requests"] * 1e6
        r["nginx_cpu_us"] = (n1 - n0) / r["requests"] * 1e6
    return r


def _wait_listening(port: int, proc: subprocess.Popen, log: Path, timeout: float = 10) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"nginx exited {proc.returncode}: {log.read_text()[-2000:]}")
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.5):
            return
        time.sleep(0.05)
    raise RuntimeError(f"nginx did not listen on 127.0.0.1:{port} within {timeout}s")


def _stop_nginx(proc: subprocess.Popen, pid_file: Path) -> None:
    """SIGQUIT (graceful) to the master named in the pid file, SIGKILL to the group if stuck."""
    if proc.poll() is not None:
        return
    with contextlib.suppress(OSError, ValueError):
        os.kill(int(pid_file.read_text()), signal.SIGQUIT)
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)


# --- the three load generators, each run to a dict of figures ---------------------------------


def hey(args: list[str], url: str, seconds: int) -> dict:
    text = run(["hey", "-z", f"{seconds}s", *args, url], seconds + GRACE_S)
    codes = re.findall(r"\[(\d+)\]\s+(\d+) responses", text)
    failed = sum(  # transport errors: no response
        map(int, re.findall(r"^\s*\[(\d+)\]", text.partition("Error distribution:")[2], re.M))
    )
    errors = failed + sum(int(n) for code, n in codes if not code.startswith("2"))
    # "Latency distribution: ... 50% in 0.0102 secs"
    pcts = {p: re.search(rf"^\s*{p}% in ([\d.]+) secs", text, re.M) for p in (50, 95, 99)}
    return {
        "rps": float(re.search(r"Requests/sec:\s*([\d.]+)", text).group(1)),
        "requests": sum(int(n) for _, n in codes) + failed,
        "errors": errors,
        **{f"p{p}_ms": float(m.group(1)) * 1e3 if m else None for p, m in pcts.items()},
    }


def wrk(args: list[str], url: str, seconds: int) -> dict:
    text = run(["wrk", *args, f"-d{seconds}s", url], seconds + GRACE_S)
    non2xx = re.search(r"Non-2xx or 3xx responses:\s*(\d+)", text)
    sock = re.search(r"Socket errors:(.*)", text)
    errors = int(non2xx.group(1)) if non2xx else 0
    errors += sum(map(int, re.findall(r"\d+", sock.group(1)))) if sock else 0
    # --latency: "50%   10.22ms"
    m = re.search(r"^\s*50%\s+([\d.]+)(us|ms|s)\s*$", text, re.M)
    unit = {"us": 1e-3, "ms": 1.0, "s": 1e3}
    return {
        "rps": float(re.search(r"Requests/sec:\s*([\d.]+)", text).group(1)),
        "requests": int(re.search(r"(\d+) requests in", text).group(1)),
        "errors": errors,
        "p50_ms": float(m.group(1)) * unit[m.group(2)] if m else None,
    }


def kfp(args: list[str], url: str, seconds: int) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "load.json"
        run(
            [KFP, "load", "-z", f"{seconds}s", *args, "--json-out", str(out), url],
            seconds + GRACE_S,
        )
        return kfp_figures(json.loads(out.read_text()))


def floor(url: str, seconds: int, connections: int = 50) -> dict:
    """The bare uvloop + httptools client of bench/floor.py: what Python itself can reach."""
    host, _, port = url.split("//")[1].strip("/").rpartition(":")
    text = run(
        [sys.executable, str(HERE / "floor.py"), host, port, str(connections), str(seconds)],
        seconds + GRACE_S,
    )
    return json.loads(text.strip().splitlines()[-1])


def kfp_figures(doc: dict) -> dict:
    lat, unc = doc["latency_ms"], doc.get("latency_uncorrected_ms", {})
    cpu = doc.get("client_cpu") or {}
    return {
        # kfp-bench's own CPU while it sent (start-up and report left out), µs per request
        "attack_cpu_us": (cpu["user_s"] + cpu["system_s"]) / doc["requests"] * 1e6
        if cpu and doc["requests"]
        else None,
        "rps": doc["rps"],
        "errors": doc["requests"] - doc["ok"],
        "requests": doc["requests"],
        "started_at": doc["started_at"],
        **{f"p{p}_ms": lat[f"p{p}"] for p in (50, 95, 99)},
        **{f"p{p}_uncorrected_ms": unc.get(f"p{p}") for p in (50, 99)},
    }
