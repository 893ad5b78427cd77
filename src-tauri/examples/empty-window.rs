//! An empty Tauri 2 window: the baseline of the desktop memory figure. It is the app's own
//! Tauri build (same crate, features and config) showing one blank page in a window of the
//! app's size, with no project, core or servers. `ui/e2e/figures.mjs --memory` measures it
//! beside the real app.
//!
//!     cargo build --release -p harness9-desktop --example empty-window

use tauri::http::Response;
use tauri::{WebviewUrl, WebviewWindowBuilder};

fn main() {
    let mut context = tauri::generate_context!("../tauri.conf.json");
    // The app's window comes from the config; this one is made below with a blank page.
    context.config_mut().app.windows.clear();
    tauri::Builder::default()
        .register_uri_scheme_protocol("blank", |_ctx, _request| {
            Response::builder()
                .header("content-type", "text/html")
                .body(
                    b"<!doctype html><html><head><title>empty</title></head><body></body></html>"
                        .to_vec(),
                )
                .expect("a static response")
        })
        .setup(|app| {
            let url = "blank://localhost/".parse().expect("a static URL");
            WebviewWindowBuilder::new(app, "main", WebviewUrl::CustomProtocol(url))
                .title("empty")
                .inner_size(1200.0, 780.0)
                .build()?;
            Ok(())
        })
        .run(context)
        .expect("run the empty window");
}
