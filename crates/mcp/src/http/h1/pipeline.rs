//! HTTP/1.1 pipelining (RFC 9112 §9.3.2) of requests that are safe to repeat: several
//! POSTs written back to back, in one write, on an idle connection that has shown it keeps
//! alive, and their answers read in order on it.
//!
//! Invariants:
//! - only on a connection that is [`Pipelining::Proven`](super::Pipelining::Proven) (an HTTP/1.1 answer framed by its
//!   length or by chunks, kept alive, no event stream, was read whole on it); with none
//!   idle, nothing is written and the caller sends its requests one by one, which proves
//!   the connections they use;
//! - each answer's body is read whole before the next head is read (the body hands the
//!   connection back to the pipeline, [`Home::Line`]); an answer dropped half read, cut,
//!   refused, or ending with `Connection: close` ends the pipeline: the answers after it
//!   never come, and [`Pipeline::next`] says so, so that the caller can send those requests
//!   again on another connection;
//! - an answer that is an event stream marks its connection [`Pipelining::Refused`](super::Pipelining::Refused): it
//!   is never pipelined again (its stream may stay open for long);
//! - at most [`MAX_PIPELINED`] requests of at most `JOINED_BODY` bytes each go in one
//!   write; the answers are read with the limits of every other answer;
//! - after the last answer the connection goes back to the pool only when nothing came
//!   after it.

use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;
use reqwest::Method;
use tokio::time::Instant;

use super::body::{Home, WireBody};
use super::{head, Pool, Wire, WireConn, WireError, WireRequest, WireResponse, JOINED_BODY};

/// Requests written back to back on one connection at most.
pub(crate) const MAX_PIPELINED: usize = 16;

/// Requests written back to back on one connection, whose answers are read in order.
pub(crate) struct Pipeline {
    /// The connection between two answers (`None` while an answer's body holds it, and
    /// for good once an answer ended the pipeline).
    slot: Arc<Mutex<Option<WireConn>>>,
    /// Answers not handed out yet.
    left: usize,
    deadline: Option<Instant>,
    pool: Arc<Pool>,
}

impl Wire {
    /// Writes `reqs` (POSTs to the server's own URL) back to back in one write on an idle
    /// connection that has shown it can carry them; `timeout` covers the write and every
    /// answer. `None`: no such connection is idle, or a request is not one to pipeline
    /// (nothing was written: the caller sends them one by one). An error: the write
    /// failed, and no request was answered.
    pub(crate) async fn pipeline(
        &self,
        reqs: &[WireRequest<'_>],
        timeout: Option<Duration>,
    ) -> Option<Result<Pipeline, WireError>> {
        let fits = |r: &WireRequest<'_>| {
            *r.method == Method::POST && r.body.is_some_and(|b| b.len() <= JOINED_BODY)
        };
        if reqs.len() < 2 || reqs.len() > MAX_PIPELINED || !reqs.iter().all(fits) {
            return None;
        }
        let room: usize = reqs
            .iter()
            .map(|r| self.head_room(r) + r.body.map_or(0, <[u8]>::len))
            .sum();
        let mut out = Vec::with_capacity(room);
        for r in reqs {
            // A request that cannot be written goes alone, to fail with its own error.
            self.write_head(r, &mut out).ok()?;
            out.extend_from_slice(r.body.unwrap_or_default());
        }
        let mut conn = self.pool.checkout_proven()?;
        let deadline = timeout.map(|t| Instant::now() + t);
        let write = conn.write(&out, None);
        let written = match deadline {
            Some(d) => tokio::time::timeout_at(d, write)
                .await
                .unwrap_or_else(|_| Err(std::io::ErrorKind::TimedOut.into())),
            None => write.await,
        };
        if let Err(e) = written {
            return Some(Err(WireError::io("writing the requests failed", &e)));
        }
        Some(Ok(Pipeline {
            slot: Arc::new(Mutex::new(Some(conn))),
            left: reqs.len(),
            deadline,
            pool: self.pool.clone(),
        }))
    }
}

impl Pipeline {
    /// The head of the next answer, in the order the requests were written. An error: the
    /// answer did not come (the connection ended, or the one before did not leave it
    /// ready); every answer after it fails the same way.
    pub(crate) async fn next(&mut self) -> Result<WireResponse, WireError> {
        let taken = self.slot.lock().take();
        let mut conn = match taken {
            Some(c) if self.left > 0 => c,
            Some(_) | None => {
                return Err(WireError::closed(
                    "before a pipelined answer (the answer before it ended the connection)",
                ))
            }
        };
        self.left -= 1;
        let read = head::read(&mut conn, &Method::POST);
        let head = match self.deadline {
            Some(d) => tokio::time::timeout_at(d, read)
                .await
                .unwrap_or_else(|_| Err(WireError::timed_out())),
            None => read.await,
        }?;
        // The last answer's connection goes back to the pool, the others' to the line.
        let home = match self.left {
            0 => Home::Pool(self.pool.clone()),
            _ => Home::Line(self.slot.clone()),
        };
        Ok(WireResponse::new(
            head,
            WireBody::new(conn, self.deadline, home),
        ))
    }
}
