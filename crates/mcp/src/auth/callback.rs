//! The loopback redirect listener: an HTTP server on `127.0.0.1` (a random port unless
//! `callbackPort` is set) that waits for the browser to come back to `/callback` with the
//! authorization response, answers it with a page telling the user to return to the app,
//! and hands over the query.
//!
//! Invariants: only `/callback` with the `state` of this sign-in ends the wait (other
//! paths, such as `/favicon.ico`, get a 404; a redirect with another or no `state`, even
//! one that says `error=`, gets a 400 and is otherwise ignored: anyone who can make the
//! browser load a loopback URL could send one); a request is read up to [`MAX_CALLBACK_REQUEST_BYTES`] and for at most
//! [`CALLBACK_READ_TIMEOUT`]; the wait ends after [`CALLBACK_TIMEOUT`]; dropping the
//! listener or the wait frees the port.

use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

use super::AuthError;

/// How long the user has to finish signing in in the browser.
pub const CALLBACK_TIMEOUT: Duration = Duration::from_secs(5 * 60);

/// Largest request (line and headers) read from the browser.
pub const MAX_CALLBACK_REQUEST_BYTES: usize = 16 * 1024;

/// How long one browser connection may take to send its request.
pub const CALLBACK_READ_TIMEOUT: Duration = Duration::from_secs(10);

/// The redirect path.
pub const CALLBACK_PATH: &str = "/callback";

/// The authorization response's parameters.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CallbackParams {
    pub code: Option<String>,
    pub state: Option<String>,
    pub iss: Option<String>,
    pub error: Option<String>,
    pub error_description: Option<String>,
}

impl CallbackParams {
    fn from_query(q: &str) -> CallbackParams {
        let mut p = CallbackParams::default();
        for (k, v) in url::form_urlencoded::parse(q.as_bytes()) {
            let slot = match k.as_ref() {
                "code" => &mut p.code,
                "state" => &mut p.state,
                "iss" => &mut p.iss,
                "error" => &mut p.error,
                "error_description" => &mut p.error_description,
                _ => continue,
            };
            slot.get_or_insert_with(|| v.into_owned());
        }
        p
    }
}

/// A bound listener, waiting to be waited on.
pub struct CallbackListener {
    listener: TcpListener,
    port: u16,
}

impl CallbackListener {
    /// Binds `127.0.0.1:port` (0 = any free port).
    pub async fn bind(port: u16) -> Result<CallbackListener, AuthError> {
        let listener = TcpListener::bind(("127.0.0.1", port)).await.map_err(|e| {
            AuthError::Browser(if port == 0 {
                format!("cannot listen on 127.0.0.1 for the sign-in redirect: {e}")
            } else {
                format!("cannot listen on 127.0.0.1:{port} for the sign-in redirect ({e}); free the port or change \"callbackPort\" in .mcp.json")
            })
        })?;
        let port = listener
            .local_addr()
            .map_err(|e| {
                AuthError::Browser(format!("cannot read the redirect listener's port: {e}"))
            })?
            .port();
        Ok(CallbackListener { listener, port })
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    pub fn redirect_uri(&self) -> String {
        format!("http://127.0.0.1:{}{CALLBACK_PATH}", self.port)
    }

    /// Waits for the browser's redirect carrying `state`, at most `timeout`.
    pub async fn wait(self, timeout: Duration, state: &str) -> Result<CallbackParams, AuthError> {
        match tokio::time::timeout(timeout, self.accept_loop(state)).await {
            Ok(r) => r,
            Err(_) => Err(AuthError::Browser(format!(
                "sign-in was not finished within {}; try again",
                minutes(timeout)
            ))),
        }
    }

    async fn accept_loop(self, state: &str) -> Result<CallbackParams, AuthError> {
        loop {
            let (stream, _) = self.listener.accept().await.map_err(|e| {
                AuthError::Browser(format!("the sign-in redirect listener failed: {e}"))
            })?;
            if let Some(p) = serve(stream, state).await {
                return Ok(p);
            }
        }
    }
}

fn minutes(d: Duration) -> String {
    let s = d.as_secs();
    if s >= 60 && s.is_multiple_of(60) {
        let m = s / 60;
        format!("{m} minute{}", if m == 1 { "" } else { "s" })
    } else {
        format!("{s} s")
    }
}

/// Answers one connection; the parameters when it was the redirect of this sign-in.
async fn serve(mut stream: TcpStream, state: &str) -> Option<CallbackParams> {
    let head = tokio::time::timeout(CALLBACK_READ_TIMEOUT, read_head(&mut stream))
        .await
        .ok()??;
    let line = head.lines().next().unwrap_or("");
    let mut parts = line.split(' ');
    let (method, target) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""));
    let (path, query) = target.split_once('?').unwrap_or((target, ""));
    if method != "GET" || path != CALLBACK_PATH {
        let _ = respond(&mut stream, "404 Not Found", "Not found.").await;
        return None;
    }
    let p = CallbackParams::from_query(query);
    // The state first: nothing else of an answer that is not this sign-in's is read.
    if !p
        .state
        .as_deref()
        .is_some_and(|s| super::pkce::same_secret(s, state))
    {
        let _ = respond(
            &mut stream,
            "400 Bad Request",
            "<p>This page does not belong to the sign-in harness9 is waiting for; it was ignored.</p>",
        )
        .await;
        return None;
    }
    let page = match &p.error {
        Some(e) => format!(
            "<p><b>Sign-in failed</b>: {}{}</p><p>You can close this tab and go back to harness9.</p>",
            html_escape(e),
            p.error_description
                .as_deref()
                .map(|d| format!(" ({})", html_escape(d)))
                .unwrap_or_default()
        ),
        None => "<p><b>Signed in.</b></p><p>You can close this tab and go back to harness9.</p>"
            .to_string(),
    };
    let _ = respond(&mut stream, "200 OK", &page).await;
    Some(p)
}

