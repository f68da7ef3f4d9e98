#!/usr/bin/env bash
# What setup.py needs to compile the load engine's twin (kfp_bench.load._cengine): a C compiler
# and Python's headers. Installs them from Debian only when missing and apt can be used; otherwise
# it says so and the install goes on (the plain Python engine runs, with the same results).
set -uo pipefail
PY="${1:-python3}"
need=()
command -v cc >/dev/null 2>&1 || need+=(gcc libc6-dev)
inc="$("$PY" -c 'import sysconfig; print(sysconfig.get_paths()["include"])')"
if [ ! -f "$inc/Python.h" ]; then
    ver="$("$PY" -c 'import sys; print(f"{sys.version_info[0]}.{sys.version_info[1]}")')"
    need+=("python${ver}-dev")
fi
[ ${#need[@]} -eq 0 ] && exit 0
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
if ! command -v apt-get >/dev/null 2>&1 || { [ -n "$SUDO" ] && ! sudo -n true 2>/dev/null; }; then
    echo "kfp-bench: ${need[*]} missing and apt-get not usable: the plain Python engine will run" >&2
    exit 0
fi
echo "installing Debian packages for the compiled engine: ${need[*]}"
$SUDO apt-get update -qq &&
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${need[@]}" \
        >/dev/null ||
    echo "kfp-bench: could not install ${need[*]}: the plain Python engine will run" >&2
exit 0
