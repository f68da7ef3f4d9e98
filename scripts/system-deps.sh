#!/usr/bin/env bash
# Debian packages the test suite needs: chromium renders report.html headless for the report tests;
# prometheus-pushgateway takes the push of tests/test_push.py, and prometheus brings promtool, which
# tests the alert rules of docs/alerting.md. On a host with systemd both packages also start their
# own service (:9090, :9091); the tests never use those, they start their own on free ports.
# Installs only what is missing; needs root (or sudo).
set -euo pipefail
need=()
command -v chromium >/dev/null 2>&1 || need+=(chromium)
command -v prometheus-pushgateway >/dev/null 2>&1 || need+=(prometheus-pushgateway)
command -v promtool >/dev/null 2>&1 || need+=(prometheus)
[ ${#need[@]} -eq 0 ] && exit 0
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
echo "installing Debian packages: ${need[*]}"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
