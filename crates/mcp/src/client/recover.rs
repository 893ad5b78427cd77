//! A new session when the transport lost its own (Streamable HTTP: the server answered
//! `404` to a request that carried the session id). The transport hands back what got no
//! answer ([`Inbound::SessionLost`](crate::transport::Inbound::SessionLost)); here the
//! client does the handshake again, sends each of those requests once more (if its caller
//! still waits), and lists again what it had listed, reporting a change only where a list
//! really differs.
//!
//! Invariants: one new session per lost one, however many messages report it (the
//! transport numbers its sessions); while the handshake runs, new requests wait (so the
//! server sees `initialize` and `notifications/initialized` first); a request is sent
//! again at most once, and fails if the new session loses it too; a handshake that fails
//! ends the connection with the reason. Lists are compared by a digest of what they hold,
//! kept only on transports with sessions.

use parking_lot::Mutex;
use std::collections::{HashMap, HashSet};
use std::hash::{DefaultHasher, Hasher};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::json;
use tokio::sync::watch;

use super::{ClientError, ClientEvent, Inner, Params, ReplyError, RequestOptions};
use crate::log::LogSource;
use crate::protocol::features::{PromptsPage, ResourcesPage, TemplatesPage};
use crate::protocol::jsonrpc::RpcError;
use crate::protocol::types::{InitializeResult, ListToolsPage, LATEST_PROTOCOL_VERSION};
use crate::transport::http::TRANSPORT_ERROR_CODE;
use crate::transport::{EraHeaders, Outbound};

/// How long starting a new session may take before the connection is given up.
pub const RECOVERY_TIMEOUT: Duration = Duration::from_secs(30);

/// The lists a client may have made, with the event a change of each calls for.
const LISTS: [(&str, ClientEvent); 4] = [
    ("tools/list", ClientEvent::ToolsChanged),
    ("resources/list", ClientEvent::ResourcesChanged),
    ("resources/templates/list", ClientEvent::ResourcesChanged),
    ("prompts/list", ClientEvent::PromptsChanged),
];

pub(super) struct Recovery {
    /// Whether the transport has sessions at all (else nothing here is used).
    sessions: bool,
    state: Mutex<State>,
    /// True while the new session's handshake runs: requests wait.
    busy: watch::Sender<bool>,
}

#[derive(Default)]
struct State {
    /// The newest lost session a recovery was started for (the transport's numbering).
    handled: u64,
    running: bool,
    /// Another session was lost while a recovery ran: run once more.
    again: bool,
    /// Requests handed back, to send once the new session is up.
    lost: Vec<Outbound>,
    /// Requests already sent once more.
    resent: HashSet<u64>,
    /// A digest of each list made, by method.
    listed: HashMap<&'static str, u64>,
}

impl Recovery {
    pub(super) fn new(sessions: bool) -> Recovery {
        Recovery {
            sessions,
            state: Mutex::default(),
            busy: watch::channel(false).0,
        }
    }

    /// A digest to fill while listing, when lists are compared after a lost session.
    pub(super) fn digest(&self) -> Option<ListDigest> {
        self.sessions.then(ListDigest::default)
    }

    /// Keeps the digest of a whole list of `method`.
    pub(super) fn listed(&self, method: &str, digest: Option<ListDigest>) {
        let Some(digest) = digest else { return };
        let Some(key) = LISTS.iter().map(|(m, _)| *m).find(|m| *m == method) else {
            return;
        };
        self.state.lock().listed.insert(key, digest.finish());
    }

    /// Whether a new session's handshake runs (requests wait for it: [`Recovery::wait_idle`]).
    pub(super) fn busy(&self) -> bool {
        *self.busy.borrow()
    }

