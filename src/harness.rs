//! The façade every front end talks to: one project, its servers and its tools. Front ends
//! (CLI, TUI, desktop) make one call here per user action and hold no logic of their own.

mod apps;
mod chat;
mod install;
mod prompts;
mod resource_view;
mod resources;
mod roots;
mod settings;
mod surface;
mod tasks;
mod tool_view;
mod userdata;
pub use apps::SendPendingError;
pub use chat::{Chat, ChatSession, ChatState, EventSink};
pub use install::{BundleRequest, InstallRequest};
pub use prompts::{missing_arguments, PromptEntry, PromptError, PromptTurn};
pub use resource_view::{
    PreviewPart, ReadPreview, ResourceEntry, ResourceListing, TemplateEntry,
    MAX_INLINE_IMAGE_CHARS, MAX_PREVIEW_CHARS,
};
pub use resources::{fuzzy_score, pick_resources, SaveResourceError, MAX_PICKS};
pub use roots::{RootsError, RootsStore, EXTRA_ROOTS_FILE};
pub use settings::PermissionError;
pub use surface::FEATURES_WAIT;
pub use tasks::{TaskListEntry, TaskListing};
pub use tool_view::{HeldToolEntry, ToolDetail, ToolEntry};

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::Value;

use crate::config::import::{self, FoundSource, ImportError, ImportPlan, ImportSource, OnConflict};
use crate::config::{McpConfig, Scope, ScopeFiles};
use crate::host::asks::Asks;
use crate::host::catalog::Catalog;
use crate::host::pins::{AcceptError, Pins};
use crate::host::signin::SignIn;
use crate::inspect::{
    ApprovalPick, ApprovalRequest, ConfigCheck, ConfigEdit, ConfigText, EditError, ServerEntry,
};
use crate::manager::{
    ApprovalPolicy, ApproveOutcome, Hooks, Manager, ManagerOptions, RestartPolicy, ServerState,
    StatusSnapshot,
};
use crate::mcp::{CallToolResult, LogLine};
use crate::tools::{CallContext, ToolError, ToolRegistry, ToolSpec};
use crate::trust::pins::HeldTool;
use crate::trust::ApprovalStore;
use crate::watch::{ConfigWatcher, WatchError};

/// The context window of the model in the settings file, else the default one.
pub fn configured_context_window() -> u32 {
    crate::engine::provider::settings::load_provider_section()
        .ok()
        .flatten()
        .and_then(|p| p.context_window)
        .unwrap_or(crate::engine::provider::settings::DEFAULT_CONTEXT_WINDOW)
}

/// What the MCP tools take in the model's context ([`crate::tools::cost`]).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct ContextSummary {
    /// Per server with tools, by name.
    pub servers: std::collections::BTreeMap<String, crate::tools::ServerCost>,
    pub total_tokens: u64,
    /// Set when tool search takes over ([`crate::engine::toolset::context_warning`]).
    pub warning: Option<String>,
}

/// How a front end opens a project.
#[derive(Debug, Clone)]
pub struct HarnessOptions {
    pub policy: ApprovalPolicy,
    /// Take PATH for servers from the login shell (for programs started outside a terminal).
    pub login_shell_path: bool,
    pub approvals: ApprovalStore,
    /// Restart crashed stdio servers with backoff (long-running front ends turn it on).
    pub restart: Option<RestartPolicy>,
    /// Where sign-in tokens are kept; `None`: the user's store
    /// ([`crate::mcp::auth::AuthContext::open`] in the data directory, opened by [`Harness::open`]).
    pub auth: Option<crate::mcp::auth::AuthContext>,
    /// The config files of the three scopes; `None`: the project's `.mcp.json` and the
    /// user's folders ([`ScopeFiles::of`]).
    pub scope_files: Option<ScopeFiles>,
}

impl Default for HarnessOptions {
    fn default() -> Self {
        HarnessOptions {
            policy: ApprovalPolicy::Ask,
            login_shell_path: crate::shell_env::outside_terminal(),
            approvals: ApprovalStore::default_location(),
            restart: None,
            auth: None,
            scope_files: None,
        }
    }
}

/// Why a manual tool call could not run.
#[derive(Debug, thiserror::Error)]
pub enum CallError {
    #[error("no server named \"{server}\" in any config scope{}", list_hint(.known))]
    UnknownServer { server: String, known: Vec<String> },
    #[error("server \"{server}\" is not connected: {reason}")]
    NotConnected { server: String, reason: String },
    #[error("server \"{server}\" has no tool \"{tool}\"{}", list_hint(.known))]
    UnknownTool {
        server: String,
        tool: String,
        known: Vec<String>,
    },
    #[error("tool \"{tool}\" of server \"{server}\" is held back: {what} since you last accepted it. Review it with `harness9 mcp tools --changed`, then accept it with `harness9 mcp tools --accept {server} {tool}`")]
    Held {
        server: String,
        tool: String,
        /// "it is new" or "its description changed" and the like.
        what: String,
    },
    #[error(transparent)]
    Tool(#[from] ToolError),
    #[error("the call was cancelled")]
    Cancelled,
}

impl CallError {
    /// A stable kebab-case code for front ends and `--json` output (never changes once
    /// released).
    pub fn code(&self) -> &'static str {
        match self {
            CallError::UnknownServer { .. } => "unknown-server",
            CallError::UnknownTool { .. } => "unknown-tool",
            CallError::NotConnected { .. } => "not-connected",
            CallError::Tool(t) => t.code(),
            CallError::Held { .. } => "held",
            CallError::Cancelled => "cancelled",
        }
    }
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
    files: ScopeFiles,
    manager: Manager,
    signin: Arc<SignIn>,
    pins: Arc<Pins>,
    asks: Arc<Asks>,
    /// MCP Apps views ([`crate::host::apps`]).
    apps: crate::host::apps::Apps,
    /// MCP tasks ([`crate::host::tasks`]).
    tasks: crate::host::tasks::Tasks,
    /// The folder of the user-data files the services read (approvals, pins, grants).
    user_data_dir: PathBuf,
    /// Counts the changes of the stored user data seen by a watcher ([`userdata`]).
    user_data: tokio::sync::watch::Sender<u64>,
    catalog: Catalog,
    /// Installing servers from registries, and entries' secrets ([`crate::install`]).
    installer: crate::install::Installer,
    registry: Arc<ToolRegistry>,
    manual_calls: Arc<ManualCalls>,
    roots_store: RootsStore,
    chat: ChatSession,
    /// The user's settings file (model provider).
    settings_file: PathBuf,
    permission_store: crate::engine::permissions::PermissionStore,
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
        let signin = Arc::new(SignIn::new(opts.auth.unwrap_or_else(|| {
            crate::mcp::auth::AuthContext::open(&crate::trust::data_dir())
        })));
        let user_data_dir = opts
            .approvals
            .path()
            .parent()
            .map(PathBuf::from)
            .unwrap_or_default();
        let catalog = Catalog::default();
        // Beside the approvals: the record of installs and the registry cache.
        let installer = crate::install::Installer::new(
            project,
            opts.scope_files
                .clone()
                .unwrap_or_else(|| ScopeFiles::of(project)),
            opts.approvals.clone(),
            signin.auth_context().store.clone(),
        )
        .with_path(
            path_for_children
                .clone()
                .or_else(|| std::env::var_os("PATH")),
        )
        .with_data_dir(&user_data_dir);
        let asks = Arc::new(Asks::new(project, opts.approvals.path()));
        let pins = Arc::new(Pins::new(project, opts.approvals.path(), registry.clone()));
        let manager = Manager::new(
            project,
            pins.clone(),
            ManagerOptions {
                approvals: opts.approvals,
                policy: opts.policy,
                path_for_children,
                hooks: Hooks {
                    requests: Some(asks.clone()),
                    authorizers: Some(signin.clone()),
                    observers: vec![Arc::new(catalog.clone())],
                    inputs: Some(Arc::new(crate::host::inputs::EntryInputs(
                        installer.secrets().clone(),
                    ))),
                },
            },
        );
        manager.set_restart_policy(opts.restart);
        let roots_store = RootsStore::in_dir(&crate::trust::data_dir());
        asks.set_extra_roots(&roots_store.get(project));
        let tasks = crate::host::tasks::Tasks::new(
            project,
            manager.clone(),
            crate::host::tasks::TaskStore::in_dir(&user_data_dir),
        );
        let harness = Harness {
            project: project.to_path_buf(),
            files: opts.scope_files.unwrap_or_else(|| ScopeFiles::of(project)),
            manager,
            signin,
            pins,
            asks,
            apps: Default::default(),
            tasks,
            user_data_dir,
            user_data: tokio::sync::watch::channel(0).0,
            catalog,
            installer,
            registry,
            manual_calls: Arc::default(),
            roots_store,
            chat: ChatSession::default(),
            settings_file: crate::engine::provider::settings::settings_path(),
            permission_store: crate::engine::permissions::PermissionStore::in_dir(
                &crate::trust::data_dir(),
            ),
        };
        harness.deliver_late_results();
        harness
    }

    pub fn project(&self) -> &Path {
        &self.project
    }

    pub fn manager(&self) -> &Manager {
        &self.manager
    }

    /// What servers ask of the user and the model (the consent queue, sampling, roots).
    pub fn asks(&self) -> &Arc<Asks> {
        &self.asks
    }

    /// The catalog of the servers' resources, prompts, logging levels and details.
    pub fn catalog(&self) -> &Catalog {
        &self.catalog
    }

    /// The tool pins (held tools, accepting them).
    pub fn pins(&self) -> &Pins {
        &self.pins
    }

    /// The sign-in service (credential store, sign in and out of remote servers).
    pub fn signin(&self) -> &SignIn {
        &self.signin
    }

    pub fn registry(&self) -> &Arc<ToolRegistry> {
        &self.registry
    }

    /// The project's servers: its `.mcp.json` merged with the user's and the local scope
    /// (see [`crate::config::scopes`]).
    pub fn load_config(&self) -> McpConfig {
        McpConfig::load_files(&self.files)
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
        let t = self.callable(server, tool)?;
        Ok(t.call(arguments, ctx).await?)
    }

    /// The tool to call, or why it cannot be called now.
    fn callable(&self, server: &str, tool: &str) -> Result<Arc<dyn crate::tools::Tool>, CallError> {
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
            ServerState::Disabled => Some("it is disabled in its config file".into()),
            ServerState::NeedsAuth { reason } => Some(format!(
                "it needs you to sign in ({reason}): run `harness9 mcp login {server}` or use Sign in"
            )),
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
            if let Some(h) = self
                .held_tools(Some(server))
                .into_iter()
                .find(|h| h.tool == tool)
            {
                return Err(CallError::Held {
                    server: server.into(),
                    tool: tool.into(),
                    what: h.change.summary(),
                });
            }
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
        Ok(t)
    }

    /// Stops every server; no child process is left.
    pub async fn shutdown(&self) {
        self.manual_calls.cancel_all();
        self.tasks.shutdown().await;
        self.apps
            .close_all(crate::host::apps::TeardownReason::ProjectClosed);
        self.manager.shutdown().await;
    }

    // ---- what the desktop app (and other long-running front ends) need --------------

    /// Latest status of every server; `changed()` wakes on every update.
    pub fn subscribe_status(&self) -> tokio::sync::watch::Receiver<Arc<StatusSnapshot>> {
        self.manager.subscribe()
    }

    pub fn status(&self) -> Arc<StatusSnapshot> {
        self.manager.snapshot()
    }

    /// Reads `.mcp.json` again and applies it: only changed servers restart.
    pub async fn reload(&self) -> McpConfig {
        let config = self.load_config();
        self.manager.reload(&config).await;
        config
    }

    /// Watches `.mcp.json` and reloads on every change (see [`crate::watch`]), and the
    /// stored user data ([`Harness::watch_user_data`]) as long as the watcher lives.
    pub fn watch_config(&self) -> Result<ConfigWatcher, WatchError> {
        ConfigWatcher::start_files(self.manager.clone(), self.files.clone())
            .map(|w| w.with_user_data(self.watch_user_data()))
    }

    /// Every tool (or one server's), as the model and the UI see it.
    pub fn tools(&self, server: Option<&str>) -> Vec<ToolSpec> {
        let tools = match server {
            Some(s) => self.registry().server_tools(s),
            None => self.registry().list(),
        };
        tools.iter().map(|t| t.spec().clone()).collect()
    }

    /// What each server's tool definitions take in the model's context
    /// ([`crate::tools::cost`]).
    pub fn context_cost(&self) -> crate::tools::ContextCost {
        self.registry().context_cost()
    }

    /// The context cost with its total and warning, for front ends.
    pub fn context_summary(&self) -> ContextSummary {
        let cost = self.context_cost();
        ContextSummary {
            total_tokens: cost.total_tokens(),
            warning: self.context_warning(&cost),
            servers: cost.servers,
        }
    }

    /// The warning to show beside [`Harness::context_cost`] when the MCP tools would go
    /// behind tool search with the configured model's context window.
    pub fn context_warning(&self, cost: &crate::tools::ContextCost) -> Option<String> {
        crate::engine::toolset::context_warning(cost, configured_context_window())
    }

    /// Tools held back from the model because they are new or changed since they were
    /// pinned (of one server or all), with what changed.
    pub fn held_tools(&self, server: Option<&str>) -> Vec<HeldTool> {
        self.pins.held_tools(server)
    }

    /// Accepts held tools of one server (all of them when `tools` is empty): their new
    /// definitions are pinned and they reach the model at once. Returns what was accepted.
    pub async fn accept_tools(
        &self,
        server: &str,
        tools: &[String],
    ) -> Result<Vec<HeldTool>, AcceptError> {
        self.pins.accept_tools(server, tools).await
    }

    /// Ticks whenever the set of tools changes.
    pub fn subscribe_tools(&self) -> tokio::sync::watch::Receiver<u64> {
        self.registry().subscribe()
    }

    /// The most recent `lines` lines of one server's output.
    pub fn server_log(&self, server: &str, lines: usize) -> Option<Vec<LogLine>> {
        self.manager.log(server).map(|l| l.tail(lines))
    }

    /// Live output of one server (after [`Harness::server_log`]'s lines).
    /// The last `n` lines of a server's log, then each new one, none twice or missed.
    pub fn follow_log(&self, server: &str, n: usize) -> Option<crate::mcp::log::LogFollow> {
        self.manager.log(server).map(|l| l.follow(n))
    }

    /// One server's entry as written, secrets masked.
    pub fn server_entry(&self, server: &str) -> Option<ServerEntry> {
        ServerEntry::find(&self.load_config(), server)
    }

    /// Servers waiting for approval, with exactly what they would run.
    pub fn pending_approvals(&self) -> Vec<ApprovalRequest> {
        self.manager
            .awaiting_approval()
            .iter()
            .map(|c| ApprovalRequest::of(c, self.manager.project()))
            .collect()
    }

    /// Approves servers, each given with the fingerprint of the request the user saw
    /// (recorded in the store when `remember`), and starts them. Servers whose entry changed
    /// since are refused and listed in [`ApproveOutcome::stale`]: ask again.
    pub async fn approve(
        &self,
        servers: &[ApprovalPick],
        remember: bool,
    ) -> std::io::Result<ApproveOutcome> {
        let pairs: Vec<(String, String)> = servers
            .iter()
            .map(|p| (p.name.clone(), p.fingerprint.clone()))
            .collect();
        self.manager.approve(&pairs, remember).await
    }

    /// Signs in to a remote server: `opener` shows the authorization page (the system
    /// browser, `$BROWSER`, the desktop app's opener); the server's status shows
    /// [`crate::manager::StartPhase::SigningIn`] meanwhile. On success the tokens are
    /// kept and the server is (re)started with them.
    pub async fn sign_in(
        &self,
        server: &str,
        opener: std::sync::Arc<dyn crate::mcp::auth::Opener>,
    ) -> Result<crate::mcp::auth::SignedIn, crate::host::signin::SignInError> {
        self.signin.sign_in(&self.manager, server, opener).await
    }

    /// Forgets the tokens kept for a remote server and restarts it (it then needs sign-in
    /// again). `Ok(true)` when tokens were kept.
    pub async fn sign_out(&self, server: &str) -> Result<bool, crate::host::signin::SignInError> {
        self.signin.sign_out(&self.manager, server).await
    }

    /// Where sign-in tokens are kept, in words for the user ("the system keychain (…)",
    /// "a file readable only by you: …").
    pub fn credentials_location(&self) -> String {
        self.signin.credentials_location()
    }

    /// Stops one server and starts it again (also starts a stopped one).
    pub async fn restart_server(&self, server: &str) {
        self.manager.restart(server).await;
    }

    pub async fn stop_server(&self, server: &str) {
        self.manager.stop(server).await;
    }

    /// [`Harness::restart_server`] in the background: returns at once, and the status
    /// reports the server starting again (for front ends, whose loop must not
    /// wait for a server that takes seconds to stop).
    pub fn restart_server_soon(&self, server: &str) {
        let (manager, server) = (self.manager.clone(), server.to_string());
        tokio::spawn(async move { manager.restart(&server).await });
    }

    /// [`Harness::stop_server`] in the background: returns at once; the status reports it.
    pub fn stop_server_soon(&self, server: &str) {
        let (manager, server) = (self.manager.clone(), server.to_string());
        tokio::spawn(async move { manager.stop(&server).await });
    }

    /// Writes `disabled` for one server into the scope file its entry comes from (keeping
    /// every other key) and applies it.
    pub async fn set_server_disabled(
        &self,
        server: &str,
        disabled: bool,
    ) -> Result<(), ConfigSaveError> {
        // In the file the entry in effect comes from.
        let scope = match self.load_config().servers.get(server) {
            Some(Ok(c)) => c.scope,
            Some(Err(e)) => e.scope,
            None => Scope::Project,
        };
        let current = self.config_text_in(scope)?;
        let edit = ConfigEdit::SetDisabled {
            name: server.to_string(),
            disabled,
        };
        let text = crate::inspect::apply_edit(&current.text, &edit)?;
        self.save_config_text_in(scope, &text, Some(&current.hash))
            .await?;
        Ok(())
    }

    pub fn config_path(&self) -> PathBuf {
        self.files.project.clone()
    }

    /// The project as a window title and header show it.
    pub fn project_info(&self) -> ProjectInfo {
        ProjectInfo {
            path: self.project.display().to_string(),
            name: self
                .project
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_else(|| self.project.display().to_string()),
            config_path: self.config_path().display().to_string(),
        }
    }

    /// The files of the three config scopes of this project.
    pub fn scope_files(&self) -> ScopeFiles {
        self.files.clone()
    }

    /// The file of one config scope.
    pub fn config_path_in(&self, scope: Scope) -> PathBuf {
        self.files.path(scope).to_path_buf()
    }

    /// `.mcp.json` as it is on disk now.
    pub fn config_text(&self) -> std::io::Result<ConfigText> {
        ConfigText::read(&self.config_path())
    }

    /// One scope's file as it is on disk now (empty when it does not exist yet).
    pub fn config_text_in(&self, scope: Scope) -> std::io::Result<ConfigText> {
        ConfigText::read(&self.config_path_in(scope))
    }

    /// The other tools (Claude Desktop, Claude Code, Cursor, VS Code, Codex) that have MCP
    /// servers configured for this project on this machine, with how many each.
    pub fn import_sources(&self) -> Vec<FoundSource> {
        import::discover(&self.project, &import::Places::of_user())
    }

    /// Imports another tool's servers into `scope` (see [`crate::config::import`]) and
    /// applies them; with `dry_run` only plans. Files of the tool that cannot be read are
    /// named in the plan's notes. `confirmed` is the [`ImportPlan::digest`] of the plan the
    /// user saw and accepted: required when the plan adds servers from a file inside the
    /// project, and what is written must be that plan. What it adds to the project scope
    /// is recorded as approved as written.
    pub async fn import_servers(
        &self,
        source: ImportSource,
        scope: Scope,
        on_conflict: OnConflict,
        dry_run: bool,
        confirmed: Option<String>,
    ) -> Result<ImportPlan, ImportError> {
        self.import_servers_answering(
            source,
            scope,
            on_conflict,
            dry_run,
            confirmed,
            Default::default(),
        )
        .await
    }

    /// [`Harness::import_servers`] with answers to the plan's questions
    /// ([`ImportPlan::inputs`], from a dry run), by input name: plain ones are written
    /// into the entries (so they change the plan and its digest), secret ones are kept in
    /// the credential store after the write.
    pub async fn import_servers_answering(
        &self,
        source: ImportSource,
        scope: Scope,
        on_conflict: OnConflict,
        dry_run: bool,
        confirmed: Option<String>,
        answers: std::collections::BTreeMap<String, String>,
    ) -> Result<ImportPlan, ImportError> {
        let (project, files) = (self.project.clone(), self.scope_files());
        let installer = self.installer.clone();
        let plan = off_runtime(move || {
            let (mut found, errors) = import::find(source, &project, &import::Places::of_user());
            import::answer(&mut found, &answers);
            let mut plan = import::plan(&files, scope, &found, on_conflict)?;
            plan.notes
                .extend(errors.iter().map(|e| format!("skipped {e}")));
            if !dry_run {
                import::review::check_confirmed(&plan, confirmed.as_deref())?;
                import::write(&plan)?;
                if !plan.added.is_empty() {
                    let notes = installer.keep_import_inputs(&plan, scope, &answers);
                    plan.notes.extend(notes);
                }
            }
            let approve = if scope.needs_approval() {
                import::review::fingerprints(&plan, &project)
            } else {
                Vec::new()
            };
            Ok::<_, ImportError>((plan, approve))
        })
        .await
        .map_err(|e| {
            ImportError::Save(crate::config::SaveError::Io {
                path: self.project.display().to_string(),
                source: e,
            })
        })??;
        let (mut plan, approve) = plan;
        if !dry_run && !plan.added.is_empty() {
            self.reload().await;
            // What the user saw and accepted is approved as written (and starts).
            if !approve.is_empty() {
                if let Err(e) = self.manager.approve(&approve, true).await {
                    plan.notes.push(format!(
                        "the approval of the added servers could not be recorded ({e}); you will be asked when they start"
                    ));
                }
            }
        }
        Ok(plan)
    }

    /// Validates an edited text the way a save and a reload would read it.
    pub fn check_config_text(text: &str) -> ConfigCheck {
        ConfigCheck::of_text(text, &|k| std::env::var(k).ok())
    }

    /// Applies a form edit to an edited text (nothing is written).
    pub fn edit_config_text(text: &str, edit: &ConfigEdit) -> Result<String, EditError> {
        crate::inspect::apply_edit(text, edit)
    }

    /// Saves `.mcp.json` atomically and applies it (only changed servers restart).
    /// Refuses invalid JSON, and a file that changed on disk since it was read with hash
    /// `expected` (pass `None` to overwrite anyway).
    pub async fn save_config_text(
        &self,
        text: &str,
        expected: Option<&str>,
    ) -> Result<ConfigText, ConfigSaveError> {
        self.save_config_text_in(Scope::Project, text, expected)
            .await
    }

    /// [`Harness::save_config_text`] for one scope's file (its folder is created when
    /// missing).
    pub async fn save_config_text_in(
        &self,
        scope: Scope,
        text: &str,
        expected: Option<&str>,
    ) -> Result<ConfigText, ConfigSaveError> {
        let path = self.config_path_in(scope);
        let (at, text, expected) = (path.clone(), text.to_owned(), expected.map(str::to_owned));
        // The check, the write and its fsync run together on a blocking thread.
        off_runtime(move || {
            if let Some(expected) = expected {
                let now = ConfigText::read(&at)?;
                if now.hash != expected {
                    return Err(ConfigSaveError::ChangedOnDisk {
                        path: at.display().to_string(),
                    });
                }
            }
            if let Some(dir) = at.parent().filter(|d| !d.as_os_str().is_empty()) {
                std::fs::create_dir_all(dir)?;
            }
            Ok(crate::config::save_mcp_json(&at, &text)?)
        })
        .await??;
        self.reload().await;
        Ok(off_runtime(move || ConfigText::read(&path)).await??)
    }

    /// Starts a manual call ("try a tool"): the core numbers it at once, so a front end can
    /// [cancel](Harness::cancel_call) it while it runs; [`StartedCall::outcome`] waits for
    /// its result. Shutting down cancels every manual call still running.
    pub fn start_call(&self, server: &str, tool: &str, arguments: Value) -> StartedCall {
        let id = self.manual_calls.next_id();
        // A task the call starts shows in the task table until it ends.
        let ctx = CallContext {
            task: Some(self.task_context(std::time::Duration::MAX, None)),
            ..CallContext::default()
        };
        let task = match self.callable(server, tool) {
            Ok(t) => tokio::spawn(async move {
                let started = std::time::Instant::now();
                let result = t.call(arguments, ctx).await?;
                Ok(TimedResult {
                    result,
                    duration_ms: started.elapsed().as_secs_f64() * 1000.0,
                })
            }),
            Err(e) => tokio::spawn(async move { Err(e) }),
        };
        self.manual_calls.insert(id, task.abort_handle());
        StartedCall {
            id,
            task,
            calls: self.manual_calls.clone(),
        }
    }

    /// Cancels a manual call by its number (the server hears `notifications/cancelled`);
    /// false when it is not running.
    pub fn cancel_call(&self, id: u64) -> bool {
        self.manual_calls.cancel(id)
    }
}

/// The agent engine: chat with a model over this project's tools (see [`crate::engine`]).
impl Harness {
    /// Starts (or, per `opts.conversation`, reopens) a conversation. Fails with a message
    /// that says what to set when no model provider is configured.
    pub fn engine(
        &self,
        opts: crate::engine::EngineOptions,
    ) -> Result<crate::engine::Engine, crate::engine::EngineError> {
        crate::engine::Engine::new(
            &self.project,
            self.registry().clone(),
            self.engine_options(opts),
        )
    }

    /// The façade's parts of engine options: the servers' resources and the provider
    /// settings' overrides.
    fn engine_options(
        &self,
        mut opts: crate::engine::EngineOptions,
    ) -> crate::engine::EngineOptions {
        if opts.resources.is_none() {
            opts.resources = Some(self.resource_access());
        }
        if opts.tasks.is_none() {
            opts.tasks = Some(Arc::new(self.tasks.clone()));
        }
        self.fill_overrides(&mut opts.provider_overrides);
        opts
    }

    /// [`Harness::engine`] off the async runtime (a reopened conversation is read from
    /// disk on tokio's blocking pool).
    pub async fn open_engine(
        &self,
        opts: crate::engine::EngineOptions,
    ) -> Result<crate::engine::Engine, crate::engine::EngineError> {
        crate::engine::Engine::open(
            &self.project,
            self.registry().clone(),
            self.engine_options(opts),
        )
        .await
    }

