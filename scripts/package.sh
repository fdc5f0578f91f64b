#!/usr/bin/env bash
# Build the extension and package it as vscode-client/dist/shiro.vsix (npm ci only when the lockfile changed).
# The .vsix carries the server: a wheel of shiro-lsp in vscode-client/server/ (rebuilt when the Python sources
# changed), which the extension installs into a private environment on first start (src/server/serverEnv.ts).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
PY="${PYTHON:-$ROOT/.venv/bin/python}"
[ -x "$PY" ] || PY=python3
WHEELS="$ROOT/vscode-client/server"
wheel=$(ls "$WHEELS"/shiro_lsp-*.whl 2>/dev/null | head -1 || true)
if [ -z "$wheel" ] || [ -n "$(find "$ROOT/shiro_lsp" "$ROOT/pyproject.toml" -newer "$wheel" -print -quit)" ]; then
  rm -rf "$WHEELS" && mkdir -p "$WHEELS"
  BUILD=$(mktemp -d "${TMPDIR:-/tmp}/shiro-wheel-XXXX")
  # build from a copy so the work tree gets no build/ or *.egg-info
  (cd "$ROOT" && git ls-files -co --exclude-standard pyproject.toml README.md LICENSE shiro_lsp 2>/dev/null || \
    find pyproject.toml README.md shiro_lsp -type f) | while read -r f; do
    [ -f "$ROOT/$f" ] || continue
    mkdir -p "$BUILD/src/$(dirname "$f")" && cp "$ROOT/$f" "$BUILD/src/$f"
  done
  "$PY" -m pip wheel --no-deps --disable-pip-version-check -q -w "$WHEELS" "$BUILD/src" >&2
  rm -rf "$BUILD"
fi
cd "$ROOT/vscode-client"
if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  npm ci --no-audit --no-fund >/dev/null
fi
npm run --silent package