    /// Waits while a new session's handshake runs; the time waited comes off the request's
    /// timeout.
    pub(super) async fn wait_idle(
        &self,
        method: &str,
        mut opts: RequestOptions,
    ) -> Result<RequestOptions, ClientError> {
        if !*self.busy.borrow() {
            return Ok(opts);
        }
        let start = Instant::now();
        let mut busy = self.busy.subscribe();
        let idle = busy.wait_for(|b| !*b);
        match opts.timeout {
            Some(t) => {
                if tokio::time::timeout(t, idle).await.is_err() {
                    return Err(ClientError::Timeout {
                        method: method.to_string(),
                        timeout: t,
                        field: opts
                            .timeout_field
                            .unwrap_or(crate::settings::TOOL_TIMEOUT_FIELD),
                    });
                }
                opts.timeout = Some(t.saturating_sub(start.elapsed()));
            }
            None => {
                let _ = idle.await;
            }
        }
        Ok(opts)
    }
}

/// A digest of the items of a list, page by page (how the server pages it does not count).
#[derive(Default)]
pub(super) struct ListDigest(DefaultHasher);

impl ListDigest {
    pub(super) fn add<T: Serialize>(&mut self, items: &[T]) {
        for item in items {
            let _ = serde_json::to_writer(&mut *self, item);
            self.0.write_u8(b'\n');
        }
    }

    fn finish(&self) -> u64 {
        self.0.finish()
    }
}

