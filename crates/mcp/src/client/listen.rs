//! The modern era's change notifications. A 2026-07-28 server sends list changes and
//! resource updates only on the stream of a `subscriptions/listen` request: one request
//! that stays open, whose first message is `notifications/subscriptions/acknowledged`
//! (naming what the server will send) and whose notifications then arrive as usual (the
//! legacy handling in [`notify`](super::notify) turns them into [`ClientEvent`]s).
//!
//! One stream per connection, held by a task: when the server ends it (a result) it is
//! sent again; when it fails, again after a pause, at most [`MAX_LISTEN_FAILURES`] times in
//! a row. Following another resource replaces the stream (the old request is cancelled,
//! which on HTTP closes its answer stream) and waits for the new acknowledgement. A server
//! that does not know the method (`-32601`) simply sends no change notifications.

use parking_lot::Mutex;
use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Map, Value};
use tokio::sync::watch;
use tokio::task::AbortHandle;

use super::{Client, ClientError, Inner, Params, RequestOptions};
use crate::log::LogSource;
use crate::protocol::era::Era;
use crate::protocol::jsonrpc::METHOD_NOT_FOUND;

/// Failures in a row (errors, or a stream the server ends at once) after which the client
/// stops listening; the server log says so.
pub const MAX_LISTEN_FAILURES: u32 = 5;
/// The pause before listening again after a failure (doubled each time).
const LISTEN_RETRY: Duration = Duration::from_millis(500);
/// A stream that lasted less than this before the server ended it counts as a failure.
const SHORT_STREAM: Duration = Duration::from_secs(1);
/// How long following a resource waits for the server to acknowledge the new stream.
pub const ACK_TIMEOUT: Duration = Duration::from_secs(10);

/// How long a change of the followed tasks waits before the stream is sent again (a
/// burst of new tasks costs one new stream).
const TASKS_DEBOUNCE: Duration = Duration::from_millis(200);

/// The stream of one connection: what it asks for and the task that holds it.
#[derive(Default)]
pub(super) struct Listening {
    state: Mutex<ListenState>,
    /// The server's capabilities (what the stream may ask for), once known.
    caps: std::sync::OnceLock<Map<String, Value>>,
    /// A new stream for the followed tasks is on its way ([`TASKS_DEBOUNCE`]).
    tasks_pending: AtomicBool,
    /// The server answered `-32601`: it has no `subscriptions/listen`.
    unsupported: AtomicBool,
    /// The filter the server acknowledged last, and how many acknowledgements came.
    acked: watch::Sender<(u64, Option<Value>)>,
    /// Set when a stream is opened again after it ended or failed: notifications may have
    /// been missed, so its acknowledgement calls for listing everything again.
    missed: AtomicBool,
}

#[derive(Default)]
struct ListenState {
    uris: BTreeSet<String>,
    task: Option<AbortHandle>,
}

impl Listening {
    /// `notifications/subscriptions/acknowledged` arrived; true when it reopens a stream
    /// that ended (see `missed`).
    pub(super) fn acknowledged(&self, filter: Option<Value>) -> bool {
        self.acked.send_modify(|(n, f)| {
            *n += 1;
            *f = filter;
        });
        self.missed.swap(false, Ordering::AcqRel)
    }

    pub(super) fn stop(&self) {
        if let Some(task) = self.state.lock().task.take() {
            task.abort();
        }
    }

    /// The set of followed tasks changed (modern era): the stream is sent again soon with
    /// the new set ([`TASKS_DEBOUNCE`]), unless the server has no stream at all.
    pub(super) fn tasks_changed(&self, inner: &Arc<Inner>) {
        if self.caps.get().is_none()
            || self.unsupported.load(Ordering::Acquire)
            || self.tasks_pending.swap(true, Ordering::AcqRel)
        {
            return;
        }
        let Ok(rt) = tokio::runtime::Handle::try_current() else {
            self.tasks_pending.store(false, Ordering::Release);
            return;
        };
        let inner = inner.clone();
        rt.spawn(async move {
            tokio::time::sleep(TASKS_DEBOUNCE).await;
            inner
                .listening
                .tasks_pending
                .store(false, Ordering::Release);
            if inner.closed.lock().is_none() {
                let _ = relisten(&inner).await;
            }
        });
    }

    /// Remembers the server's capabilities (what a stream may ask for).
    pub(super) fn know(&self, caps: &Map<String, Value>) {
        if self.caps.get().is_none() {
            let _ = self.caps.set(caps.clone());
        }
    }
}

impl Client {
    /// After connecting: asks for change notifications and updates of `follow` (resources
    /// followed before a restart). Modern era: opens the `subscriptions/listen` stream
    /// for what the server offers (tool, prompt and resource list changes, and those
    /// resources), returning once the server acknowledged it (or after [`ACK_TIMEOUT`]);
    /// the stream goes on in the background. Legacy era: `resources/subscribe` for each.
    pub async fn listen(
        &self,
        follow: &[String],
        timeout: Option<Duration>,
    ) -> Result<(), ClientError> {
        if self.era() == Era::Legacy {
            if self.can_subscribe() {
                for uri in follow {
                    self.subscribe(uri, timeout).await?;
                }
            }
            return Ok(());
        }
        {
            let mut state = self.inner.listening.state.lock();
            state.uris.extend(follow.iter().cloned());
        }
        self.relisten().await.map(drop)
    }

    /// What the server acknowledged on the current stream (`None` before any).
    pub fn listening_for(&self) -> Option<Value> {
        self.inner.listening.acked.borrow().1.clone()
    }

