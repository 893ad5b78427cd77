//! Reading a response body as its head frames it, piece by piece as it arrives: so many
//! bytes, chunks, or up to the end of the connection. The connection goes back to the pool
//! only after the whole body, when the server keeps it alive and sent nothing more (or,
//! inside a pipeline, back to the pipeline, whose next answers may follow in its buffer);
//! after any error the body lets its connection go (closed), so nothing half read is ever
//! reused. An answer read whole also says whether its connection can be pipelined.

use std::sync::Arc;

use bytes::{Buf, Bytes, BytesMut};
use reqwest::header::HeaderMap;
use reqwest::StatusCode;
use tokio::time::Instant;

use super::head::{Framing, Head};
use super::{quoted, Pipelining, Pool, WireConn, WireError, MAX_CHUNK_LINE, MAX_TRAILER_BYTES};

/// The media type of an event stream, which may stay open for long.
const EVENT_STREAM: &[u8] = b"text/event-stream";

/// A response of the lean client.
pub(crate) struct WireResponse {
    status: StatusCode,
    headers: HeaderMap,
    body: WireBody,
}

impl WireResponse {
    pub(super) fn new(head: Head, mut body: WireBody) -> WireResponse {
        body.keep_alive = head.keep_alive;
        let event_stream = head
            .headers
            .get(reqwest::header::CONTENT_TYPE)
            .is_some_and(|v| {
                v.as_bytes()
                    .trim_ascii_start()
                    .get(..EVENT_STREAM.len())
                    .is_some_and(|t| t.eq_ignore_ascii_case(EVENT_STREAM))
            });
        if let Some(conn) = body.conn.as_mut() {
            if event_stream {
                conn.pipelining = Pipelining::Refused;
            }
        }
        body.proves = head.http11
            && head.keep_alive
            && !event_stream
            && matches!(head.framing, Framing::Length(_) | Framing::Chunked);
        body.state = match head.framing {
            Framing::Length(n) => State::Length(n),
            Framing::Chunked => State::Chunk(Chunk::Size),
            Framing::Close => State::Close,
        };
        WireResponse {
            status: head.status,
            headers: head.headers,
            body,
        }
    }

    pub(crate) fn status(&self) -> StatusCode {
        self.status
    }

    pub(crate) fn headers(&self) -> &HeaderMap {
        &self.headers
    }

    /// The `Content-Length` the server declared.
    pub(crate) fn content_length(&self) -> Option<u64> {
        match self.body.state {
            State::Length(n) => Some(n),
            State::Chunk(_) | State::Close | State::Done => None,
        }
    }

    /// The next piece of the body; `None` at its end.
    pub(crate) async fn chunk(&mut self) -> Result<Option<Bytes>, WireError> {
        self.body.chunk().await
    }
}

/// Where the body's reader stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// This many bytes are left.
    Length(u64),
    Chunk(Chunk),
    /// Until the server closes the connection.
    Close,
    Done,
}

/// Where a chunked body's reader stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Chunk {
    /// Before a chunk-size line.
    Size,
    /// Inside a chunk, this many bytes left.
    Data(u64),
    /// After a chunk's data, before its CRLF.
    DataEnd,
    /// After the last chunk: trailer lines until an empty one, this many bytes read.
    Trailers(usize),
}

pub(super) struct WireBody {
    /// `None` once the body ended or failed.
    conn: Option<WireConn>,
    state: State,
    keep_alive: bool,
    /// Read whole, this answer shows its connection can carry pipelined requests
    /// ([`Pipelining::Proven`]).
    proves: bool,
    deadline: Option<Instant>,
    /// Where the connection goes once the body is read whole.
    home: Home,
}

/// Where a connection goes after an answer read whole.
pub(super) enum Home {
    /// Back to the pool, when nothing came after the answer.
    Pool(Arc<Pool>),
    /// Back to the pipeline it came from, whose next answers may already be in its buffer.
    Line(Arc<parking_lot::Mutex<Option<WireConn>>>),
}

impl WireBody {
    pub(super) fn new(conn: WireConn, deadline: Option<Instant>, home: Home) -> WireBody {
        WireBody {
            conn: Some(conn),
            state: State::Done,
            keep_alive: false,
            proves: false,
            deadline,
            home,
        }
    }

    async fn chunk(&mut self) -> Result<Option<Bytes>, WireError> {
        let next = match self.deadline {
            Some(d) => tokio::time::timeout_at(d, self.next())
                .await
                .unwrap_or_else(|_| Err(WireError::timed_out())),
            None => self.next().await,
        };
        if next.is_err() {
            // Whatever the connection still holds is in doubt: it is closed.
            self.conn = None;
            self.state = State::Done;
        }
        next
    }

