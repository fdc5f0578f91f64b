#!/usr/bin/env bash
# A real VS Code window with Shiro for a program to drive: code-server + the built .vsix, on 127.0.0.1. Installs the
# tools idempotently into .tools/ (scripts/e2e-setup.sh), packages the .vsix, starts the scripted model
# (tests/fakes/fake_openai.py, when present) and code-server on a fresh workspace, user data and Shiro home, runs
# COMMAND, copies the VS Code logs into $ART and stops every process it started. Used by scripts/e2e.sh (the
# scenarios) and bench/bench_resume.py (`make bench`).
#
#   scripts/vscode-window.sh COMMAND [ARGS...]
#
# COMMAND gets: CS_URL (the window's URL, the workspace open), WS (the workspace folder), SHIRO_HOME_DIR (the
# window's Shiro home: state, sessions), MODEL_URL (the scripted model, or empty), SETTINGS and MACHINE_SETTINGS
# (the User and Remote settings files), ART (.artifacts/window unless set; emptied first), SHIRO_E2E_TOOLS and
# SHIRO_E2E_PROFILE. The window's own switches: SHIRO_E2E_PROFILE (default, selfsetup, untrusted: see
# tests/e2e_vscode/README.md), SHIRO_E2E_FAKE, SHIRO_E2E_PYTHONPATH, SHIRO_E2E_THRESHOLD, SHIRO_E2E_SKIP_BUILD,
# SHIRO_E2E_KEEP=1 (keep the run dir), SHIRO_E2E_REAL_URL (a real model server's /v1 URL, e.g. llama-server on
# 127.0.0.1:8091: no scripted model is started, shiro.baseUrl is that URL and no model is set, so the setup card
# picks the one the server serves; scripts/e2e-realmodel.sh).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
TOOLS="${SHIRO_TOOLS:-$ROOT/.tools}/code-server"
ART="${ART:-$ROOT/.artifacts/window}"
mkdir -p "$ROOT/.artifacts"
PY="$ROOT/.venv/bin/python"

bash "$ROOT/scripts/e2e-setup.sh"
[ -x "$PY" ] || make venv > "$ROOT/.artifacts/make-venv.log" 2>&1 || { cat "$ROOT/.artifacts/make-venv.log" >&2; exit 1; }
[ -n "${SHIRO_E2E_SKIP_BUILD:-}" ] || bash "$ROOT/scripts/package.sh" >/dev/null
VSIX="$ROOT/vscode-client/dist/shiro.vsix"

