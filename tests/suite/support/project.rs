//! A scratch project: a folder with a `.mcp.json` and a private data folder, and the ways
//! the tests open it (the façade, a manager, the CLI).

use std::path::Path;
use std::process::Output;
use std::sync::Arc;
use std::time::Duration;

use harness9::config::McpConfig;
use harness9::manager::{ApprovalPolicy, Manager};
use harness9::tools::ToolRegistry;
use harness9::trust::ApprovalStore;
use serde_json::{json, Value};

use super::bins::{everything_bin, fixture_bin, harness9_bin, python_server};

/// A temporary project with this `.mcp.json`, and a private approval store.
pub struct Project {
    pub dir: tempfile::TempDir,
    pub data: tempfile::TempDir,
}

/// A manager with the tool registry it publishes to.
pub struct TestManager {
    harness: harness9::Harness,
}

impl std::ops::Deref for TestManager {
    type Target = Manager;
    fn deref(&self) -> &Manager {
        self.harness.manager()
    }
}

impl TestManager {
    pub fn registry(&self) -> &Arc<ToolRegistry> {
        self.harness.registry()
    }

    /// Accepts held tools (see [`harness9::Harness::accept_tools`]).
    pub async fn accept_tools(
        &self,
        server: &str,
        tools: &[String],
    ) -> Result<Vec<harness9::trust::pins::HeldTool>, harness9::host::pins::AcceptError> {
        self.harness.accept_tools(server, tools).await
    }
}

impl Project {
    pub fn new(mcp_json: &Value) -> Project {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join(".mcp.json"),
            serde_json::to_string_pretty(mcp_json).unwrap(),
        )
        .unwrap();
        Project {
            dir,
            data: tempfile::tempdir().unwrap(),
        }
    }

    /// A project whose `.mcp.json` runs the fixture as server `fx` with these extra fields.
    pub fn fixture(extra: Value) -> Project {
        let mut server = json!({"command": fixture_bin()});
        if let Value::Object(m) = extra {
            for (k, v) in m {
                server[k] = v;
            }
        }
        Project::new(&json!({"mcpServers": {"fx": server}}))
    }

    /// A project with server-everything over stdio as server `ev` (`None`: not installed).
    pub fn everything() -> Option<Project> {
        let bin = everything_bin()?;
        Some(Project::new(&json!({"mcpServers": {
            "ev": {"command": bin, "args": ["stdio"]}
        }})))
    }

    /// A project with the Python SDK's server over stdio as server `py`, in the legacy era
    /// (`None`: not installed).
    pub fn python_legacy() -> Option<Project> {
        let (python, server) = python_server()?;
        Some(Project::new(&json!({"mcpServers": {
            // ask_client makes legacy server→client requests, which the Python SDK sends
            // only in the legacy era.
            "py": {"command": python, "args": [server], "protocolEra": "legacy"}
        }})))
    }

    /// The façade on this project: every server allowed, no login-shell PATH, the
    /// project's own approval store.
    pub fn harness(&self) -> harness9::Harness {
        harness9::Harness::open(self.path(), self.harness_options())
    }

    /// The options of [`Project::harness`], for a test that changes some.
    pub fn harness_options(&self) -> harness9::HarnessOptions {
        harness9::HarnessOptions {
            policy: ApprovalPolicy::AllowAll,
            login_shell_path: false,
            approvals: self.approvals(),
            scope_files: Some(self.scope_files()),
            ..harness9::HarnessOptions::default()
        }
    }

    /// [`Project::harness`] with its servers started and settled (up to 30 s).
    pub async fn started(&self) -> harness9::Harness {
        let h = self.harness();
        h.start(None).await;
        h.manager().wait_settled(Duration::from_secs(30)).await;
        h
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    pub fn approvals(&self) -> ApprovalStore {
        ApprovalStore::at(self.data.path().join("approvals.json"))
    }

    /// The three scope files of this project, the user's and local ones in its data dir.
    pub fn scope_files(&self) -> harness9::config::ScopeFiles {
        harness9::config::ScopeFiles::within(
            self.path(),
            &self.data.path().join("config"),
            self.data.path(),
        )
    }

    pub fn config(&self) -> McpConfig {
        McpConfig::load_project(self.path())
    }

    /// The manager of this project and the services beside it, nothing started yet;
    /// sign-in tokens are kept in memory.
    pub fn manager(&self, policy: ApprovalPolicy) -> TestManager {
        let harness = harness9::Harness::open(
            self.path(),
            harness9::HarnessOptions {
                policy,
                login_shell_path: false,
                approvals: self.approvals(),
                auth: Some(harness9::mcp::auth::AuthContext::memory()),
                scope_files: Some(self.scope_files()),
                ..harness9::HarnessOptions::default()
            },
        );
        TestManager { harness }
    }

    /// The CLI on this project with its own data dir, stdin closed, not started yet.
    pub fn command(&self, args: &[&str]) -> std::process::Command {
        let mut c = std::process::Command::new(harness9_bin());
        c.args(args)
            .arg("--project")
            .arg(self.path())
            .env("HARNESS9_DATA_DIR", self.data.path())
            // The user scope's mcp.json of whoever runs the tests stays out of them.
            .env("HARNESS9_CONFIG_DIR", self.data.path().join("config"))
            .env("HARNESS9_CREDENTIALS", "file")
            .stdin(std::process::Stdio::null());
        c
    }

    /// Runs the CLI on this project with its own data dir.
    pub fn cli(&self, args: &[&str]) -> Output {
        self.command(args).output().unwrap()
    }
}

/// What a process wrote on stdout, as text.
pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// What a process wrote on stderr, as text.
pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// `(name, status)` of every row of `mcp list --json`'s output.
pub fn list_statuses(json_text: &str) -> Vec<(String, String)> {
    let rows: Value = serde_json::from_str(json_text)
        .unwrap_or_else(|e| panic!("mcp list --json printed JSON ({e}): {json_text}"));
    rows.as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["name"].as_str().unwrap().to_string(),
                r["status"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}
