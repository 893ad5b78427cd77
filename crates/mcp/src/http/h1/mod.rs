//! A lean HTTP/1.1 client for the Streamable HTTP transport's own URL when it is plain
//! `http://` with no proxy configured (a local server, the usual case): the request written
//! in one go, its answer read by the task that waits for it (no connection task in
//! between), keep-alive connections kept in a small pool. Its answers and failures reach the
//! transport as [`HttpResponse`](super::wire::HttpResponse)s and
//! [`HttpError`](super::wire::HttpError)s ([`super::wire`]), which wrap this client's own
//! [`WireResponse`] and [`WireError`]. Reading a response head is [`head`]'s, reading its
//! body [`body`]'s; several requests written back to back on one connection (HTTP/1.1
//! pipelining, for polls) are [`pipeline`]'s.
//!
//! What a server cannot do to it (the invariants):
//! - make it buffer without bound: a head is at most [`MAX_HEAD_BYTES`] with at most
//!   [`MAX_HEADERS`] fields, after at most [`MAX_INTERIM`] interim (1xx) heads; a chunk-size
//!   line or the trailers have their own limits; one read adds at most [`MAX_READ`] bytes,
//!   and the caller bounds a body (the message limit);
//! - make it guess where a body ends: the framing follows RFC 9112 §6.3 and every doubt is
//!   refused (`Transfer-Encoding` beside `Content-Length`, in an HTTP/1.0 answer, or with a
//!   coding other than `chunked`; a length that is not digits or two different ones; a
//!   chunk size that is not hex digits); a refused answer closes its connection;
//! - reuse a connection it left in doubt: a connection goes back to the pool only when its
//!   whole answer was read, the server keeps it alive, and nothing came after the answer;
//!   dropping an answer half read closes its connection (how a cancelled request's stream
//!   is closed, and how a stalled answer ends when the caller's timeout gives up on it);
//! - learn secrets from errors: they name no header value and no part of the URL but host
//!   and port, and quote at most a few bytes of what the server sent.
//!
//! A request never carries CR, LF or NUL in a header (such a value is refused, not sent),
//! nor anyone else's `Content-Length` or `Transfer-Encoding`: its length is ours. Redirects
//! are left to reqwest (its policy keeps them within the origin).

mod body;
mod head;
mod pipeline;
#[cfg(test)]
mod pipeline_tests;
#[cfg(test)]
mod tests;

use std::sync::Arc;
use std::time::Duration;

use bytes::{BufMut, BytesMut};
use parking_lot::Mutex;
use reqwest::header::{
    HeaderMap, HeaderName, HeaderValue, CONTENT_LENGTH, HOST, TRANSFER_ENCODING, USER_AGENT,
};
use reqwest::{Method, Url};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::time::Instant;

pub(crate) use body::WireResponse;
use body::{Home, WireBody};
pub(crate) use pipeline::{Pipeline, MAX_PIPELINED};

/// The largest response head (status line and headers) read.
pub const MAX_HEAD_BYTES: usize = 64 * 1024;
/// Header fields of one response head parsed at most.
pub const MAX_HEADERS: usize = 128;
/// Interim (1xx) heads skipped before the final one at most.
pub const MAX_INTERIM: usize = 8;
/// The longest chunk-size line (with its extensions) or trailer line.
pub const MAX_CHUNK_LINE: usize = 4 * 1024;
/// The most trailer bytes read after a chunked body.
pub const MAX_TRAILER_BYTES: usize = MAX_HEAD_BYTES;
/// Idle connections kept for reuse.
const MAX_IDLE: usize = 256;
/// Bodies up to this size are written with their head in one write.
const JOINED_BODY: usize = 64 * 1024;
/// Room kept free in a connection's read buffer before each read.
const READ_ROOM: usize = 16 * 1024;
/// The most room made for one read of a large body.
pub const MAX_READ: usize = 256 * 1024;
/// Bytes of server text quoted in an error at most.
const QUOTED: usize = 40;

