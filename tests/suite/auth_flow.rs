//! Signing in, refreshing and signing out against `mcp-http-fixture`'s own authorization
//! server (`/oauth/…`, `/as/…`), with a headless browser that follows the authorization
//! endpoint's redirect to our loopback listener.

use std::sync::Arc;
use std::time::Duration;

use harness9::mcp::auth::{self, Authorizer, SignedIn};
use serde_json::json;

use super::support::auth::{connect, ctx, echo, grants, post, Headless};
use super::support::http::Fixture;
use super::support::wait::{poll_for_async, poll_until_async};

#[tokio::test]
async fn sign_in_then_requests_refresh_and_finally_need_sign_in_again() {
    let fx = Fixture::start().await;
    let url = fx.url("/oauth/json");
    let ctx = ctx();
    let signed = auth::sign_in(&url, None, &ctx, Arc::new(Headless))
        .await
        .expect("signed in");
    let issuer = fx.url("/as");
    assert_eq!(
        signed,
        SignedIn {
            issuer: issuer.clone(),
            scopes: vec!["tools".into(), "offline_access".into()],
            expires_at: signed.expires_at,
            refreshable: true,
            kept_in: "in memory only".into(),
        }
    );
    let j = fx.journal().await;
    let reg = j
        .iter()
        .find(|e| e["path"] == "/as/register")
        .expect("registered");
    assert_eq!(reg["body"]["application_type"], "native");
    assert_eq!(
        reg["body"]["grant_types"],
        json!(["authorization_code", "refresh_token"])
    );
    let authz = j.iter().find(|e| e["path"] == "/as/authorize").unwrap();
    let q: Vec<(String, String)> =
        url::form_urlencoded::parse(authz["query"].as_str().unwrap().as_bytes())
            .into_owned()
            .collect();
    let get = |k: &str| q.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone());
    assert_eq!(get("resource"), Some(url.clone()));
    assert_eq!(get("code_challenge_method").as_deref(), Some("S256"));
    assert_eq!(get("scope").as_deref(), Some("tools offline_access"));

    // A new connection (a restart) uses the kept token; no browser is needed.
    let a = Authorizer::new(&url, None, ctx.clone());
    let c = connect(&url, a.clone())
        .await
        .expect("connects with the kept token");
    assert_eq!(echo(&c).await.unwrap(), "hi");
    assert_eq!(grants(&fx).await, vec!["authorization_code"]);

    // The server stops taking the token: one refresh, and the request goes through.
    post(&fx, "/as/expire-access").await;
    assert_eq!(echo(&c).await.unwrap(), "hi");
    assert_eq!(
        grants(&fx).await,
        vec!["authorization_code", "refresh_token"]
    );
    assert_eq!(a.needs_auth(), None);

    // Nothing works any more: the refresh fails, the tokens are forgotten, and without an
    // opener the server waits for sign-in.
    post(&fx, "/as/expire-all").await;
    let err = echo(&c).await.unwrap_err();
    assert!(
        err.contains("the server requires sign-in (the sign-in expired)"),
        "{err}"
    );
    assert_eq!(a.needs_auth().as_deref(), Some("the sign-in expired"));
    assert_eq!(a.signed_in(), None);
    assert!(
        ctx.store.tokens(&url).is_none(),
        "forgotten in the store too"
    );
    c.close().await;
}

/// The fixture's requests in order: `token` for the token endpoint, the method for the
/// MCP requests that carried a token.
async fn order(fx: &Fixture) -> Vec<String> {
    fx.journal()
        .await
        .iter()
        .filter_map(
            |e| match (e["path"].as_str(), e["body"]["method"].as_str()) {
                (Some("/as/token"), _) => Some("token".to_string()),
                (Some("/oauth/json"), Some(m)) if e["headers"]["authorization"].is_string() => {
                    Some(m.to_string())
                }
                _ => None,
            },
        )
        .collect()
}

