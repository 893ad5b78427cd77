//! The binaries under test and the real MCP servers the test command installs.

use std::path::{Path, PathBuf};

pub fn fixture_bin() -> &'static str {
    env!("CARGO_BIN_EXE_mcp-fixture")
}

pub fn harness9_bin() -> &'static str {
    env!("CARGO_BIN_EXE_harness9")
}

pub fn http_fixture_bin() -> &'static str {
    env!("CARGO_BIN_EXE_mcp-http-fixture")
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