    /// Follows (or, with `on` false, stops following) updates of one resource on a modern
    /// connection: a new stream with the new list.
    pub(super) async fn follow(&self, uri: &str, on: bool) -> Result<(), ClientError> {
        {
            let mut state = self.inner.listening.state.lock();
            let changed = match on {
                true => state.uris.insert(uri.to_string()),
                false => state.uris.remove(uri),
            };
            if !changed && state.task.is_some() {
                return Ok(());
            }
        }
        let acked = self.relisten().await?;
        let honoured = acked
            .as_ref()
            .and_then(|f| f.get("resourceSubscriptions"))
            .and_then(Value::as_array)
            .is_some_and(|uris| uris.iter().any(|u| u.as_str() == Some(uri)));
        if on && !honoured {
            self.inner.listening.state.lock().uris.remove(uri);
            return Err(ClientError::Invalid {
                method: "subscriptions/listen".into(),
                detail: format!("the server did not agree to send updates of {uri}"),
            });
        }
        Ok(())
    }

    /// Replaces the stream with one for the current filter and waits for its
    /// acknowledgement (what the server agreed to send).
    async fn relisten(&self) -> Result<Option<Value>, ClientError> {
        self.inner.listening.know(self.capabilities());
        relisten(&self.inner).await
    }
}

/// Replaces the stream with one for the current filter and waits for its acknowledgement
/// (what the server agreed to send).
async fn relisten(inner: &Arc<Inner>) -> Result<Option<Value>, ClientError> {
    let mut acked = inner.listening.acked.subscribe();
    let seen = acked.borrow_and_update().0;
    let tasks = inner.task_notes.ids();
    let params = {
        let mut state = inner.listening.state.lock();
        if let Some(old) = state.task.take() {
            old.abort();
        }
        let no_caps = Map::new();
        let caps = inner.listening.caps.get().unwrap_or(&no_caps);
        let Some(filter) = filter(caps, &state.uris, &tasks) else {
            return Ok(None);
        };
        let params = json!({ "notifications": filter }).to_string();
        let task = tokio::spawn(hold(inner.clone(), params.clone()));
        state.task = Some(task.abort_handle());
        params
    };
    let wait = async {
        let got = acked.wait_for(|(n, _)| *n > seen).await;
        got.map(|g| g.1.clone())
    };
    match tokio::time::timeout(ACK_TIMEOUT, wait).await {
        Ok(Ok(filter)) => Ok(filter),
        Ok(Err(_)) => Err(inner.closed_error()),
        Err(_) => {
            if let Some(reason) = inner.closed.lock().clone() {
                return Err(ClientError::Closed(reason));
            }
            Err(ClientError::Timeout {
                method: format!("subscriptions/listen {params} (its acknowledgement)"),
                timeout: ACK_TIMEOUT,
                field: crate::settings::TOOL_TIMEOUT_FIELD,
            })
        }
    }
}

/// The `notifications` filter for a server's capabilities, the followed resources and
/// the followed tasks (at most [`MAX_LISTENED_TASKS`](super::tasks::MAX_LISTENED_TASKS));
/// `None` when there is nothing to listen for.
fn filter(caps: &Map<String, Value>, uris: &BTreeSet<String>, tasks: &[String]) -> Option<Value> {
    let mut f = Map::new();
    for (cap, key) in [
        ("tools", "toolsListChanged"),
        ("prompts", "promptsListChanged"),
        ("resources", "resourcesListChanged"),
    ] {
        if caps.contains_key(cap) {
            f.insert(key.into(), Value::Bool(true));
        }
    }
    if !uris.is_empty() {
        f.insert("resourceSubscriptions".into(), json!(uris));
    }
    if !tasks.is_empty() {
        let ids = &tasks[..tasks.len().min(super::tasks::MAX_LISTENED_TASKS)];
        f.insert("taskIds".into(), json!(ids));
    }
    (!f.is_empty()).then_some(Value::Object(f))
}

/// Holds the stream: sends it again when the server ends it, pauses after failures, and
/// gives up after [`MAX_LISTEN_FAILURES`] in a row or when the connection ends.
async fn hold(inner: Arc<Inner>, params: String) {
    let mut failures = 0;
    loop {
        if failures > 0 {
            inner.listening.missed.store(true, Ordering::Release);
        }
        let started = tokio::time::Instant::now();
        let outcome = inner
            .request(
                "subscriptions/listen",
                Params::Raw(params.clone()),
                RequestOptions::default(),
                true,
            )
            .await;
        let why = match outcome {
            Ok(_) if started.elapsed() >= SHORT_STREAM => {
                failures = 0;
                inner.listening.missed.store(true, Ordering::Release);
                note(
                    &inner,
                    "info",
                    "the server ended the change-notification stream; listening again",
                );
                continue;
            }
            Ok(_) => "the server ended the change-notification stream at once".to_string(),
            Err(ClientError::Closed(_) | ClientError::Cancelled) => return,
            Err(ClientError::Rpc { error, .. }) if error.code == METHOD_NOT_FOUND => {
                inner.listening.unsupported.store(true, Ordering::Release);
                note(
                    &inner,
                    "info",
                    "the server has no subscriptions/listen: it sends no list changes or resource updates",
                );
                return;
            }
            Err(e) => e.to_string(),
        };
        failures += 1;
        if failures >= MAX_LISTEN_FAILURES {
            note(
                &inner,
                "warning",
                &format!("stopped listening for list changes and resource updates after {failures} failures in a row (last: {why}); restart the server to try again"),
            );
            return;
        }
        note(
            &inner,
            "warning",
            &format!("listening for changes failed ({why}); trying again"),
        );
        tokio::time::sleep(LISTEN_RETRY * 2u32.pow(failures - 1)).await;
    }
}

fn note(inner: &Inner, level: &str, text: &str) {
    tracing::debug!(server = %inner.name, "{text}");
    inner.log.push(LogSource::Host, level, text);
}
