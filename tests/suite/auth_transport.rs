//! The HTTP transports with an OAuth authorizer, against `mcp-http-fixture`'s `/bearer/…`
//! endpoints: the held token goes on every request, a server that refuses without a token
//! leaves the connection waiting for sign-in (never a browser), and an `Authorization`
//! header from `.mcp.json` wins over OAuth.

use std::sync::Arc;
use std::time::Duration;

use harness9::mcp::auth::{AuthContext, AuthSettings, Authorizer, CredentialStore, StoredTokens};
use serde_json::Value;

use super::support::auth::connect_authorized as connect;
use super::support::http::Fixture;

fn ctx_with(url: &str, token: Option<&str>) -> AuthContext {
    let store = CredentialStore::memory();
    if let Some(t) = token {
        let tokens = StoredTokens {
            access_token: t.into(),
            refresh_token: None,
            expires_at: None,
            issued_at: None,
            scopes: vec![],
            issuer: "http://127.0.0.1/issuer".into(),
            token_endpoint: None,
        };
        store.save_tokens(url, &tokens).unwrap();
    }
    AuthContext {
        store: Arc::new(store),
        settings: AuthSettings::default(),
    }
}

fn authorizations(j: &[Value]) -> Vec<(String, String, String)> {
    j.iter()
        .filter(|e| e["path"].as_str().is_some_and(|p| p.starts_with("/bearer")))
        .map(|e| {
            (
                e["method"].as_str().unwrap_or("").to_string(),
                e["body"]["method"].as_str().unwrap_or("").to_string(),
                e["headers"]["authorization"]
                    .as_str()
                    .unwrap_or("none")
                    .to_string(),
            )
        })
        .collect()
}

#[tokio::test]
async fn the_held_token_goes_on_every_request() {
    let fx = Fixture::start().await;
    let url = fx.url("/bearer/stream");
    let auth = Authorizer::new(&url, None, ctx_with(&url, Some("fixture-token")));
    let c = connect(&url, &[], auth.clone())
        .await
        .expect("connects with the token");
    let tools = c.list_tools(Some(Duration::from_secs(20))).await.unwrap();
    assert!(tools.iter().any(|t| t.name == "echo"));
    fx.wait_journal("the GET stream", |e| e["method"] == "GET")
        .await;
    c.close().await;
    let j = fx
        .wait_journal("the DELETE", |e| e["method"] == "DELETE")
        .await;
    let seen = authorizations(&j);
    for kind in ["initialize", "notifications/initialized", "tools/list"] {
        assert!(
            seen.iter().any(|(m, b, _)| m == "POST" && b == kind),
            "{kind}: {seen:?}"
        );
    }
    assert!(seen.iter().any(|(m, _, _)| m == "GET"), "{seen:?}");
    assert!(seen.iter().any(|(m, _, _)| m == "DELETE"), "{seen:?}");
    assert!(
        seen.iter().all(|(_, _, a)| a == "Bearer fixture-token"),
        "{seen:?}"
    );
    assert_eq!(auth.needs_auth(), None);
    assert_eq!(
        auth.signed_in().map(|s| s.issuer),
        Some("http://127.0.0.1/issuer".into())
    );
}

#[tokio::test]
async fn without_a_token_the_server_waits_for_sign_in() {
    let fx = Fixture::start().await;
    let url = fx.url("/bearer/json");
    let auth = Authorizer::new(&url, None, ctx_with(&url, None));
    let Err(err) = connect(&url, &[], auth.clone()).await else {
        panic!("connected without a token")
    };
    assert!(
        err.contains("the server requires sign-in (not signed in); sign in with `harness9 mcp login` or the app's Sign in button"),
        "{err}"
    );
    assert_eq!(auth.needs_auth().as_deref(), Some("not signed in"));

    // A token the server no longer takes: the sign-in expired.
    let auth = Authorizer::new(&url, None, ctx_with(&url, Some("old-token")));
    let Err(err) = connect(&url, &[], auth.clone()).await else {
        panic!("connected without a token")
    };
    assert!(err.contains("(the sign-in expired)"), "{err}");
    assert_eq!(auth.needs_auth().as_deref(), Some("the sign-in expired"));
    assert!(!err.contains("old-token"), "{err}");
    assert_eq!(auth.signed_in(), None, "a refused token is forgotten");
}

#[tokio::test]
async fn an_authorization_header_from_the_config_wins() {
    let fx = Fixture::start().await;
    let url = fx.url("/bearer/json");
    let auth = Authorizer::new(&url, None, ctx_with(&url, Some("other-token")));
    let c = connect(&url, &[("Authorization", "Bearer fixture-token")], auth)
        .await
        .expect("the configured header is used");
    c.close().await;
    let seen = authorizations(&fx.journal().await);
    assert!(!seen.is_empty());
    assert!(
        seen.iter().all(|(_, _, a)| a == "Bearer fixture-token"),
        "{seen:?}"
    );
}