/// A failure of the lean client, in the words
/// [`classify_failure`](super::errors::classify_failure) reads.
#[derive(Debug)]
pub(crate) struct WireError {
    message: String,
    timeout: bool,
    connect: bool,
}

impl std::fmt::Display for WireError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl WireError {
    pub(crate) fn is_timeout(&self) -> bool {
        self.timeout
    }

    pub(crate) fn is_connect(&self) -> bool {
        self.connect
    }

    fn io(what: &str, e: &std::io::Error) -> WireError {
        WireError {
            message: format!("{what}: {e}"),
            timeout: false,
            connect: false,
        }
    }

    fn closed(what: &str) -> WireError {
        WireError {
            message: format!("connection closed {what}"),
            timeout: false,
            connect: false,
        }
    }

    fn timed_out() -> WireError {
        WireError {
            message: "operation timed out".into(),
            timeout: true,
            connect: false,
        }
    }

    /// The server's answer is not HTTP/1.1 as harness9 reads it.
    fn invalid(what: impl std::fmt::Display) -> WireError {
        WireError {
            message: format!("invalid HTTP response: {what}"),
            timeout: false,
            connect: false,
        }
    }
}

/// A few bytes of what the server sent, for an error message.
fn quoted(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    let cut = crate::truncate::prefix(&text, QUOTED);
    if cut.len() < text.len() {
        format!("{:?}…", cut)
    } else {
        format!("{cut:?}")
    }
}

/// One request of the lean client (to the server's own URL).
pub(crate) struct WireRequest<'a> {
    pub(crate) method: &'a Method,
    /// The headers from `.mcp.json`, but those `own` names too.
    pub(crate) configured: &'a HeaderMap,
    /// This request's own headers.
    pub(crate) own: &'a [(HeaderName, HeaderValue)],
    pub(crate) body: Option<&'a [u8]>,
    /// For the whole exchange, body included.
    pub(crate) timeout: Option<Duration>,
}

/// The lean client of one server URL, with its idle connections.
pub(crate) struct Wire {
    /// `host:port` to connect to.
    authority: String,
    /// The `host` header line.
    host_line: Vec<u8>,
    /// The `user-agent` header line.
    agent_line: Vec<u8>,
    /// The path and query after the method.
    target: String,
    connect_timeout: Duration,
    pool: Arc<Pool>,
}

/// Idle connections, the most recently used last.
#[derive(Default)]
struct Pool {
    idle: Mutex<Vec<WireConn>>,
}

impl Pool {
    /// An idle connection the server has not closed meanwhile.
    fn checkout(&self) -> Option<WireConn> {
        loop {
            let conn = self.idle.lock().pop()?;
            if conn.still_open() {
                return Some(conn);
            }
        }
    }

    /// The most recently used idle connection that has shown it can carry pipelined
    /// requests ([`Pipelining::Proven`]), when one is still open.
    fn checkout_proven(&self) -> Option<WireConn> {
        loop {
            let conn = {
                let mut idle = self.idle.lock();
                let at = idle
                    .iter()
                    .rposition(|c| c.pipelining == Pipelining::Proven)?;
                idle.remove(at)
            };
            if conn.still_open() {
                return Some(conn);
            }
        }
    }

    fn checkin(&self, conn: WireConn) {
        let mut idle = self.idle.lock();
        if idle.len() < MAX_IDLE {
            idle.push(conn);
        }
    }
}

/// Proxy settings reqwest follows; with any of them set, everything goes through reqwest.
const PROXY_VARS: [&str; 6] = [
    "http_proxy",
    "HTTP_PROXY",
    "all_proxy",
    "ALL_PROXY",
    "https_proxy",
    "HTTPS_PROXY",
];

/// Headers that say how long a request's body is: ours alone.
fn frames_body(name: &HeaderName) -> bool {
    name == CONTENT_LENGTH || name == TRANSFER_ENCODING
}

