//! The commands the web front end invokes. Each is one call on the core's façade
//! ([`harness9::Harness`]) or on the app state that holds it, converted for the bridge.

use serde_json::Value;
use tauri::ipc::Channel;
use tauri::{AppHandle, State};
use tauri_plugin_dialog::DialogExt;
use tauri_plugin_opener::OpenerExt;

use harness9::config::import::{FoundSource, ImportPlan, ImportSource, OnConflict};
use harness9::config::Scope;
use harness9::engine::{ConversationChoice, Decision, Event};
use harness9::harness::{HeldToolEntry, ProjectInfo, TimedResult, ToolDetail, ToolEntry};
use harness9::host::apps::{PendingMessage, ViewCall, ViewOpened, ViewReply};
use harness9::host::catalog::ServerDetails;
use harness9::inspect::{
    ApprovalPick, ApprovalRequest, ConfigCheck, ConfigEdit, ConfigText, ServerEntry,
};
use harness9::mcp::features::LogLevel;
use harness9::{ChatState, Harness};

use crate::bridge::*;
use crate::details::shown;
use crate::session::AppState;

type S<'a> = State<'a, AppState>;

// ---- projects ----------------------------------------------------------------------------

#[tauri::command]
pub async fn current_project(state: S<'_>) -> BridgeResult<Option<ProjectInfo>> {
    Ok(state.session().await.map(|s| s.project.clone()))
}

/// Opens a project folder the backend offered the window ([`crate::folders`]): picked in
/// the folder dialog, a recent project, or one opened before.
#[tauri::command]
pub async fn open_project(app: AppHandle, state: S<'_>, path: String) -> BridgeResult<ProjectInfo> {
    let folder = crate::folders::may_open(&path, &crate::recent::list())?;
    state.open(&app, folder).await
}

/// Shows the native folder picker; `null` when the user cancels.
#[tauri::command]
pub async fn pick_folder(app: AppHandle) -> BridgeResult<Option<String>> {
    let picked = tokio::task::spawn_blocking(move || app.dialog().file().blocking_pick_folder())
        .await
        .map_err(BridgeError::from)?
        .map(|p| p.to_string());
    if let Some(p) = &picked {
        crate::folders::offer(std::path::Path::new(p));
    }
    Ok(picked)
}

#[tauri::command]
pub fn recent_projects() -> Vec<String> {
    crate::recent::list()
}

#[tauri::command]
pub fn report_painted(state: S<'_>, page_ms: f64) -> f64 {
    state.startup.painted(page_ms)
}

/// The window tore its views down after [`events::QUITTING`]: the app closes now.
#[tauri::command]
pub fn quit_ready(app: AppHandle) {
    crate::quit::ready(&app);
}

// ---- servers -----------------------------------------------------------------------------

#[tauri::command]
pub async fn get_status(
    state: S<'_>,
) -> BridgeResult<std::sync::Arc<harness9::manager::StatusSnapshot>> {
    Ok(state.harness().await?.status())
}

#[tauri::command]
pub async fn pending_approvals(state: S<'_>) -> BridgeResult<Vec<ApprovalRequest>> {
    Ok(state.harness().await?.pending_approvals())
}

#[tauri::command]
pub async fn approve(
    state: S<'_>,
    servers: Vec<ApprovalPick>,
    remember: bool,
) -> BridgeResult<harness9::manager::ApproveOutcome> {
    Ok(state.harness().await?.approve(&servers, remember).await?)
}

#[tauri::command]
pub async fn restart_server(state: S<'_>, server: String) -> BridgeResult<()> {
    state.harness().await?.restart_server_soon(&server);
    Ok(())
}

#[tauri::command]
pub async fn stop_server(state: S<'_>, server: String) -> BridgeResult<()> {
    state.harness().await?.stop_server_soon(&server);
    Ok(())
}

#[tauri::command]
pub async fn set_server_disabled(state: S<'_>, server: String, disabled: bool) -> BridgeResult<()> {
    Ok(state
        .harness()
        .await?
        .set_server_disabled(&server, disabled)
        .await?)
}

