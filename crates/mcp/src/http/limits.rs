//! What the HTTP transports (Streamable HTTP and legacy HTTP+SSE) allow a server: how large
//! one message may be (bodies read through [`read_body`], SSE events through the parser's
//! own limit). Where a redirect may lead is [`super::redirect`]'s.
//!
//! It also keeps the [`Backlog`] of server messages the client has not read yet: past
//! [`INBOUND_QUEUE_BYTES`] the transport stops reading from the server until the client
//! catches up, so a server that floods notifications fills TCP buffers, not our memory.
//!
//! Invariant: no body is buffered past the per-message limit (`maxMessageBytes`).

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use super::wire::HttpResponse;
use tokio::sync::Notify;

use crate::settings::MAX_MESSAGE_FIELD;

/// Bytes of an acknowledgement body (202/200 to a notification) read before the rest is
/// dropped with the connection.
pub const MAX_ACK_BODY: usize = 64 * 1024;

/// Bytes of server messages waiting for the client past which the transport stops reading
/// from the server (each stream may still finish the chunk it has, so the backlog stays
/// within this plus one message per open stream).
pub const INBOUND_QUEUE_BYTES: usize = 8 * 1024 * 1024;

/// Server messages handed to the client and not yet read by it.
#[derive(Default)]
pub struct Backlog {
    bytes: AtomicUsize,
    room: Notify,
    /// The client stopped reading for good: nobody will make room.
    gone: AtomicBool,
}

impl Backlog {
    /// A message of `n` bytes was queued.
    pub fn add(&self, n: usize) {
        self.bytes.fetch_add(n, Ordering::AcqRel);
    }

    /// The client took a message of `n` bytes.
    pub fn take(&self, n: usize) {
        self.bytes.fetch_sub(n, Ordering::AcqRel);
        self.room.notify_waiters();
    }

    /// The client is gone; readers stop waiting.
    pub fn close(&self) {
        self.gone.store(true, Ordering::Release);
        self.room.notify_waiters();
    }

    /// Waits until the backlog is below [`INBOUND_QUEUE_BYTES`].
    pub async fn wait_for_room(&self) {
        loop {
            let notified = self.room.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if self.gone.load(Ordering::Acquire)
                || self.bytes.load(Ordering::Acquire) < INBOUND_QUEUE_BYTES
            {
                return;
            }
            notified.await;
        }
    }
}

/// `n` bytes for people: `128 MiB`, `64 KiB`, `1000 bytes`.
pub fn fmt_bytes(n: usize) -> String {
    const MIB: usize = 1024 * 1024;
    if n >= MIB && n.is_multiple_of(MIB) {
        format!("{} MiB", n / MIB)
    } else if n >= 1024 && n.is_multiple_of(1024) {
        format!("{} KiB", n / 1024)
    } else {
        format!("{n} bytes")
    }
}

/// The error for a message past the limit.
pub fn too_large(limit: usize) -> String {
    format!(
        "the server sent a message larger than the limit of {} ({MAX_MESSAGE_FIELD}); it was discarded. Raise \"{MAX_MESSAGE_FIELD}\" for this server in .mcp.json if it really sends messages this large",
        fmt_bytes(limit)
    )
}

/// Why a body could not be read whole.
#[derive(Debug, thiserror::Error)]
pub enum BodyError {
    /// Longer than the limit; the text is [`too_large`].
    #[error("{0}")]
    TooLarge(String),
    /// The connection broke; the text says how.
    #[error("{0}")]
    Broken(String),
}

impl BodyError {
    /// A stable kebab-case code for front ends and `--json` output (never changes once
    /// released).
    pub fn code(&self) -> &'static str {
        match self {
            BodyError::TooLarge(_) => "message-too-large",
            BodyError::Broken(_) => "connection-broken",
        }
    }

    pub fn into_message(self) -> String {
        match self {
            BodyError::TooLarge(m) | BodyError::Broken(m) => m,
        }
    }
}

/// Reads a whole body of at most `limit` bytes. A longer one (by its `Content-Length` or as
/// it streams in) stops the read at once; dropping the response then closes the connection.
pub(crate) async fn read_body(resp: &mut HttpResponse, limit: usize) -> Result<Vec<u8>, BodyError> {
    let declared = resp.content_length().unwrap_or(0);
    if declared > limit as u64 {
        return Err(BodyError::TooLarge(too_large(limit)));
    }
    let mut body = Vec::with_capacity((declared as usize).min(1 << 20));
    loop {
        match resp.chunk().await {
            Ok(Some(c)) => {
                if body.len() + c.len() > limit {
                    return Err(BodyError::TooLarge(too_large(limit)));
                }
                body.extend_from_slice(&c);
            }
            Ok(None) => return Ok(body),
            Err(e) => {
                return Err(BodyError::Broken(format!(
                    "reading the answer failed: {}",
                    super::errors::error_chain(&e)
                )))
            }
        }
    }
}

/// Reads and forgets an acknowledgement body (so the connection can be reused), at most
/// [`MAX_ACK_BODY`] bytes of it.
pub(crate) async fn drain_ack(mut resp: HttpResponse) {
    let mut seen = 0;
    while seen <= MAX_ACK_BODY {
        match resp.chunk().await {
            Ok(Some(c)) => seen += c.len(),
            Ok(None) | Err(_) => return,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_full_backlog_waits_for_the_client() {
        let b = std::sync::Arc::new(Backlog::default());
        b.add(INBOUND_QUEUE_BYTES);
        let waiter = tokio::spawn({
            let b = b.clone();
            async move { b.wait_for_room().await }
        });
        // On this one-thread runtime the waiter runs while this task yields: polled, it
        // waits.
        for _ in 0..3 {
            tokio::task::yield_now().await;
        }
        assert!(!waiter.is_finished());
        b.take(1);
        tokio::time::timeout(std::time::Duration::from_secs(5), waiter)
            .await
            .expect("room made")
            .unwrap();
        b.close();
        b.add(INBOUND_QUEUE_BYTES);
        b.wait_for_room().await; // nobody reads any more: no wait
    }

    #[test]
    fn sizes_and_messages() {
        assert_eq!(fmt_bytes(128 * 1024 * 1024), "128 MiB");
        assert_eq!(fmt_bytes(64 * 1024), "64 KiB");
        assert_eq!(fmt_bytes(5000), "5000 bytes");
        assert!(too_large(4096).starts_with(
            "the server sent a message larger than the limit of 4 KiB (maxMessageBytes)"
        ));
    }
}