/// Reads the request line and headers (up to the blank line).
async fn read_head(stream: &mut TcpStream) -> Option<String> {
    let mut buf = Vec::with_capacity(1024);
    let mut chunk = [0u8; 1024];
    loop {
        let n = stream.read(&mut chunk).await.ok()?;
        if n == 0 {
            break;
        }
        buf.extend_from_slice(&chunk[..n]);
        if buf.windows(4).any(|w| w == b"\r\n\r\n") || buf.windows(2).any(|w| w == b"\n\n") {
            break;
        }
        if buf.len() > MAX_CALLBACK_REQUEST_BYTES {
            let _ = respond(stream, "431 Request Header Fields Too Large", "Too large.").await;
            return None;
        }
    }
    String::from_utf8(buf).ok()
}

async fn respond(stream: &mut TcpStream, status: &str, body: &str) -> std::io::Result<()> {
    let html = format!(
        "<!doctype html><html><head><meta charset=\"utf-8\"><title>harness9</title></head><body style=\"font-family:sans-serif;margin:3em\">{body}</body></html>"
    );
    let resp = format!(
        "HTTP/1.1 {status}\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: {}\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n{html}",
        html.len()
    );
    stream.write_all(resp.as_bytes()).await?;
    stream.shutdown().await
}

fn html_escape(s: &str) -> String {
    s.chars()
        .take(300)
        .map(|c| match c {
            '<' => "&lt;".to_string(),
            '>' => "&gt;".to_string(),
            '&' => "&amp;".to_string(),
            '"' => "&quot;".to_string(),
            c => c.to_string(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn get(port: u16, target: &str) -> String {
        let mut s = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
        s.write_all(format!("GET {target} HTTP/1.1\r\nHost: x\r\n\r\n").as_bytes())
            .await
            .unwrap();
        let mut out = String::new();
        s.read_to_string(&mut out).await.unwrap();
        out
    }

    #[tokio::test]
    async fn returns_the_query_and_ignores_other_paths() {
        let l = CallbackListener::bind(0).await.unwrap();
        let port = l.port();
        assert_eq!(
            l.redirect_uri(),
            format!("http://127.0.0.1:{port}/callback")
        );
        let wait = tokio::spawn(l.wait(Duration::from_secs(10), "s"));
        assert!(get(port, "/favicon.ico").await.starts_with("HTTP/1.1 404"));
        let page = get(port, "/callback?code=c%201&state=s&iss=https%3A%2F%2Fas").await;
        assert!(page.starts_with("HTTP/1.1 200"), "{page}");
        assert!(page.contains("go back to harness9"), "{page}");
        assert_eq!(
            wait.await.unwrap().unwrap(),
            CallbackParams {
                code: Some("c 1".into()),
                state: Some("s".into()),
                iss: Some("https://as".into()),
                ..Default::default()
            }
        );
        // The port is free again.
        CallbackListener::bind(port).await.unwrap();
    }

    #[tokio::test]
    async fn error_page_and_timeout() {
        let l = CallbackListener::bind(0).await.unwrap();
        let port = l.port();
        let wait = tokio::spawn(l.wait(Duration::from_secs(10), "s1"));
        // An error from someone else (no state, or another one) is ignored.
        for other in ["", "&state=s2", "&state=s"] {
            let page = get(port, &format!("/callback?error=access_denied{other}")).await;
            assert!(page.starts_with("HTTP/1.1 400"), "{page}");
        }
        let page = get(
            port,
            "/callback?error=access_denied&error_description=%3Cno%3E&state=s1",
        )
        .await;
        assert!(
            page.contains("Sign-in failed</b>: access_denied (&lt;no&gt;)"),
            "{page}"
        );
        assert_eq!(
            wait.await.unwrap().unwrap().error.as_deref(),
            Some("access_denied")
        );

        let l = CallbackListener::bind(0).await.unwrap();
        let e = l.wait(Duration::from_millis(50), "s").await.unwrap_err();
        assert_eq!(
            e.to_string(),
            "sign-in was not finished within 0 s; try again"
        );
        assert_eq!(minutes(CALLBACK_TIMEOUT), "5 minutes");
    }
}
