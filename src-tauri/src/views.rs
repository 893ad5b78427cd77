//! MCP Apps views in the window: their own origins (the `h9view` scheme, [`scheme`]) and
//! what keeps them away from the app's commands ([`guard`]).
//!
//! The core decides what a view may do; this crate serves each server's views from an
//! origin of its own, relays what the front end's bridge hands over, forwards the core's
//! view events, and shows the native save dialog for a view's download.

pub mod guard;
pub mod scheme;

use tauri::{AppHandle, Manager, Runtime};
use tauri_plugin_dialog::DialogExt;
use tokio::sync::broadcast::error::RecvError;
use tokio::task::AbortHandle;

use harness9::Harness;

use crate::bridge::{events, BridgeResult, ProjectEmitter};

/// Closes the script-message path to the IPC and registers the view scheme, on the main
/// web view, with `serve` answering each request for a view's document. Runs once, in
/// `setup`, before any view can load.
pub fn install<R, F, Fut>(app: &AppHandle<R>, serve: F) -> tauri::Result<()>
where
    R: Runtime,
    F: Fn(scheme::Target) -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = scheme::Answer> + Send + 'static,
{
    let Some(webview) = app.get_webview_window("main") else {
        tracing::error!("no main web view: views cannot be shown");
        return Ok(());
    };
    guard::close_post_message_path(&webview)?;
    #[cfg(target_os = "linux")]
    scheme::register(&webview, serve)?;
    #[cfg(not(target_os = "linux"))]
    let _ = serve;
    Ok(())
}

/// The answer to a request for a view's document: the live view of that id, asked for
/// under its own server's origin; anything else is not found.
pub fn document(harness: &Harness, target: &scheme::Target) -> scheme::Answer {
    let under_its_origin = harness
        .live_views()
        .iter()
        .any(|v| v.view_id == target.view_id && v.origin == target.label);
    match harness.view_document(&target.view_id) {
        Some(doc) if under_its_origin => scheme::Answer::document(scheme::Document {
            html: doc.html.to_string(),
            csp: doc.csp,
        }),
        _ => scheme::Answer::not_found(),
    }
}

/// Forwards the core's view events (teardowns, pending messages, model-context updates,
/// floods) to the window.
pub fn forward(app: ProjectEmitter, harness: &Harness) -> AbortHandle {
    let mut rx = harness.subscribe_views();
    tokio::spawn(async move {
        loop {
            match rx.recv().await {
                Ok(event) => app.emit(events::VIEWS, event),
                Err(RecvError::Lagged(n)) => {
                    tracing::warn!("the window missed {n} view events");
                }
                Err(RecvError::Closed) => return,
            }
        }
    })
    .abort_handle()
}

/// Offers a view's files with the native save dialog, one per file; each goes only where
/// the user picked. True when at least one was saved; the offer is forgotten after.
pub async fn save_download(
    app: &AppHandle,
    harness: &Harness,
    download_id: &str,
    names: Vec<String>,
) -> BridgeResult<bool> {
    let mut saved = false;
    let mut result = Ok(());
    for (index, name) in names.into_iter().enumerate() {
        let dialog = app.dialog().file().set_file_name(&name);
        let picked = tokio::task::spawn_blocking(move || dialog.blocking_save_file()).await?;
        let Some(path) = picked.and_then(|p| p.into_path().ok()) else {
            continue;
        };
        match harness.save_download(download_id, index, &path).await {
            Ok(()) => saved = true,
            Err(e) => {
                result = Err(e.into());
                break;
            }
        }
    }
    harness.discard_download(download_id);
    result.map(|()| saved)
}
