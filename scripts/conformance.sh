#!/usr/bin/env bash
# The official MCP conformance suite (npm @modelcontextprotocol/conformance) against our
# client, `conformance-client` (crates/fixtures/src/bin/conformance-client.rs, built on the
# client library), in two sets:
#
#   1. suite 0.1.16: every client scenario of the 2025-11-25 set plus the two 2025-03-26
#      authorization back-compat scenarios;
#   2. suite 0.2.0-alpha.12: every client scenario its `--requirements 2026-07-28` set
#      scores, at that revision's own wire (`--spec-version 2026-07-28`: the stateless
#      protocol, found by the client's era probe), authorization included.
#
# Prints one line per scenario, then `conformance: <set>: N passed, N failed[, N skipped]`
# per set. Exit code 1 when a scenario we run fails.
#
# Scenarios of features harness9 lacks would be skipped and named here (none today);
# `--all` runs skipped scenarios as well.
#
# Installs, idempotently, into .deps/conformance and .deps/conformance-next: each suite and
# Node 22 (the suite needs it; npm package `node`). Pins below; the transitive versions are
# locked in scripts/deps/<dir>/package-lock.json (regenerated when a pin changes: commit it).
set -euo pipefail

CONFORMANCE_VERSION="0.1.16"           # npm @modelcontextprotocol/conformance
CONFORMANCE_NEXT_VERSION="0.2.0-alpha.12" # the release that knows the 2026-07-28 set
NODE22_VERSION="22.23.3"               # npm node (Node.js 22 runtime for the suite)
SCENARIO_TIMEOUT_MS=60000

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

log() { echo "conformance: $*" >&2; }
die() {
    echo "conformance: ERROR: $*" >&2
    exit 1
}

RUN_ALL=0
for arg in "$@"; do
    case "$arg" in
    --all) RUN_ALL=1 ;;
    *) die "unknown option $arg (options: --all)" ;;
    esac
done

# Not implemented yet: skipped unless --all.
unsupported_reason() {
    case "$1" in
    *) echo "" ;;
    esac
}

file_sum() { if [ -f "$1" ]; then sha256sum "$1" | cut -c1-16; else echo none; fi; }

# install_suite NAME VERSION: the suite VERSION and Node 22 into .deps/NAME, locked by
# scripts/deps/NAME/package-lock.json.
install_suite() {
    local name="$1" version="$2"
    local dir="$ROOT/.deps/$name"
    local lock="$ROOT/scripts/deps/$name/package-lock.json"
    local stamp="$dir/.h9-stamp"
    command -v npm >/dev/null || die "npm is not installed"
    local want="conformance=$version node=$NODE22_VERSION lock=$(file_sum "$lock")"
    if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] &&
        [ -x "$dir/node_modules/.bin/conformance" ] && [ -x "$dir/node_modules/.bin/node" ]; then
        return 0
    fi
    log "installing @modelcontextprotocol/conformance@$version and node@$NODE22_VERSION into .deps/$name"
    mkdir -p "$dir"
    rm -f "$stamp"
    cat >"$dir/package.json" <<JSON
{
  "name": "harness9-$name",
  "private": true,
  "description": "The MCP conformance suite and the Node 22 it needs (written by scripts/conformance.sh)",
  "dependencies": {
    "@modelcontextprotocol/conformance": "$version",
    "node": "$NODE22_VERSION"
  }
}
JSON
    local flags=(--prefix "$dir" --no-audit --no-fund --no-update-notifier
        --omit-lockfile-registry-resolved --loglevel=error)
    local locked=""
    if [ -f "$lock" ]; then
        locked="$(node -e '
            const d = ((require(process.argv[1]).packages || {})[""] || {}).dependencies || {};
            process.stdout.write((d["@modelcontextprotocol/conformance"] || "") + " " + (d.node || ""));
        ' "$lock" 2>/dev/null || true)"
    fi
    if [ "$locked" = "$version $NODE22_VERSION" ]; then
        cp "$lock" "$dir/package-lock.json"
        npm ci "${flags[@]}" >&2
    else
        log "scripts/deps/$name/package-lock.json is missing or for other versions: resolving afresh"
        rm -f "$dir/package-lock.json"
        npm install "${flags[@]}" --save-exact >&2
        mkdir -p "$(dirname "$lock")"
        cp "$dir/package-lock.json" "$lock"
        log "wrote scripts/deps/$name/package-lock.json (commit it)"
        want="conformance=$version node=$NODE22_VERSION lock=$(file_sum "$lock")"
    fi
    [ -x "$dir/node_modules/.bin/conformance" ] || die "expected the suite in .deps/$name after npm install"
    local v
    v="$("$dir/node_modules/.bin/node" --version)" || die "node@$NODE22_VERSION does not run"
    case "$v" in v22.*) ;; *) die "expected Node 22 in .deps/$name, got $v" ;; esac
    echo "$want" >"$stamp"
}

install_suite conformance "$CONFORMANCE_VERSION"
install_suite conformance-next "$CONFORMANCE_NEXT_VERSION"
STABLE="$ROOT/.deps/conformance/node_modules/.bin"
NEXT="$ROOT/.deps/conformance-next/node_modules/.bin"

cd "$ROOT"
log "building conformance-client"
cargo build --quiet -p harness9-fixtures --bin conformance-client
CLIENT="${CARGO_TARGET_DIR:-$ROOT/target}/debug/conformance-client"
[ -x "$CLIENT" ] || die "no $CLIENT after cargo build"

# The suite's `#!/usr/bin/env node` must find Node 22: each run puts its suite first.
suite() {
    local bin="$1"
    shift
    PATH="$bin:$PATH" "$bin/conformance" "$@"
}

scenario_names() { sed -n 's/^ *- \([^ ]*\).*/\1/p'; }

OUT="$(mktemp -d)"
trap 'rm -rf "$OUT"' EXIT
passed=0
failed=0
skipped=0
any_failed=0

# run_one BIN SCENARIO [extra flags…]: runs one scenario, prints pass/FAIL.
run_one() {
    local bin="$1" s="$2"
    shift 2
    local slug="${s//\//_}"
    if suite "$bin" client --command "$CLIENT" --scenario "$s" --timeout "$SCENARIO_TIMEOUT_MS" \
        -o "$OUT/results" "$@" >"$OUT/$slug.txt" 2>&1; then
        echo "conformance: pass $s"
        passed=$((passed + 1))
    else
        echo "conformance: FAIL $s"
        sed -e 's/\x1b\[[0-9;]*m//g' "$OUT/$slug.txt" | tail -n 25 | sed 's/^/    /'
        failed=$((failed + 1))
    fi
}

summary() {
    echo "conformance: $1: $passed passed, $failed failed${2:+, $skipped skipped}"
    [ "$failed" -eq 0 ] || any_failed=1
    passed=0
    failed=0
    skipped=0
}

# Set 1: suite 0.1.16, the 2025-11-25 client scenarios and the 2025-03-26 back-compat ones.
mapfile -t SET1 < <({
    suite "$STABLE" list --client --spec-version 2025-11-25
    suite "$STABLE" list --client --spec-version 2025-03-26
} | scenario_names | awk '!seen[$0]++')
[ "${#SET1[@]}" -gt 0 ] || die "suite $CONFORMANCE_VERSION listed no client scenarios"
for s in "${SET1[@]}"; do
    reason="$(unsupported_reason "$s")"
    if [ -n "$reason" ] && [ "$RUN_ALL" -eq 0 ]; then
        echo "conformance: skip $s ($reason)"
        skipped=$((skipped + 1))
        continue
    fi
    run_one "$STABLE" "$s"
done
summary "2025-11-25 set (suite $CONFORMANCE_VERSION)" skipped

# Set 2: suite 0.2.0-alpha.12, the client scenarios the 2026-07-28 requirements score, at
# the 2026-07-28 wire.
mapfile -t SET2 < <(suite "$NEXT" list --client --requirements 2026-07-28 |
    sed -n '/^Client scenarios/,/^$/p' | scenario_names)
[ "${#SET2[@]}" -gt 0 ] || die "suite $CONFORMANCE_NEXT_VERSION listed no client scenarios for 2026-07-28"
for s in "${SET2[@]}"; do
    reason="$(unsupported_reason "$s")"
    if [ -n "$reason" ] && [ "$RUN_ALL" -eq 0 ]; then
        echo "conformance: skip $s ($reason)"
        skipped=$((skipped + 1))
        continue
    fi
    run_one "$NEXT" "$s" --spec-version 2026-07-28
done
summary "2026-07-28 set (suite $CONFORMANCE_NEXT_VERSION, stateless wire)" skipped

[ "$any_failed" -eq 0 ]
