# Shiro: the two commands a newcomer needs are `make run` and `make test`.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: run serve test test-py lint typecheck protocol bench clean

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[dev]'
	touch $(STAMP)

venv: $(STAMP)

## make run: the product, working (server on stdio until the extension exists)
run: $(STAMP)
	@echo "Shiro language server on stdio. Point an LSP client at: $(abspath $(PY)) -m shiro_lsp" >&2
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
	$(PY) -m pytest -q -p no:cacheprovider

## make test: everything CI runs
test: lint typecheck test-py

bench: $(STAMP)
	$(PY) -m bench

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache
