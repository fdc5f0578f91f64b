# Shiro: the two commands a newcomer needs are `make run` and `make test`.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: run serve stdio test test-py test-real client-test e2e lint typecheck protocol bench clean

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[dev]'
	touch $(STAMP)

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

lint: $(STAMP)
	$(VENV)/bin/ruff check shiro_lsp tests bench
	$(VENV)/bin/ruff format --check shiro_lsp tests bench

typecheck: $(STAMP)
	$(VENV)/bin/mypy

## regenerate docs/protocol.md and docs/protocol.schema.json from the wire types
protocol: $(STAMP)
	$(PY) -m shiro_lsp.server.protocol_docs --write

test-py: $(STAMP)
	$(PY) -m pytest -q -p no:cacheprovider --durations=15

## make test-real: the headless front door against a real local model server (not part of `make test`).
## Start one first, e.g. llama.cpp's llama-server with Qwen2.5-Coder (recipe: shared/realmodel/setup.sh
## and serve.sh, which listens on 127.0.0.1:8091), Ollama (http://127.0.0.1:11434/v1) or LM Studio, then
##   make test-real SHIRO_REAL_MODEL_URL=http://127.0.0.1:8091/v1 [SHIRO_REAL_MODEL=qwen2.5-coder-1.5b-instruct]
## Without SHIRO_REAL_MODEL_URL the tests are skipped and say why. On CPU a step can take minutes.
test-real: $(STAMP)
	SHIRO_REAL_MODEL_URL=$${SHIRO_REAL_MODEL_URL:-} $(PY) -m pytest -v -rs -p no:cacheprovider tests/real

## the extension: npm ci, tsc --noEmit, node --test with a stubbed vscode
client-test:
	bash scripts/client-test.sh

## the extension in a real VS Code (code-server + headless chromium), against the real server
e2e: $(STAMP)
	bash scripts/e2e.sh; a=$$?; SHIRO_E2E_PROFILE=selfsetup SHIRO_E2E_SKIP_BUILD=1 bash scripts/e2e.sh; b=$$?; [ $$a -eq 0 ] && [ $$b -eq 0 ]

## make test: everything CI runs
test: lint typecheck test-py client-test e2e

bench: $(STAMP)
	$(PY) -m bench

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache
