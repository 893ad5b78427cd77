//! Shared helpers for the integration suite.

mod approvals;
mod auth_flow;
mod auth_issuer;
mod auth_real;
mod auth_transport;
mod cli;
mod containment;
mod doctor;
mod elicit_input;
mod engine;
mod era;
mod era_http;
mod era_memory;
mod fixture_client;
mod hardening;
mod hot_reload;
mod http;
mod http_real;
mod keychain_real;
mod leader_reap;
mod links_imports;
mod manager;
mod memory;
mod panics;
mod pins;
mod prompts;
mod provider_settings;
mod provider_stub;
mod real_servers;
mod resources;
mod sampling;
mod scopes_cli;
mod surface;
mod surface_cli;
mod surface_listing;
mod surface_more;
mod term_safety;
mod tui;
mod tui_asks;
mod tui_exit;
mod tui_settings;
mod tui_surface;
mod url_secrets;
mod userdata;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use harness9::config::McpConfig;
use harness9::manager::{ApprovalPolicy, Manager, ServerState};
use harness9::mcp::transport::stdio::{self, StdioSpec};
use harness9::mcp::{Client, ServerLog};
use harness9::tools::ToolRegistry;
use harness9::trust::ApprovalStore;
use serde_json::Value;

pub fn fixture_bin() -> &'static str {
    env!("CARGO_BIN_EXE_mcp-fixture")
}

pub fn harness9_bin() -> &'static str {
    env!("CARGO_BIN_EXE_harness9")
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

/// Spawns the fixture with flags and connects a client to it.
pub async fn fixture_client(flags: &[&str]) -> (Client, Arc<ServerLog>) {
    spawn_client(fixture_bin(), flags, &[])
        .await
        .expect("connect")
}

pub async fn spawn_client(
    command: &str,
    args: &[&str],
    env: &[(&str, &str)],
) -> Result<(Client, Arc<ServerLog>), harness9::mcp::ClientError> {
    spawn_client_handled(command, args, env, None).await
}

/// [`spawn_client`] with a handler for the server's requests.
pub async fn spawn_client_handled(
    command: &str,
    args: &[&str],
    env: &[(&str, &str)],
    handler: Option<Arc<dyn harness9::mcp::handler::ClientHandler>>,
) -> Result<(Client, Arc<ServerLog>), harness9::mcp::ClientError> {
    let log = Arc::new(ServerLog::default());
    let spec = StdioSpec {
        command: command.into(),
        args: args.iter().map(|s| s.to_string()).collect(),
        env: env
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        cwd: None,
        path: None,
        max_message_bytes: harness9::config::DEFAULT_MAX_MESSAGE_BYTES,
    };
    let conn = stdio::spawn(&spec, log.clone()).expect("spawn");
    let client = tokio::time::timeout(
        Duration::from_secs(20),
        Client::connect_with(conn, "test", log.clone(), handler),
    )
    .await
    .expect("handshake within 20 s")?;
    Ok((client, log))
}

pub fn text_of(result: &harness9::mcp::CallToolResult) -> String {
    result.to_text()
}

/// A temporary project with this `.mcp.json`, and a private approval store.
pub struct Project {
    pub dir: tempfile::TempDir,
    pub data: tempfile::TempDir,
}

/// A manager with the services the façade wires to it (the tool registry it publishes
/// to, tool pins, sign-in, asks), as a front end has it.
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
    /// The façade on this project: every server allowed, no login-shell PATH, the
    /// project's own approval store.
    pub fn harness(&self) -> harness9::Harness {
        harness9::Harness::open(
            self.path(),
            harness9::HarnessOptions {
                policy: ApprovalPolicy::AllowAll,
                login_shell_path: false,
                approvals: self.approvals(),
                scope_files: Some(self.scope_files()),
                ..harness9::HarnessOptions::default()
            },
        )
    }

    /// [`Project::harness`] with its servers started and settled (up to 30 s).
    pub async fn started(&self) -> harness9::Harness {
        let h = self.harness();
        h.start(None).await;
        h.manager().wait_settled(Duration::from_secs(30)).await;
        h
    }

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
    pub fn cli(&self, args: &[&str]) -> std::process::Output {
        self.command(args).output().unwrap()
    }
}

pub fn state_of(manager: &Manager, name: &str) -> ServerState {
    manager
        .snapshot()
        .servers
        .iter()
        .find(|s| s.name == name)
        .map(|s| s.state.clone())
        .unwrap_or_else(|| panic!("no server {name}"))
}

/// Waits until a condition on the manager's snapshot holds.
pub async fn wait_until(
    manager: &Manager,
    what: &str,
    f: impl Fn(&harness9::manager::StatusSnapshot) -> bool,
) {
    let mut rx = manager.subscribe();
    tokio::time::timeout(Duration::from_secs(20), rx.wait_for(|s| f(s)))
        .await
        .unwrap_or_else(|_| panic!("timed out waiting for {what}: {:?}", manager.snapshot()))
        .unwrap();
}

/// Processes whose environment holds `H9_TEST_MARK=<mark>`.
pub fn processes_with_mark(mark: &str) -> Vec<u32> {
    let needle = format!("H9_TEST_MARK={mark}");
    let mut pids = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        if let Ok(env) = std::fs::read(entry.path().join("environ")) {
            if env.split(|b| *b == 0).any(|kv| kv == needle.as_bytes()) {
                // Zombies have an empty environ; a live match is a live process.
                pids.push(pid);
            }
        }
    }
    pids
}

pub fn unique_mark() -> String {
    use std::sync::atomic::{AtomicU32, Ordering};
    static N: AtomicU32 = AtomicU32::new(0);
    format!(
        "{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    )
}
