#!/usr/bin/env bash
# Installs acpx 0.1.15 (an ACP client on npm) into .data/node/ for the ACP integration tests.
# 0.1.15 is the last release that runs on Node 20; later ones need Node >= 22.
# Tests that need it skip with a reason when it is missing. Idempotent.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
prefix="$root/.data/node"
bin="$prefix/node_modules/.bin/acpx"
if ! command -v npm >/dev/null 2>&1; then
    echo "install-acpx: npm not found; the acpx tests will be skipped" >&2
    exit 0
fi
if [ -x "$bin" ] && [ "$("$bin" --version 2>/dev/null || true)" = "0.1.15" ]; then
    exit 0
fi
mkdir -p "$prefix"
npm install --prefix "$prefix" --no-audit --no-fund --loglevel=error acpx@0.1.15
"$bin" --version
