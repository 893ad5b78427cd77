//! A lean HTTP/1.1 client for the Streamable HTTP transport's own URL when it is plain
//! `http://` with no proxy configured (a local server, the usual case): the request written
//! in one go, its answer read by the task that waits for it (no connection task in
//! between), keep-alive connections kept in a small pool. Its answers and failures reach the
//! transport as [`HttpResponse`](super::wire::HttpResponse)s and
//! [`HttpError`](super::wire::HttpError)s ([`super::wire`]), which wrap this client's own
//! [`WireResponse`] and [`WireError`].
//!
//! Invariants: a response head is at most [`MAX_HEAD_BYTES`]; a body is framed as HTTP/1.1
//! says (`Transfer-Encoding: chunked`, `Content-Length`, or the end of the connection); a
//! connection goes back to the pool only after its whole body was read and when the server
//! keeps it alive, so dropping an answer half read closes its connection (how a cancelled
//! request's stream is closed); a pooled connection the server closed meanwhile is never
//! used. Redirects are left to reqwest (its policy keeps them within the origin).

use std::sync::Arc;
use std::time::Duration;

use bytes::{Buf, Bytes, BytesMut};
use parking_lot::Mutex;
use reqwest::header::{
    HeaderMap, HeaderName, HeaderValue, CONNECTION, CONTENT_LENGTH, HOST, USER_AGENT,
};
use reqwest::{Method, StatusCode, Url};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::time::Instant;

/// The largest response head (status line and headers) read.
pub const MAX_HEAD_BYTES: usize = 64 * 1024;
/// Idle connections kept for reuse.
const MAX_IDLE: usize = 256;
/// Headers of one response parsed at most.
const MAX_HEADERS: usize = 128;
/// Bodies up to this size are written with their head in one write.
const JOINED_BODY: usize = 64 * 1024;
/// Room kept free in a connection's read buffer before each read.
const READ_ROOM: usize = 16 * 1024;
/// The most room made for one read of a large body.
const MAX_READ: usize = 256 * 1024;

/// A failure of the lean client, in the words [`classify_failure`](super::errors::classify_failure) reads.
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

    fn invalid(what: String) -> WireError {
        WireError {
            message: format!("invalid HTTP response: {what}"),
            timeout: false,
            connect: false,
        }
    }
}

/// One request of the lean client (to the server's own URL).
pub(crate) struct WireRequest<'a> {
    pub(crate) method: &'a Method,
    pub(crate) headers: &'a HeaderMap,
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
            let mut probe = [0u8; 1];
            match conn.stream.try_read(&mut probe) {
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return Some(conn),
                // Closed (0), broken, or bytes nobody asked for: not reusable.
                _ => continue,
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
        ex: &WireRequest<'_>,
        deadline: Option<Instant>,
    ) -> Result<WireResponse, WireError> {
        let mut request = self.head(ex);
        let body = ex.body.unwrap_or_default();
        let joined = body.len() <= JOINED_BODY;
        if joined {
            request.extend_from_slice(body);
        }
        let (mut conn, reused) = match self.pool.checkout() {
            Some(c) => (c, true),
            None => (Box::pin(self.connect()).await?, false),
        };
        if let Err(e) = conn.write(&request, (!joined).then_some(body)).await {
            // A kept connection the server closed just now: the request never got there,
            // so it goes once more on a new connection.
            if !reused {
                return Err(WireError::io("writing the request failed", &e));
            }
            conn = Box::pin(self.connect()).await?;
            conn.write(&request, (!joined).then_some(body))
                .await
                .map_err(|e| WireError::io("writing the request failed", &e))?;
        }
        let (status, headers, keep_alive, framing) = read_head(&mut conn, ex.method).await?;
        Ok(WireResponse {
            status,
            headers,
            body: WireBody {
                conn: Some(conn),
                framing,
                keep_alive,
                deadline,
                pool: self.pool.clone(),
            },
        })
    }

    /// The request head: request line, our headers, `ex`'s, the body's length.
    fn head(&self, ex: &WireRequest<'_>) -> Vec<u8> {
        let mut out = Vec::with_capacity(256 + self.target.len() + 64 * ex.headers.len());
        out.extend_from_slice(ex.method.as_str().as_bytes());
        out.push(b' ');
        out.extend_from_slice(self.target.as_bytes());
        out.extend_from_slice(b" HTTP/1.1\r\n");
        // Headers from `.mcp.json` win over ours.
        if !ex.headers.contains_key(HOST) {
            out.extend_from_slice(&self.host_line);
        }
        if !ex.headers.contains_key(USER_AGENT) {
            out.extend_from_slice(&self.agent_line);
        }
        for (name, value) in ex.headers {
            if name == CONTENT_LENGTH {
                continue;
            }
            out.extend_from_slice(name.as_str().as_bytes());
            out.extend_from_slice(b": ");
            out.extend_from_slice(value.as_bytes());
            out.extend_from_slice(b"\r\n");
        }
        if let Some(b) = ex.body {
            use std::io::Write as _;
            let _ = write!(out, "content-length: {}\r\n", b.len());
        }
        out.extend_from_slice(b"\r\n");
        out
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
        })
    }
}

