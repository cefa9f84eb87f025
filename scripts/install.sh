#!/usr/bin/env bash
# `make install`: `openmono` on your PATH, for any project (cd ~/myproject && openmono ...).
# `make uninstall`: remove it. An editable uv tool install of this checkout's agent (and the
# workspace packages it needs), pinned to uv.lock's versions: `git pull && make install` upgrades,
# and the installed `openmono` finds this checkout for `up|down|status|setup` and compose/.env.
# UV_TOOL_DIR / UV_TOOL_BIN_DIR choose where it goes (the tests install into a temporary prefix).
set -euo pipefail
cd "$(dirname "$0")/.."

say() { printf 'install: %s\n' "$*"; }
UV=$(command -v uv || echo "$HOME/.local/bin/uv")
BIN=$("$UV" tool dir --bin)
LINK=/usr/local/bin/openmono

if [ "${1:-install}" = uninstall ]; then
  if "$UV" tool uninstall openmono >/dev/null 2>&1; then
    say "removed openmono (uv tool, $BIN/openmono)"
  else
    say "openmono is not installed as a uv tool: nothing to remove"
  fi
  if [ -L "$LINK" ] && [ "$(readlink "$LINK")" = "$BIN/openmono" ]; then
    rm -f "$LINK"
    say "removed the link $LINK"
  fi
  exit 0
fi

constraints=$(mktemp)
trap 'rm -f "$constraints"' EXIT
# the versions of uv.lock: the installed tool runs what the tests ran
"$UV" export --frozen --quiet --package openmono --no-hashes --no-emit-workspace --no-dev \
  --output-file "$constraints" >/dev/null
"$UV" tool install --quiet --force --editable ./agent --constraints "$constraints"
say "$("$BIN/openmono" --version)"

# on the PATH of a fresh shell, as `uv` itself (scripts/setup.sh): root links it into
# /usr/local/bin unless a bin dir was chosen on purpose; anyone else gets the line to add
case ":$PATH:" in
  *":$BIN:"*) say "openmono is on your PATH ($BIN/openmono)" ;;
  *)
    if [ "$(id -u)" = 0 ] && [ -z "${UV_TOOL_BIN_DIR:-}" ] && [ -d /usr/local/bin ]; then
      ln -sf "$BIN/openmono" "$LINK"
      say "linked $BIN/openmono into /usr/local/bin (on the default PATH)"
    else
      say "$BIN is not on your PATH; add this line to your shell profile:"
      say "  export PATH=\"$BIN:\$PATH\""
    fi
    ;;
esac
say "then: cd ANY_PROJECT && openmono   (upgrade: git pull && make install; remove: make uninstall)"
