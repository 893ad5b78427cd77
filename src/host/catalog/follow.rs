//! How the catalog follows one connected server: lists what it offers after connecting,
//! lists again on `list_changed`, passes resource updates and finished URL elicitations
//! on as [`SurfaceEvent`]s, and asks for change notifications (following again the
//! resources the user followed before a restart).
//!
//! Invariants: a listing belongs to one run of a server; a stale one is never stored, and
//! the task that follows a server ends with its connection.

use std::sync::{Arc, Weak};
use std::time::Duration;

use tokio::sync::broadcast;

use super::{Inner, ServerFeatures, SurfaceEvent};
use crate::manager::Run;
use crate::mcp::client::{Client, ClientError, ClientEvent};
use crate::mcp::log::{LogSource, ServerLog};

/// Which listings to refresh.
#[derive(Clone, Copy)]
enum Which {
    All,
    Resources,
    Prompts,
}

/// After a server connected: list what it offers, and follow its list changes, resource
/// updates and finished URL elicitations until it goes away.
pub(super) fn follow_features(
    inner: &Arc<Inner>,
    run: &Run,
    client: &Arc<Client>,
    timeout: Duration,
    log: &Arc<ServerLog>,
) {
    let (inner, run, log) = (inner.clone(), run.clone(), log.clone());
    let mut events = client.events();
    let client = Arc::downgrade(client);
    tokio::spawn(async move {
        list_features(&inner, &run, &client, timeout, Which::All, &log).await;
        let name = run.server().to_string();
        loop {
            let which = match events.recv().await {
                Ok(ClientEvent::ResourcesChanged) => Which::Resources,
                Ok(ClientEvent::PromptsChanged) => Which::Prompts,
                Ok(ClientEvent::ResourceUpdated { uri }) => {
                    let server = name.clone();
                    let _ = inner
                        .events
                        .send(SurfaceEvent::ResourceUpdated { server, uri });
                    continue;
                }
                Ok(ClientEvent::ElicitationComplete { elicitation_id }) => {
                    let server = name.clone();
                    let _ = inner.events.send(SurfaceEvent::ElicitationComplete {
                        server,
                        elicitation_id,
                    });
                    continue;
                }
                Ok(ClientEvent::ToolsChanged) => continue,
                Err(broadcast::error::RecvError::Lagged(_)) => Which::All,
                Ok(ClientEvent::Closed(_)) | Err(broadcast::error::RecvError::Closed) => break,
            };
            let gone = client.upgrade().is_none_or(|c| c.closed_reason().is_some());
            if gone || !run.is_current() {
                break;
            }
            list_features(&inner, &run, &client, timeout, which, &log).await;
        }
        let mut listings = inner.listings.lock();
        if listings.get(&name).is_some_and(|(r, _)| *r == run) {
            listings.remove(&name);
        }
    });
}

async fn list_features(
    inner: &Inner,
    run: &Run,
    client: &Weak<Client>,
    timeout: Duration,
    which: Which,
    log: &ServerLog,
) {
    let Some(client) = client.upgrade() else {
        return;
    };
    let t = Some(timeout);
    let (want_resources, want_prompts) = match which {
        Which::All => (true, true),
        Which::Resources => (true, false),
        Which::Prompts => (false, true),
    };
    let resources = async {
        if !want_resources {
            return None;
        }
        let (r, tpl) = tokio::join!(client.list_resources(t), client.list_resource_templates(t));
        Some((r, tpl))
    };
    let prompts = async {
        match want_prompts {
            true => Some(client.list_prompts(t).await),
            false => None,
        }
    };
    let (resources, prompts) = tokio::join!(resources, prompts);
    drop(client);
    if !run.is_current() {
        return;
    }
    let name = run.server();
    let mut errors = Vec::new();
    let mut note = |what: &str, e: ClientError| {
        let text = format!("listing {what} failed: {e}");
        log.push(LogSource::Host, "warning", &text);
        errors.push(text);
    };
    {
        let mut listings = inner.listings.lock();
        let mut next = match listings.get(name) {
            Some((r, f)) if r == run => (**f).clone(),
            _ => ServerFeatures::default(),
        };
        if let Some((r, tpl)) = resources {
            match r {
                Ok(r) => next.resources = Arc::new(r),
                Err(e) => note("resources", e),
            }
            match tpl {
                Ok(t) => next.templates = Arc::new(t),
                Err(e) => note("resource templates", e),
            }
        }
        if let Some(p) = prompts {
            match p {
                Ok(p) => next.prompts = Arc::new(p),
                Err(e) => note("prompts", e),
            }
        }
        next.errors = errors;
        listings.insert(name.to_string(), (run.clone(), Arc::new(next)));
    }
    inner.changed.send_modify(|n| *n += 1);
    let _ = inner.events.send(SurfaceEvent::ListingChanged {
        server: name.to_string(),
    });
}

/// After a (re)connect: asks for change notifications (the modern era's
/// `subscriptions/listen`) and follows again the resources followed before. Never blocks
/// the start; a failure is logged.
pub(super) fn resume_listening(
    inner: &Inner,
    server: &str,
    client: &Arc<Client>,
    log: &Arc<ServerLog>,
    timeout: Duration,
) {
    let follow: Vec<String> = inner
        .follows
        .lock()
        .get(server)
        .map(|u| u.iter().cloned().collect())
        .unwrap_or_default();
    if follow.is_empty() && client.era() == crate::mcp::era::Era::Legacy {
        return;
    }
    let (client, log) = (client.clone(), log.clone());
    tokio::spawn(async move {
        if let Err(e) = client.listen(&follow, Some(timeout)).await {
            let text = format!("could not ask for change notifications: {e}");
            log.push(LogSource::Host, "warning", &text);
        }
    });
}