    /// Saved conversations of this project, newest first. Reads every file: async code calls
    /// [`Harness::list_conversations`].
    pub fn conversations(&self) -> Vec<crate::engine::ConversationSummary> {
        crate::engine::Engine::conversations(&crate::trust::data_dir(), &self.project)
    }

    /// [`Harness::conversations`] read on tokio's blocking pool.
    pub async fn list_conversations(&self) -> Vec<crate::engine::ConversationSummary> {
        crate::engine::Engine::list_conversations(&crate::trust::data_dir(), &self.project).await
    }
}

/// The open project: its folder (absolute), the folder's name for titles, and its
/// `.mcp.json`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct ProjectInfo {
    pub path: String,
    pub name: String,
    pub config_path: String,
}

/// A tool result and the call's wall-clock time.
#[derive(Debug, Clone, serde::Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct TimedResult {
    #[serde(flatten)]
    #[cfg_attr(feature = "ts", ts(flatten))]
    pub result: CallToolResult,
    /// Milliseconds, with fractions.
    pub duration_ms: f64,
}

/// Why `.mcp.json` was not saved. The file on disk is unchanged in every case.
#[derive(Debug, thiserror::Error)]
pub enum ConfigSaveError {
    #[error("{path} changed on disk since it was loaded; reload it, or save again to overwrite")]
    ChangedOnDisk { path: String },
    #[error(transparent)]
    Save(#[from] crate::config::SaveError),
    #[error(transparent)]
    Edit(#[from] EditError),
    #[error("cannot read .mcp.json: {0}")]
    Io(#[from] std::io::Error),
}

impl ConfigSaveError {
    /// A stable kebab-case code for front ends and `--json` output (never changes once
    /// released).
    pub fn code(&self) -> &'static str {
        match self {
            ConfigSaveError::ChangedOnDisk { .. } => "changed-on-disk",
            ConfigSaveError::Save(e) => e.code(),
            ConfigSaveError::Edit(e) => e.code(),
            ConfigSaveError::Io(_) => "config-unreadable",
        }
    }
}

/// Runs blocking file I/O (reads, atomic writes with fsync) on tokio's blocking pool, so
/// no runtime thread waits on the disk.
async fn off_runtime<T: Send + 'static>(
    f: impl FnOnce() -> T + Send + 'static,
) -> std::io::Result<T> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| std::io::Error::other(format!("file task failed: {e}")))
}