#[tauri::command]
pub async fn server_entry(state: S<'_>, server: String) -> BridgeResult<Option<ServerEntry>> {
    Ok(state.harness().await?.server_entry(&server))
}

#[tauri::command]
pub async fn follow_log(
    state: S<'_>,
    server: String,
    channel: Channel<harness9::mcp::LogLine>,
) -> BridgeResult<LogFollowDto> {
    state.follow_log(&server, channel).await
}

#[tauri::command]
pub fn unfollow_log(state: S<'_>, follow_id: u32) {
    state.unfollow(follow_id)
}

/// Signs in to a remote server: opens its authorization page in the browser and waits
/// for the user (the server shows the signing-in phase meanwhile; stopping it cancels).
#[tauri::command]
pub async fn sign_in(
    app: AppHandle,
    state: S<'_>,
    server: String,
) -> BridgeResult<harness9::mcp::auth::SignedIn> {
    let harness = state.harness().await?;
    harness
        .sign_in(&server, crate::auth::opener(&app))
        .await
        .map_err(BridgeError::from)
}

/// Forgets the tokens kept for a remote server; true when some were kept.
#[tauri::command]
pub async fn sign_out(state: S<'_>, server: String) -> BridgeResult<bool> {
    state
        .harness()
        .await?
        .sign_out(&server)
        .await
        .map_err(BridgeError::from)
}

// ---- tools -------------------------------------------------------------------------------

#[tauri::command]
pub async fn list_tools(state: S<'_>) -> BridgeResult<Vec<ToolEntry>> {
    let entries = state.harness().await?.tool_entries();
    Ok(crate::icons::tool_entries(entries).await)
}

/// One tool's schema and annotations, fetched when its view opens (`null`: the tool is gone).
#[tauri::command]
pub async fn tool_detail(state: S<'_>, name: String) -> BridgeResult<Option<ToolDetail>> {
    Ok(state.harness().await?.tool_detail(&name))
}

#[tauri::command]
pub async fn held_tools(state: S<'_>) -> BridgeResult<Vec<HeldToolEntry>> {
    Ok(state.harness().await?.held_tool_entries())
}

#[tauri::command]
pub async fn accept_tools(
    state: S<'_>,
    server: String,
    tools: Vec<String>,
) -> BridgeResult<Vec<HeldToolEntry>> {
    Ok(state
        .harness()
        .await?
        .accept_tool_entries(&server, &tools)
        .await?)
}

#[tauri::command]
pub async fn call_tool(
    state: S<'_>,
    server: String,
    tool: String,
    arguments: Value,
    started: Channel<u64>,
) -> BridgeResult<TimedResult> {
    state.call_tool(server, tool, arguments, started).await
}

#[tauri::command]
pub async fn cancel_tool_call(state: S<'_>, call_id: u64) -> BridgeResult<()> {
    state.cancel_call(call_id).await;
    Ok(())
}

// ---- the settings pane -------------------------------------------------------------------

/// One config scope's file (the project's `.mcp.json` when `scope` is absent).
#[tauri::command]
pub async fn read_config(state: S<'_>, scope: Option<Scope>) -> BridgeResult<ConfigText> {
    Ok(state
        .harness()
        .await?
        .config_text_in(scope.unwrap_or_default())?)
}

#[tauri::command]
pub fn check_config(text: String) -> ConfigCheck {
    Harness::check_config_text(&text)
}

#[tauri::command]
pub fn edit_config(text: String, edit: ConfigEdit) -> BridgeResult<String> {
    Ok(Harness::edit_config_text(&text, &edit)?)
}

/// Saves and applies `.mcp.json`; `expected_hash` (from `read_config`) refuses to
/// overwrite a file changed elsewhere, `null` overwrites.
#[tauri::command]
pub async fn save_config(
    state: S<'_>,
    text: String,
    expected_hash: Option<String>,
    scope: Option<Scope>,
) -> BridgeResult<ConfigText> {
    let harness = state.harness().await?;
    Ok(harness
        .save_config_text_in(scope.unwrap_or_default(), &text, expected_hash.as_deref())
        .await?)
}