#[tokio::test]
async fn a_short_lived_token_is_used_first_and_refreshed_in_the_last_half_of_its_life() {
    // Four-second tokens: well under the refresh margin of a minute.
    let fx = Fixture::start_with(&["--token-ttl", "4"]).await;
    let url = fx.url("/oauth/json");
    let ctx = ctx();
    auth::sign_in(&url, None, &ctx, Arc::new(Headless))
        .await
        .unwrap();
    let c = connect(&url, Authorizer::new(&url, None, ctx.clone()))
        .await
        .expect("connects");
    assert_eq!(echo(&c).await.unwrap(), "hi");
    assert_eq!(
        grants(&fx).await,
        ["authorization_code"],
        "a token just issued is used, not refreshed: {:?}",
        order(&fx).await
    );

    // Past half its lifetime: one refresh, before the request (not after a refusal).
    poll_until_async(
        "the kept token to be in the last half of its life",
        Duration::from_secs(10),
        || {
            let kept = ctx.store.tokens(&url).expect("kept tokens");
            let now = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_secs();
            kept.expires_at.expect("an expiry") <= now + auth::refresh_margin(&kept)
        },
    )
    .await;
    assert_eq!(echo(&c).await.unwrap(), "hi");
    assert_eq!(echo(&c).await.unwrap(), "hi");
    assert_eq!(grants(&fx).await, ["authorization_code", "refresh_token"]);
    let order = order(&fx).await;
    assert_eq!(
        &order[order.len() - 3..],
        ["token", "tools/call", "tools/call"],
        "{order:?}"
    );
    c.close().await;
}

#[tokio::test]
async fn with_an_opener_the_connection_signs_in_by_itself_and_sign_out_forgets() {
    let fx = Fixture::start().await;
    let url = fx.url("/oauth/stream");
    let ctx = ctx();
    let a = Authorizer::new(&url, None, ctx.clone());
    a.set_opener(Some(Arc::new(Headless)));
    let c = connect(&url, a.clone()).await.expect("signs in inline");
    assert_eq!(echo(&c).await.unwrap(), "hi");
    assert_eq!(a.signed_in().map(|s| s.issuer), Some(fx.url("/as")));
    c.close().await;
    assert!(auth::sign_out(&url, &ctx).await.unwrap());
    assert!(!auth::sign_out(&url, &ctx).await.unwrap());
    let again = Authorizer::new(&url, None, ctx.clone());
    assert_eq!(again.signed_in(), None);
    let Err(err) = connect(&url, again.clone()).await else {
        panic!("connected after signing out")
    };
    assert!(err.contains("not signed in"), "{err}");
}

#[tokio::test]
async fn concurrent_refusals_cause_one_refresh() {
    let fx = Fixture::start().await;
    let url = fx.url("/oauth/json");
    let ctx = ctx();
    auth::sign_in(&url, None, &ctx, Arc::new(Headless))
        .await
        .unwrap();
    let c = connect(&url, Authorizer::new(&url, None, ctx.clone()))
        .await
        .unwrap();
    post(&fx, "/as/expire-access").await;
    let calls = (0..8).map(|_| echo(&c));
    for r in futures::future::join_all(calls).await {
        assert_eq!(r.unwrap(), "hi");
    }
    assert_eq!(
        grants(&fx).await,
        vec!["authorization_code", "refresh_token"],
        "one refresh for eight refused calls"
    );
    c.close().await;
}

/// Waits until the fixture's token endpoint has seen `n` requests with `grant`.
async fn wait_for_grants(fx: &Fixture, grant: &str, n: usize) {
    poll_for_async(
        &format!("{n} {grant} request(s) at the token endpoint"),
        Duration::from_secs(10),
        || async {
            let seen = grants(fx).await;
            if seen.iter().filter(|g| *g == grant).count() >= n {
                Ok(())
            } else {
                Err(format!("{seen:?}"))
            }
        },
    )
    .await
}

#[tokio::test]
async fn a_refresh_under_way_when_the_connection_closes_is_still_kept() {
    let fx = Fixture::start().await;
    let url = fx.url("/oauth/json");
    let ctx = ctx();
    auth::sign_in(&url, None, &ctx, Arc::new(Headless))
        .await
        .unwrap();
    let c = connect(&url, Authorizer::new(&url, None, ctx.clone()))
        .await
        .unwrap();
    // The server stops taking the token and answers the refresh late: the refresh token
    // sent is spent before its answer arrives.
    post(&fx, "/as/expire-access").await;
    post(&fx, "/as/slow-token?ms=700").await;
    let c = Arc::new(c);
    let call = tokio::spawn({
        let c = c.clone();
        async move { echo(&c).await }
    });
    wait_for_grants(&fx, "refresh_token", 1).await;
    c.close().await;
    let _ = call.await;

    // The next start (a new process, say) still has a working sign-in: its refresh
    // token is the one the server issued last.
    post(&fx, "/as/slow-token?ms=0").await;
    post(&fx, "/as/expire-access").await;
    let a = Authorizer::new(&url, None, ctx.clone());
    let c = connect(&url, a.clone())
        .await
        .expect("still signed in after the connection closed mid-refresh");
    assert_eq!(echo(&c).await.unwrap(), "hi");
    assert_eq!(
        grants(&fx).await,
        ["authorization_code", "refresh_token", "refresh_token"]
    );
    assert_eq!(a.needs_auth(), None);
    c.close().await;
}

