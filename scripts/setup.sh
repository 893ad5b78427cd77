#!/usr/bin/env bash
# Installs what the test suite needs into ignored folders under .deps/:
#   .deps/node  - real MCP servers from npm (@modelcontextprotocol/server-everything, and the
#                 MCP Apps examples server-basic-vanillajs and server-system-monitor), and the
#                 bundle packer @anthropic-ai/mcpb
#   .deps/py    - a Python venv with the official MCP Python SDK (mcp)
#   .deps/tauri-driver - tauri-driver, the WebDriver bridge for the desktop app's E2E test
#   node_modules (root) - the desktop UI's npm packages (npm ci from package-lock.json)
# and, as root, the Debian packages the desktop app builds and is tested with (WebKitGTK,
# Xvfb, WebKitWebDriver, Chromium).
#
# Idempotent and fast when already done: each part writes a stamp file keyed on
# the requested versions (and the lock files), and is skipped while the stamp
# matches and the installed entry points are present.
#
# Versions: bump the pins below. The transitive dependencies are locked in
# scripts/deps/ (npm package-lock.json without registry URLs, pip constraints);
# when a pin no longer matches its lock file, the lock is regenerated there, so
# commit the updated scripts/deps/ together with the new pin.
#
# Env: PYTHON (default python3) picks the interpreter for the venv.
set -euo pipefail

# ---- pinned versions --------------------------------------------------------
EVERYTHING_VERSION="2026.8.31" # npm  @modelcontextprotocol/server-everything
APPS_EXAMPLES_VERSION="2.0.3"  # npm  @modelcontextprotocol/server-basic-vanillajs, server-system-monitor
MCPB_VERSION="2.1.2"           # npm  @anthropic-ai/mcpb (the bundle packer; tests pack their bundles with it)
MCP_PY_VERSION="2.3.0"         # PyPI mcp (official Python SDK; FastMCP is mcp.server.mcpserver.MCPServer)
TAURI_DRIVER_VERSION="2.1.0"   # cargo install tauri-driver (3.x alphas exist: keep the pin)

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DEPS="$ROOT/.deps"
LOCKS="$ROOT/scripts/deps"
NODE_DIR="$DEPS/node"
PY_DIR="$DEPS/py"
EVERYTHING_BIN="$NODE_DIR/node_modules/.bin/mcp-server-everything"
APPS_BASIC_BIN="$NODE_DIR/node_modules/.bin/mcp-server-basic-vanillajs"
APPS_MONITOR_BIN="$NODE_DIR/node_modules/.bin/mcp-system-monitor-server"
MCPB_BIN="$NODE_DIR/node_modules/.bin/mcpb"
PY_SERVER="$ROOT/tests/servers/py_server.py"
NODE_LOCK="$LOCKS/package-lock.json"
PY_LOCK="$LOCKS/py-constraints.txt"
PYTHON="${PYTHON:-python3}"

log() { echo "setup: $*" >&2; }
die() {
    echo "setup: ERROR: $*" >&2
    exit 1
}

# ---- system packages --------------------------------------------------------
APT_UPDATED=0
# need_apt PKG...: make sure these Debian packages are installed. As root the
# missing ones are installed (apt-get update runs at most once per run);
# otherwise say what to install and fail.
need_apt() {
    local missing=() pkg
    for pkg in "$@"; do
        if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
            missing+=("$pkg")
        fi
    done
    [ "${#missing[@]}" -eq 0 ] && return 0
    if [ "$(id -u)" -ne 0 ]; then
        die "missing system packages: ${missing[*]} -- install them with: sudo apt-get install -y ${missing[*]}"
    fi
    command -v apt-get >/dev/null || die "missing system packages (${missing[*]}) and no apt-get on this machine"
    if [ "$APT_UPDATED" -eq 0 ]; then
        log "apt-get update"
        DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2
        APT_UPDATED=1
    fi
    log "apt-get install ${missing[*]}"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
}

# ---- helpers ----------------------------------------------------------------
# stamp_ok FILE CONTENT: FILE exists and holds exactly CONTENT.
stamp_ok() { [ -f "$1" ] && [ "$(cat "$1")" = "$2" ]; }

file_sum() { if [ -f "$1" ]; then sha256sum "$1" | cut -c1-16; else echo none; fi; }

# probe_stdio CMD...: start CMD, send an MCP initialize request on its stdin and
# wait (60 s at most) for the JSON-RPC answer with id 1 on its stdout.
# A fresh venv compiles the SDK on its first import, which takes long on a busy machine.
probe_stdio() {
    local init='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"harness9-setup","version":"0"}}}'
    local line ok=1 n
    coproc PROBE { exec timeout 90 "$@" 2>/dev/null; }
    local pid=$PROBE_PID
    echo "$init" >&"${PROBE[1]}"
    for n in 1 2 3 4 5; do
        IFS= read -r -t 60 line <&"${PROBE[0]}" || break
        case "$line" in
        *'"id":1'*'"result"'* | *'"result"'*'"id":1'*)
            ok=0
            break
            ;;
        esac
    done
    kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
    if [ "$ok" -ne 0 ]; then
        log "no initialize answer from: $* (last line: ${line:0:300})"
    fi
    return "$ok"
}