struct WireConn {
    stream: TcpStream,
    /// What was read from the server and not handed on yet.
    buf: BytesMut,
}

impl WireConn {
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
        match self.stream.read_buf(&mut self.buf).await {
            Ok(0) => Ok(false),
            Ok(_) => Ok(true),
            Err(e) => Err(WireError::io("reading the response failed", &e)),
        }
    }
}

/// A response of the lean client.
pub(crate) struct WireResponse {
    status: StatusCode,
    headers: HeaderMap,
    body: WireBody,
}

impl WireResponse {
    pub(crate) fn status(&self) -> StatusCode {
        self.status
    }

    pub(crate) fn headers(&self) -> &HeaderMap {
        &self.headers
    }

    /// The `Content-Length` the server declared.
    pub(crate) fn content_length(&self) -> Option<u64> {
        match self.body.framing {
            Framing::Length(n) => Some(n),
            Framing::Chunked(_) | Framing::Close | Framing::Done => None,
        }
    }

    /// The next piece of the body; `None` at its end.
    pub(crate) async fn chunk(&mut self) -> Result<Option<Bytes>, WireError> {
        self.body.chunk().await
    }
}

/// How the body's end is known.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Framing {
    /// This many bytes are left.
    Length(u64),
    Chunked(Chunk),
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
    /// After the last chunk: trailer lines until an empty one.
    Trailers,
}

struct WireBody {
    conn: Option<WireConn>,
    framing: Framing,
    keep_alive: bool,
    deadline: Option<Instant>,
    /// Where the connection goes back.
    pool: Arc<Pool>,
}

impl WireBody {
    async fn chunk(&mut self) -> Result<Option<Bytes>, WireError> {
        match self.deadline {
            Some(d) => tokio::time::timeout_at(d, self.next())
                .await
                .unwrap_or_else(|_| Err(WireError::timed_out())),
            None => self.next().await,
        }
    }

    async fn next(&mut self) -> Result<Option<Bytes>, WireError> {
        loop {
            let Some(conn) = self.conn.as_mut() else {
                return Ok(None);
            };
            match self.framing {
                Framing::Done => {
                    self.release();
                    return Ok(None);
                }
                Framing::Length(0) => self.framing = Framing::Done,
                Framing::Length(left) => {
                    if conn.buf.is_empty() && !conn.fill(left).await? {
                        return Err(WireError::closed("before the end of the body"));
                    }
                    let take = usize::try_from(left)
                        .unwrap_or(usize::MAX)
                        .min(conn.buf.len());
                    self.framing = Framing::Length(left - take as u64);
                    return Ok(Some(conn.buf.split_to(take).freeze()));
                }
                Framing::Close => {
                    if !conn.buf.is_empty() {
                        return Ok(Some(conn.buf.split().freeze()));
                    }
                    if !conn.fill(0).await? {
                        self.keep_alive = false;
                        self.framing = Framing::Done;
                    }
                }
                Framing::Chunked(Chunk::Data(0)) => {
                    self.framing = Framing::Chunked(Chunk::DataEnd);
                }
                Framing::Chunked(Chunk::Data(left)) => {
                    if conn.buf.is_empty() && !conn.fill(left).await? {
                        return Err(WireError::closed("inside a chunk"));
                    }
                    let take = usize::try_from(left)
                        .unwrap_or(usize::MAX)
                        .min(conn.buf.len());
                    self.framing = Framing::Chunked(Chunk::Data(left - take as u64));
                    return Ok(Some(conn.buf.split_to(take).freeze()));
                }
                Framing::Chunked(state) => {
                    let Some(line) = take_line(&mut conn.buf)? else {
                        if !conn.fill(0).await? {
                            return Err(WireError::closed("inside a chunked body"));
                        }
                        continue;
                    };
                    self.framing = Framing::Chunked(match state {
                        Chunk::Size => match chunk_size(&line)? {
                            0 => Chunk::Trailers,
                            n => Chunk::Data(n),
                        },
                        Chunk::DataEnd if line.is_empty() => Chunk::Size,
                        Chunk::DataEnd => {
                            return Err(WireError::invalid("a chunk longer than its size".into()))
                        }
                        Chunk::Trailers if line.is_empty() => {
                            self.framing = Framing::Done;
                            continue;
                        }
                        Chunk::Trailers | Chunk::Data(_) => Chunk::Trailers,
                    });
                }
            }
        }
    }

