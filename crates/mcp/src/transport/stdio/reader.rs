//! The reading half: frames from stdout, and the end of the connection noticed from the
//! child's exit status as well as from end of file (a grandchild may hold stdout open).

use std::future::Future;
use std::os::fd::AsRawFd;
use std::pin::Pin;
use std::process::ExitStatus;
use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
use futures::FutureExt;
use tokio::io::BufReader;
use tokio::process::ChildStdout;
use tokio::sync::watch;

use super::framer::{Frame, LineReader};
use super::process::{describe_exit, end_group, Group};
use super::writer::{grow_pipe, Outbox, HANDOFF_MIN};
use crate::log::{LogSource, ServerLog};
use crate::transport::{Inbound, TransportReceiver};

/// After the server exits, how long stdout may stay silent before the connection ends
/// anyway (what the server wrote before exiting still arrives).
pub const EXIT_OUTPUT_GRACE: Duration = Duration::from_millis(250);

/// After the server exits, the longest stdout may keep delivering.
pub const EXIT_OUTPUT_MAX: Duration = Duration::from_secs(3);

/// Resolves once the server has exited (or its exit can no longer be learnt).
type Exited = Pin<Box<dyn Future<Output = ()> + Send>>;

/// The server's exit as one future for the whole connection, so that waiting for a frame
/// does not register and unregister a watcher of the exit status for every message.
pub(super) fn exited(mut exit: watch::Receiver<Option<ExitStatus>>) -> Exited {
    Box::pin(async move {
        let _ = exit.wait_for(|s| s.is_some()).await;
    })
}

pub(super) struct StdioReceiver {
    pub(super) lines: LineReader<BufReader<ChildStdout>>,
    pub(super) log: Arc<ServerLog>,
    /// `None` once the exit was seen.
    pub(super) exited: Option<Exited>,
    pub(super) exit: watch::Receiver<Option<ExitStatus>>,
    /// The sending half's state: every message read ends the burst of requests before it.
    pub(super) out: Arc<Outbox>,
    pub(super) stderr_done: watch::Receiver<bool>,
    pub(super) group: Arc<Group>,
    pub(super) max_message_bytes: usize,
    pub(super) closed: bool,
    /// The pipe was enlarged for a large message.
    pub(super) grown: bool,
}

impl TransportReceiver for StdioReceiver {
    fn recv(&mut self) -> BoxFuture<'_, Inbound> {
        async move {
            if self.closed {
                return Inbound::Closed("the connection is closed".into());
            }
            // Set once the server exited: (silence deadline, hard deadline, bytes read).
            let mut after_exit: Option<(tokio::time::Instant, tokio::time::Instant, u64)> = None;
            loop {
                let frame = match (after_exit, self.exited.as_mut()) {
                    (None, Some(exited)) => {
                        let next = tokio::select! {
                            biased;
                            f = self.lines.next_frame() => Some(f),
                            () = exited => None,
                        };
                        match next {
                            Some(f) => f,
                            None => {
                                self.exited = None;
                                continue;
                            }
                        }
                    }
                    // The exit was seen (in this call or an earlier one): stdout gets its
                    // grace from now.
                    (None, None) => {
                        let now = tokio::time::Instant::now();
                        after_exit = Some((
                            now + EXIT_OUTPUT_GRACE,
                            now + EXIT_OUTPUT_MAX,
                            self.lines.consumed(),
                        ));
                        continue;
                    }
                    (Some((quiet, hard, seen)), _) => tokio::select! {
                        biased;
                        f = self.lines.next_frame() => f,
                        _ = tokio::time::sleep_until(quiet.min(hard)) => {
                            let now = self.lines.consumed();
                            if now != seen && quiet < hard {
                                after_exit = Some((quiet + EXIT_OUTPUT_GRACE, hard, now));
                                continue;
                            }
                            return self.end(None).await;
                        }
                    },
                };
                match frame {
                    Err(_) | Ok(Frame::Eof) => return self.end(None).await,
                    Ok(Frame::Message(msg)) => {
                        self.out.burst_over();
                        if msg.len() >= HANDOFF_MIN && !self.grown {
                            self.grown = true;
                            grow_pipe(self.lines.get_ref().get_ref().as_raw_fd());
                        }
                        return Inbound::Message(msg);
                    }
                    Ok(Frame::Noise { prefix, len }) => {
                        let text = String::from_utf8_lossy(&prefix);
                        tracing::warn!("skipped a non-JSON line on the server's stdout: {text}");
                        let more = if len > prefix.len() as u64 {
                            format!("… ({len} bytes)")
                        } else {
                            String::new()
                        };
                        self.log.push(
                            LogSource::Host,
                            "warning",
                            &format!("skipped non-JSON stdout line: {text}{more}"),
                        );
                    }
                    Ok(Frame::TooLong { id, len: _ }) => {
                        let error = too_long(self.max_message_bytes);
                        self.log.push(LogSource::Host, "error", &error);
                        match id {
                            Some(id) => return Inbound::Message(error_response(&id, &error)),
                            None => return self.end(Some(error)).await,
                        }
                    }
                }
            }
        }
        .boxed()
    }
}

/// The error for a message over the limit; names the setting to change.
pub fn too_long(max: usize) -> String {
    format!(
        "the server sent a message longer than the limit of {max} bytes; it was discarded. \
         Raise \"maxMessageBytes\" for this server in .mcp.json if such messages are expected"
    )
}

/// A JSON-RPC error answer for request `id` (as written on the wire).
fn error_response(id: &str, message: &str) -> Vec<u8> {
    let body = serde_json::json!({"code": -32603, "message": message});
    format!(r#"{{"jsonrpc":"2.0","id":{id},"error":{body}}}"#).into_bytes()
}

impl StdioReceiver {
    /// Ends the connection: the whole process group goes, and the reason is returned.
    async fn end(&mut self, error: Option<String>) -> Inbound {
        self.closed = true;
        tokio::spawn(end_group(self.group.clone(), self.exit.clone()));
        let mut reason = self.close_reason().await;
        if let Some(error) = error {
            reason = format!("{error}; {reason}");
        }
        Inbound::Closed(reason)
    }

    /// Exit status and stderr tail, waiting briefly for both to be known.
    async fn close_reason(&mut self) -> String {
        let _ =
            tokio::time::timeout(Duration::from_secs(1), self.exit.wait_for(|s| s.is_some())).await;
        let _ = tokio::time::timeout(
            Duration::from_millis(500),
            self.stderr_done.wait_for(|d| *d),
        )
        .await;
        let status = *self.exit.borrow();
        let mut reason = match status {
            Some(s) => describe_exit(s),
            None => "the server closed its output".to_string(),
        };
        let tail = self.log.stderr_tail();
        if !tail.is_empty() {
            reason.push_str("; its last output on stderr:\n");
            reason.push_str(&tail);
        }
        reason
    }
}
