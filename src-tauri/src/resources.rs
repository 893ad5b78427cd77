//! Resources in the desktop app: the task that forwards the core's [`SurfaceEvent`]s (listing changes and
//! resource updates) to the window, and saving a resource into the Downloads folder. The
//! payloads are the core's own ([`harness9::harness::ResourceListing`],
//! [`harness9::harness::ReadPreview`]). The web view never gets file-system access: the
//! file is written by the core, from what the server sent, under a name it made safe.

use tauri::{AppHandle, Manager as _};
use tokio::sync::broadcast::error::RecvError;
use tokio::task::AbortHandle;

use harness9::host::catalog::SurfaceEvent;
use harness9::Harness;

use crate::bridge::{BridgeError, BridgeResult, ProjectEmitter};

/// The event that tells the window resources changed: a [`SurfaceEvent`].
pub const RESOURCES_EVENT: &str = "resources-changed";

/// Saves a resource into the user's Downloads folder; returns the file written.
pub async fn save(
    app: &AppHandle,
    harness: &Harness,
    server: &str,
    uri: &str,
) -> BridgeResult<String> {
    let folder = app
        .path()
        .download_dir()
        .map_err(BridgeError::no_downloads)?;
    let _ = std::fs::create_dir_all(&folder);
    let path = harness
        .save_resource(server, uri, &folder)
        .await
        .map_err(BridgeError::from)?;
    Ok(path.display().to_string())
}

/// Forwards listing changes and resource updates to the window (a listing change with
/// no server when events were missed: every listing may have changed).
pub fn forward(app: ProjectEmitter, harness: &Harness) -> AbortHandle {
    let mut rx = harness.subscribe_surface();
    tokio::spawn(async move {
        loop {
            let event = match rx.recv().await {
                Ok(SurfaceEvent::ElicitationComplete { .. }) => continue,
                Ok(e) => e,
                Err(RecvError::Lagged(_)) => SurfaceEvent::ListingChanged {
                    server: String::new(),
                },
                Err(RecvError::Closed) => return,
            };
            app.emit(RESOURCES_EVENT, event);
        }
    })
    .abort_handle()
}