impl Wire {
    /// The lean client for `url`, when it can serve it: `http://`, no user in the URL,
    /// no proxy configured.
    pub(crate) fn for_url(url: &Url, user_agent: &str, connect_timeout: Duration) -> Option<Wire> {
        if url.scheme() != "http" || !url.username().is_empty() || url.password().is_some() {
            return None;
        }
        if PROXY_VARS.iter().any(|v| std::env::var_os(v).is_some()) {
            return None;
        }
        let host = url.host_str()?;
        let port = url.port_or_known_default()?;
        let host_header = match url.port() {
            Some(p) => format!("{host}:{p}"),
            None => host.to_string(),
        };
        let mut target = url.path().to_string();
        if let Some(q) = url.query() {
            target.push('?');
            target.push_str(q);
        }
        // A parsed URL has neither spaces nor line breaks; checked all the same, as these
        // bytes go into the request line.
        if !target.bytes().all(|b| b.is_ascii_graphic()) {
            return None;
        }
        Some(Wire {
            authority: format!("{host}:{port}"),
            host_line: format!("host: {host_header}\r\n").into_bytes(),
            agent_line: format!("user-agent: {user_agent}\r\n").into_bytes(),
            target,
            connect_timeout,
            pool: Arc::default(),
        })
    }

    /// Sends a request to the server's own URL and reads the response head; `timeout`
    /// covers the whole exchange, body included.
    pub(crate) async fn send(&self, req: WireRequest<'_>) -> Result<WireResponse, WireError> {
        let deadline = req.timeout.map(|t| Instant::now() + t);
        let exchange = self.exchange(&req, deadline);
        match deadline {
            Some(d) => tokio::time::timeout_at(d, exchange)
                .await
                .unwrap_or_else(|_| Err(WireError::timed_out())),
            None => exchange.await,
        }
    }

    async fn exchange(
        &self,
        req: &WireRequest<'_>,
        deadline: Option<Instant>,
    ) -> Result<WireResponse, WireError> {
        let body = req.body.unwrap_or_default();
        let joined = body.len() <= JOINED_BODY;
        let mut request = self.head(req, if joined { body.len() } else { 0 })?;
        if joined {
            request.extend_from_slice(body);
        }
        let rest = (!joined).then_some(body);
        let (mut conn, reused) = match self.pool.checkout() {
            Some(c) => (c, true),
            None => (Box::pin(self.connect()).await?, false),
        };
        if let Err(e) = conn.write(&request, rest).await {
            // A kept connection the server closed just now: the request never got there,
            // so it goes once more on a new connection.
            if !reused {
                return Err(WireError::io("writing the request failed", &e));
            }
            conn = Box::pin(self.connect()).await?;
            conn.write(&request, rest)
                .await
                .map_err(|e| WireError::io("writing the request failed", &e))?;
        }
        let head = head::read(&mut conn, req.method).await?;
        Ok(WireResponse::new(
            head,
            WireBody::new(conn, deadline, Home::Pool(self.pool.clone())),
        ))
    }

    /// The request head: request line, our headers, the request's, the body's length;
    /// with room for `more` bytes after it.
    fn head(&self, req: &WireRequest<'_>, more: usize) -> Result<Vec<u8>, WireError> {
        let mut out = Vec::with_capacity(self.head_room(req) + more);
        self.write_head(req, &mut out)?;
        Ok(out)
    }

    /// About how many bytes the head of `req` takes (room to make before writing it).
    fn head_room(&self, req: &WireRequest<'_>) -> usize {
        let lines: usize = (req.configured.iter())
            .chain(req.own.iter().map(|(n, v)| (n, v)))
            .map(|(n, v)| n.as_str().len() + v.len() + 4)
            .sum();
        // Request line, host, user agent, the headers, the length, the empty line.
        64 + self.target.len() + self.host_line.len() + self.agent_line.len() + lines
    }

