# OpenMono — every target documents itself: `make help` (the default) lists them.
SHELL := /bin/bash
.DEFAULT_GOAL := help
# found when a recipe runs (not when make starts), so `make up` works right after setup installs uv
UV ?= $$(command -v uv 2>/dev/null || echo $$HOME/.local/bin/uv)
RUN := $(UV) run --frozen

.PHONY: help setup up install uninstall down status logs test test-fast test-containers lint types \
	check bench compose-config generate standin-images clean

help: ## List the targets
	@awk 'BEGIN {FS = ":.*?## "} /^[a-zA-Z_-]+:.*?## / {printf "  \033[36m%-15s\033[0m %s\n", $$1, $$2}' $(MAKEFILE_LIST)

setup: ## Install uv, the workspace (Caddy, llama.cpp server, model) and the OS packages (as root)
	@bash scripts/setup.sh

up: setup ## Bring the native stack up, wait until healthy, print where it listens and /services
	@$(RUN) openmono up

install: setup ## Put `openmono` on your PATH (uv tool, editable): cd ANY_PROJECT && openmono
	@bash scripts/install.sh install

uninstall: ## Remove the `openmono` that `make install` put on your PATH
	@bash scripts/install.sh uninstall

down: ## Stop exactly the processes `make up` started
	@$(RUN) openmono down

status: ## Table of the stack's services: pid, address, healthy, detail
	@$(RUN) openmono status

logs: ## Follow the stack's logs
	@tail -n 50 -F $${OPENMONO_DATA_DIR:-$$HOME/.openmono}/stack/logs/*.log

test: setup ## Run the whole test suite (real processes on 127.0.0.1)
	@$(RUN) pytest

test-containers: setup ## Only the container tests (docker compose on a real engine)
	@$(RUN) pytest tests/containers -q

test-fast: ## Unit tests only
	@$(RUN) pytest tests/unit -q

lint: ## ruff check + ruff format --check
	@$(RUN) ruff check .
	@$(RUN) ruff format --check .

types: ## mypy --strict on the product packages
	@$(RUN) mypy

check: setup lint types test ## Lint + types + tests: exactly what .ci/run runs

# bench/soak.py runs SOAK_MINUTES minutes: 2 here, 30 when run by hand (docs/operations.md, "Soak")
bench: setup ## Benchmarks: print medians and ratios against a baseline measured in the same run
	@for b in bench/[!_]*.py; do echo "== $$b"; SOAK_MINUTES=$${SOAK_MINUTES:-2} $(RUN) python $$b || exit 1; done

generate: ## Rewrite the parts of the Caddyfile, compose file and .env.example made from the routed-services table
	@$(RUN) python -m openmono.stack.gatewayfiles --write

compose-config: ## Validate the compose files, every profile and the GPU override (no engine needed)
	@for f in "-f compose.yaml" "-f compose.yaml -f compose/gpu.yml"; do \
	  .venv/bin/docker-compose --env-file compose/.env.example $$f --profile '*' config -q || exit 1; \
	done && echo "compose config ok"

standin-images: ## Build stand-ins for upstream images that cannot be pulled (tests/containers/standins)
	@bash scripts/standin-images.sh

clean: ## Remove caches (keeps .venv and the data dir)
	@rm -rf .mypy_cache .ruff_cache .pytest_cache
