//! Polls sent together: the `tasks/get` requests the client sends at once (the polls of
//! the tasks due on one tick of the poll grid) are written back to back on one kept-alive
//! connection (HTTP/1.1 pipelining, [`Exchange::pipeline`]), and their answers read in
//! order, each as any request's answer is read ([`Shared::answered`]). A poll changes
//! nothing on the server, so one whose answer did not come may be sent again.
//!
//! Invariants:
//! - only `tasks/get`, only on Streamable HTTP through the lean client; at most
//!   [`MAX_PIPELINED`] polls at once; with no connection that has shown it can carry them
//!   idle, the polls go one by one, as every other request;
//! - a poll whose answer did not come (the write failed, the server closed after some
//!   answers, an answer ended the connection with `Connection: close`) is sent once more,
//!   on its own, as any request is sent, and fails then as any request fails; so is a poll
//!   answered with a refusal the authorizer may cure (`401`, `403` for a scope) or a
//!   redirect, which are handled there, request by request;
//! - each poll of a batch is in the connection's `inflight` under the batch's task:
//!   cancelling one (or its answer arriving elsewhere) does not end the others' exchange,
//!   and its answer, still read in turn, is handed on as a late one.

use std::sync::Arc;

use tokio::sync::mpsc;

use super::http_auth::{is_redirect, is_refusal};
use super::http_conn::Shared;
use super::{Outbound, OutboundKind};
use crate::http::h1::MAX_PIPELINED;
use crate::http::limits;
use crate::http::wire::Exchange;

/// The request sent together with others when it can: it only reads the server's state.
const POLL: &str = "tasks/get";

/// Whether `out` is a poll.
pub(crate) fn is_poll(out: &Outbound) -> bool {
    matches!(&out.kind, OutboundKind::Request { method, .. } if method == POLL)
}

/// `first` (a poll) and the polls queued right behind it, up to [`MAX_PIPELINED`]; the
/// first other message met is handed back, to be taken next. The driver steps aside once
/// first, so that polls due together (woken on the same tick) are queued by then.
pub(crate) async fn gather_polls(
    first: Outbound,
    queue: &mut mpsc::UnboundedReceiver<Outbound>,
    shared: &Shared,
) -> (Vec<Outbound>, Option<Outbound>) {
    let mut polls = vec![first];
    tokio::task::yield_now().await;
    while polls.len() < MAX_PIPELINED {
        match queue.try_recv() {
            Ok(out) if is_poll(&out) => {
                shared.note_version(&out);
                polls.push(out);
            }
            Ok(other) => return (polls, Some(other)),
            Err(_) => break,
        }
    }
    (polls, None)
}

impl Shared {
    /// Whether polls may be sent together on this connection.
    pub(crate) fn pipelines(&self) -> bool {
        self.wire.is_some() && self.legacy().is_none()
    }

    /// Starts the exchange of one request in a task of its own, registered in `inflight`.
    pub(crate) fn spawn_request(self: &Arc<Self>, out: Outbound) {
        let id = out.request_id().unwrap_or_default();
        // Held while spawning: the task cannot unregister before it is registered.
        let mut inflight = self.inflight.lock();
        let task = tokio::spawn(self.clone().post_request(out));
        inflight.insert(id, task.abort_handle());
    }

    /// Starts the exchanges of `polls`: together in one task when there are several.
    pub(crate) fn start_polls(self: &Arc<Self>, mut polls: Vec<Outbound>) {
        if polls.len() == 1 {
            if let Some(out) = polls.pop() {
                self.spawn_request(out);
            }
            return;
        }
        let ids: Vec<u64> = polls.iter().filter_map(Outbound::request_id).collect();
        let mut inflight = self.inflight.lock();
        let task = tokio::spawn(self.clone().post_polls(polls));
        for id in ids {
            inflight.insert(id, task.abort_handle());
        }
    }

    /// Sends `polls` together and reads their answers in order.
    async fn post_polls(self: Arc<Self>, polls: Vec<Outbound>) {
        /// Takes the polls still registered under this task out of `inflight` when it
        /// ends.
        struct Unregister<'a>(&'a Shared);
        impl Drop for Unregister<'_> {
            fn drop(&mut self) {
                let mine = tokio::task::try_id();
                self.0
                    .inflight
                    .lock()
                    .retain(|_, t| mine.is_none() || Some(t.id()) != mine);
            }
        }
        let _unregister = Unregister(&self);
        if let Some(auth) = &self.auth {
            // A token about to expire is refreshed first, as for any request.
            auth.before_request(&self.client).await;
        }
        let snap = self.snapshot();
        let Some(wire) = self.wire.as_ref() else {
            return self.send_again(polls);
        };
        let exchanges: Vec<Exchange> = polls
            .iter()
            .map(|out| self.post_builder(out, Some(&snap)))
            .collect();
        let mut answers = match Exchange::pipeline(&exchanges, wire).await {
            Some(Ok(answers)) => answers,
            // None idle that has shown it can (or the write failed): one by one.
            None | Some(Err(_)) => return self.send_again(polls),
        };
        drop(exchanges);
        let mut polls = polls.into_iter();
        while let Some(out) = polls.next() {
            match answers.next().await {
                // A refusal the authorizer may cure, or a redirect: the poll is sent again
                // on its own, where they are handled as for any request.
                Ok(resp) if self.auth.is_some() && is_refusal(&resp) => {
                    limits::drain_ack(resp).await;
                    self.send_again(vec![out]);
                }
                Ok(resp) if is_redirect(resp.status()) => {
                    limits::drain_ack(resp).await;
                    self.send_again(vec![out]);
                }
                Ok(resp) => self.answered(out, &snap, resp).await,
                Err(_) => {
                    self.send_again(std::iter::once(out).chain(polls).collect());
                    return;
                }
            }
        }
    }

    /// Sends each of `polls` that is still waiting for its answer under this task once
    /// more, on its own.
    fn send_again(self: &Arc<Self>, polls: Vec<Outbound>) {
        if self.is_closing() {
            return;
        }
        let mine = tokio::task::try_id();
        for out in polls {
            let id = out.request_id().unwrap_or_default();
            let waiting = (self.inflight.lock().get(&id)).is_some_and(|t| Some(t.id()) == mine);
            if waiting {
                self.spawn_request(out);
            }
        }
    }
}
