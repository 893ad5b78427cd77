//! The views' own origins: the `h9view` URI scheme, registered on the web view's WebKit
//! context (not through Tauri), one origin per server: `h9view://<server label>/<view id>`.
//!
//! Why not Tauri's `register_uri_scheme_protocol`: Tauri counts every scheme registered
//! through it as a *local* origin of the app (`Webview::is_local_url`), so a request from a
//! view would be judged by the app's own capability. A scheme Tauri does not know is a
//! remote origin to it, for which the app grants nothing.
//!
//! The handler serves exactly one thing: the document of a live view, from the core, with
//! the view's Content-Security-Policy as a response header (plus a second policy that
//! sandboxes the document whatever frame it lands in) and `Cache-Control: no-store`. Any
//! other path, an unknown view, a view asked for under another server's origin, or a
//! method other than GET gets an error status and an empty body.

use std::borrow::Cow;

/// The scheme views are served from.
pub const VIEW_SCHEME: &str = "h9view";

/// The second policy of every view document: whatever frame it lands in, it runs
/// sandboxed (scripts and forms of its own origin; no popups, no top navigation, no
/// modals, no downloads) and posts no form anywhere.
pub const SANDBOX_POLICY: &str =
    "sandbox allow-scripts allow-same-origin allow-forms; form-action 'none'";

/// A view's document as the core hands it out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Document {
    pub html: String,
    /// The Content-Security-Policy built from the view's declared domains.
    pub csp: String,
}

/// What a request names: the server label (the host) and the view id (the one path
/// segment).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    pub label: String,
    pub view_id: String,
}

/// Whether `label` can stand as the host of a view origin: 1 to 63 lowercase ASCII
/// letters, digits or `-`, not starting or ending with `-`.
pub fn valid_label(label: &str) -> bool {
    !label.is_empty()
        && label.len() <= 63
        && !label.starts_with('-')
        && !label.ends_with('-')
        && label
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
}

/// The view a request URI names, or `None` for anything else (other schemes, a bad host,
/// a path that is not exactly one id segment, a query or fragment).
pub fn parse_target(uri: &str) -> Option<Target> {
    let url = tauri::Url::parse(uri).ok()?;
    if url.scheme() != VIEW_SCHEME
        || url.port().is_some()
        || !url.username().is_empty()
        || url.password().is_some()
        || url.query().is_some()
    {
        return None;
    }
    let label = url.host_str()?;
    let view_id = url.path().strip_prefix('/')?;
    let id_ok = !view_id.is_empty()
        && view_id.len() <= 128
        && view_id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
    (valid_label(label) && id_ok).then(|| Target {
        label: label.to_string(),
        view_id: view_id.to_string(),
    })
}

/// An answer of the handler, in plain data (built off the main thread).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer {
    pub status: u16,
    pub headers: Vec<(&'static str, Cow<'static, str>)>,
    pub body: Vec<u8>,
}

impl Answer {
    fn error(status: u16) -> Answer {
        Answer {
            status,
            headers: vec![("Cache-Control", "no-store".into())],
            body: Vec::new(),
        }
    }

    /// 404: nothing by that name.
    pub fn not_found() -> Answer {
        Answer::error(404)
    }

    /// 405: only GET is served.
    pub fn bad_method() -> Answer {
        Answer::error(405)
    }

    pub fn document(doc: Document) -> Answer {
        Answer {
            status: 200,
            headers: vec![
                ("Content-Type", "text/html; charset=utf-8".into()),
                ("Content-Security-Policy", doc.csp.into()),
                ("Content-Security-Policy", SANDBOX_POLICY.into()),
                ("Cache-Control", "no-store".into()),
                ("X-Content-Type-Options", "nosniff".into()),
                ("Referrer-Policy", "no-referrer".into()),
            ],
            body: doc.html.into_bytes(),
        }
    }
}