    async fn next(&mut self) -> Result<Option<Bytes>, WireError> {
        loop {
            let Some(conn) = self.conn.as_mut() else {
                return Ok(None);
            };
            match self.state {
                State::Done => {
                    self.release();
                    return Ok(None);
                }
                State::Length(0) => self.state = State::Done,
                State::Length(left) => {
                    let piece = take(conn, left, "before the end of the body").await?;
                    self.state = State::Length(left - piece.len() as u64);
                    return Ok(Some(piece));
                }
                State::Close => {
                    if !conn.buf.is_empty() {
                        return Ok(Some(conn.buf.split().freeze()));
                    }
                    if !conn.fill(0).await? {
                        self.keep_alive = false;
                        self.state = State::Done;
                    }
                }
                State::Chunk(Chunk::Data(0)) => self.state = State::Chunk(Chunk::DataEnd),
                State::Chunk(Chunk::Data(left)) => {
                    let piece = take(conn, left, "inside a chunk").await?;
                    self.state = State::Chunk(Chunk::Data(left - piece.len() as u64));
                    return Ok(Some(piece));
                }
                State::Chunk(Chunk::Size) => {
                    let line = line(conn).await?;
                    self.state = State::Chunk(match chunk_size(&line)? {
                        0 => Chunk::Trailers(0),
                        n => Chunk::Data(n),
                    });
                }
                State::Chunk(Chunk::DataEnd) => {
                    if !line(conn).await?.is_empty() {
                        return Err(WireError::invalid("a chunk longer than its size"));
                    }
                    self.state = State::Chunk(Chunk::Size);
                }
                State::Chunk(Chunk::Trailers(read)) => {
                    let line = line(conn).await?;
                    let read = read + line.len() + 2;
                    if read > MAX_TRAILER_BYTES {
                        return Err(WireError::invalid(format!(
                            "trailers longer than {MAX_TRAILER_BYTES} bytes"
                        )));
                    }
                    self.state = if line.is_empty() {
                        State::Done
                    } else {
                        State::Chunk(Chunk::Trailers(read))
                    };
                }
            }
        }
    }

    /// The body was read whole: the connection goes back to the pool if it may.
    fn release(&mut self) {
        let Some(mut conn) = self.conn.take() else {
            return;
        };
        if !self.keep_alive {
            return;
        }
        if self.proves && conn.pipelining == Pipelining::Unknown {
            conn.pipelining = Pipelining::Proven;
        }
        match &self.home {
            Home::Pool(pool) if conn.buf.is_empty() => pool.checkin(conn),
            Home::Pool(_) => {}
            Home::Line(slot) => *slot.lock() = Some(conn),
        }
    }
}

/// Up to `left` bytes of body: what the buffer holds, or what the next read brings.
async fn take(conn: &mut WireConn, left: u64, place: &str) -> Result<Bytes, WireError> {
    if conn.buf.is_empty() && !conn.fill(left).await? {
        return Err(WireError::closed(place));
    }
    let n = usize::try_from(left)
        .unwrap_or(usize::MAX)
        .min(conn.buf.len());
    Ok(conn.buf.split_to(n).freeze())
}

/// The next CRLF-ended line of a chunked body (without its CRLF), reading until it is there.
async fn line(conn: &mut WireConn) -> Result<BytesMut, WireError> {
    loop {
        if let Some(line) = take_line(&mut conn.buf)? {
            return Ok(line);
        }
        if !conn.fill(0).await? {
            return Err(WireError::closed("inside a chunked body"));
        }
    }
}

/// One CRLF-ended line off the front of `buf` (without its CRLF), if it is all there. A
/// line ended by a bare LF is a framing doubt, refused.
pub(super) fn take_line(buf: &mut BytesMut) -> Result<Option<BytesMut>, WireError> {
    let window = buf.get(..MAX_CHUNK_LINE + 2).unwrap_or(buf);
    match memchr::memchr(b'\n', window) {
        Some(at) if at > 0 && window.get(at - 1) == Some(&b'\r') => {
            let line = buf.split_to(at - 1);
            buf.advance(2);
            Ok(Some(line))
        }
        Some(_) => Err(WireError::invalid("a chunk line ended without CR")),
        None if buf.len() >= MAX_CHUNK_LINE + 2 => Err(WireError::invalid(format!(
            "a chunk line longer than {MAX_CHUNK_LINE} bytes"
        ))),
        None => Ok(None),
    }
}

/// The size of a chunk-size line: hex digits, then extensions after `;` (ignored).
pub(super) fn chunk_size(line: &[u8]) -> Result<u64, WireError> {
    let size = line
        .split(|b| *b == b';')
        .next()
        .unwrap_or_default()
        .trim_ascii_end();
    let hex = !size.is_empty() && size.len() <= 16 && size.iter().all(u8::is_ascii_hexdigit);
    let n = hex
        .then(|| std::str::from_utf8(size).ok())
        .flatten()
        .and_then(|t| u64::from_str_radix(t, 16).ok());
    n.ok_or_else(|| WireError::invalid(format!("chunk size {}", quoted(line))))
}
