//! Our MCP registry fixture (`mcp-registry-fixture`: the registry's read API on loopback,
//! serving real records of the registry's seed data and the test's own), and stand-ins
//! for `npx` and `uvx` that run the packages the test command installed, so that an
//! install from a registry starts offline.

use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use serde_json::Value;

use super::bins::fixtures_bin;

/// A running `mcp-registry-fixture`, killed on drop.
pub struct Registry {
    child: Child,
    pub url: String,
    _records: Option<tempfile::NamedTempFile>,
}

impl Registry {
    /// Serves the seed records and `records`, in pages of `page_size`, misbehaving as
    /// `mode` says (`None`: not at all).
    pub fn start(records: &[Value], page_size: usize, mode: Option<&str>) -> Registry {
        let file = (!records.is_empty()).then(|| {
            let f = tempfile::NamedTempFile::new().unwrap();
            std::fs::write(f.path(), serde_json::to_string(records).unwrap()).unwrap();
            f
        });
        let mut cmd = Command::new(fixtures_bin("mcp-registry-fixture"));
        cmd.args(["--page-size", &page_size.to_string()]);
        if let Some(f) = &file {
            cmd.arg("--records").arg(f.path());
        }
        if let Some(m) = mode {
            cmd.args(["--mode", m]);
        }
        let mut child = cmd
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn mcp-registry-fixture");
        let mut line = String::new();
        std::io::BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .expect("the fixture prints its URL");
        Registry {
            child,
            url: line.trim().to_string(),
            _records: file,
        }
    }

    /// How many API requests it answered so far.
    pub fn requests(&self) -> u64 {
        use std::io::{Read, Write};
        let addr = self.url.trim_start_matches("http://");
        let mut s = std::net::TcpStream::connect(addr).unwrap();
        write!(
            s,
            "GET /stats HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
        )
        .unwrap();
        let mut text = String::new();
        s.read_to_string(&mut text).unwrap();
        let body = text.split("\r\n\r\n").nth(1).unwrap_or("");
        serde_json::from_str::<Value>(body).unwrap()["requests"]
            .as_u64()
            .unwrap()
    }

    pub fn stop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Registry {
    fn drop(&mut self) {
        self.stop();
    }
}

/// A folder of stand-ins for `npx` and `uvx` that run the real packages the test command
/// installed: `npx -y @modelcontextprotocol/server-everything@VERSION ARGS` runs that
/// package's own bin (the installed VERSION only), and
/// `uvx --from mcp==VERSION python ARGS` runs the test venv's Python, where the MCP
/// Python SDK of that VERSION is installed. Anything else fails, as offline package
/// runners do.
pub struct Runners {
    pub dir: tempfile::TempDir,
}

/// The version of an npm package in its `package.json`.
pub fn npm_version(package_json: &Path) -> String {
    let v: Value = serde_json::from_str(&std::fs::read_to_string(package_json).unwrap()).unwrap();
    v["version"].as_str().unwrap().to_string()
}

/// The installed version of the Python SDK (`mcp`) in the venv of `python`.
pub fn mcp_sdk_version(python: &Path) -> String {
    let out = Command::new(python)
        .args([
            "-c",
            "import importlib.metadata as m; print(m.version('mcp'))",
        ])
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

fn script(path: &Path, text: &str) {
    std::fs::write(path, text).unwrap();
    std::fs::set_permissions(path, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
}

impl Runners {
    /// `everything`: server-everything's bin; `python`: the venv's python.
    pub fn new(everything: Option<&Path>, python: Option<&Path>) -> Runners {
        let dir = tempfile::tempdir().unwrap();
        if let Some(bin) = everything {
            let pkg = everything_package_json(bin);
            let want = format!(
                "@modelcontextprotocol/server-everything@{}",
                npm_version(&pkg)
            );
            script(
                &dir.path().join("npx"),
                &format!(
                    "#!/bin/sh\n[ \"$1\" = -y ] && shift\nif [ \"$1\" = '{want}' ]; then shift; exec '{}' \"$@\"; fi\necho \"npx (offline): $1 is not installed\" >&2\nexit 1\n",
                    bin.display()
                ),
            );
        }
        if let Some(py) = python {
            let want = format!("mcp=={}", mcp_sdk_version(py));
            script(
                &dir.path().join("uvx"),
                &format!(
                    "#!/bin/sh\nif [ \"$1\" = --from ] && [ \"$2\" = '{want}' ] && [ \"$3\" = python ]; then shift 3; exec '{}' \"$@\"; fi\necho \"uvx (offline): $* is not installed\" >&2\nexit 1\n",
                    py.display()
                ),
            );
        }
        Runners { dir }
    }

    /// `PATH` with the stand-ins first.
    pub fn path(&self) -> String {
        format!(
            "{}:{}",
            self.dir.path().display(),
            std::env::var("PATH").unwrap_or_default()
        )
    }
}

/// server-everything's `package.json`, from its bin in `node_modules/.bin`.
pub fn everything_package_json(bin: &Path) -> PathBuf {
    let modules = bin.parent().and_then(Path::parent).unwrap();
    modules.join("@modelcontextprotocol/server-everything/package.json")
}