/// Registers the view scheme on the web view's WebKit context. `serve` answers a request
/// for a view; it runs on the async runtime and its answer is written back on the main
/// thread.
#[cfg(target_os = "linux")]
pub fn register<R, F, Fut>(webview: &tauri::WebviewWindow<R>, serve: F) -> tauri::Result<()>
where
    R: tauri::Runtime,
    F: Fn(Target) -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = Answer> + Send + 'static,
{
    webview.with_webview(move |platform| {
        use webkit2gtk::{SecurityManagerExt, URISchemeRequestExt, WebContextExt, WebViewExt};
        let Some(context) = platform.inner().context() else {
            tracing::error!("the web view has no WebKit context: views cannot be shown");
            return;
        };
        // A secure context like the app's own page (no mixed-content block, and the
        // APIs that need one work); not CORS-enabled, not local, not display-isolated.
        if let Some(security) = context.security_manager() {
            security.register_uri_scheme_as_secure(VIEW_SCHEME);
        }
        let serve = std::sync::Arc::new(serve);
        context.register_uri_scheme(VIEW_SCHEME, move |request| {
            let method = request.http_method().map(|m| m.to_string());
            let target = request.uri().and_then(|u| parse_target(u.as_str()));
            let key = pending::hold(request.clone());
            let serve = serve.clone();
            tauri::async_runtime::spawn(async move {
                let answer = match (method.as_deref(), target) {
                    (Some("GET") | None, Some(target)) => serve(target).await,
                    (Some("GET") | None, None) => Answer::not_found(),
                    (Some(_), _) => Answer::bad_method(),
                };
                webkit2gtk::glib::MainContext::default()
                    .invoke(move || pending::finish(key, answer));
            });
        });
    })
}

/// Requests waiting for their answer, kept on the main thread (WebKit's objects never
/// leave it); the async task carries only the key.
#[cfg(target_os = "linux")]
mod pending {
    use std::cell::RefCell;
    use std::collections::HashMap;

    use webkit2gtk::{
        gio, glib, URISchemeRequest, URISchemeRequestExt, URISchemeResponse, URISchemeResponseExt,
    };

    use super::Answer;

    thread_local! {
        static WAITING: RefCell<(u64, HashMap<u64, URISchemeRequest>)> = RefCell::default();
    }

    pub fn hold(request: URISchemeRequest) -> u64 {
        WAITING.with(|w| {
            let mut w = w.borrow_mut();
            w.0 += 1;
            let key = w.0;
            w.1.insert(key, request);
            key
        })
    }

    pub fn finish(key: u64, answer: Answer) {
        let Some(request) = WAITING.with(|w| w.borrow_mut().1.remove(&key)) else {
            return;
        };
        let length = answer.body.len() as i64;
        let stream = gio::MemoryInputStream::from_bytes(&glib::Bytes::from_owned(answer.body));
        let response = URISchemeResponse::new(&stream, length);
        response.set_status(u32::from(answer.status), None);
        let headers = soup::MessageHeaders::new(soup::MessageHeadersType::Response);
        for (name, value) in &answer.headers {
            if name.eq_ignore_ascii_case("content-type") {
                response.set_content_type(value);
            }
            headers.append(name, value);
        }
        response.set_http_headers(headers);
        request.finish_with_response(&response);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_names_one_view_of_one_server() {
        assert_eq!(
            parse_target("h9view://fs-1a2b/v-17"),
            Some(Target {
                label: "fs-1a2b".into(),
                view_id: "v-17".into()
            })
        );
        for bad in [
            "h9view://fs/",
            "h9view://fs",
            "h9view://fs/v/1",
            "h9view://fs/v?x=1",
            "h9view://fs:80/v",
            "h9view://a@fs/v",
            "h9view://Fs%20x/v",
            "h9view://-fs/v",
            "h9view://fs/%2e%2e",
            "tauri://localhost/v",
            "ipc://localhost/get_status",
            "not a url",
        ] {
            assert_eq!(parse_target(bad), None, "{bad}");
        }
    }

    #[test]
    fn urls_and_origins_round_trip() {
        let url = "h9view://demo/v1";
        assert_eq!(
            parse_target(url),
            Some(Target {
                label: "demo".into(),
                view_id: "v1".into()
            })
        );
        assert_eq!(
            tauri::Url::parse(url)
                .unwrap()
                .origin()
                .ascii_serialization(),
            // A scheme the URL standard does not know has an opaque origin in the `url`
            // crate; WebKit gives it a tuple origin, which the front end checks.
            "null"
        );
    }

    #[test]
    fn a_document_goes_out_with_its_policies_and_no_store() {
        let a = Answer::document(Document {
            html: "<p>hi</p>".into(),
            csp: "default-src 'none'".into(),
        });
        assert_eq!(a.status, 200);
        let csp: Vec<&str> = a
            .headers
            .iter()
            .filter(|(n, _)| *n == "Content-Security-Policy")
            .map(|(_, v)| v.as_ref())
            .collect();
        assert_eq!(csp, ["default-src 'none'", SANDBOX_POLICY]);
        assert!(a.headers.contains(&("Cache-Control", "no-store".into())));
        assert_eq!(Answer::not_found().status, 404);
        assert!(Answer::not_found().body.is_empty());
    }
}
