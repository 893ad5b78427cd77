//! The commands of the "Add server" flow: searching the configured registries, the plan
//! of an install (or an update, or a bundle) with the values it asks for, its commit, the
//! installed servers with a newer version, and an entry's secrets (whether each is set,
//! never its value). Each is one call on the core's façade (`harness9::harness::install`).
//! The plans shown are kept in [`crate::plans`].

use std::collections::BTreeMap;

use tauri::{AppHandle, State};
use tauri_plugin_dialog::DialogExt;

use harness9::config::Scope;
use harness9::harness::{BundleRequest, InstallRequest};
use harness9::install::{Installed, OutdatedReport, SearchResults};

use crate::bridge::{BridgeError, BridgeResult};
use crate::plans::{names_missing, PlanView, ServerSecretsView};
use crate::session::AppState;

type S<'a> = State<'a, AppState>;

/// Most results one search asks for (the window asks for more, page by page).
pub const MAX_SEARCH_LIMIT: u32 = 1000;

/// Searches the configured registries: at most `limit` results (the window asks for more
/// with a larger limit; answers are kept by the core, so a repeated search is quick).
#[tauri::command]
pub async fn search_servers(
    state: S<'_>,
    query: String,
    limit: Option<u32>,
) -> BridgeResult<SearchResults> {
    let limit = limit.map(|l| l.clamp(1, MAX_SEARCH_LIMIT) as usize);
    Ok(state
        .harness()
        .await?
        .search_servers(&query, limit, None)
        .await?)
}

/// The versions of a server in the registry it was found in, newest first.
#[tauri::command]
pub async fn server_versions(
    state: S<'_>,
    registry: String,
    name: String,
) -> BridgeResult<Vec<String>> {
    Ok(state
        .harness()
        .await?
        .installer()
        .versions(&registry, &name)
        .await?)
}

/// The plan of installing a registry server (nothing is written).
#[tauri::command]
pub async fn plan_install(state: S<'_>, request: InstallRequest) -> BridgeResult<PlanView> {
    let harness = state.harness().await?;
    let plan = harness.plan_install(request).await?;
    Ok(state.plans.keep(&harness, plan))
}

/// The plan that updates an installed server to its registry's latest version: the old
/// and the new entry, to approve before it is written.
#[tauri::command]
pub async fn plan_update(state: S<'_>, server: String) -> BridgeResult<PlanView> {
    let harness = state.harness().await?;
    let plan = harness.plan_update(&server).await?;
    Ok(state.plans.keep(&harness, plan))
}

/// Shows the native file picker for a bundle (`.mcpb`); `null` when the user cancels.
#[tauri::command]
pub async fn pick_bundle(app: AppHandle) -> BridgeResult<Option<String>> {
    let picked = tokio::task::spawn_blocking(move || {
        app.dialog()
            .file()
            .add_filter("MCP bundle", &["mcpb"])
            .blocking_pick_file()
    })
    .await
    .map_err(BridgeError::from)?;
    Ok(picked.map(|p| p.to_string()))
}

/// The plan of installing a bundle file (picked, dropped on the window, or opened with the
/// app) into `scope` (user by default, or local).
#[tauri::command]
pub async fn plan_bundle(
    state: S<'_>,
    path: String,
    scope: Option<Scope>,
) -> BridgeResult<PlanView> {
    let harness = state.harness().await?;
    let plan = harness
        .plan_bundle_install(BundleRequest {
            path,
            local_name: None,
            scope,
        })
        .await?;
    Ok(state.plans.keep(&harness, plan))
}

/// Shows the native picker for a value that is a path (a bundle's `directory` or `file`
/// setting); `null` when the user cancels.
#[tauri::command]
pub async fn pick_path(app: AppHandle, directory: bool) -> BridgeResult<Option<String>> {
    let picked = tokio::task::spawn_blocking(move || {
        let d = app.dialog().file();
        if directory {
            d.blocking_pick_folder()
        } else {
            d.blocking_pick_file()
        }
    })
    .await
    .map_err(BridgeError::from)?;
    Ok(picked.map(|p| p.to_string()))
}

/// The bundle the app was opened with (from the file manager), once.
#[tauri::command]
pub fn opened_bundle(state: S<'_>) -> Option<String> {
    state.opened_bundle.lock().take()
}

/// Plan `id` with `answers` in, as it would be written (missing values left out and
/// listed). Secret values are kept out of what comes back.
#[tauri::command]
pub async fn preview_install(
    state: S<'_>,
    plan_id: u32,
    answers: BTreeMap<String, String>,
) -> BridgeResult<PlanView> {
    let harness = state.harness().await?;
    let plan = state.plans.get(plan_id, &harness)?.fill_partly(&answers)?;
    let missing = names_missing(&plan);
    Ok(PlanView {
        id: plan_id,
        plan,
        missing,
    })
}

/// Writes plan `id` with `answers`, when `shown` is the digest of the entry the user saw;
/// the entry counts as approved as shown. The new or updated server starts.
#[tauri::command]
pub async fn commit_install(
    state: S<'_>,
    plan_id: u32,
    answers: BTreeMap<String, String>,
    shown: String,
) -> BridgeResult<Installed> {
    let harness = state.harness().await?;
    let plan = state.plans.get(plan_id, &harness)?;
    let done = harness.commit_install(plan, answers, shown).await?;
    state.plans.forget(plan_id);
    Ok(done)
}

/// Installed registry servers with a newer version.
#[tauri::command]
pub async fn outdated_servers(state: S<'_>) -> BridgeResult<OutdatedReport> {
    Ok(state.harness().await?.outdated_servers().await)
}

/// Which secrets of a server's entry are set (never the values).
#[tauri::command]
pub async fn server_secrets(state: S<'_>, server: String) -> BridgeResult<ServerSecretsView> {
    let (scope, secrets) = state.harness().await?.server_secrets(&server).await?;
    Ok(ServerSecretsView { scope, secrets })
}

/// Sets (or changes) a secret of a server's entry; the server restarts with it.
#[tauri::command]
pub async fn set_server_secret(
    state: S<'_>,
    server: String,
    name: String,
    value: String,
) -> BridgeResult<()> {
    state
        .harness()
        .await?
        .set_server_secret(&server, &name, value)
        .await?;
    Ok(())
}

/// Forgets a secret of a server's entry; `true` when one was kept.
#[tauri::command]
pub async fn remove_server_secret(
    state: S<'_>,
    server: String,
    name: String,
) -> BridgeResult<bool> {
    Ok(state
        .harness()
        .await?
        .remove_server_secret(&server, &name)
        .await?)
}