    /// The body was read whole: the connection goes back to the pool if it may.
    fn release(&mut self) {
        let Some(conn) = self.conn.take() else { return };
        if self.keep_alive && conn.buf.is_empty() {
            self.pool.checkin(conn);
        }
    }
}

/// One CRLF-ended line off the front of `buf` (without its CRLF), if it is all there.
fn take_line(buf: &mut BytesMut) -> Result<Option<BytesMut>, WireError> {
    match memchr::memmem::find(buf, b"\r\n") {
        Some(at) => {
            let line = buf.split_to(at);
            buf.advance(2);
            Ok(Some(line))
        }
        None if buf.len() > MAX_HEAD_BYTES => {
            Err(WireError::invalid("a chunk line is too long".into()))
        }
        None => Ok(None),
    }
}

/// The size of a chunk-size line (hex, extensions after `;` ignored).
fn chunk_size(line: &[u8]) -> Result<u64, WireError> {
    let digits = line.split(|b| *b == b';').next().unwrap_or_default();
    let text = std::str::from_utf8(digits)
        .map_err(|_| WireError::invalid("a chunk size is not text".into()))?
        .trim();
    u64::from_str_radix(text, 16).map_err(|_| WireError::invalid(format!("chunk size {text:?}")))
}

/// Reads a response head (skipping informational ones) and says how its body is framed.
async fn read_head(
    conn: &mut WireConn,
    method: &Method,
) -> Result<(StatusCode, HeaderMap, bool, Framing), WireError> {
    loop {
        let parsed = {
            let mut slots = [httparse::EMPTY_HEADER; MAX_HEADERS];
            let mut resp = httparse::Response::new(&mut slots);
            match resp.parse(&conn.buf) {
                Ok(httparse::Status::Complete(len)) => Some(head_of(&resp).map(|h| (h, len))?),
                Ok(httparse::Status::Partial) => None,
                Err(e) => return Err(WireError::invalid(e.to_string())),
            }
        };
        let Some(((status, headers, version), len)) = parsed else {
            if conn.buf.len() > MAX_HEAD_BYTES {
                return Err(WireError::invalid(format!(
                    "a head longer than {MAX_HEAD_BYTES} bytes"
                )));
            }
            if !conn.fill(0).await? {
                return Err(WireError::closed(if conn.buf.is_empty() {
                    "before message completed"
                } else {
                    "inside the response head (incomplete message)"
                }));
            }
            continue;
        };
        conn.buf.advance(len);
        if status.is_informational() && status != StatusCode::SWITCHING_PROTOCOLS {
            continue;
        }
        let (keep_alive, framing) = framing(status, &headers, version, method)?;
        return Ok((status, headers, keep_alive, framing));
    }
}