impl std::io::Write for ListDigest {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.write(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Inner {
    /// The transport lost session number `session`; `request` got no answer in it.
    pub(super) fn session_lost(self: &Arc<Self>, session: u64, request: Option<Outbound>) {
        let mut failed = None;
        let (start, resend_now) = {
            let mut st = self.recovery.state.lock();
            if let Some(out) = request {
                match out.request_id() {
                    Some(id) if st.resent.contains(&id) => failed = Some(id),
                    _ => st.lost.push(out),
                }
            }
            if session > st.handled {
                st.handled = session;
                if st.running {
                    st.again = true;
                    (false, false)
                } else {
                    st.running = true;
                    (true, false)
                }
            } else {
                // Lost with a session a recovery already replaced.
                (false, !st.running)
            }
        };
        if let Some(id) = failed {
            self.fail_lost(id);
        }
        if resend_now {
            self.resend_lost();
        }
        if start {
            self.recovery.busy.send_replace(true);
            tokio::spawn(self.clone().recover());
        }
    }

    /// Starts new sessions until none is lost meanwhile; ends the connection when that
    /// fails.
    async fn recover(self: Arc<Self>) {
        loop {
            self.recovery.busy.send_replace(true);
            self.log.push(
                LogSource::Host,
                "info",
                "the server ended the session; starting a new one",
            );
            let started = tokio::time::timeout(RECOVERY_TIMEOUT, self.rehandshake()).await;
            let failed = match started {
                Ok(Ok(())) => None,
                Ok(Err(e)) => Some(e.to_string()),
                Err(_) => Some(format!(
                    "no answer to initialize within {}",
                    super::fmt_duration(RECOVERY_TIMEOUT)
                )),
            };
            if let Some(why) = failed {
                let reason =
                    format!("the server ended the session and starting a new one failed: {why}");
                self.log.push(LogSource::Host, "warning", &reason);
                self.close_all(reason);
                self.recovery.busy.send_replace(false);
                self.sender.close().await;
                return;
            }
            self.resend_lost();
            self.recovery.busy.send_replace(false);
            self.relist().await;
            let mut st = self.recovery.state.lock();
            if st.again {
                st.again = false;
                continue;
            }
            st.running = false;
            let resend = !st.lost.is_empty();
            drop(st);
            if resend {
                self.resend_lost();
            }
            return;
        }
    }

    /// `initialize` and `notifications/initialized` once more, at the version the
    /// connection speaks.
    async fn rehandshake(&self) -> Result<(), ClientError> {
        let params = json!({
            "protocolVersion": self.version.get().and_then(|v| v.to_str().ok()).unwrap_or(LATEST_PROTOCOL_VERSION),
            "capabilities": self.capabilities(),
            "clientInfo": {"name": "harness9", "version": env!("CARGO_PKG_VERSION")},
        });
        // Sent as the first one was: without the version header.
        let body = self
            .request_once_as(
                "initialize",
                &Params::Value(params),
                RequestOptions::default(),
                false,
                Some(EraHeaders::default()),
            )
            .await?;
        let init: InitializeResult = body.parse("initialize")?;
        let speaks = self.version.get().and_then(|v| v.to_str().ok());
        if speaks.is_some_and(|v| v != init.protocol_version) {
            return Err(ClientError::Invalid {
                method: "initialize".into(),
                detail: format!(
                    "the new session speaks protocol version {} instead of {}; restart the server",
                    init.protocol_version,
                    speaks.unwrap_or_default()
                ),
            });
        }
        self.notify("notifications/initialized", None)
    }

    /// Sends the requests handed back once more, those whose callers still wait.
    fn resend_lost(&self) {
        let lost = std::mem::take(&mut self.recovery.state.lock().lost);
        for out in lost {
            let Some(id) = out.request_id() else { continue };
            if !self.pending.lock().contains_key(&id) {
                continue; // timed out or cancelled meanwhile
            }
            self.recovery.state.lock().resent.insert(id);
            if self.sender.send(out).is_err() {
                return; // closed: the reader fails every waiting request
            }
        }
        // Forget requests that are answered.
        let mut st = self.recovery.state.lock();
        let pending = self.pending.lock();
        st.resent.retain(|id| pending.contains_key(id));
    }

    /// A request lost by a second session: it fails.
    fn fail_lost(&self, id: u64) {
        let Some(tx) = self.pending.lock().remove(&id) else {
            return;
        };
        let _ = tx.send(Err(ReplyError::Rpc(RpcError {
            code: TRANSPORT_ERROR_CODE,
            message: "the server ended its session twice before answering this request; it was not sent a third time".into(),
            data: None,
        })));
    }

    /// Lists again what was listed; a list that differs is reported.
    async fn relist(&self) {
        let listed: Vec<(&'static str, u64)> = {
            let st = self.recovery.state.lock();
            st.listed.iter().map(|(m, d)| (*m, *d)).collect()
        };
        let mut changed: Vec<ClientEvent> = Vec::new();
        for (method, old) in listed {
            // Parsed as the listing that made `old` parsed them, so equal lists agree.
            let new = match method {
                "tools/list" => {
                    self.digest_of(method, |p: ListToolsPage| (p.tools, p.next_cursor))
                        .await
                }
                "resources/list" => {
                    self.digest_of(method, |p: ResourcesPage| (p.resources, p.next_cursor))
                        .await
                }
                "resources/templates/list" => {
                    self.digest_of(method, |p: TemplatesPage| {
                        (p.resource_templates, p.next_cursor)
                    })
                    .await
                }
                _ => {
                    self.digest_of(method, |p: PromptsPage| (p.prompts, p.next_cursor))
                        .await
                }
            };
            match new {
                Ok(new) if new == old => continue,
                Ok(new) => {
                    self.recovery.state.lock().listed.insert(method, new);
                }
                Err(e) => {
                    // Reported as changed: whoever shows the list lists it again.
                    let text = format!("listing again after a new session failed ({method}): {e}");
                    self.log.push(LogSource::Host, "warning", &text);
                }
            }
            if let Some((_, event)) = LISTS.iter().find(|(m, _)| *m == method) {
                if !changed.contains(event) {
                    changed.push(event.clone());
                }
            }
        }
        for event in changed {
            let _ = self.events.send(event);
        }
    }

    /// The digest of every page of `method`, each page's items taken by `split`.
    async fn digest_of<P: DeserializeOwned, T: Serialize>(
        &self,
        method: &str,
        split: impl Fn(P) -> (Vec<T>, Option<String>),
    ) -> Result<u64, ClientError> {
        let opts = RequestOptions {
            timeout: Some(RECOVERY_TIMEOUT),
            timeout_field: Some(crate::settings::STARTUP_TIMEOUT_FIELD),
            progress: None,
        };
        let items = super::pages::all_pages(
            method,
            super::MAX_TOOL_PAGES,
            |params| {
                let opts = opts.clone();
                async move { self.request_once(method, &params, opts, true).await }
            },
            split,
        )
        .await?;
        let mut digest = ListDigest::default();
        digest.add(&items);
        Ok(digest.finish())
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::time::Duration;

    use serde_json::Value;

    use crate::client::{Client, ClientError, RequestOptions};
    use crate::transport::memory::{self, MemoryPeer};
    use crate::transport::{EraHeaders, Inbound, Outbound};

    /// The next message the client sent, parsed, with its bytes.
    async fn next(peer: &mut MemoryPeer) -> (Value, Vec<u8>) {
        let bytes = tokio::time::timeout(Duration::from_secs(5), peer.from_client.recv())
            .await
            .expect("a message in time")
            .expect("a message");
        (serde_json::from_slice(&bytes).unwrap(), bytes)
    }

    fn send(peer: &MemoryPeer, text: String) {
        peer.to_client
            .send(Inbound::Message(text.into_bytes()))
            .unwrap();
    }

    /// Answers the `initialize` the client sends next, and takes its `initialized`.
    async fn handshake(peer: &mut MemoryPeer, answer: &str) {
        let (init, _) = next(peer).await;
        assert_eq!(init["method"], "initialize");
        let id = &init["id"];
        send(peer, format!(r#"{{"jsonrpc":"2.0","id":{id},{answer}}}"#));
    }

    const OK: &str = r#""result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}}}"#;

    async fn connected() -> (Client, MemoryPeer) {
        let (conn, mut peer) = memory::pair();
        let connect = tokio::spawn(Client::connect(conn, "mem", Arc::default()));
        handshake(&mut peer, OK).await;
        let client = connect.await.unwrap().unwrap();
        assert_eq!(
            next(&mut peer).await.0["method"],
            "notifications/initialized"
        );
        (client, peer)
    }

    fn lost(peer: &MemoryPeer, session: u64, id: u64, bytes: Vec<u8>) {
        let out = Outbound::request(bytes, id, "tools/call", EraHeaders::default());
        let request = Some(Box::new(out));
        peer.to_client
            .send(Inbound::SessionLost { session, request })
            .unwrap();
    }

    #[tokio::test]
    async fn a_request_lost_with_two_sessions_fails() {
        let (client, mut peer) = connected().await;
        let call = tokio::spawn(async move {
            let r = client
                .call_tool("echo", None, RequestOptions::default())
                .await;
            (r, client)
        });
        let (first, bytes) = next(&mut peer).await;
        let id = first["id"].as_u64().unwrap();
        lost(&peer, 1, id, bytes);
        handshake(&mut peer, OK).await;
        assert_eq!(
            next(&mut peer).await.0["method"],
            "notifications/initialized"
        );
        let (again, bytes) = next(&mut peer).await;
        assert_eq!(again, first, "sent once more, as it was");
        lost(&peer, 2, id, bytes);
        let (r, _client) = call.await.unwrap();
        let e = r.unwrap_err();
        assert_eq!(
            e.to_string(),
            "the server answered tools/call with error -32000: the server ended its session twice before answering this request; it was not sent a third time"
        );
        // The second lost session gets a new one too.
        handshake(&mut peer, OK).await;
    }

    #[tokio::test]
    async fn a_new_session_that_fails_ends_the_connection() {
        let (client, mut peer) = connected().await;
        let call = tokio::spawn(async move {
            let r = client
                .call_tool("echo", None, RequestOptions::default())
                .await;
            (r, client)
        });
        let (first, bytes) = next(&mut peer).await;
        lost(&peer, 1, first["id"].as_u64().unwrap(), bytes);
        handshake(
            &mut peer,
            r#""error":{"code":-32600,"message":"no more sessions"}"#,
        )
        .await;
        let (r, client) = call.await.unwrap();
        let why = "the server ended the session and starting a new one failed: the server answered initialize with error -32600: no more sessions";
        assert!(
            matches!(r, Err(ClientError::Closed(ref reason)) if reason == why),
            "{r:?}"
        );
        assert_eq!(client.closed_reason().as_deref(), Some(why));
    }
}