/// Opens a scope's file in the user's editor (the desktop's default app for the file).
#[tauri::command]
pub async fn open_config_in_editor(
    app: AppHandle,
    state: S<'_>,
    scope: Option<Scope>,
) -> BridgeResult<()> {
    let path = state
        .harness()
        .await?
        .config_path_in(scope.unwrap_or_default());
    app.opener()
        .open_path(path.display().to_string(), None::<&str>)
        .map_err(|e| BridgeError::cannot_open(path.display(), e))
}

/// The other tools with MCP servers configured on this machine, with how many each.
#[tauri::command]
pub async fn import_sources(state: S<'_>) -> BridgeResult<Vec<FoundSource>> {
    Ok(state.harness().await?.import_sources())
}

/// Imports another tool's servers into a scope (`dry_run`: only the plan). `confirmed` is
/// the digest of the plan the user saw and accepted; the core writes only that plan.
#[tauri::command]
pub async fn import_servers(
    state: S<'_>,
    from: ImportSource,
    scope: Scope,
    on_conflict: OnConflict,
    dry_run: bool,
    confirmed: Option<String>,
) -> BridgeResult<ImportPlan> {
    state
        .harness()
        .await?
        .import_servers(from, scope, on_conflict, dry_run, confirmed)
        .await
        .map_err(BridgeError::from)
}

// ---- the chat pane -----------------------------------------------------------------------
// The core's chat session (`Harness::chat`) holds the engine, the running turn and what
// waits for the user; these commands are one call each.

/// The provider and model in use (or what to set), the conversation so far and what waits
/// for the user. The first call continues the project's newest conversation.
#[tauri::command]
pub async fn chat_state(state: S<'_>) -> BridgeResult<ChatState> {
    let s = state.open_session().await?;
    Ok(s.harness.chat().state(ConversationChoice::Latest).await?)
}

/// Starts a new conversation (the old one stays saved).
#[tauri::command]
pub async fn chat_new(state: S<'_>) -> BridgeResult<ChatState> {
    let s = state.open_session().await?;
    Ok(s.harness.chat().new_conversation().await?)
}

/// The project's saved conversations, newest first.
#[tauri::command]
pub async fn chat_conversations(
    state: S<'_>,
) -> BridgeResult<Vec<harness9::engine::ConversationSummary>> {
    let s = state.open_session().await?;
    Ok(s.harness.chat().conversations().await)
}

/// Reopens a saved conversation with its history.
#[tauri::command]
pub async fn chat_open(state: S<'_>, id: String) -> BridgeResult<ChatState> {
    let s = state.open_session().await?;
    Ok(s.harness.chat().resume(&id).await?)
}

/// Sends a message; the turn's events arrive on `channel` (once the window is gone,
/// approval requests nobody sees are denied).
#[tauri::command]
pub async fn chat_send(
    state: S<'_>,
    prompt: String,
    attachments: Option<Vec<harness9::engine::resources::ResourceRef>>,
    channel: Channel<Event>,
) -> BridgeResult<()> {
    let s = state.open_session().await?;
    let attachments = attachments.unwrap_or_default();
    let sink = Box::new(move |e| channel.send(e).is_ok());
    Ok(s.harness.chat().send(prompt, attachments, sink).await?)
}

#[tauri::command]
pub async fn chat_stop(state: S<'_>) -> BridgeResult<()> {
    state.open_session().await?.harness.chat().stop();
    Ok(())
}

/// Answers an approval card; false when no call waits under `call_id`.
#[tauri::command]
pub async fn chat_approve(state: S<'_>, call_id: String, decision: Decision) -> BridgeResult<bool> {
    let s = state.open_session().await?;
    Ok(s.harness.chat().approve(&call_id, decision))
}

/// Starts a turn with a server's prompt (`arguments` by name); the turn's events arrive on
/// `channel`. Returns the messages the turn opened with, as chat items.
#[tauri::command]
pub async fn chat_send_prompt(
    state: S<'_>,
    server: String,
    name: String,
    arguments: serde_json::Map<String, Value>,
    channel: Channel<Event>,
) -> BridgeResult<Vec<harness9::engine::history::ChatItem>> {
    let s = state.open_session().await?;
    let sink = Box::new(move |e| channel.send(e).is_ok());
    let opening = s
        .harness
        .chat()
        .send_prompt(&server, &name, arguments, sink)
        .await?;
    Ok(harness9::engine::history::history(
        &opening
            .into_iter()
            .map(std::sync::Arc::new)
            .collect::<Vec<_>>(),
    ))
}

