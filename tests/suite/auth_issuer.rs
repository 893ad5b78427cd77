//! Sign-in bound to its issuer, tried as a hostile authorization server would: a refresh
//! token never goes to a server other than the one that issued it, legacy metadata must
//! name the issuer its URL was built from, endpoints must be `https:` (loopback
//! excepted), a failing token endpoint does not cost the user the sign-in, and a forged
//! answer on the loopback listener does not end the sign-in.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
use harness9::mcp::auth::{self, Authorizer, BrowserError, OAuthConfig, Opener};
use serde_json::{json, Value};

use super::support::auth::{connect, ctx, echo, grants, post, Headless};
use super::support::http::Fixture;

#[tokio::test]
async fn a_refresh_token_never_goes_to_another_authorization_server() {
    let fx = Fixture::start().await;
    let url = fx.url("/oauth/json");
    let ctx = ctx();
    auth::sign_in(&url, None, &ctx, Arc::new(Headless))
        .await
        .expect("signed in");
    // The tokens came from another authorization server than the one the server's
    // metadata names now.
    from_another_issuer(&ctx, &url);
    let kept = ctx.store.tokens(&url);

    let a = Authorizer::new(&url, None, ctx.clone());
    let c = connect(&url, a.clone()).await.expect("connects");
    post(&fx, "/as/expire-access").await;
    let err = echo(&c).await.unwrap_err();
    assert!(err.contains("the server requires sign-in"), "{err}");
    let why = a.needs_auth().unwrap_or_default();
    assert!(
        why.contains("names the authorization server")
            && why.contains("not https://old-as.example"),
        "{why}"
    );
    // Nothing went to the new server's token endpoint; the old sign-in is still kept.
    assert_eq!(grants(&fx).await, vec!["authorization_code"]);
    assert_eq!(ctx.store.tokens(&url), kept);
    c.close().await;
}

/// Marks the kept sign-in of `url` as issued by another authorization server than the
/// one the server's metadata names.
fn from_another_issuer(ctx: &harness9::mcp::auth::AuthContext, url: &str) {
    let mut kept = serde_json::to_value(ctx.store.tokens(url).expect("kept")).unwrap();
    kept["issuer"] = json!("https://old-as.example");
    kept["tokenEndpoint"] = json!("https://old-as.example/token");
    let kept = serde_json::from_value(kept).unwrap();
    ctx.store.save_tokens(url, &kept).unwrap();
}

/// The requests the fixture's authorization server got that carried `secret`.
async fn carrying(fx: &Fixture, secret: &str) -> usize {
    fx.journal()
        .await
        .iter()
        .filter(|e| e["path"].as_str().is_some_and(|p| p.starts_with("/as/")))
        .filter(|e| e.to_string().contains(secret))
        .count()
}

#[tokio::test]
async fn a_configured_client_secret_never_goes_to_another_authorization_server() {
    let fx = Fixture::start().await;
    let url = fx.url("/oauth/json");
    let ctx = ctx();
    let oauth = OAuthConfig {
        client_id: Some("cid".into()),
        client_secret: Some("CLIENT-SECRET".into()),
        ..Default::default()
    };
    auth::sign_in(&url, Some(&oauth), &ctx, Arc::new(Headless))
        .await
        .expect("signed in");
    from_another_issuer(&ctx, &url);
    let before = carrying(&fx, "cid").await;

    // Inline sign-in allowed: the connection would sign in again by itself.
    let a = Authorizer::new(&url, Some(oauth.clone()), ctx.clone());
    a.set_opener(Some(Arc::new(Headless)));
    let c = connect(&url, a.clone()).await.expect("connects");
    post(&fx, "/as/expire-access").await;
    let err = echo(&c).await.unwrap_err();
    assert!(err.contains("does not send that secret"), "{err}");
    c.close().await;
    // An explicit sign-in is refused the same way until the user signs out.
    let err = auth::sign_in(&url, Some(&oauth), &ctx, Arc::new(Headless))
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("sign out (`harness9 mcp logout`)"), "{err}");
    assert_eq!(
        carrying(&fx, "cid").await,
        before,
        "the client went to the new server"
    );
}

#[tokio::test]
async fn a_failing_token_endpoint_keeps_the_refresh_token() {
    let fx = Fixture::start().await;
    let url = fx.url("/oauth/json");
    let ctx = ctx();
    auth::sign_in(&url, None, &ctx, Arc::new(Headless))
        .await
        .expect("signed in");
    let a = Authorizer::new(&url, None, ctx.clone());
    let c = connect(&url, a.clone()).await.expect("connects");
    post(&fx, "/as/expire-access").await;
    post(&fx, "/as/fail-token?status=503").await;
    let err = echo(&c).await.unwrap_err();
    assert!(err.contains("refreshing it failed"), "{err}");
    assert!(err.contains("HTTP 503"), "{err}");
    assert_eq!(a.needs_auth(), None);
    let kept = ctx.store.tokens(&url).expect("the sign-in is kept");
    assert!(kept.refresh_token.is_some());

    // The server is back: the kept refresh token works.
    post(&fx, "/as/fail-token?status=0").await;
    assert_eq!(echo(&c).await.unwrap(), "hi");
    assert_eq!(
        grants(&fx).await.last().map(String::as_str),
        Some("refresh_token")
    );
    assert_ne!(
        ctx.store.tokens(&url),
        Some(kept),
        "the new tokens are kept"
    );
    c.close().await;
}