/// Status, headers and minor HTTP version of a parsed head.
fn head_of(resp: &httparse::Response<'_, '_>) -> Result<(StatusCode, HeaderMap, u8), WireError> {
    let code = resp.code.unwrap_or(0);
    let status =
        StatusCode::from_u16(code).map_err(|_| WireError::invalid(format!("status {code}")))?;
    let mut headers = HeaderMap::with_capacity(resp.headers.len());
    for h in resp.headers.iter() {
        let name = HeaderName::from_bytes(h.name.as_bytes())
            .map_err(|_| WireError::invalid(format!("header name {:?}", h.name)))?;
        let value = HeaderValue::from_bytes(h.value)
            .map_err(|_| WireError::invalid(format!("the value of header {:?}", h.name)))?;
        headers.append(name, value);
    }
    Ok((status, headers, resp.version.unwrap_or(1)))
}

/// Whether the connection stays open after this response, and how its body ends.
fn framing(
    status: StatusCode,
    headers: &HeaderMap,
    version: u8,
    method: &Method,
) -> Result<(bool, Framing), WireError> {
    let connection = |token: &str| {
        headers.get_all(CONNECTION).iter().any(|v| {
            v.to_str()
                .is_ok_and(|v| v.split(',').any(|t| t.trim().eq_ignore_ascii_case(token)))
        })
    };
    let keep_alive = match version {
        0 => connection("keep-alive"),
        _ => !connection("close"),
    };
    if *method == Method::HEAD
        || status == StatusCode::NO_CONTENT
        || status == StatusCode::NOT_MODIFIED
    {
        return Ok((keep_alive, Framing::Length(0)));
    }
    let encodings: Vec<&HeaderValue> = headers
        .get_all(reqwest::header::TRANSFER_ENCODING)
        .iter()
        .collect();
    if let Some(last) = encodings.last() {
        let chunked = last
            .to_str()
            .ok()
            .and_then(|v| v.rsplit(',').next())
            .is_some_and(|t| t.trim().eq_ignore_ascii_case("chunked"));
        return Ok(if chunked {
            (keep_alive, Framing::Chunked(Chunk::Size))
        } else {
            (false, Framing::Close)
        });
    }
    let mut length: Option<u64> = None;
    for v in headers.get_all(CONTENT_LENGTH) {
        let n = v
            .to_str()
            .ok()
            .and_then(|t| t.trim().parse::<u64>().ok())
            .ok_or_else(|| WireError::invalid("a Content-Length that is not a number".into()))?;
        if length.is_some_and(|l| l != n) {
            return Err(WireError::invalid("two different Content-Length".into()));
        }
        length = Some(n);
    }
    Ok(match length {
        Some(n) => (keep_alive, Framing::Length(n)),
        None => (false, Framing::Close),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::net::TcpListener;

    /// A server that answers each request with the next of `answers` (raw bytes), then
    /// closes when `close_after` says so.
    async fn serve(answers: Vec<&'static [u8]>) -> (Url, tokio::task::JoinHandle<Vec<Vec<u8>>>) {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = Url::parse(&format!(
            "http://{}/mcp?x=1",
            listener.local_addr().unwrap()
        ))
        .unwrap();
        let task = tokio::spawn(async move {
            let mut seen = Vec::new();
            let (mut s, _) = listener.accept().await.unwrap();
            for a in answers {
                let mut req = Vec::new();
                let mut buf = [0u8; 4096];
                while memchr::memmem::find(&req, b"\r\n\r\n").is_none() {
                    let n = s.read(&mut buf).await.unwrap();
                    req.extend_from_slice(&buf[..n]);
                }
                seen.push(req);
                s.write_all(a).await.unwrap();
            }
            seen
        });
        (url, task)
    }

    static ACCEPT_JSON: std::sync::LazyLock<HeaderMap> = std::sync::LazyLock::new(|| {
        let mut h = HeaderMap::new();
        h.insert(
            reqwest::header::ACCEPT,
            HeaderValue::from_static("application/json"),
        );
        h
    });

    fn post(body: &'static str) -> WireRequest<'static> {
        WireRequest {
            method: &Method::POST,
            headers: &ACCEPT_JSON,
            body: Some(body.as_bytes()),
            timeout: None,
        }
    }

    async fn body_of(resp: &mut WireResponse) -> Vec<u8> {
        let mut out = Vec::new();
        while let Some(c) = resp.chunk().await.unwrap() {
            out.extend_from_slice(&c);
        }
        out
    }

    #[tokio::test]
    async fn lengths_chunks_and_reuse() {
        let (url, server) = serve(vec![
            b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 5\r\nX-A: b\r\n\r\nhello",
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3;ext=1\r\nabc\r\n0\r\nTrailer: x\r\n\r\n",
            b"HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\n",
        ])
        .await;
        let wire = Wire::for_url(&url, "t/1", Duration::from_secs(5)).unwrap();
        let mut r = wire.send(post("{}")).await.unwrap();
        assert_eq!(r.status(), StatusCode::OK);
        assert_eq!(r.headers()["x-a"], "b");
        assert_eq!(r.content_length(), Some(5));
        assert_eq!(body_of(&mut r).await, b"hello");
        let mut r = wire.send(post("[1]")).await.unwrap();
        assert_eq!(body_of(&mut r).await, b"abc");
        let mut r = wire.send(post("")).await.unwrap();
        assert_eq!(r.status(), StatusCode::ACCEPTED);
        assert!(body_of(&mut r).await.is_empty());
        drop(r);
        // One connection served all three.
        let seen = server.await.unwrap();
        let first = String::from_utf8(seen[0].clone()).unwrap();
        assert!(
            first.starts_with("POST /mcp?x=1 HTTP/1.1\r\nhost: 127.0.0.1:"),
            "{first}"
        );
        assert!(
            first.contains("\r\naccept: application/json\r\n"),
            "{first}"
        );
        assert!(first.ends_with("content-length: 2\r\n\r\n{}"), "{first}");
    }

    #[tokio::test]
    async fn a_body_until_close_and_a_closed_pool_connection() {
        let (url, server) = serve(vec![
            b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nall of it",
        ])
        .await;
        let wire = Wire::for_url(&url, "t/1", Duration::from_secs(5)).unwrap();
        let mut r = wire.send(post("{}")).await.unwrap();
        server.await.unwrap();
        assert_eq!(body_of(&mut r).await, b"all of it");
        assert!(
            wire.pool.idle.lock().is_empty(),
            "a connection the server closes is not kept"
        );
        // The server is gone: the next exchange cannot connect.
        let e = wire.send(post("{}")).await.err().expect("refused");
        assert!(e.is_connect(), "{e}");
        assert!(
            e.to_string()
                .to_ascii_lowercase()
                .contains("connection refused"),
            "{e}"
        );
    }

    #[test]
    fn framing_follows_the_headers() {
        let h = |pairs: &[(&str, &str)]| {
            let mut m = HeaderMap::new();
            for (k, v) in pairs {
                m.append(
                    HeaderName::from_bytes(k.as_bytes()).unwrap(),
                    HeaderValue::from_str(v).unwrap(),
                );
            }
            m
        };
        let post = Method::POST;
        assert_eq!(
            framing(StatusCode::OK, &h(&[("content-length", "7")]), 1, &post).unwrap(),
            (true, Framing::Length(7))
        );
        assert_eq!(
            framing(
                StatusCode::OK,
                &h(&[
                    ("transfer-encoding", "gzip, chunked"),
                    ("content-length", "7")
                ]),
                1,
                &post
            )
            .unwrap(),
            (true, Framing::Chunked(Chunk::Size))
        );
        assert_eq!(
            framing(
                StatusCode::OK,
                &h(&[("connection", "close"), ("content-length", "1")]),
                1,
                &post
            )
            .unwrap(),
            (false, Framing::Length(1))
        );
        assert_eq!(
            framing(StatusCode::OK, &h(&[("content-length", "1")]), 0, &post).unwrap(),
            (false, Framing::Length(1))
        );
        assert_eq!(
            framing(StatusCode::OK, &h(&[]), 1, &post).unwrap(),
            (false, Framing::Close)
        );
        assert_eq!(
            framing(StatusCode::NO_CONTENT, &h(&[]), 1, &post).unwrap(),
            (true, Framing::Length(0))
        );
        assert!(framing(
            StatusCode::OK,
            &h(&[("content-length", "1"), ("content-length", "2")]),
            1,
            &post
        )
        .is_err());
        assert_eq!(chunk_size(b"1F;x=y").unwrap(), 31);
        assert!(chunk_size(b"zz").is_err());
    }
}
