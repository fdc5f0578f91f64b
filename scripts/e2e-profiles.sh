#!/usr/bin/env bash
# `make e2e`: the VS Code end-to-end profiles (default, selfsetup, untrusted, firstrun, truth) at the same time. Each run of scripts/e2e.sh
# has its own code-server, scripted model, free ports, temp dir and .artifacts/e2e* folder; what they share
# (.tools, vscode-client/dist/shiro.vsix) is prepared once, first. Each profile's output is printed whole, in
# order, and one total line closes: `e2e: N passed, N failed, N skipped`. Exits non-zero if any profile failed.
#   SHIRO_E2E_SERIAL=1 scripts/e2e-profiles.sh    one profile after the other (e.g. on a busy machine)
set -uo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
PROFILES=(default selfsetup untrusted firstrun truth)

bash scripts/e2e-setup.sh || exit 1
bash scripts/package.sh >/dev/null || exit 1
LOGS=$(mktemp -d "${TMPDIR:-/tmp}/shiro-e2e-logs-XXXX")
trap 'rm -rf "$LOGS"' EXIT

run_profile() {  # the default profile is the one with no SHIRO_E2E_PROFILE (artifacts in .artifacts/e2e)
  local name=$1
  [ "$name" = default ] && name=""
  SHIRO_E2E_PROFILE="$name" SHIRO_E2E_SKIP_BUILD=1 bash scripts/e2e.sh > "$LOGS/$1.log" 2>&1
  echo $? > "$LOGS/$1.rc"
}

echo "e2e: profiles ${PROFILES[*]}${SHIRO_E2E_SERIAL:+ (one after the other)}; each one's output follows when it ends"
pids=()
for p in "${PROFILES[@]}"; do
  if [ -n "${SHIRO_E2E_SERIAL:-}" ]; then run_profile "$p"; else run_profile "$p" & pids+=($!); fi
done
[ ${#pids[@]} -eq 0 ] || wait "${pids[@]}"

passed=0 failed=0 skipped=0 status=0
for p in "${PROFILES[@]}"; do
  echo "---- e2e profile $p ----"
  cat "$LOGS/$p.log"
  rc=$(cat "$LOGS/$p.rc" 2>/dev/null || echo 1)
  summary=$(grep -E '^e2e: [0-9]+ passed, [0-9]+ failed, [0-9]+ skipped$' "$LOGS/$p.log" | tail -1)
  if [ -z "$summary" ]; then
    echo "e2e profile $p: exited $rc without a summary line"; failed=$((failed + 1)); status=1; continue
  fi
  read -r a b c < <(sed -E 's/^e2e: ([0-9]+) passed, ([0-9]+) failed, ([0-9]+) skipped$/\1 \2 \3/' <<<"$summary")
  passed=$((passed + a)) failed=$((failed + b)) skipped=$((skipped + c))
  if [ "$rc" -ne 0 ]; then
    status=1
    [ "$b" -gt 0 ] || { echo "e2e profile $p: exited $rc"; failed=$((failed + 1)); }
  fi
done
[ "$failed" -eq 0 ] || status=1
# the names, last (CI shows the tail of a long log): what failed, and what passed only on its retry
for p in "${PROFILES[@]}"; do
  sed -nE "s/^\[[0-9.]+s\] (FAILED TWICE|FAIL) ([^:]+).*$/e2e $p: \1 \2/p" "$LOGS/$p.log" 2>/dev/null
  sed -nE "s/^e2e flaky .*: (.*)$/e2e $p: flaky \1/p" "$LOGS/$p.log" 2>/dev/null
done
echo "e2e: $passed passed, $failed failed, $skipped skipped"
exit $status