    /// Appends the request head of `req` to `out`.
    fn write_head(&self, req: &WireRequest<'_>, out: &mut Vec<u8>) -> Result<(), WireError> {
        let own = |name: &HeaderName| req.own.iter().any(|(n, _)| n == name);
        let has = |name: &HeaderName| req.configured.contains_key(name) || own(name);
        out.extend_from_slice(req.method.as_str().as_bytes());
        out.push(b' ');
        out.extend_from_slice(self.target.as_bytes());
        out.extend_from_slice(b" HTTP/1.1\r\n");
        // Headers from `.mcp.json` win over ours.
        if !has(&HOST) {
            out.extend_from_slice(&self.host_line);
        }
        if !has(&USER_AGENT) {
            out.extend_from_slice(&self.agent_line);
        }
        for (name, value) in req.configured {
            if !frames_body(name) && !own(name) {
                header_line(out, name.as_str(), value.as_bytes())?;
            }
        }
        for (name, value) in req.own {
            if !frames_body(name) {
                header_line(out, name.as_str(), value.as_bytes())?;
            }
        }
        if let Some(b) = req.body {
            out.extend_from_slice(b"content-length: ");
            crate::protocol::jsonrpc::write_u64(out, b.len() as u64);
            out.extend_from_slice(b"\r\n");
        }
        out.extend_from_slice(b"\r\n");
        Ok(())
    }

    async fn connect(&self) -> Result<WireConn, WireError> {
        let connecting = TcpStream::connect(self.authority.as_str());
        let stream = match tokio::time::timeout(self.connect_timeout, connecting).await {
            Ok(Ok(s)) => s,
            Ok(Err(e)) => {
                return Err(WireError {
                    message: format!("error trying to connect: {e}"),
                    timeout: false,
                    connect: true,
                })
            }
            Err(_) => {
                return Err(WireError {
                    message: "error trying to connect: operation timed out".into(),
                    timeout: true,
                    connect: true,
                })
            }
        };
        let _ = stream.set_nodelay(true);
        Ok(WireConn {
            stream,
            buf: BytesMut::with_capacity(READ_ROOM),
            pipelining: Pipelining::Unknown,
        })
    }
}

/// Appends `name: value` and its line end; a value that would end the line early or
/// smuggle another header in (CR, LF, NUL) is refused and nothing is sent.
fn header_line(out: &mut Vec<u8>, name: &str, value: &[u8]) -> Result<(), WireError> {
    if memchr::memchr3(b'\r', b'\n', 0, value).is_some() {
        return Err(WireError {
            message: format!(
                "the value of header {name} holds a line break or NUL; the request was not sent"
            ),
            timeout: false,
            connect: false,
        });
    }
    out.extend_from_slice(name.as_bytes());
    out.extend_from_slice(b": ");
    out.extend_from_slice(value);
    out.extend_from_slice(b"\r\n");
    Ok(())
}

struct WireConn {
    stream: TcpStream,
    /// What was read from the server and not handed on yet.
    buf: BytesMut,
    pipelining: Pipelining,
}

/// Whether a connection may carry several requests written back to back
/// ([`pipeline`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Pipelining {
    /// No answer read whole on it yet.
    Unknown,
    /// An HTTP/1.1 answer framed by its length or chunks, kept alive, was read whole on it
    /// (and no event stream).
    Proven,
    /// It carried an event stream: never pipelined (a stream may stay open for long).
    Refused,
}

impl WireConn {
    /// Whether the server has neither closed the idle connection nor sent on it
    /// unasked.
    fn still_open(&self) -> bool {
        let mut probe = [0u8; 1];
        // Closed (0), broken, or bytes nobody asked for: not reusable.
        matches!(self.stream.try_read(&mut probe), Err(e) if e.kind() == std::io::ErrorKind::WouldBlock)
    }

