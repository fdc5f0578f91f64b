#!/usr/bin/env bash
# Idempotent install of the e2e tools: Debian chromium + ripgrep + native toolchain (apt, root),
# code-server 4.100.3 (VS Code 1.100.3, last line on Node 20) and playwright-core into .tools/code-server.
# Only the npm registry and Debian's mirrors are used; nothing is downloaded from GitHub.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
DEST="${SHIRO_TOOLS:-$ROOT/.tools}/code-server"
CS_VERSION=4.100.3
PW_VERSION=1.65.1

need_apt=()
[ "${SHIRO_SETUP_BROWSER:-1}" = 0 ] || command -v chromium >/dev/null || need_apt+=(chromium)
command -v rg >/dev/null || need_apt+=(ripgrep)
command -v curl >/dev/null || need_apt+=(curl)
command -v setsid >/dev/null || need_apt+=(util-linux)
if [ ! -x "$DEST/node_modules/.bin/code-server" ]; then
  dpkg -s build-essential libkrb5-dev libsecret-1-dev libx11-dev libxkbfile-dev pkg-config >/dev/null 2>&1 \
    || need_apt+=(build-essential pkg-config libkrb5-dev libsecret-1-dev libx11-dev libxkbfile-dev)
fi
if [ ${#need_apt[@]} -gt 0 ]; then
  echo "e2e-setup: apt-get install ${need_apt[*]}" >&2
  apt-get update -q >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${need_apt[@]}" >/dev/null
fi

if [ -x "$DEST/node_modules/.bin/code-server" ] && [ -f "$DEST/node_modules/playwright-core/package.json" ]; then
  exit 0
fi

# @vscode/ripgrep's postinstall downloads from GitHub unless its cache holds the tarball: seed it with Debian's rg.
RG_CACHE="${TMPDIR:-/tmp}/vscode-ripgrep-cache-1.15.11"
mkdir -p "$RG_CACHE"
tmp=$(mktemp -d); cp "$(command -v rg)" "$tmp/rg"
tar -C "$tmp" -czf "$RG_CACHE/ripgrep-v13.0.0-10-x86_64-unknown-linux-musl.tar.gz" rg; rm -rf "$tmp"

mkdir -p "$DEST" && cd "$DEST"
[ -f package.json ] || npm init -y >/dev/null
echo "e2e-setup: installing code-server $CS_VERSION into $DEST (~2 min)" >&2
# --unsafe-perm: code-server's postinstall refuses root without it; npm_config_yes: node-pty's postinstall runs npx node-gyp.
if ! npm_config_yes=true npm install --no-audit --no-fund --unsafe-perm --foreground-scripts \
      "code-server@$CS_VERSION" > install.log 2>&1; then
  tail -40 install.log >&2; exit 1
fi
npm install --no-audit --no-fund "playwright-core@$PW_VERSION" > install-tools.log 2>&1 || { tail -20 install-tools.log >&2; exit 1; }
XDG_CONFIG_HOME="$DEST/.xdg" XDG_DATA_HOME="$DEST/.xdg" "$DEST/node_modules/.bin/code-server" --version >&2
