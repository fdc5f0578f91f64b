#!/usr/bin/env bash
# The issue-34 scenarios once against a real local model in code-server (profile `realmodel`,
# tests/e2e_vscode/scenarios.mjs): setup picks the served model, a crash fix whose outcome Shiro states,
# a question answered, /compact naming the goal, a reload and resume with the served window on the meter.
# Screenshots in .artifacts/e2e-realmodel/; the scenarios log what the model did.
#
#   MODEL=qwen15 bash /work/shared/realmodel/serve.sh        # llama-server on 127.0.0.1:8091, 16k window
#   SHIRO_TOOLS=/work/main/.tools flock /tmp/shiro-heavy.lock bash scripts/e2e-realmodel.sh
#
# SHIRO_E2E_REAL_URL (default http://127.0.0.1:8091/v1) points at another OpenAI-compatible server;
# SHIRO_E2E_TIMEOUT (default 5400 s: a 1.5B model on 2 CPU cores takes minutes per turn).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
URL="${SHIRO_E2E_REAL_URL:-http://127.0.0.1:8091/v1}"
curl -fs -o /dev/null "$URL/models" || { echo "e2e-realmodel: nothing answers at $URL/models (start the model server first)" >&2; exit 2; }
SHIRO_E2E_PROFILE=realmodel SHIRO_E2E_REAL_URL="$URL" SHIRO_E2E_TIMEOUT="${SHIRO_E2E_TIMEOUT:-5400}" \
  exec bash "$ROOT/scripts/e2e.sh"
