//! What crosses the bridge to the web front end besides the core's own types: the event
//! names and envelope, the project the window shows, and errors.
//!
//! Payloads are the core's types, whose TypeScript is derived in the core (its `ts`
//! feature); `ui/src/lib/bindings.ts` is generated from the list in
//! [`typescript_bindings`] and a test fails when that file is out of date. Errors reach
//! the UI as `{ code, message }` with a closed set of codes ([`crate::errors`]).

use serde::Serialize;
use ts_rs::TS;

use harness9::mcp::LogLine;

pub use crate::errors::{BridgeError, BridgeResult};

/// Events the backend emits (names shared with `ui/src/lib/backend/tauri.ts`).
pub mod events {
    /// [`super::StatusDto`]: every change of any server's status.
    pub const STATUS: &str = "mcp-status";
    /// `null`: the set of tools changed; fetch them again.
    pub const TOOLS_CHANGED: &str = "tools-changed";
    /// [`harness9::watch::ConfigChange`]: `.mcp.json` changed on disk and was applied.
    pub const CONFIG_CHANGED: &str = "config-changed";
    /// [`harness9::harness::ProjectInfo`]: another project was opened.
    pub const PROJECT_CHANGED: &str = "project-changed";
    /// [`super::MenuAction`]: a native menu item was chosen.
    pub const MENU: &str = "menu";
    /// `AskView[]`: the asks of servers waiting for the user changed.
    pub const ASKS: &str = "asks-changed";
    /// [`harness9::host::apps::ViewEvent`]: a view is torn down, views' pending messages
    /// changed, a view set the model's context, or a view is throttled.
    pub const VIEWS: &str = "views";
    /// `string`: the path of a bundle (`.mcpb`) dropped on the window; its install opens.
    pub const BUNDLE: &str = "bundle-opened";
    /// `TaskEvent | null`: an MCP task started, its status changed, or it ended (with
    /// its result); `null` when events were missed (fetch the table again).
    pub const TASKS: &str = "tasks-changed";
    /// `null`: the app is closing; the window tears its MCP Apps views down, then calls
    /// `quit_ready` ([`crate::quit`]).
    pub const QUITTING: &str = "quitting";
}

/// How an event of one open project crosses ([`ProjectEmitter`]): the project's folder,
/// the number of the session that sent it (it grows each time a project is opened, so the
/// window drops whatever an earlier one still sends) and the event itself.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ProjectEvent<T> {
    pub project: String,
    pub session: u32,
    pub payload: T,
}

/// Emits the events of one open project, each tagged as a [`ProjectEvent`].
#[derive(Clone)]
pub struct ProjectEmitter {
    pub app: tauri::AppHandle,
    pub project: String,
    pub session: u32,
}

impl ProjectEmitter {
    pub fn emit<T: Serialize + Clone>(&self, event: &str, payload: T) {
        use tauri::Emitter;
        let tagged = ProjectEvent {
            project: self.project.clone(),
            session: self.session,
            payload,
        };
        let _ = self.app.emit(event, tagged);
    }
}

// ---- projects ----------------------------------------------------------------------

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "kebab-case")]
pub enum MenuAction {
    OpenFolder,
    Settings,
}

// ---- status ------------------------------------------------------------------------

// ---- logs --------------------------------------------------------------------------

/// The answer to `follow_log`: recent lines; later ones arrive on the channel.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct LogFollowDto {
    /// Pass to `unfollow_log` to stop the stream.
    pub follow_id: u32,
    pub lines: Vec<LogLine>,
}

// ---- tools -------------------------------------------------------------------------

// ---- approvals and entries -----------------------------------------------------------

// ---- the settings pane -----------------------------------------------------------------

// ---- the chat pane ---------------------------------------------------------------------
// Its types are the core's own (`harness9::ChatState`, `harness9::engine::Event` as
// `ChatEvent`, `Decision` as `ChatDecision`), with TypeScript derived in the core.

// ---- the generated TypeScript ----------------------------------------------------------

/// The checked-in file the front end imports.
#[cfg(test)]
pub const BINDINGS_PATH: &str = "ui/src/lib/bindings.ts";

/// The whole text of [`BINDINGS_PATH`].
#[cfg(test)]
pub fn typescript_bindings() -> String {
    let cfg = ts_rs::Config::default().with_large_int("number");
    let decls = [
        <serde_json::Value as TS>::decl(&cfg),
        crate::errors::ErrorCode::decl(&cfg),
        BridgeError::decl(&cfg),
        harness9::harness::ProjectInfo::decl(&cfg),
        MenuAction::decl(&cfg),
        harness9::manager::StatusSnapshot::decl(&cfg),
        harness9::manager::ServerStatus::decl(&cfg),
        harness9::mcp::auth::SignedIn::decl(&cfg),
        harness9::manager::StartPhase::decl(&cfg),
        harness9::manager::ServerState::decl(&cfg),
        harness9::mcp::era::Era::decl(&cfg),
        harness9::manager::RestartStatus::decl(&cfg),
        harness9::mcp::LogSource::decl(&cfg),
        harness9::mcp::LogLine::decl(&cfg),
        LogFollowDto::decl(&cfg),
        harness9::harness::ToolEntry::decl(&cfg),
        harness9::harness::ToolDetail::decl(&cfg),
        harness9::mcp::features::ToolHints::decl(&cfg),
        harness9::mcp::features::Icon::decl(&cfg),
        harness9::host::catalog::ServerDetails::decl(&cfg),
        harness9::mcp::features::LogLevel::decl(&cfg),
        harness9::harness::HeldToolEntry::decl(&cfg),
        harness9::mcp::Content::decl(&cfg),
        harness9::mcp::CallToolResult::decl(&cfg),
        harness9::harness::TimedResult::decl(&cfg),
        harness9::inspect::ApprovalRequest::decl(&cfg),
        harness9::inspect::ApprovalShown::decl(&cfg),
        harness9::inspect::ApprovalPick::decl(&cfg),
        harness9::manager::ApproveOutcome::decl(&cfg),
        harness9::inspect::KeyValue::decl(&cfg),
        harness9::inspect::ServerEntry::decl(&cfg),
        harness9::config::Scope::decl(&cfg),
        harness9::config::import::ImportSource::decl(&cfg),
        harness9::config::import::OnConflict::decl(&cfg),
        harness9::config::import::FoundSource::decl(&cfg),
        harness9::config::import::FoundSourceFile::decl(&cfg),
        harness9::config::import::ImportPlan::decl(&cfg),
        harness9::config::import::ImportedServer::decl(&cfg),
        harness9::inspect::ConfigText::decl(&cfg),
        harness9::watch::ConfigChange::decl(&cfg),
        ProjectEvent::<serde_json::Value>::decl(&cfg),
        harness9::inspect::ConfigProblem::decl(&cfg),
        harness9::inspect::EntryCheck::decl(&cfg),
        harness9::inspect::ConfigCheck::decl(&cfg),
        harness9::inspect::ConfigEdit::decl(&cfg),
        harness9::engine::Event::decl(&cfg),
        harness9::engine::CallView::decl(&cfg),
        harness9::engine::ToolView::decl(&cfg),
        harness9::engine::CallStatus::decl(&cfg),
        harness9::engine::TurnOutcome::decl(&cfg),
        harness9::engine::Usage::decl(&cfg),
        harness9::engine::Decision::decl(&cfg),
        harness9::engine::history::ChatItem::decl(&cfg),
        harness9::engine::ConversationSummary::decl(&cfg),
        harness9::engine::approvals::PendingApproval::decl(&cfg),
        harness9::ChatState::decl(&cfg),
        harness9::host::asks::AskView::decl(&cfg),
        harness9::host::asks::AskDetail::decl(&cfg),
        harness9::host::asks::ViewAsk::decl(&cfg),
        harness9::harness::PromptEntry::decl(&cfg),
        harness9::mcp::features::PromptArgument::decl(&cfg),
        harness9::mcp::features::Completion::decl(&cfg),
        harness9::host::asks::AskReply::decl(&cfg),
        harness9::mcp::elicit_form::ElicitForm::decl(&cfg),
        harness9::mcp::elicit_form::FormField::decl(&cfg),
        harness9::mcp::elicit_form::FieldKind::decl(&cfg),
        harness9::mcp::elicit_form::FieldValue::decl(&cfg),
        harness9::mcp::elicit_form::Choice::decl(&cfg),
        harness9::mcp::elicit_form::Format::decl(&cfg),
        harness9::harness::ResourceEntry::decl(&cfg),
        harness9::harness::TemplateEntry::decl(&cfg),
        harness9::harness::ResourceListing::decl(&cfg),
        harness9::harness::PreviewPart::decl(&cfg),
        harness9::harness::ReadPreview::decl(&cfg),
        harness9::engine::resources::ResourceRef::decl(&cfg),
        harness9::host::catalog::SurfaceEvent::decl(&cfg),
        harness9::harness::ContextSummary::decl(&cfg),
        harness9::tools::ServerCost::decl(&cfg),
        harness9::about::AboutInfo::decl(&cfg),
        harness9::about::PlaceInfo::decl(&cfg),
        harness9::engine::provider::settings::ProviderKind::decl(&cfg),
        harness9::engine::provider::setup::KeySource::decl(&cfg),
        harness9::engine::provider::setup::KeyState::decl(&cfg),
        harness9::engine::provider::setup::ProviderView::decl(&cfg),
        harness9::engine::provider::setup::ProviderChange::decl(&cfg),
        harness9::engine::provider::setup::ConnectionCheck::decl(&cfg),
        harness9::engine::permissions::ToolPermission::decl(&cfg),
        harness9::engine::permissions::PermissionRule::decl(&cfg),
        harness9::host::apps::ViewCall::decl(&cfg),
        harness9::host::apps::ViewOpened::decl(&cfg),
        harness9::host::apps::ViewReply::decl(&cfg),
        harness9::host::apps::DisplayMode::decl(&cfg),
        harness9::host::apps::DownloadOffer::decl(&cfg),
        harness9::host::apps::DownloadFile::decl(&cfg),
        harness9::host::apps::TeardownReason::decl(&cfg),
        harness9::host::apps::PendingMessage::decl(&cfg),
        harness9::host::apps::ViewEvent::decl(&cfg),
        harness9::install::SearchHit::decl(&cfg),
        harness9::install::RegistryProblem::decl(&cfg),
        harness9::install::SearchResults::decl(&cfg),
        harness9::harness::InstallRequest::decl(&cfg),
        harness9::install::Choice::decl(&cfg),
        harness9::install::PackageKind::decl(&cfg),
        harness9::install::plan::PlanSource::decl(&cfg),
        harness9::install::plan::Replaced::decl(&cfg),
        harness9::install::PlanVariable::decl(&cfg),
        harness9::install::VariableKind::decl(&cfg),
        harness9::install::template::Template::decl(&cfg),
        harness9::install::template::Seg::decl(&cfg),
        harness9::install::template::ArgGroup::decl(&cfg),
        harness9::install::InstallPlan::decl(&cfg),
        harness9::install::BundleInfo::decl(&cfg),
        harness9::install::DeclaredItem::decl(&cfg),
        harness9::install::Compatibility::decl(&cfg),
        harness9::install::RuntimeCheck::decl(&cfg),
        crate::plans::PlanView::decl(&cfg),
        harness9::install::Installed::decl(&cfg),
        harness9::install::Outdated::decl(&cfg),
        harness9::install::OutdatedReport::decl(&cfg),
        harness9::install::SecretState::decl(&cfg),
        crate::plans::ServerSecretsView::decl(&cfg),
        harness9::host::tasks::TaskState::decl(&cfg),
        harness9::host::tasks::TaskRecord::decl(&cfg),
        harness9::tools::tasks::TaskOrigin::decl(&cfg),
        harness9::host::tasks::TaskEvent::decl(&cfg),
        harness9::host::tasks::CancelOutcome::decl(&cfg),
    ];
    let mut out = String::from(
        "// Generated from src-tauri/src/bridge.rs by ts-rs. Do not edit by hand:\n\
         // run `UPDATE_BINDINGS=1 cargo test -p harness9-desktop bindings` instead.\n\n",
    );
    for d in decls {
        out.push_str("export ");
        out.push_str(&d);
        out.push_str("\n\n");
    }
    out.truncate(out.trim_end().len());
    out.push('\n');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bindings_file() -> std::path::PathBuf {
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("..")
            .join(BINDINGS_PATH)
    }

    #[test]
    fn bindings_are_current() {
        let want = typescript_bindings();
        let path = bindings_file();
        if std::env::var_os("UPDATE_BINDINGS").is_some() {
            std::fs::write(&path, &want).unwrap();
            return;
        }
        let have = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            have == want,
            "{BINDINGS_PATH} is out of date with src-tauri/src/bridge.rs; run \
             `UPDATE_BINDINGS=1 cargo test -p harness9-desktop bindings` and commit it"
        );
    }

    /// Secrets given through `${VAR}` (env and header values, a `--token=` arg, a URL
    /// query) reach neither the approval dialog nor the status payload.
    #[test]
    fn approval_and_status_payloads_carry_no_secret() {
        use harness9::config::McpConfig;
        use harness9::manager::{ApprovalPolicy, Manager, ManagerOptions};
        use harness9::tools::ToolRegistry;
        use harness9::trust::ApprovalStore;

        const SECRET: &str = "s3cr3t-payload-4711";
        let text = serde_json::json!({"mcpServers": {
            "s": {"command": "srv", "args": ["--token=${T}", "--token", "${T}", "plain=${T}"],
                  "env": {"API_KEY": "${T}", "LITERAL": "written-secret"}},
            "h": {"type": "http", "url": "https://h.invalid/mcp?token=${T}",
                  "headers": {"Authorization": "Bearer ${T}"}}
        }})
        .to_string();
        let cfg = McpConfig::parse(&text, ".mcp.json", &|_| Some(SECRET.to_string()));
        let data = std::env::temp_dir().join(format!("h9-bridge-test-{}", std::process::id()));
        let manager = Manager::new(
            &data,
            std::sync::Arc::new(ToolRegistry::new()),
            ManagerOptions {
                approvals: ApprovalStore::at(data.join("approvals.json")),
                policy: ApprovalPolicy::Ask,
                path_for_children: None,
                hooks: Default::default(),
            },
        );
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
            .block_on(manager.reload(&cfg));
        let status = manager.snapshot();
        let requests: Vec<harness9::inspect::ApprovalRequest> = manager
            .awaiting_approval()
            .iter()
            .map(|c| harness9::inspect::ApprovalRequest::of(c, &data))
            .collect();
        assert_eq!(requests.len(), 2);
        for payload in [
            serde_json::to_string(&status).unwrap(),
            serde_json::to_string(&requests).unwrap(),
        ] {
            assert!(!payload.contains(SECRET), "{payload}");
            assert!(!payload.contains("written-secret"), "{payload}");
        }
        let _ = std::fs::remove_dir_all(&data);
    }

    #[test]
    fn status_crosses_with_a_nested_state() {
        use harness9::manager::{ServerState, ServerStatus, StatusSnapshot};
        let s = StatusSnapshot {
            revision: 4,
            servers: vec![ServerStatus {
                name: "a".into(),
                transport: "stdio".into(),
                scope: harness9::config::Scope::Project,
                target: "a --x".into(),
                state: ServerState::Connected {
                    tools: 3,
                    protocol_version: "2025-11-25".into(),
                    server_name: "srv".into(),
                    server_version: "1".into(),
                    era: harness9::mcp::era::Era::Legacy,
                },
                restart: None,
                held_tools: 0,
                signed_in: None,
            }],
            config_error: None,
        };
        assert_eq!(
            serde_json::to_value(&s).unwrap(),
            serde_json::json!({"revision": 4, "servers": [{"name": "a", "transport": "stdio", "scope": "project", "target": "a --x",
                "state": {"status": "connected", "tools": 3, "protocolVersion": "2025-11-25",
                          "serverName": "srv", "serverVersion": "1", "era": "legacy"},
                "restart": null, "heldTools": 0, "signedIn": null}], "configError": null})
        );
    }

    #[test]
    fn form_edits_arrive_tagged() {
        let e: harness9::inspect::ConfigEdit = serde_json::from_value(serde_json::json!(
            {"op": "setServer", "name": "x", "entry": {"command": "c"}, "previous": null}
        ))
        .unwrap();
        assert!(matches!(
            e,
            harness9::inspect::ConfigEdit::SetServer { name, previous: None, .. } if name == "x"
        ));
    }
}
