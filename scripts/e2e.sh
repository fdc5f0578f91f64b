#!/usr/bin/env bash
# End-to-end test of the VS Code extension in a real VS Code: code-server + headless Debian chromium +
# playwright-core. scripts/vscode-window.sh installs the tools idempotently into .tools/, packages the .vsix, starts
# the scripted model (tests/fakes/fake_openai.py, when present) and code-server on 127.0.0.1 and stops every process
# it started; in that window this runs the scenarios in tests/e2e_vscode/ and saves a screenshot of each state into
# .artifacts/e2e/.
#
#   scripts/e2e.sh                     the scenarios that are switched on
#   SHIRO_E2E_ENABLE=all scripts/e2e.sh        also the pending ones (or a comma list of names)
#   SHIRO_E2E_ONLY=webview,remember scripts/e2e.sh   just these
#   SHIRO_E2E_FAKE=path/fake_openai.py   another scripted model; SHIRO_E2E_PYTHONPATH=dir  another shiro_lsp
#   SHIRO_E2E_PROFILE=selfsetup        the scenarios of that profile, in a code-server with no shiro.pythonPath:
#                                      the .vsix sets up its own server environment (make e2e runs every profile)
#   SHIRO_E2E_PROFILE=firstrun         a first run: no model endpoint, model or API key anywhere (settings or
#                                      environment); the scripted model is only found through the setup card
#   SHIRO_E2E_PROFILE=untrusted        Workspace Trust on (every other profile runs with it off): folders open
#                                      in Restricted Mode, without the startup prompt
#   SHIRO_E2E_PROFILE=truth            as default, in a code-server of its own: the scenarios that change the
#                                      models the server lists and share one session (issue 34's)
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
ART="$ROOT/.artifacts/e2e${SHIRO_E2E_PROFILE:+-$SHIRO_E2E_PROFILE}" exec bash "$ROOT/scripts/vscode-window.sh" \
  timeout --kill-after=10 "${SHIRO_E2E_TIMEOUT:-1500}" node "$ROOT/tests/e2e_vscode/run.mjs"