# ---- node -------------------------------------------------------------------
setup_node() {
    command -v node >/dev/null || die "node is not installed (need Node >= 18 with npm)"
    local stamp="$NODE_DIR/.h9-stamp"
    local want
    want="server-everything=$EVERYTHING_VERSION apps-examples=$APPS_EXAMPLES_VERSION mcpb=$MCPB_VERSION node=$(node --version) lock=$(file_sum "$NODE_LOCK")"
    if stamp_ok "$stamp" "$want" && [ -x "$EVERYTHING_BIN" ] && [ -x "$APPS_BASIC_BIN" ] && [ -x "$APPS_MONITOR_BIN" ] && [ -x "$MCPB_BIN" ]; then
        log "node deps up to date (server-everything $EVERYTHING_VERSION, MCP Apps examples $APPS_EXAMPLES_VERSION)"
        return 0
    fi
    command -v npm >/dev/null || die "npm is not installed"
    log "installing @modelcontextprotocol/server-everything@$EVERYTHING_VERSION and the MCP Apps examples @$APPS_EXAMPLES_VERSION into .deps/node"
    mkdir -p "$NODE_DIR"
    rm -f "$stamp"
    cat >"$NODE_DIR/package.json" <<EOF
{
  "name": "harness9-test-deps",
  "private": true,
  "description": "MCP servers used by the harness9 tests (written by scripts/setup.sh)",
  "dependencies": {
    "@anthropic-ai/mcpb": "$MCPB_VERSION",
    "@modelcontextprotocol/server-basic-vanillajs": "$APPS_EXAMPLES_VERSION",
    "@modelcontextprotocol/server-everything": "$EVERYTHING_VERSION",
    "@modelcontextprotocol/server-system-monitor": "$APPS_EXAMPLES_VERSION"
  }
}
EOF
    local npm_flags=(--prefix "$NODE_DIR" --no-audit --no-fund --no-update-notifier
        --omit-lockfile-registry-resolved --loglevel=error)
    # The lock fits when it locks exactly the dependencies of the package.json above.
    local deps_of='
        const f = require(process.argv[1]);
        const d = (f.packages ? (f.packages[""] || {}).dependencies : f.dependencies) || {};
        process.stdout.write(JSON.stringify(Object.keys(d).sort().map(k => [k, d[k]])));'
    local locked="" wanted
    wanted="$(node -e "$deps_of" "$NODE_DIR/package.json")"
    if [ -f "$NODE_LOCK" ]; then
        locked="$(node -e "$deps_of" "$NODE_LOCK" 2>/dev/null || true)"
    fi
    if [ "$locked" = "$wanted" ]; then
        cp "$NODE_LOCK" "$NODE_DIR/package-lock.json"
        npm ci "${npm_flags[@]}" >&2
    else
        log "scripts/deps/package-lock.json is missing or for another version: resolving afresh"
        rm -f "$NODE_DIR/package-lock.json"
        npm install "${npm_flags[@]}" --save-exact >&2
        mkdir -p "$LOCKS"
        cp "$NODE_DIR/package-lock.json" "$NODE_LOCK"
        log "wrote scripts/deps/package-lock.json (commit it)"
        want="server-everything=$EVERYTHING_VERSION apps-examples=$APPS_EXAMPLES_VERSION mcpb=$MCPB_VERSION node=$(node --version) lock=$(file_sum "$NODE_LOCK")"
    fi
    local bin
    for bin in "$EVERYTHING_BIN" "$APPS_BASIC_BIN" "$APPS_MONITOR_BIN" "$MCPB_BIN"; do
        [ -x "$bin" ] || die "expected $bin after npm install"
    done
    log "checking that server-everything answers initialize on stdio"
    probe_stdio "$EVERYTHING_BIN" stdio || die "server-everything did not answer on stdio"
    log "checking that the MCP Apps examples answer initialize on stdio"
    probe_stdio "$APPS_BASIC_BIN" --stdio || die "server-basic-vanillajs did not answer on stdio"
    probe_stdio "$APPS_MONITOR_BIN" --stdio || die "server-system-monitor did not answer on stdio"
    echo "$want" >"$stamp"
}