#[tokio::test]
async fn a_refresh_that_ends_after_a_sign_out_does_not_bring_the_tokens_back() {
    let fx = Fixture::start().await;
    let url = fx.url("/oauth/json");
    let ctx = ctx();
    auth::sign_in(&url, None, &ctx, Arc::new(Headless))
        .await
        .unwrap();
    let a = Authorizer::new(&url, None, ctx.clone());
    let c = Arc::new(connect(&url, a.clone()).await.unwrap());
    post(&fx, "/as/expire-access").await;
    post(&fx, "/as/slow-token?ms=700").await;
    let call = tokio::spawn({
        let c = c.clone();
        async move { echo(&c).await }
    });
    // The user signs out while the refresh is on its way.
    wait_for_grants(&fx, "refresh_token", 1).await;
    assert!(auth::sign_out(&url, &ctx).await.unwrap());

    let err = call.await.unwrap().unwrap_err();
    assert!(err.contains("the server requires sign-in"), "{err}");
    assert!(a.needs_auth().is_some());
    assert_eq!(a.signed_in(), None);
    c.close().await;
    assert!(ctx.store.tokens(&url).is_none(), "the sign-out stays");
    assert_eq!(Authorizer::new(&url, None, ctx.clone()).signed_in(), None);
}

#[tokio::test]
async fn an_inline_sign_in_that_ends_after_a_sign_out_keeps_nothing() {
    let fx = Fixture::start().await;
    let url = fx.url("/oauth/json");
    let ctx = ctx();
    let a = Authorizer::new(&url, None, ctx.clone());
    a.set_opener(Some(Arc::new(Headless)));
    post(&fx, "/as/slow-token?ms=700").await;
    let connecting = tokio::spawn({
        let (url, a) = (url.clone(), a.clone());
        async move { connect(&url, a).await.map(|_| ()) }
    });
    // The user signs out while the code is being exchanged for tokens.
    wait_for_grants(&fx, "authorization_code", 1).await;
    auth::sign_out(&url, &ctx).await.unwrap();

    let err = connecting.await.unwrap().unwrap_err();
    assert!(err.contains("signed out"), "{err}");
    assert!(ctx.store.tokens(&url).is_none(), "the sign-out stays");
    assert_eq!(a.signed_in(), None);
}

#[tokio::test]
async fn a_refused_refresh_keeps_tokens_kept_elsewhere_meanwhile() {
    let fx = Fixture::start().await;
    let url = fx.url("/oauth/json");
    let ctx = ctx();
    auth::sign_in(&url, None, &ctx, Arc::new(Headless))
        .await
        .unwrap();
    // Two authorizers (two processes, say) start from the same tokens; the first
    // refreshes them, which spends the refresh token the second holds.
    let first = Authorizer::new(&url, None, ctx.clone());
    let second = Authorizer::new(&url, None, ctx.clone());
    let c1 = connect(&url, first).await.unwrap();
    post(&fx, "/as/expire-access").await;
    assert_eq!(echo(&c1).await.unwrap(), "hi");
    let refreshed = ctx.store.tokens(&url).expect("kept");
    assert_eq!(grants(&fx).await, ["authorization_code", "refresh_token"]);

    // The second one's token is refused: it takes the tokens kept meanwhile instead of
    // refreshing with a spent refresh token (and forgetting the sign-in).
    let c2 = connect(&url, second.clone())
        .await
        .expect("connects with the tokens kept meanwhile");
    assert_eq!(echo(&c2).await.unwrap(), "hi");
    assert_eq!(ctx.store.tokens(&url), Some(refreshed));
    assert_eq!(second.needs_auth(), None);
    assert_eq!(grants(&fx).await, ["authorization_code", "refresh_token"]);
    c1.close().await;
    c2.close().await;
}