// ---- prompts -----------------------------------------------------------------------------

/// The prompts of the connected servers, for the chat's prompt picker.
#[tauri::command]
pub async fn list_prompts(state: S<'_>) -> BridgeResult<Vec<harness9::harness::PromptEntry>> {
    Ok(state.harness().await?.prompt_entries(None).await?)
}

/// The server's suggestions for a prompt argument's value, given the arguments filled so
/// far (`context`).
#[tauri::command]
pub async fn complete_prompt_argument(
    state: S<'_>,
    server: String,
    prompt: String,
    argument: String,
    value: String,
    context: serde_json::Map<String, Value>,
) -> BridgeResult<harness9::mcp::features::Completion> {
    let reference = harness9::mcp::features::CompletionRef::Prompt { name: prompt };
    let harness = state.harness().await?;
    Ok(harness
        .complete(&server, &reference, &argument, &value, &context)
        .await?)
}

/// Opens a link from the chat in the user's browser: only what
/// [`harness9::links::check_link`] allows (https, or http to this machine), in its parsed
/// form.
#[tauri::command]
pub fn open_url(app: AppHandle, url: String) -> BridgeResult<()> {
    let link = harness9::links::check_link(&url).map_err(|e| BridgeError::link_refused(&url, e))?;
    app.opener()
        .open_url(link.as_str(), None::<&str>)
        .map_err(|e| BridgeError::cannot_open(&link, e))
}

// ---- what servers ask the user -------------------------------------------------------------

/// The asks of servers waiting for the user, oldest first.
#[tauri::command]
pub async fn pending_asks(state: S<'_>) -> BridgeResult<Vec<harness9::host::asks::AskView>> {
    Ok(state.harness().await?.ask_views())
}

/// Answers an ask (accepting a URL elicitation opens its page first).
#[tauri::command]
pub async fn answer_ask(
    app: AppHandle,
    state: S<'_>,
    id: u64,
    answer: harness9::host::asks::AskReply,
) -> BridgeResult<harness9::mcp::elicit_form::FieldErrors> {
    crate::asks::answer(&app, &*state.harness().await?, id, answer).await
}

// ---- server details, logging level, extra roots ---------------------------------------

/// Title, icons and logging of a connected server; `null` when it is not connected.
#[tauri::command]
pub async fn server_details(state: S<'_>, server: String) -> BridgeResult<Option<ServerDetails>> {
    let details = state.harness().await?.server_details(&server).ok();
    Ok(crate::icons::details(details).await)
}

#[tauri::command]
pub async fn set_log_level(state: S<'_>, server: String, level: LogLevel) -> BridgeResult<()> {
    state
        .harness()
        .await?
        .set_log_level(&server, level)
        .await
        .map_err(BridgeError::from)
}

#[tauri::command]
pub async fn extra_roots(state: S<'_>) -> BridgeResult<Vec<String>> {
    Ok(shown(state.harness().await?.extra_roots()))
}

#[tauri::command]
pub async fn add_extra_root(state: S<'_>, path: String) -> BridgeResult<Vec<String>> {
    state
        .harness()
        .await?
        .add_extra_root(path.as_ref())
        .map(shown)
        .map_err(BridgeError::from)
}

#[tauri::command]
pub async fn remove_extra_root(state: S<'_>, path: String) -> BridgeResult<Vec<String>> {
    state
        .harness()
        .await?
        .remove_extra_root(path.as_ref())
        .map(shown)
        .map_err(BridgeError::from)
}

// ---- resources ---------------------------------------------------------------------------

#[tauri::command]
pub async fn list_resources(
    state: S<'_>,
    server: Option<String>,
) -> BridgeResult<harness9::harness::ResourceListing> {
    let harness = state.harness().await?;
    harness
        .resource_listing(server.as_deref())
        .await
        .map_err(BridgeError::from)
}