    /// Writes a request: its head (with the body when `rest` is `None`), then `rest`.
    async fn write(&mut self, head: &[u8], rest: Option<&[u8]>) -> std::io::Result<()> {
        self.stream.write_all(head).await?;
        match rest {
            Some(body) => self.stream.write_all(body).await,
            None => Ok(()),
        }
    }

    /// Reads more from the server; `Ok(false)` at the end of the connection. `expect` is
    /// how much more is known to come: room for it (up to [`MAX_READ`]) is made first, so a
    /// large body is read in large pieces.
    async fn fill(&mut self, expect: u64) -> Result<bool, WireError> {
        let want = usize::try_from(expect)
            .unwrap_or(MAX_READ)
            .clamp(READ_ROOM, MAX_READ);
        if self.buf.capacity() - self.buf.len() < want / 4 {
            self.buf.reserve(want);
        }
        // At most `MAX_READ` more, whatever room the buffer has.
        let room = self.buf.capacity() - self.buf.len();
        let mut limited = (&mut self.buf).limit(room.min(MAX_READ));
        match self.stream.read_buf(&mut limited).await {
            Ok(0) => Ok(false),
            Ok(_) => Ok(true),
            Err(e) => Err(WireError::io("reading the response failed", &e)),
        }
    }
}

/// What reading a response off the front of a buffer gave, for the fuzz targets (the
/// reader's own pure steps, run without a connection).
#[doc(hidden)]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadHead {
    /// Where the head ended in the buffer (after its empty line).
    pub end: usize,
    pub status: u16,
    pub keep_alive: bool,
    /// `Some(n)`: a body of n bytes; `None` with `chunked`: chunked; else read to close.
    pub length: Option<u64>,
    pub chunked: bool,
    /// The header fields as parsed: (name, value).
    pub headers: Vec<(String, Vec<u8>)>,
}

/// The head at the front of `buf` (`None`: no whole head there yet), parsed as the
/// answer to a request made with `HEAD` when `head_request`, else `POST`.
#[doc(hidden)]
pub fn read_head(buf: &[u8], head_request: bool) -> Option<Result<ReadHead, String>> {
    let end = head::head_end(buf, 0)?;
    let bytes = bytes::Bytes::copy_from_slice(buf.get(..end)?);
    let method = if head_request {
        reqwest::Method::HEAD
    } else {
        reqwest::Method::POST
    };
    Some(
        head::parse(&bytes, &method)
            .map(|h| ReadHead {
                end,
                status: h.status.as_u16(),
                keep_alive: h.keep_alive,
                length: match h.framing {
                    head::Framing::Length(n) => Some(n),
                    head::Framing::Chunked | head::Framing::Close => None,
                },
                chunked: h.framing == head::Framing::Chunked,
                headers: h
                    .headers
                    .iter()
                    .map(|(k, v)| (k.as_str().to_string(), v.as_bytes().to_vec()))
                    .collect(),
            })
            .map_err(|e| e.to_string()),
    )
}

/// One chunk-size line read: its length (without CRLF) and the size it gives, or why it
/// was refused.
#[doc(hidden)]
pub type ChunkLine = Result<(usize, u64), String>;

/// The chunk-size lines at the front of `buf`, read as the chunked body reader reads
/// them one after another (each line's size, or why it was refused, which ends the
/// reading), and how many bytes were left unread.
#[doc(hidden)]
pub fn read_chunk_lines(buf: &[u8]) -> (Vec<ChunkLine>, usize) {
    let mut rest = BytesMut::from(buf);
    let mut out = Vec::new();
    loop {
        match body::take_line(&mut rest) {
            Ok(Some(line)) => match body::chunk_size(&line) {
                Ok(n) => out.push(Ok((line.len(), n))),
                Err(e) => {
                    out.push(Err(e.to_string()));
                    break;
                }
            },
            Ok(None) => break,
            Err(e) => {
                out.push(Err(e.to_string()));
                break;
            }
        }
    }
    (out, rest.len())
}
