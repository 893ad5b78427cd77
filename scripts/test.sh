#!/usr/bin/env bash
# The whole check: install the test dependencies, then fmt, clippy and tests.
# The integration tests find the real MCP servers through these variables
# (absolute paths); with CI set they fail, rather than skip, when one is missing:
#   H9_EVERYTHING_BIN  @modelcontextprotocol/server-everything's bin (start: "$H9_EVERYTHING_BIN" stdio)
#   H9_PYTHON          the venv's python with the mcp SDK
#   H9_PY_SERVER       tests/servers/py_server.py (start: "$H9_PYTHON" "$H9_PY_SERVER" stdio)
#   H9_APPS_BASIC_BIN  @modelcontextprotocol/server-basic-vanillajs's bin (MCP Apps; start with --stdio)
#   H9_APPS_MONITOR_BIN @modelcontextprotocol/server-system-monitor's bin (MCP Apps; start with --stdio)
#   H9_MCPB_BIN        @anthropic-ai/mcpb's bin (the bundle packer: `mcpb pack DIR OUT.mcpb`)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

bash scripts/setup.sh

export H9_EVERYTHING_BIN="$ROOT/.deps/node/node_modules/.bin/mcp-server-everything"
export H9_PYTHON="$ROOT/.deps/py/bin/python"
export H9_PY_SERVER="$ROOT/tests/servers/py_server.py"
export H9_APPS_BASIC_BIN="$ROOT/.deps/node/node_modules/.bin/mcp-server-basic-vanillajs"
export H9_APPS_MONITOR_BIN="$ROOT/.deps/node/node_modules/.bin/mcp-system-monitor-server"
export H9_MCPB_BIN="$ROOT/.deps/node/node_modules/.bin/mcpb"

echo "test: cargo fmt --all --check" >&2
cargo fmt --all --check
echo "test: no import circle between sibling modules (scripts/check-circles.py)" >&2
python3 scripts/check-circles.py --self-test
python3 scripts/check-circles.py
# Every crate but the desktop one (checked below, once the UI is built): the core, the
# client library, the test fixtures and the fuzz target bodies.
echo "test: cargo clippy --workspace --exclude harness9-desktop --all-targets -- -D warnings" >&2
cargo clippy --workspace --exclude harness9-desktop --all-targets -- -D warnings
echo "test: cargo test --workspace --exclude harness9-desktop" >&2
cargo test --workspace --exclude harness9-desktop
echo "test: MCP conformance suite (client scenarios, 2025-11-25 and 2026-07-28)" >&2
bash scripts/conformance.sh

# ---- the desktop app (src-tauri + ui/) --------------------------------------------
# Its crate needs the built UI (ui/dist) and is outside the default members, so it is
# checked and built here explicitly; the harness9 binary beside it runs the demo server.
echo "test: UI type check (svelte-check)" >&2
npm run --silent check
echo "test: UI component tests (vitest)" >&2
npx vitest run
echo "test: build the UI" >&2
npm run --silent build
echo "test: desktop crate: fmt, clippy, unit tests, build" >&2
cargo fmt -p harness9-desktop --check
cargo clippy -p harness9-desktop --all-targets -- -D warnings
cargo test -p harness9-desktop
cargo build -p harness9-desktop
cargo build --bin harness9
echo "test: the Debian package, from the debug binaries just built, in a scratch root" >&2
bash scripts/deb-test.sh target/debug
echo "test: the built UI in headless Chromium, IPC mocked" >&2
node --test ui/e2e/chromium.test.mjs
echo "test: the real app under Xvfb via tauri-driver + WebKitWebDriver (and MCP Apps views)" >&2
xvfb-run -a -s "-screen 0 1280x800x24" node --test --test-concurrency=1 ui/e2e/webdriver.test.mjs ui/e2e/apps.webdriver.test.mjs ui/e2e/quit.webdriver.test.mjs ui/e2e/download.webdriver.test.mjs