#[tauri::command]
pub async fn read_resource(
    state: S<'_>,
    server: String,
    uri: String,
) -> BridgeResult<harness9::harness::ReadPreview> {
    let harness = state.harness().await?;
    harness
        .preview_resource(&server, &uri)
        .await
        .map_err(BridgeError::from)
}

#[tauri::command]
pub async fn subscribe_resource(
    state: S<'_>,
    server: String,
    uri: String,
    on: bool,
) -> BridgeResult<()> {
    let harness = state.harness().await?;
    harness
        .follow_resource(&server, &uri, on)
        .await
        .map_err(BridgeError::from)
}

#[tauri::command]
pub async fn complete_resource(
    state: S<'_>,
    server: String,
    uri_template: String,
    variable: String,
    value: String,
    context: serde_json::Map<String, Value>,
) -> BridgeResult<harness9::mcp::features::Completion> {
    let reference = harness9::mcp::features::CompletionRef::Resource { uri: uri_template };
    let harness = state.harness().await?;
    harness
        .complete(&server, &reference, &variable, &value, &context)
        .await
        .map_err(BridgeError::from)
}

/// Writes a resource into the Downloads folder; returns the file's path.
#[tauri::command]
pub async fn save_resource(
    app: AppHandle,
    state: S<'_>,
    server: String,
    uri: String,
) -> BridgeResult<String> {
    crate::resources::save(&app, &*state.harness().await?, &server, &uri).await
}

// ---- sampling grants ---------------------------------------------------------------------

/// The servers that may use the model without asking ("always for this server").
#[tauri::command]
pub async fn sampling_grants(state: S<'_>) -> BridgeResult<Vec<String>> {
    Ok(crate::asks::sampling_grants(&*state.harness().await?).await)
}

/// Makes a server ask again before it uses the model; false when it had no grant.
#[tauri::command]
pub async fn revoke_sampling(state: S<'_>, server: String) -> BridgeResult<bool> {
    crate::asks::revoke_sampling(&*state.harness().await?, &server).await
}

// ---- support -----------------------------------------------------------------------------

/// What each server's tool definitions take in the model's context, and the tool-search
/// warning.
#[tauri::command]
pub async fn context_cost(state: S<'_>) -> BridgeResult<harness9::harness::ContextSummary> {
    Ok(state.harness().await?.context_summary())
}

/// The doctor report plus each server's recent stderr, as text for the clipboard.
#[tauri::command]
pub async fn diagnostics(state: S<'_>) -> BridgeResult<String> {
    Ok(harness9::doctor::diagnostics(&*state.harness().await?).await)
}

/// The version and where config, approvals, tokens and logs live (without a project too).
#[tauri::command]
pub async fn about_info(state: S<'_>) -> BridgeResult<harness9::about::AboutInfo> {
    Ok(match state.harness().await {
        Ok(h) => harness9::about::about(Some(h.project()), h.credentials_location()),
        Err(_) => tokio::task::spawn_blocking(|| {
            harness9::about::about(None, harness9::about::credentials_location())
        })
        .await
        .map_err(BridgeError::from)?,
    })
}

// ---- model provider and tool permissions ------------------------------------------------

use harness9::engine::permissions::{PermissionRule, ToolPermission};
use harness9::engine::provider::settings::ProviderKind;
use harness9::engine::provider::setup::{ConnectionCheck, ProviderChange, ProviderView};

/// The model provider settings (never the key: only where it is).
#[tauri::command]
pub async fn provider_settings(state: S<'_>) -> BridgeResult<ProviderView> {
    Ok(state.harness().await?.provider_settings().await)
}

/// Keeps a change of the provider settings; a key given with it goes to the keychain.
#[tauri::command]
pub async fn save_provider_settings(
    state: S<'_>,
    change: ProviderChange,
) -> BridgeResult<ProviderView> {
    state
        .harness()
        .await?
        .save_provider_settings(change)
        .await
        .map_err(BridgeError::from)
}

/// Forgets the key kept in the keychain for a provider.
#[tauri::command]
pub async fn forget_provider_key(
    state: S<'_>,
    provider: ProviderKind,
) -> BridgeResult<ProviderView> {
    state
        .harness()
        .await?
        .forget_provider_key(provider)
        .await
        .map_err(BridgeError::from)
}

