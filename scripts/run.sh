#!/usr/bin/env bash
# `make run`: the product, working. Sets up .venv and the extension, then
#  - with VS Code's `code` on PATH: installs the .vsix into it and opens this folder;
#  - otherwise: installs code-server (npm, into .tools/) and serves VS Code with Shiro on 127.0.0.1.
# Model settings: SHIRO_MODEL, OPENAI_BASE_URL and OPENAI_API_KEY from the environment (or, inside VS Code,
# the settings shiro.model / shiro.baseUrl and the command "Shiro: Set API key").
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
PY="$ROOT/.venv/bin/python"
PORT="${PORT:-8080}"
FOLDER="${SHIRO_FOLDER:-$ROOT}"

make venv >/dev/null
bash "$ROOT/scripts/package.sh" >/dev/null
VSIX="$ROOT/vscode-client/dist/shiro.vsix"
echo "Built $VSIX" >&2

settings_json() {  # the settings Shiro needs, as JSON (model settings only when given)
  "$PY" - "$@" <<'PYEOF'
import json, os, sys
settings = {"shiro.pythonPath": sys.argv[1]}
if os.environ.get("SHIRO_MODEL"):
    settings["shiro.model"] = os.environ["SHIRO_MODEL"]
if os.environ.get("OPENAI_BASE_URL"):
    settings["shiro.baseUrl"] = os.environ["OPENAI_BASE_URL"]
print(json.dumps(settings))
PYEOF
}

merge_settings() {  # merge_settings FILE JSON: add keys that FILE does not set yet (JSON with comments is left alone)
  "$PY" - "$1" "$2" <<'PYEOF'
import json, pathlib, sys
path, extra = pathlib.Path(sys.argv[1]), json.loads(sys.argv[2])
try:
    current = json.loads(path.read_text()) if path.exists() else {}
except json.JSONDecodeError:
    print(f"{path} is not plain JSON; add {extra} yourself", file=sys.stderr); sys.exit(0)
path.parent.mkdir(parents=True, exist_ok=True)
path.write_text(json.dumps({**extra, **current}, indent=2) + "\n")
PYEOF
}

if command -v code >/dev/null && [ -z "${SHIRO_USE_CODE_SERVER:-}" ]; then
  code --install-extension "$VSIX" --force
  # the workspace's interpreter: .venv has shiro-lsp installed (editable)
  merge_settings "$FOLDER/.vscode/settings.json" "$(settings_json '${workspaceFolder}/.venv/bin/python')"
  code "$FOLDER"
  echo "Opened $FOLDER in VS Code with Shiro installed (activity bar: Shiro). API key: OPENAI_API_KEY or \"Shiro: Set API key\"." >&2
  exit 0
fi

SHIRO_SETUP_BROWSER=0 bash "$ROOT/scripts/e2e-setup.sh"
CS="$ROOT/.tools/code-server/node_modules/.bin/code-server"
DATA="$ROOT/.tools/run"
mkdir -p "$DATA/data/User" "$DATA/exts"
printf 'bind-addr: 127.0.0.1:%s\nauth: none\ncert: false\n' "$PORT" > "$DATA/config.yaml"
merge_settings "$DATA/data/User/settings.json" "$(settings_json "$PY")"
merge_settings "$DATA/data/User/settings.json" '{"workbench.startupEditor": "none", "security.workspace.trust.enabled": false}'
export XDG_CONFIG_HOME="$DATA/xdg/config" XDG_DATA_HOME="$DATA/xdg/data" XDG_CACHE_HOME="$DATA/xdg/cache"
export EXTENSIONS_GALLERY='{}'
COMMON=(--config "$DATA/config.yaml" --user-data-dir "$DATA/data" --extensions-dir "$DATA/exts")
"$CS" "${COMMON[@]}" --install-extension "$VSIX" --force >/dev/null
echo "Shiro in VS Code (code-server): http://127.0.0.1:$PORT/?folder=$FOLDER   (Ctrl+C stops it)" >&2
exec "$CS" "${COMMON[@]}" --bind-addr "127.0.0.1:$PORT" --auth none --disable-telemetry \
  --disable-update-check --disable-getting-started-override "$FOLDER"