free_port() { "$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
RUN=$(mktemp -d "${TMPDIR:-/tmp}/shiro-e2e-XXXX")
rm -rf "$ART"; mkdir -p "$ART"
CS_PORT=$(free_port)
MODEL_PORT=$(free_port)
WS="$RUN/workspace"
cp -r "$ROOT/tests/e2e_vscode/workspace" "$WS"
mkdir -p "$RUN/data/User" "$RUN/exts" "$RUN/home"

PIDS=()
cleanup() {
  for pid in "${PIDS[@]}"; do kill -TERM -- "-$pid" 2>/dev/null || true; done
  sleep 0.5
  for pid in "${PIDS[@]}"; do kill -KILL -- "-$pid" 2>/dev/null || true; done
  cp "$RUN"/*.log "$ART/" 2>/dev/null || true
  [ -n "${SHIRO_E2E_KEEP:-}" ] || rm -rf "$RUN"
}
trap cleanup EXIT

MODEL_URL=""
REAL_URL="${SHIRO_E2E_REAL_URL:-}"
FAKE="${SHIRO_E2E_FAKE:-$ROOT/tests/fakes/fake_openai.py}"
if [ -f "$FAKE" ] && [ -z "$REAL_URL" ]; then
  setsid "$PY" "$FAKE" --port "$MODEL_PORT" > "$RUN/fake-model.log" 2>&1 &
  PIDS+=($!)
  MODEL_URL="http://127.0.0.1:$MODEL_PORT"
  for _ in $(seq 100); do curl -fs -o /dev/null "$MODEL_URL/_control/requests" && break; sleep 0.1; done
fi

SERVER_PY="$PY"
PROFILE="${SHIRO_E2E_PROFILE:-default}"
[ "$PROFILE" = selfsetup ] && SERVER_PY=""
TRUST=False; TRUST_FLAG=(--disable-workspace-trust)
[ "$PROFILE" = untrusted ] && { TRUST=True; TRUST_FLAG=(); }
CONFIGURED=True; [ "$PROFILE" = firstrun ] && CONFIGURED=False

printf 'bind-addr: 127.0.0.1:%s\nauth: none\ncert: false\n' "$CS_PORT" > "$RUN/config.yaml"
# code-server is a remote window: VS Code applies a machine-scoped setting (shiro.pythonPath, baseUrl, home,
# localServerUrls) only from the Remote settings (data/Machine/settings.json). Put in the User file, such a value
# counts only until VS Code knows the setting's scope, which depends on load: then the server came from the
# self-installed environment and the state went to ~/.shiro-neko. The rest goes in the User settings.
mkdir -p "$RUN/data/Machine"
"$PY" - "$RUN/data/User/settings.json" "$RUN/data/Machine/settings.json" "$RUN/data/User/keybindings.json" <<PYEOF
import json, sys
settings = {
    "workbench.startupEditor": "none", "workbench.tips.enabled": False, "security.workspace.trust.enabled": $TRUST,
    "security.workspace.trust.startupPrompt": "never",
    "telemetry.telemetryLevel": "off", "extensions.autoCheckUpdates": False, "extensions.autoUpdate": False,
    "update.mode": "none", "workbench.enableExperiments": False, "chat.disableAIFeatures": True,
    "shiro.compactThreshold": int("${SHIRO_E2E_THRESHOLD:-20000}"),
    # the scenarios send exactly what they type; the current-file chip has its own scenario
    "shiro.attachActiveFile": False,
}
machine = {"shiro.home": "$RUN/home"}
if $CONFIGURED and not "$REAL_URL":
    settings["shiro.model"] = "fake-model"
if "$REAL_URL":
    machine["shiro.baseUrl"] = "$REAL_URL"
if "$SERVER_PY":
    machine["shiro.pythonPath"] = "$SERVER_PY"
if "$MODEL_URL":
    if $CONFIGURED:
        machine["shiro.baseUrl"] = "$MODEL_URL/v1"
    # where "Find a local model server" looks: the scripted model, not the preset ports a developer may use
    # (a user setting: a workspace's own list is never probed)
    machine["shiro.localServerUrls"] = ["$MODEL_URL/v1"]
json.dump(settings, open(sys.argv[1], "w"), indent=2)
json.dump(machine, open(sys.argv[2], "w"), indent=2)
# a key for "Shiro: Restart server" (a scenario presses it twice at once)
json.dump([{"key": "ctrl+alt+shift+f9", "command": "shiro.restartServer"}], open(sys.argv[3], "w"), indent=2)
PYEOF

export XDG_CONFIG_HOME=$RUN/xdg/config XDG_DATA_HOME=$RUN/xdg/data XDG_CACHE_HOME=$RUN/xdg/cache
export EXTENSIONS_GALLERY='{}'
if [ "$CONFIGURED" = True ]; then export OPENAI_API_KEY=sk-e2e-not-a-real-key; else unset OPENAI_API_KEY OPENAI_BASE_URL; fi
# SHIRO_E2E_PYTHONPATH: run another checkout's shiro_lsp (e.g. to try the scenarios before a merge).
[ -z "${SHIRO_E2E_PYTHONPATH:-}" ] || export PYTHONPATH="$SHIRO_E2E_PYTHONPATH${PYTHONPATH:+:$PYTHONPATH}"
CS="$TOOLS/node_modules/.bin/code-server"
COMMON=(--config "$RUN/config.yaml" --user-data-dir "$RUN/data" --extensions-dir "$RUN/exts")
"$CS" "${COMMON[@]}" --install-extension "$VSIX" > "$RUN/install-ext.log" 2>&1

setsid "$CS" "${COMMON[@]}" --bind-addr "127.0.0.1:$CS_PORT" --auth none \
  --disable-telemetry --disable-update-check "${TRUST_FLAG[@]}" \
  --disable-getting-started-override "$WS" > "$RUN/code-server.log" 2>&1 &
PIDS+=($!)
for _ in $(seq 600); do curl -fs -o /dev/null "http://127.0.0.1:$CS_PORT/healthz" && break; sleep 0.1; done

export SHIRO_E2E_TOOLS="$TOOLS"
CS_URL="http://127.0.0.1:$CS_PORT/?folder=$WS" WS="$WS" ART="$ART" MODEL_URL="$MODEL_URL" SHIRO_E2E_PROFILE="$PROFILE" \
  SETTINGS="$RUN/data/User/settings.json" MACHINE_SETTINGS="$RUN/data/Machine/settings.json" SHIRO_HOME_DIR="$RUN/home" \
  "$@"
