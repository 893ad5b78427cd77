//! The binaries under test and the real MCP servers the test command installs.

use std::path::{Path, PathBuf};
use std::sync::LazyLock;

/// The stdio fixture server (`mcp-fixture`).
pub fn fixture_bin() -> &'static str {
    static BIN: LazyLock<String> = LazyLock::new(|| fixtures_bin("mcp-fixture"));
    &BIN
}

/// A binary of the `harness9-fixtures` package. Cargo names only this package's binaries
/// in `CARGO_BIN_EXE_*`, but builds that package's into the same directory (a plain
/// `cargo test` builds them for the fixtures' own tests): it is found beside this test's
/// executable, `target/<profile>/deps/all-…` → `target/<profile>/NAME`.
pub fn fixtures_bin(name: &str) -> String {
    let exe = std::env::current_exe().expect("the test executable's path");
    let dir = exe
        .parent()
        .and_then(Path::parent)
        .expect("the test executable is in target/<profile>/deps");
    let bin = dir.join(format!("{name}{}", std::env::consts::EXE_SUFFIX));
    assert!(
        bin.is_file(),
        "{} is missing: build the test fixtures with `cargo build -p harness9-fixtures` (`cargo test --workspace --exclude harness9-desktop`, as `make test` runs it, builds them)",
        bin.display()
    );
    bin.to_string_lossy().into_owned()
}

pub fn harness9_bin() -> &'static str {
    env!("CARGO_BIN_EXE_harness9")
}

/// The MCP Apps fixture server (`mcp-apps-fixture`).
pub fn apps_fixture_bin() -> &'static str {
    static BIN: LazyLock<String> = LazyLock::new(|| fixtures_bin("mcp-apps-fixture"));
    &BIN
}

/// `@modelcontextprotocol/server-basic-vanillajs`'s bin (MCP Apps; serves stdio with
/// `--stdio`).
pub fn apps_basic_bin() -> Option<PathBuf> {
    external("H9_APPS_BASIC_BIN")
}

/// `@modelcontextprotocol/server-system-monitor`'s bin (MCP Apps; serves stdio with
/// `--stdio`).
pub fn apps_monitor_bin() -> Option<PathBuf> {
    external("H9_APPS_MONITOR_BIN")
}

/// The tasks fixture server (`mcp-tasks-fixture`: the 2026-07-28 tasks extension).
pub fn tasks_fixture_bin() -> &'static str {
    static BIN: LazyLock<String> = LazyLock::new(|| fixtures_bin("mcp-tasks-fixture"));
    &BIN
}

/// The HTTP fixture server (`mcp-http-fixture`).
pub fn http_fixture_bin() -> &'static str {
    static BIN: LazyLock<String> = LazyLock::new(|| fixtures_bin("mcp-http-fixture"));
    &BIN
}

/// A path from a variable the test command sets. Under CI a missing one fails the test;
/// elsewhere the test is skipped with a note.
pub fn external(var: &str) -> Option<PathBuf> {
    match std::env::var_os(var) {
        Some(p) if Path::new(&p).exists() => Some(PathBuf::from(p)),
        _ if std::env::var_os("CI").is_some() => {
            panic!("{var} is not set or missing; run the tests through the README's test command")
        }
        _ => {
            eprintln!("skipped: {var} is not set (run `make test` to install real servers)");
            None
        }
    }
}

/// `@modelcontextprotocol/server-everything`'s bin (it serves stdio with the `stdio` argument).
pub fn everything_bin() -> Option<PathBuf> {
    external("H9_EVERYTHING_BIN")
}

/// The venv's python and `tests/servers/py_server.py` (the Python SDK's server).
pub fn python_server() -> Option<(PathBuf, PathBuf)> {
    Some((external("H9_PYTHON")?, external("H9_PY_SERVER")?))
}

/// The folder of the test servers written in Python and JavaScript.
pub fn servers_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/servers")
}
