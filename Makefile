# Shiro: the two commands a newcomer needs are `make run` and `make test`.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: help venv run serve stdio test test-py test-unit test-real client-test e2e lint fix typecheck protocol bench eval clean

## make help: this list
help:
	@grep -E '^## ' Makefile | sed 's/^## //'


$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[dev]'
	touch $(STAMP)

## make venv: the Python virtualenv in .venv with the dev tools (reinstalled when pyproject.toml changes)
venv: $(STAMP)

## make run: VS Code with Shiro (or code-server on 127.0.0.1 when `code` is not on PATH; the URL is printed)
run: $(STAMP)
	bash scripts/run.sh

## make stdio: just the language server on stdin/stdout
stdio: $(STAMP)
	$(PY) -m shiro_lsp --stdio

## make serve PORT=2087: the server on 127.0.0.1 over TCP
serve: $(STAMP)
	$(PY) -m shiro_lsp --tcp $${PORT:-2087}

## make lint: ruff (check + format check), the layer rules (import-linter), dead code (vulture) and dependencies (deptry); all configured in pyproject.toml
lint: $(STAMP)
	$(VENV)/bin/ruff check shiro_lsp tests bench eval
	$(VENV)/bin/ruff format --check shiro_lsp tests bench eval
	$(VENV)/bin/lint-imports
	$(VENV)/bin/vulture
	$(VENV)/bin/deptry .

## make fix: ruff's fixes and formatting applied
fix: $(STAMP)
	$(VENV)/bin/ruff check --fix shiro_lsp tests bench eval
	$(VENV)/bin/ruff format shiro_lsp tests bench eval

## make typecheck: mypy --strict over shiro_lsp and eval
typecheck: $(STAMP)
	$(VENV)/bin/mypy

## make protocol: regenerate docs/protocol.md, docs/protocol.schema.json and vscode-client/src/shared/protocol.gen.ts from the wire types
protocol: $(STAMP)
	$(PY) -m shiro_lsp.server.protocol_docs --write
	test -d vscode-client/node_modules || (cd vscode-client && npm ci --no-audit --no-fund)
	cd vscode-client && node scripts/gen-protocol.mjs

## make test-unit: the Python unit tests only (one layer at a time, no server process)
test-unit: $(STAMP)
	$(PY) -m pytest -q -p no:cacheprovider tests/unit

## make test-py: every Python test (unit and end-to-end through the server), one test file per worker
## process, one worker per logical CPU (PYTEST_WORKERS=N: N workers; 0: in this process), then the 15 slowest tests
PYTEST_WORKERS ?= logical
test-py: $(STAMP)
	$(PY) -m pytest -q -p no:cacheprovider -n $(PYTEST_WORKERS) --dist loadfile --durations=15

## make test-real: the headless front door against a real local model server (not part of `make test`).
## Start one first, e.g. llama.cpp's llama-server with Qwen2.5-Coder (recipe: shared/realmodel/setup.sh
## and serve.sh, which listens on 127.0.0.1:8091), Ollama (http://127.0.0.1:11434/v1) or LM Studio, then
##   make test-real SHIRO_REAL_MODEL_URL=http://127.0.0.1:8091/v1 [SHIRO_REAL_MODEL=qwen2.5-coder-1.5b-instruct]
## Without SHIRO_REAL_MODEL_URL the tests are skipped and say why. On CPU a step can take minutes.
test-real: $(STAMP)
	SHIRO_REAL_MODEL_URL=$${SHIRO_REAL_MODEL_URL:-} $(PY) -m pytest -v -rs -p no:cacheprovider tests/real

## make client-test: the extension: npm ci, tsc --noEmit (host, webview, tests), eslint + prettier --check, node --test with a stubbed vscode
client-test:
	bash scripts/client-test.sh

## make e2e: the extension in a real VS Code (code-server + headless chromium), against the real server;
## its profiles (default, selfsetup, untrusted) run at the same time (SHIRO_E2E_SERIAL=1: one after the other)
e2e: $(STAMP)
	bash scripts/e2e-profiles.sh

## make test: everything CI runs
test: lint typecheck test-py client-test e2e

## make bench: the benchmarks, as ratios against baselines measured in the same run
bench: $(STAMP)
	$(PY) -m bench

## make eval: real coding tasks done by Shiro, Aider and qwen-code against one model server, as a table of pass
## rates and ratios to Shiro, dev, held-out and paraphrase rows apart (not part of `make test`; see eval/README.md).
## Without EVAL_URL it uses or starts llama-server on 127.0.0.1:8091 (scripts/realmodel; EVAL_SETUP=1 builds it first).
##   make eval [EVAL_URL=… EVAL_MODEL=…] [MODEL=qwen15|qwen05] [TEMPLATE=stock|fenced] [RUNS=3] [TASKS=a,b] [HARNESS=shiro,aider]
##             [SET=own|exercism|repos|all] [SPLIT=dev|heldout|all] [WORDING=original|p1|p2|p3|paraphrased|all]
eval: $(STAMP)
	bash scripts/eval.sh

## make clean: remove the venv and caches
clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache
