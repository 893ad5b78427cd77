#!/usr/bin/env bash
# Installs what the test suite needs into ignored folders under .deps/:
#   .deps/node  - real MCP servers from npm (server-everything)
#   .deps/py    - a Python venv with the official MCP Python SDK
# Idempotent: each part writes a stamp file keyed on the requested versions,
# and is skipped when the stamp matches and the installed files are present.
set -euo pipefail

# ---- pinned versions (bump here; the stamps make the next run reinstall) ----
EVERYTHING_VERSION="2026.8.31" # npm @modelcontextprotocol/server-everything
MCP_PY_VERSION="2.3.0"         # PyPI mcp (official Python SDK)

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DEPS="$ROOT/.deps"
NODE_DIR="$DEPS/node"
PY_DIR="$DEPS/py"
EVERYTHING_BIN="$NODE_DIR/node_modules/.bin/mcp-server-everything"
PYTHON="${PYTHON:-python3}"

log() { echo "setup: $*" >&2; }
die() {
    echo "setup: ERROR: $*" >&2
    exit 1
}

# ---------------------------------------------------------------- apt ----
APT_UPDATED=0
# need_apt PKG...: make sure the Debian packages are installed. As root the
# missing ones are installed (apt-get update runs at most once per run);
# otherwise the script says what to install and fails.
need_apt() {
    local missing=() pkg
    for pkg in "$@"; do
        if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
            missing+=("$pkg")
        fi
    done
    [ "${#missing[@]}" -eq 0 ] && return 0
    if [ "$(id -u)" -ne 0 ]; then
        die "missing system packages: ${missing[*]} (run: sudo apt-get install -y ${missing[*]})"
    fi
    command -v apt-get >/dev/null || die "missing system packages ${missing[*]} and no apt-get here"
    if [ "$APT_UPDATED" -eq 0 ]; then
        log "apt-get update"
        DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2
        APT_UPDATED=1
    fi
    log "apt-get install ${missing[*]}"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
}

# stamp_ok FILE CONTENT: true when FILE exists and holds exactly CONTENT.
stamp_ok() { [ -f "$1" ] && [ "$(cat "$1")" = "$2" ]; }

# probe_stdio CMD...: send an MCP initialize request on stdin, expect a JSON-RPC
# answer with id 1 on stdout within a few seconds.
probe_stdio() {
    local init='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"harness9-setup","version":"0"}}}'
    local out
    # keep stdin open a moment so the server has time to answer before EOF.
    out="$( { echo "$init"; sleep 3; } | timeout 20 "$@" 2>/dev/null | head -n 1 || true)"
    case "$out" in
    *'"id":1'*'"result"'* | *'"result"'*'"id":1'*) return 0 ;;
    *)
        echo "setup: no initialize answer from: $* (got: ${out:0:300})" >&2
        return 1
        ;;
    esac
}

# --------------------------------------------------------------- node ----
setup_node() {
    local stamp="$NODE_DIR/.h9-stamp"
    local want="server-everything=$EVERYTHING_VERSION node=$(node --version 2>/dev/null || echo none)"
    if stamp_ok "$stamp" "$want" && [ -x "$EVERYTHING_BIN" ]; then
        log "node deps up to date ($want)"
        return 0
    fi
    command -v node >/dev/null || die "node is not installed (need Node >= 18)"
    command -v npm >/dev/null || die "npm is not installed"
    log "installing @modelcontextprotocol/server-everything@$EVERYTHING_VERSION into .deps/node"
    mkdir -p "$NODE_DIR"
    rm -f "$stamp"
    # A fixed manifest so npm installs exactly these versions.
    cat >"$NODE_DIR/package.json" <<EOF
{
  "name": "harness9-test-deps",
  "private": true,
  "description": "MCP servers used by the harness9 tests (installed by scripts/setup.sh)",
  "dependencies": {
    "@modelcontextprotocol/server-everything": "$EVERYTHING_VERSION"
  }
}
EOF
    npm install --prefix "$NODE_DIR" --no-audit --no-fund --no-update-notifier \
        --save-exact --omit-lockfile-registry-resolved --loglevel=error >&2
    [ -x "$EVERYTHING_BIN" ] || die "expected $EVERYTHING_BIN after npm install"
    log "checking that server-everything answers initialize on stdio"
    probe_stdio "$EVERYTHING_BIN" stdio || die "server-everything did not start on stdio"
    echo "$want" >"$stamp"
}

# ------------------------------------------------------------- python ----
setup_python() {
    local stamp="$PY_DIR/.h9-stamp"
    local pyver
    pyver="$("$PYTHON" -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null)" ||
        die "$PYTHON is not a working Python 3"
    local want="mcp=$MCP_PY_VERSION python=$pyver"
    if stamp_ok "$stamp" "$want" && [ -x "$PY_DIR/bin/python" ]; then
        log "python venv up to date ($want)"
        return 0
    fi
    # python3 -m venv needs ensurepip, which Debian ships in python3-venv.
    if ! "$PYTHON" -c 'import venv, ensurepip' >/dev/null 2>&1; then
        need_apt python3-venv
    fi
    log "creating venv .deps/py (python $pyver) with mcp==$MCP_PY_VERSION"
    rm -rf "$PY_DIR"
    mkdir -p "$DEPS"
    if ! "$PYTHON" -m venv "$PY_DIR" >&2; then
        # The module may import but still fail (e.g. a versioned -venv package).
        rm -rf "$PY_DIR"
        need_apt python3-venv "python${pyver}-venv"
        "$PYTHON" -m venv "$PY_DIR" >&2 || die "python3 -m venv failed"
    fi
    "$PY_DIR/bin/python" -m pip install --quiet --disable-pip-version-check \
        "mcp==$MCP_PY_VERSION" >&2
    "$PY_DIR/bin/python" -c 'import mcp.server.mcpserver' ||
        die "mcp $MCP_PY_VERSION installed but mcp.server.mcpserver is missing"
    log "checking that tests/servers/py_server.py answers initialize on stdio"
    probe_stdio "$PY_DIR/bin/python" "$ROOT/tests/servers/py_server.py" stdio ||
        die "tests/servers/py_server.py did not start on stdio"
    echo "$want" >"$stamp"
}

# --------------------------------------------------------------- main ----
mkdir -p "$DEPS"
setup_node
setup_python
log "done (server-everything $EVERYTHING_VERSION, mcp $MCP_PY_VERSION)"
