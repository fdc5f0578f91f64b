#!/usr/bin/env bash
# The extension's checks: a clean npm ci, the TypeScript 7 type check (three projects: the extension host,
# the webview with DOM and no `vscode`, the tests), eslint + prettier (`npm run format` fixes what they can),
# and the node --test unit tests (logic tested with a stubbed `vscode`).
set -euo pipefail
cd "$(dirname "$0")/../vscode-client"
npm ci --no-audit --no-fund
npm run --silent typecheck
npm run --silent lint
npm test