/// One minimal request to the provider: of `change` (not kept yet), or of the saved settings.
#[tauri::command]
pub async fn test_provider(
    state: S<'_>,
    change: Option<ProviderChange>,
) -> BridgeResult<ConnectionCheck> {
    Ok(state.harness().await?.test_provider(change).await)
}

/// The project's remembered tool permission rules.
#[tauri::command]
pub async fn permission_rules(state: S<'_>) -> BridgeResult<Vec<PermissionRule>> {
    Ok(state.harness().await?.permission_rules().await)
}

/// Sets (or, with `null`, revokes) the rule for a tool name or pattern.
#[tauri::command]
pub async fn set_permission(
    state: S<'_>,
    tool: String,
    permission: Option<ToolPermission>,
) -> BridgeResult<Vec<PermissionRule>> {
    Ok(state
        .harness()
        .await?
        .set_permission(&tool, permission)
        .await?)
}

// ---- MCP Apps views ------------------------------------------------------------------------

/// Opens the view of a tool call (reads its `ui://` resource from the server now); its
/// document is then served under its server's view origin (views/scheme.rs).
#[tauri::command]
pub async fn open_view(
    state: S<'_>,
    server: String,
    tool: String,
    call: ViewCall,
) -> BridgeResult<ViewOpened> {
    Ok(state
        .harness()
        .await?
        .open_view(&server, &tool, call)
        .await?)
}

/// One message a view's frame sent (checked in the window: its frame, its origin), for the
/// core to check and answer.
#[tauri::command]
pub async fn view_message(
    state: S<'_>,
    view_id: String,
    method: String,
    params: Option<Value>,
) -> BridgeResult<ViewReply> {
    Ok(state
        .harness()
        .await?
        .view_message(&view_id, &method, params)
        .await?)
}

/// The user closed a view; its teardown event follows.
#[tauri::command]
pub async fn close_view(state: S<'_>, view_id: String) -> BridgeResult<bool> {
    Ok(state.harness().await?.close_view(&view_id))
}

#[tauri::command]
pub async fn pending_messages(state: S<'_>) -> BridgeResult<Vec<PendingMessage>> {
    Ok(state.harness().await?.pending_messages())
}

/// Sends a view's pending message as the user's next chat message; the turn's events
/// arrive on `channel` as with `chat_send`.
#[tauri::command]
pub async fn send_pending(state: S<'_>, id: u64, channel: Channel<Event>) -> BridgeResult<()> {
    let sink = Box::new(move |e| channel.send(e).is_ok());
    Ok(state.harness().await?.send_pending(id, sink).await?)
}

#[tauri::command]
pub async fn discard_pending(state: S<'_>, id: u64) -> BridgeResult<bool> {
    Ok(state.harness().await?.discard_pending(id))
}

/// Offers a view's download with the native save dialog (one per file); true when
/// something was saved where the user picked.
#[tauri::command]
pub async fn save_download(
    app: AppHandle,
    state: S<'_>,
    download_id: String,
    names: Vec<String>,
) -> BridgeResult<bool> {
    let harness = state.harness().await?;
    crate::views::save_download(&app, &harness, &download_id, names).await
}

// ---- MCP tasks ---------------------------------------------------------------------------

/// The project's MCP tasks, newest first.
#[tauri::command]
pub async fn list_tasks(state: S<'_>) -> BridgeResult<Vec<harness9::host::tasks::TaskRecord>> {
    Ok(crate::tasks::list(&*state.harness().await?))
}

/// Cancels a running task.
#[tauri::command]
pub async fn cancel_task(
    state: S<'_>,
    server: String,
    task_id: String,
) -> BridgeResult<harness9::host::tasks::CancelOutcome> {
    crate::tasks::cancel(&*state.harness().await?, &server, &task_id).await
}

/// A finished task's result.
#[tauri::command]
pub async fn task_result(
    state: S<'_>,
    server: String,
    task_id: String,
) -> BridgeResult<harness9::mcp::CallToolResult> {
    crate::tasks::result(&*state.harness().await?, &server, &task_id).await
}