/// The manual calls running, by number.
#[derive(Default)]
struct ManualCalls {
    next: std::sync::atomic::AtomicU64,
    running: parking_lot::Mutex<std::collections::HashMap<u64, tokio::task::AbortHandle>>,
}

impl ManualCalls {
    fn next_id(&self) -> u64 {
        self.next.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1
    }

    fn insert(&self, id: u64, handle: tokio::task::AbortHandle) {
        self.running.lock().insert(id, handle);
    }

    fn cancel(&self, id: u64) -> bool {
        let handle = self.running.lock().remove(&id);
        handle.map(|h| h.abort()).is_some()
    }

    fn cancel_all(&self) {
        for (_, h) in self.running.lock().drain() {
            h.abort();
        }
    }
}

/// A manual call under way ([`Harness::start_call`]).
pub struct StartedCall {
    /// Its number, for [`Harness::cancel_call`].
    pub id: u64,
    task: tokio::task::JoinHandle<Result<TimedResult, CallError>>,
    calls: Arc<ManualCalls>,
}

impl StartedCall {
    /// The call's result, [`CallError::Cancelled`] when it was cancelled.
    pub async fn outcome(self) -> Result<TimedResult, CallError> {
        let outcome = self.task.await;
        self.calls.running.lock().remove(&self.id);
        match outcome {
            Ok(result) => result,
            Err(_) => Err(CallError::Cancelled),
        }
    }
}
