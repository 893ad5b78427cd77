//! The reader's side of a connection: each inbound message (or batch) is taken apart
//! here and handed on: an answer to the request waiting for it (a plain answer recognised
//! by its shape alone, see [`ReplyBody`]), a request to [`Inner::serve`], a notification
//! to [`Inner::on_notification`]; anything else is logged and skipped.

use serde_json::value::RawValue;
use tokio::sync::oneshot;

use super::{subrange, Inner, Reply, ReplyBody, ReplyError};
use crate::protocol::jsonrpc::{self, Inbound as Msg, Kind};

impl Inner {
    /// Handles one inbound message (or batch) on the reader task.
    pub(super) fn dispatch(&self, bytes: Vec<u8>) {
        let text = match String::from_utf8(bytes) {
            Ok(text) => text,
            Err(e) => {
                let bytes = e.as_bytes();
                let preview = String::from_utf8_lossy(&bytes[..bytes.len().min(200)]);
                self.note_garbage(&format!("not valid JSON-RPC (not UTF-8): {preview}"));
                return;
            }
        };
        // The common case, a plain answer, by its shape alone (see `ReplyBody`).
        if let Some((id, range)) = jsonrpc::quick_result(&text) {
            let waiter = self.pending.lock().remove(&id);
            if let Some(tx) = waiter {
                let _ = tx.send(Ok(ReplyBody {
                    text,
                    range,
                    checked: false,
                }));
                return;
            }
            // Nobody waits for it: the full path below says so in the log.
        }
        let first = text.bytes().find(|b| !b.is_ascii_whitespace());
        if first == Some(b'[') {
            let result =
                jsonrpc::for_each_message(text.as_bytes(), |msg: Msg<'_>| self.handle(msg.kind()));
            if let Err(e) = result {
                self.note_invalid(&text, &e);
            }
            return;
        }
        // A single answer keeps its result inside the message's own buffer.
        let answered = match serde_json::from_str::<Msg<'_>>(&text) {
            Err(e) => {
                self.note_invalid(&text, &e);
                None
            }
            Ok(msg) => match msg.kind() {
                Kind::Response {
                    id,
                    outcome: Ok(raw),
                } => match subrange(&text, raw.get()) {
                    Some(range) => self.waiter(id).map(|tx| (tx, range)),
                    None => {
                        self.answer(id, Ok(ReplyBody::whole(raw.get().to_owned())));
                        None
                    }
                },
                other @ (Kind::Response {
                    outcome: Err(_), ..
                }
                | Kind::BadResponse { .. }
                | Kind::Request { .. }
                | Kind::Notification { .. }
                | Kind::Invalid) => {
                    self.handle(other);
                    None
                }
            },
        };
        if let Some((tx, range)) = answered {
            let _ = tx.send(Ok(ReplyBody {
                text,
                range,
                checked: true,
            }));
        }
    }

    fn handle(&self, kind: Kind<'_>) {
        match kind {
            Kind::Response { id, outcome } => {
                let reply = match outcome {
                    Ok(raw) => Ok(ReplyBody::whole(raw.get().to_owned())),
                    Err(e) => Err(ReplyError::Rpc(e)),
                };
                self.answer(id, reply);
            }
            Kind::Request { id, method, params } => self.serve(id, &method, params),
            Kind::BadResponse { id, problem } => {
                self.note_garbage(&format!("an invalid answer ({problem})"));
                self.answer(id, Err(ReplyError::Invalid(problem)));
            }
            Kind::Notification { method, params } => self.on_notification(&method, params),
            Kind::Invalid => self.note_garbage("a JSON-RPC message with neither method nor result"),
        }
    }

    /// Takes the waiter of the request `id` answers, if it is still waiting.
    fn waiter(&self, id: &RawValue) -> Option<oneshot::Sender<Reply>> {
        let waiter = jsonrpc::parse_id(id).and_then(|id| self.pending.lock().remove(&id));
        if waiter.is_none() {
            tracing::debug!(server = %self.name, id = id.get(), "dropped an answer to a request that is no longer waiting");
        }
        waiter
    }

    fn answer(&self, id: &RawValue, reply: Reply) {
        if let Some(tx) = self.waiter(id) {
            let _ = tx.send(reply);
        }
    }

    pub(super) fn note_invalid(&self, text: &str, e: &serde_json::Error) {
        let quoted = crate::truncate::prefix(text, 200);
        self.note_garbage(&format!("not valid JSON-RPC ({e}): {quoted}"));
    }
}