# ---- python -----------------------------------------------------------------
setup_python() {
    local pyver
    pyver="$("$PYTHON" -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null)" ||
        die "'$PYTHON' is not a working Python 3 (set PYTHON=/path/to/python3)"
    local stamp="$PY_DIR/.h9-stamp"
    local want="mcp=$MCP_PY_VERSION python=$pyver lock=$(file_sum "$PY_LOCK")"
    if stamp_ok "$stamp" "$want" && [ -x "$PY_DIR/bin/python" ]; then
        log "python venv up to date (mcp $MCP_PY_VERSION, python $pyver)"
        return 0
    fi
    # `python3 -m venv` needs ensurepip, which Debian ships in python3-venv.
    if ! "$PYTHON" -c 'import venv, ensurepip' >/dev/null 2>&1; then
        need_apt python3-venv
    fi
    log "creating venv .deps/py (python $pyver) with mcp==$MCP_PY_VERSION"
    mkdir -p "$DEPS"
    rm -rf "$PY_DIR"
    if ! "$PYTHON" -m venv "$PY_DIR" >&2; then
        rm -rf "$PY_DIR"
        need_apt python3-venv "python${pyver}-venv"
        "$PYTHON" -m venv "$PY_DIR" >&2 || die "'$PYTHON -m venv' failed"
    fi
    local pip=("$PY_DIR/bin/python" -m pip --disable-pip-version-check --no-input)
    if [ -f "$PY_LOCK" ] && grep -qx "mcp==$MCP_PY_VERSION" "$PY_LOCK"; then
        "${pip[@]}" install --quiet "mcp==$MCP_PY_VERSION" -c "$PY_LOCK" >&2
    else
        log "scripts/deps/py-constraints.txt is missing or for another mcp: resolving afresh"
        "${pip[@]}" install --quiet "mcp==$MCP_PY_VERSION" >&2
        mkdir -p "$LOCKS"
        {
            echo "# pip constraints for .deps/py, written by scripts/setup.sh (pip freeze)"
            "${pip[@]}" freeze --exclude-editable
        } >"$PY_LOCK"
        log "wrote scripts/deps/py-constraints.txt (commit it)"
        want="mcp=$MCP_PY_VERSION python=$pyver lock=$(file_sum "$PY_LOCK")"
    fi
    "$PY_DIR/bin/python" -c 'from mcp.server.mcpserver import MCPServer' ||
        die "mcp $MCP_PY_VERSION is installed but has no mcp.server.mcpserver.MCPServer"
    if [ -f "$PY_SERVER" ]; then
        log "checking that tests/servers/py_server.py answers initialize on stdio"
        probe_stdio "$PY_DIR/bin/python" "$PY_SERVER" stdio || die "tests/servers/py_server.py did not answer on stdio"
    fi
    echo "$want" >"$stamp"
}

# ---- desktop app ------------------------------------------------------------
# Build: WebKitGTK and GTK headers. Tests: Xvfb (+ xauth for xvfb-run), WebKitWebDriver,
# Chromium for the mocked-UI layer, ImageMagick/x11-apps for screenshots of the window.
DESKTOP_APT=(libwebkit2gtk-4.1-dev libgtk-3-dev libsoup-3.0-dev librsvg2-dev
    libayatana-appindicator3-dev build-essential pkg-config libssl-dev file
    xvfb xauth webkit2gtk-driver dbus-x11 fonts-dejavu-core imagemagick x11-apps chromium
    libx11-6 libxtst6)

setup_desktop() {
    need_apt "${DESKTOP_APT[@]}"

    local dir="$DEPS/tauri-driver" stamp want
    stamp="$dir/.h9-stamp"
    want="tauri-driver=$TAURI_DRIVER_VERSION"
    if stamp_ok "$stamp" "$want" && [ -x "$dir/bin/tauri-driver" ]; then
        log "tauri-driver $TAURI_DRIVER_VERSION up to date"
    else
        command -v cargo >/dev/null || die "cargo is not installed (need Rust to build tauri-driver)"
        log "installing tauri-driver $TAURI_DRIVER_VERSION into .deps/tauri-driver"
        rm -f "$stamp"
        cargo install tauri-driver --locked --version "$TAURI_DRIVER_VERSION" --root "$dir" --quiet >&2
        echo "$want" >"$stamp"
    fi

    command -v npm >/dev/null || die "npm is not installed"
    stamp="$ROOT/node_modules/.h9-stamp"
    want="node=$(node --version) lock=$(file_sum "$ROOT/package-lock.json")"
    if stamp_ok "$stamp" "$want" && [ -x "$ROOT/node_modules/.bin/vite" ]; then
        log "UI npm packages up to date"
    else
        log "npm ci (the desktop UI's packages)"
        (cd "$ROOT" && npm ci --no-audit --no-fund --loglevel=error >&2)
        echo "$want" >"$stamp"
    fi
}

# ---- main -------------------------------------------------------------------
mkdir -p "$DEPS"
# tmux drives the terminal UI in its end-to-end test; `script` (bsdutils) gives the CLI a terminal.
need_apt tmux bsdutils
# A private D-Bus session with GNOME Keyring's Secret Service: the keychain token store's test.
need_apt dbus-daemon dbus-bin gnome-keyring
setup_node
setup_python
setup_desktop
log "ready: server-everything $EVERYTHING_VERSION, MCP Apps examples $APPS_EXAMPLES_VERSION, mcp $MCP_PY_VERSION, tauri-driver $TAURI_DRIVER_VERSION"
