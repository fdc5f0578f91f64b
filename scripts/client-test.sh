#!/usr/bin/env bash
# The extension's checks: a clean npm ci, the TypeScript 7 type check, and the node --test unit tests
# (logic tested with a stubbed `vscode`).
set -euo pipefail
cd "$(dirname "$0")/../vscode-client"
npm ci --no-audit --no-fund
npx tsc --noEmit -p .
npm test