/// Follows the sign-in like [`Headless`], after a forged `error=` answer (another state)
/// has reached the loopback listener first.
struct ForgedFirst;

impl Opener for ForgedFirst {
    fn open(&self, url: &str) -> BoxFuture<'static, Result<(), BrowserError>> {
        let url = url.to_string();
        Box::pin(async move {
            let redirect = url::Url::parse(&url)
                .unwrap()
                .query_pairs()
                .find(|(k, _)| k == "redirect_uri")
                .map(|(_, v)| v.into_owned())
                .unwrap();
            let forged = reqwest::get(format!("{redirect}?error=access_denied&state=forged"))
                .await
                .map_err(|e| BrowserError::NotShown(e.to_string()))?;
            assert_eq!(forged.status(), 400);
            Headless.open(&url).await
        })
    }
}

#[tokio::test]
async fn an_answer_with_another_state_does_not_end_the_sign_in() {
    let fx = Fixture::start().await;
    let url = fx.url("/oauth/json");
    let signed = auth::sign_in(&url, None, &ctx(), Arc::new(ForgedFirst)).await;
    assert!(signed.is_ok(), "{signed:?}");
}

/// An opener that only counts (and keeps the last URL): the sign-in must stop before it.
#[derive(Default)]
struct Counting(AtomicUsize, std::sync::Mutex<String>);

impl Opener for Counting {
    fn open(&self, url: &str) -> BoxFuture<'static, Result<(), BrowserError>> {
        self.0.fetch_add(1, Ordering::SeqCst);
        *self.1.lock().unwrap() = url.to_string();
        Box::pin(async { Err(BrowserError::NotShown("no browser here".into())) })
    }
}

/// A 2025-03-26 server: `POST /mcp` asks for a token, no protected resource metadata,
/// and `metadata(origin)` at `/.well-known/oauth-authorization-server`. Its URL.
fn legacy_server(metadata: impl Fn(&str) -> Value + Send + 'static) -> String {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let origin = format!("http://{}", l.local_addr().unwrap());
    let base = origin.clone();
    std::thread::spawn(move || {
        for mut s in l.incoming().flatten() {
            let mut buf = [0u8; 8192];
            let n = s.read(&mut buf).unwrap_or(0);
            let head = String::from_utf8_lossy(&buf[..n]).into_owned();
            let target = head.split(' ').nth(1).unwrap_or("");
            let path = target.split('?').next().unwrap_or("");
            let (status, extra, body) = if path == "/.well-known/oauth-authorization-server" {
                ("200 OK", "", metadata(&base).to_string())
            } else if path == "/mcp" {
                (
                    "401 Unauthorized",
                    "WWW-Authenticate: Bearer\r\n",
                    String::new(),
                )
            } else {
                ("404 Not Found", "", String::new())
            };
            let _ = s.write_all(format!(
                "HTTP/1.1 {status}\r\n{extra}Content-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            ).as_bytes());
        }
    });
    format!("{origin}/mcp")
}

fn legacy_metadata(issuer: &str, endpoints: &str) -> Value {
    json!({
        "issuer": issuer,
        "authorization_endpoint": format!("{endpoints}/authorize"),
        "token_endpoint": format!("{endpoints}/token"),
        "code_challenge_methods_supported": ["S256"],
    })
}

#[tokio::test]
async fn hostile_legacy_metadata_is_refused_before_the_browser_opens() {
    let oauth = OAuthConfig {
        client_id: Some("cid".into()),
        client_secret: Some("CLIENT-SECRET".into()),
        ..Default::default()
    };
    let cases: Vec<(String, &str)> = vec![
        // Another issuer than the origin the well-known URL was built from.
        (
            legacy_server(|o| legacy_metadata("https://evil.example", o)),
            "names the issuer \"https://evil.example\"",
        ),
        // Plain-HTTP endpoints on another machine.
        (
            legacy_server(|o| legacy_metadata(o, "http://as.example")),
            "\"http://as.example/authorize\" is not an https: URL",
        ),
    ];
    for (url, expected) in cases {
        let opener = Arc::new(Counting::default());
        let err = tokio::time::timeout(
            Duration::from_secs(20),
            auth::sign_in(&url, Some(&oauth), &ctx(), opener.clone()),
        )
        .await
        .expect("answers within 20 s")
        .unwrap_err()
        .to_string();
        assert!(err.contains(expected), "{url}: {err}");
        assert_eq!(
            opener.0.load(Ordering::SeqCst),
            0,
            "{url}: the browser opened"
        );
    }
}

#[tokio::test]
async fn the_authorization_server_never_sees_the_secrets_of_the_server_url() {
    let url = legacy_server(|o| legacy_metadata(o, o));
    let url = url.replace("http://", "http://USECRET0:PWSECRET1@") + "?sig=QSECRET2";
    let oauth = OAuthConfig {
        client_id: Some("cid".into()),
        ..Default::default()
    };
    let opener = Arc::new(Counting::default());
    let err = auth::sign_in(&url, Some(&oauth), &ctx(), opener.clone())
        .await
        .unwrap_err()
        .to_string();
    let opened = opener.1.lock().unwrap().clone();
    assert!(opened.contains("resource="), "{opened}");
    for secret in ["USECRET0", "PWSECRET1", "QSECRET2"] {
        assert!(!opened.contains(secret), "{opened}");
        assert!(!err.contains(secret), "{err}");
    }
}
