//! The façade every front end talks to: one project, its servers and its tools. Front ends
//! (CLI, TUI, desktop) make one call here per user action and hold no logic of their own.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::Value;

use crate::approval::ApprovalStore;
use crate::config::McpConfig;
use crate::mcp::{ApprovalPolicy, CallToolResult, Manager, ManagerOptions, ServerState};
use crate::tools::{CallContext, ToolError, ToolRegistry};

/// How a front end opens a project.
#[derive(Debug, Clone)]
pub struct HarnessOptions {
    pub policy: ApprovalPolicy,
    /// Take PATH for servers from the login shell (for programs started outside a terminal).
    pub login_shell_path: bool,
    pub approvals: ApprovalStore,
}

impl Default for HarnessOptions {
    fn default() -> Self {
        HarnessOptions {
            policy: ApprovalPolicy::Ask,
            login_shell_path: crate::shell_env::outside_terminal(),
            approvals: ApprovalStore::default_location(),
        }
    }
}

/// Why a manual tool call could not run.
#[derive(Debug, thiserror::Error)]
pub enum CallError {
    #[error("no server named \"{server}\" in .mcp.json{}", list_hint(.known))]
    UnknownServer { server: String, known: Vec<String> },
    #[error("server \"{server}\" is not connected: {reason}")]
    NotConnected { server: String, reason: String },
    #[error("server \"{server}\" has no tool \"{tool}\"{}", list_hint(.known))]
    UnknownTool {
        server: String,
        tool: String,
        known: Vec<String>,
    },
    #[error(transparent)]
    Tool(#[from] ToolError),
}

fn list_hint(known: &[String]) -> String {
    if known.is_empty() {
        String::new()
    } else {
        const SHOWN: usize = 20;
        let mut s = format!(" (it has: {}", known[..known.len().min(SHOWN)].join(", "));
        if known.len() > SHOWN {
            s.push_str(&format!(", and {} more", known.len() - SHOWN));
        }
        s.push(')');
        s
    }
}

pub struct Harness {
    project: PathBuf,
    manager: Manager,
}

impl Harness {
    /// Opens a project; nothing starts until [`Harness::start`].
    pub fn open(project: &Path, opts: HarnessOptions) -> Harness {
        let registry = Arc::new(ToolRegistry::new());
        let path_for_children = if opts.login_shell_path {
            crate::shell_env::login_path()
        } else {
            None
        };
        let manager = Manager::new(
            project,
            registry,
            ManagerOptions {
                approvals: opts.approvals,
                policy: opts.policy,
                path_for_children,
            },
        );
        Harness {
            project: project.to_path_buf(),
            manager,
        }
    }

    pub fn project(&self) -> &Path {
        &self.project
    }

    pub fn manager(&self) -> &Manager {
        &self.manager
    }

    pub fn registry(&self) -> &Arc<ToolRegistry> {
        self.manager.registry()
    }

    pub fn load_config(&self) -> McpConfig {
        McpConfig::load_project(&self.project)
    }

    /// Reads `.mcp.json` and starts every approved, enabled server (or only `only`).
    pub async fn start(&self, only: Option<&[String]>) -> McpConfig {
        let mut config = self.load_config();
        if let Some(names) = only {
            config.servers.retain(|k, _| names.contains(k));
        }
        self.manager.reload(&config).await;
        config
    }

    /// Calls a tool by its server's raw names, as "try a tool" and `mcp call` do.
    pub async fn call_tool(
        &self,
        server: &str,
        tool: &str,
        arguments: Value,
        ctx: CallContext,
    ) -> Result<CallToolResult, CallError> {
        let snapshot = self.manager.snapshot();
        let Some(status) = snapshot.servers.iter().find(|s| s.name == server) else {
            return Err(CallError::UnknownServer {
                server: server.into(),
                known: snapshot.servers.iter().map(|s| s.name.clone()).collect(),
            });
        };
        let reason = match &status.state {
            ServerState::Connected { .. } => None,
            ServerState::Failed { reason, .. } => Some(reason.clone()),
            ServerState::AwaitingApproval => Some(
                "it is awaiting your approval (run with --yes, or approve it when asked)".into(),
            ),
            ServerState::Disabled => Some("it is disabled in .mcp.json".into()),
            ServerState::Stopped => Some("it is stopped".into()),
            ServerState::Starting { phase } => Some(format!("it is still {}", phase.label())),
        };
        if let Some(reason) = reason {
            return Err(CallError::NotConnected {
                server: server.into(),
                reason,
            });
        }
        let Some(t) = self.registry().get_mcp(server, tool) else {
            return Err(CallError::UnknownTool {
                server: server.into(),
                tool: tool.into(),
                known: self
                    .registry()
                    .server_tools(server)
                    .iter()
                    .filter_map(|t| match &t.spec().source {
                        crate::tools::ToolSource::Mcp { tool, .. } => Some(tool.clone()),
                        crate::tools::ToolSource::Builtin => None,
                    })
                    .collect(),
            });
        };
        Ok(t.call(arguments, ctx).await?)
    }

    /// Stops every server; no child process is left.
    pub async fn shutdown(&self) {
        self.manager.shutdown().await;
    }
}
