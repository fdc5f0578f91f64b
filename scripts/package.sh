#!/usr/bin/env bash
# Build the extension and package it as vscode-client/dist/shiro.vsix (npm ci only when the lockfile changed).
set -euo pipefail
cd "$(dirname "$0")/../vscode-client"
if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  npm ci --no-audit --no-fund >/dev/null
fi
npm run --silent package
