//! What stands between a frame of the window and the app's commands.
//!
//! On WebKitGTK, wry registers its `ipc` script message handler on the web view's content
//! manager, and WebKit exposes every such handler as `window.webkit.messageHandlers.<name>`
//! in **every** frame, cross-origin and sandboxed ones included. What a frame posts there
//! reaches Tauri attributed to the *top* document's URL (wry reads `webview.uri()`), so
//! Tauri sees it as coming from the app itself; only the per-process invoke key (which
//! lives in a closure of the main frame's scripts) stands in the way. The app's own calls
//! never use that path on Linux: Tauri's IPC script posts them to the `ipc://` custom
//! protocol with `fetch`, where the engine sets the `Origin` header.
//!
//! So the app:
//! - removes the `ipc` script message handler once the main web view exists
//!   ([`close_post_message_path`]): no frame has anything to post to;
//! - admits a command only when the request carries the app's own `Origin`
//!   ([`admit`]): a post through a message handler carries no engine-set origin, and
//!   a view's origin (the view scheme, [`super::scheme`]) is never the app's.
//!
//! With `HARNESS9_COMMAND_LOG=<file>` every command that reaches the app, admitted or
//! refused, is appended to that file as `admitted|refused <command> <origin>`: the
//! isolation test reads it to prove that nothing a view sent reached a command.

use std::io::Write;

use tauri::ipc::Invoke;
use tauri::Runtime;

/// Names a file that gets one line per command reaching the app (tests read it).
pub const COMMAND_LOG_ENV: &str = "HARNESS9_COMMAND_LOG";

/// The name wry gives its script message handler on WebKitGTK.
const WRY_IPC_HANDLER: &str = "ipc";

/// Removes wry's `ipc` script message handler from the web view, so that no frame (the
/// app's own document included) can post to the native IPC handler; the app's commands
/// keep going through the `ipc://` custom protocol.
pub fn close_post_message_path<R: Runtime>(webview: &tauri::WebviewWindow<R>) -> tauri::Result<()> {
    webview.with_webview(|platform| {
        #[cfg(target_os = "linux")]
        {
            use webkit2gtk::{UserContentManagerExt, WebViewExt};
            match platform.inner().user_content_manager() {
                Some(manager) => manager.unregister_script_message_handler(WRY_IPC_HANDLER),
                None => tracing::error!("the web view has no content manager"),
            }
        }
        #[cfg(not(target_os = "linux"))]
        let _ = platform;
    })
}

/// The origins the app's own document is served from: the embedded UI, and the dev
/// server when built without the `custom-protocol` feature.
pub fn app_origins(dev_url: Option<&tauri::Url>) -> Vec<String> {
    let mut origins = vec![
        "tauri://localhost".to_string(),
        "http://tauri.localhost".to_string(),
        "https://tauri.localhost".to_string(),
    ];
    if !cfg!(feature = "custom-protocol") {
        if let Some(url) = dev_url {
            origins.push(url.origin().ascii_serialization());
        }
    }
    origins
}

/// The app's command handler (`generate_handler!`), typed for the wrapper that admits
/// each call.
pub fn commands<R: Runtime, F: Fn(Invoke<R>) -> bool>(handler: F) -> F {
    handler
}

/// Whether a command may run: its request carries an `Origin` header naming the app's own
/// document. Logs the decision when [`COMMAND_LOG_ENV`] is set.
pub fn admit<R: Runtime>(invoke: &Invoke<R>, app_origins: &[String]) -> bool {
    let origin = invoke
        .message
        .headers()
        .get("origin")
        .and_then(|v| v.to_str().ok());
    let admitted = origin.is_some_and(|o| app_origins.iter().any(|a| a == o));
    log(admitted, invoke.message.command(), origin.unwrap_or("-"));
    if !admitted {
        tracing::warn!(
            "refused the command {} from origin {}: only the app's own document may call it",
            invoke.message.command(),
            origin.unwrap_or("(none)")
        );
    }
    admitted
}

fn log(admitted: bool, command: &str, origin: &str) {
    let Some(path) = std::env::var_os(COMMAND_LOG_ENV) else {
        return;
    };
    let verdict = if admitted { "admitted" } else { "refused" };
    let line = format!("{verdict} {command} {origin}\n");
    let written = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .and_then(|mut f| f.write_all(line.as_bytes()));
    if let Err(e) = written {
        tracing::warn!("cannot write the command log: {e}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_dev_server_is_an_app_origin_only_in_dev_builds() {
        let dev = tauri::Url::parse("http://localhost:1420/").unwrap();
        let origins = app_origins(Some(&dev));
        assert!(origins.contains(&"tauri://localhost".to_string()));
        assert_eq!(
            origins.contains(&"http://localhost:1420".to_string()),
            !cfg!(feature = "custom-protocol")
        );
        assert!(!origins
            .iter()
            .any(|o| o.starts_with(super::super::scheme::VIEW_SCHEME)));
    }
}
