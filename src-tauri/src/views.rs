//! MCP Apps views in the window: their own origins (the `h9view` scheme, [`scheme`]) and
//! what keeps them away from the app's commands ([`guard`]).
//!
//! The core decides what a view may do; this crate serves each server's views from an
//! origin of its own and relays what the front end's bridge hands over.

pub mod guard;
pub mod scheme;

use tauri::{AppHandle, Manager, Runtime};

/// Closes the script-message path to the IPC and registers the view scheme, on the main
/// web view. Runs once, in `setup`, before any view can load.
pub fn install<R: Runtime>(app: &AppHandle<R>) -> tauri::Result<()> {
    let Some(webview) = app.get_webview_window("main") else {
        tracing::error!("no main web view: views cannot be shown");
        return Ok(());
    };
    guard::close_post_message_path(&webview)?;
    #[cfg(target_os = "linux")]
    {
        let app = app.clone();
        scheme::register(&webview, move |target| {
            let app = app.clone();
            async move { serve(&app, target).await }
        })?;
    }
    Ok(())
}

/// The answer to a request for a view's document.
async fn serve<R: Runtime>(_app: &AppHandle<R>, _target: scheme::Target) -> scheme::Answer {
    scheme::Answer::not_found()
}
