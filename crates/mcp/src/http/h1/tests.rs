//! The lean client against small raw TCP servers: what a well-behaved server gets, and
//! what a hostile or broken one cannot get.

use std::time::Duration;

use bytes::Bytes;
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use reqwest::{Method, StatusCode, Url};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

use super::body::chunk_size;
use super::head::{self, Framing};
use super::{header_line, Wire, WireError, WireRequest, WireResponse};

/// How a test server answers one request.
enum Answer {
    /// These bytes, then wait for the next request.
    Bytes(Vec<u8>),
    /// These bytes, then nothing: wait until the client closes, and report it.
    Stall(Vec<u8>),
}

/// What a test server saw: each connection's requests, and whether a stalled one was
/// closed by the client.
#[derive(Debug, Default)]
struct Seen {
    connections: usize,
    requests: Vec<Vec<u8>>,
    closed_by_client: bool,
}

/// A server that answers requests in turn from `answers`, on as many connections as the
/// client opens (one at a time).
async fn serve(answers: Vec<Answer>) -> (Url, tokio::task::JoinHandle<Seen>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = Url::parse(&format!(
        "http://{}/mcp?x=1",
        listener.local_addr().unwrap()
    ))
    .unwrap();
    let task = tokio::spawn(async move {
        let mut seen = Seen::default();
        let mut answers = answers.into_iter();
        let mut next = answers.next();
        while next.is_some() {
            let (mut s, _) = listener.accept().await.unwrap();
            seen.connections += 1;
            while let Some(answer) = next.take() {
                let Some(req) = read_request(&mut s).await else {
                    next = Some(answer); // the client closed: the next connection gets it
                    break;
                };
                seen.requests.push(req);
                match answer {
                    Answer::Bytes(b) => {
                        if s.write_all(&b).await.is_err() {
                            break;
                        }
                        next = answers.next();
                    }
                    Answer::Stall(b) => {
                        let _ = s.write_all(&b).await;
                        let mut rest = [0u8; 64];
                        seen.closed_by_client = matches!(s.read(&mut rest).await, Ok(0) | Err(_));
                        return seen;
                    }
                }
            }
        }
        seen
    });
    (url, task)
}

/// One request's head and body (by its `content-length`), or `None` at the end.
async fn read_request(s: &mut TcpStream) -> Option<Vec<u8>> {
    let mut req = Vec::new();
    let mut buf = [0u8; 4096];
    let head_end = loop {
        if let Some(at) = memchr::memmem::find(&req, b"\r\n\r\n") {
            break at + 4;
        }
        let n = s.read(&mut buf).await.ok()?;
        if n == 0 {
            return None;
        }
        req.extend_from_slice(&buf[..n]);
    };
    let head = String::from_utf8_lossy(&req[..head_end]).to_ascii_lowercase();
    let len: usize = head
        .split("content-length: ")
        .nth(1)
        .and_then(|r| r.split("\r\n").next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    while req.len() < head_end + len {
        let n = s.read(&mut buf).await.ok()?;
        if n == 0 {
            return None;
        }
        req.extend_from_slice(&buf[..n]);
    }
    Some(req)
}

fn ok(text: &str) -> Answer {
    Answer::Bytes(text.as_bytes().to_vec())
}

static ACCEPT_JSON: std::sync::LazyLock<[(HeaderName, HeaderValue); 1]> =
    std::sync::LazyLock::new(|| {
        [(
            reqwest::header::ACCEPT,
            HeaderValue::from_static("application/json"),
        )]
    });

static NONE: std::sync::LazyLock<HeaderMap> = std::sync::LazyLock::new(HeaderMap::new);

fn post(body: &'static str) -> WireRequest<'static> {
    WireRequest {
        method: &Method::POST,
        configured: &NONE,
        own: &*ACCEPT_JSON,
        body: Some(body.as_bytes()),
        timeout: None,
    }
}

fn wire(url: &Url) -> Wire {
    Wire::for_url(url, "t/1", Duration::from_secs(5)).unwrap()
}

async fn body_of(resp: &mut WireResponse) -> Result<Vec<u8>, WireError> {
    let mut out = Vec::new();
    while let Some(c) = resp.chunk().await? {
        out.extend_from_slice(&c);
    }
    Ok(out)
}

/// The error of a request whose answer is refused, at its head or in its body.
async fn refusal(w: &Wire) -> String {
    let e = match w.send(post("{}")).await {
        Ok(mut r) => body_of(&mut r).await.expect_err("the body is refused"),
        Err(e) => e,
    };
    e.to_string()
}

#[tokio::test]
async fn lengths_chunks_and_reuse() {
    let (url, server) = serve(vec![
        ok("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 5\r\nX-A: b\r\n\r\nhello"),
        ok("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3;ext=1\r\nabc\r\n0\r\nTrailer: x\r\n\r\n"),
        ok("HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\n"),
    ])
    .await;
    let wire = wire(&url);
    let mut r = wire.send(post("{}")).await.unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    assert_eq!(r.headers()["x-a"], "b");
    assert_eq!(r.content_length(), Some(5));
    assert_eq!(body_of(&mut r).await.unwrap(), b"hello");
    let mut r = wire.send(post("[1]")).await.unwrap();
    assert_eq!(body_of(&mut r).await.unwrap(), b"abc");
    let mut r = wire.send(post("")).await.unwrap();
    assert_eq!(r.status(), StatusCode::ACCEPTED);
    assert!(body_of(&mut r).await.unwrap().is_empty());
    drop(r);
    let seen = server.await.unwrap();
    assert_eq!(seen.connections, 1, "one connection served all three");
    let first = String::from_utf8(seen.requests[0].clone()).unwrap();
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
    let (url, server) = serve(vec![ok(
        "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nall of it",
    )])
    .await;
    let wire = wire(&url);
    let mut r = wire.send(post("{}")).await.unwrap();
    // The server task ends after its one answer, closing the connection.
    server.await.unwrap();
    assert_eq!(body_of(&mut r).await.unwrap(), b"all of it");
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

#[tokio::test]
async fn the_request_carries_our_length_and_no_smuggled_line() {
    let (url, server) = serve(vec![ok("HTTP/1.1 204 No Content\r\n\r\n")]).await;
    let wire = wire(&url);
    let mut configured = HeaderMap::new();
    for (k, v) in [
        ("host", "h.example"),
        ("x-a", "configured"),
        ("content-length", "999"),
        ("transfer-encoding", "chunked"),
    ] {
        configured.insert(HeaderName::from_static(k), HeaderValue::from_static(v));
    }
    let own = [(
        HeaderName::from_static("x-a"),
        HeaderValue::from_static("own"),
    )];
    let req = WireRequest {
        method: &Method::POST,
        configured: &configured,
        own: &own,
        body: Some(b"{}"),
        timeout: None,
    };
    let mut r = wire.send(req).await.unwrap();
    assert_eq!(r.status(), StatusCode::NO_CONTENT);
    assert!(body_of(&mut r).await.unwrap().is_empty());
    let seen = server.await.unwrap();
    let sent = String::from_utf8(seen.requests[0].clone()).unwrap();
    assert_eq!(
        sent,
        "POST /mcp?x=1 HTTP/1.1\r\nuser-agent: t/1\r\nhost: h.example\r\nx-a: own\r\ncontent-length: 2\r\n\r\n{}"
    );
    // A value that would end its line early is refused before anything is sent (a
    // `HeaderValue` cannot hold one; the request writer does not rely on it).
    let mut out = Vec::new();
    for bad in [&b"1\r\nx-b: 2"[..], b"1\nx", b"1\rx", b"a\0b"] {
        let e = header_line(&mut out, "x-a", bad).unwrap_err();
        assert_eq!(
            e.to_string(),
            "the value of header x-a holds a line break or NUL; the request was not sent"
        );
    }
    assert!(out.is_empty());
}

#[test]
fn framing_follows_rfc_9112_and_refuses_every_doubt() {
    let post = Method::POST;
    let framing = |head: &str, method: &Method| {
        head::parse(&Bytes::copy_from_slice(head.as_bytes()), method)
            .map(|h| (h.keep_alive, h.framing))
            .map_err(|e| e.to_string())
    };
    let ok_cases = [
        (
            "HTTP/1.1 200 OK\r\nContent-Length: 7\r\n\r\n",
            (true, Framing::Length(7)),
        ),
        (
            "HTTP/1.1 200 OK\r\nContent-Length: 5, 5\r\nContent-Length: 5\r\n\r\n",
            (true, Framing::Length(5)),
        ),
        (
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: Chunked\r\n\r\n",
            (true, Framing::Chunked),
        ),
        (
            "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 1\r\n\r\n",
            (false, Framing::Length(1)),
        ),
        (
            "HTTP/1.1 200 OK\r\nConnection: Upgrade, Close\r\nContent-Length: 1\r\n\r\n",
            (false, Framing::Length(1)),
        ),
        (
            "HTTP/1.0 200 OK\r\nContent-Length: 1\r\n\r\n",
            (false, Framing::Length(1)),
        ),
        (
            "HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 1\r\n\r\n",
            (true, Framing::Length(1)),
        ),
        ("HTTP/1.1 200 OK\r\n\r\n", (false, Framing::Close)),
        (
            "HTTP/1.1 204 No Content\r\n\r\n",
            (true, Framing::Length(0)),
        ),
        (
            "HTTP/1.1 304 Not Modified\r\nContent-Length: 10\r\n\r\n",
            (true, Framing::Length(0)),
        ),
        // Bare LF line ends, as the parser takes them.
        (
            "HTTP/1.1 200 OK\nContent-Length: 2\n\n",
            (true, Framing::Length(2)),
        ),
    ];
    for (head, want) in ok_cases {
        assert_eq!(framing(head, &post), Ok(want), "{head:?}");
    }
    assert_eq!(
        framing(
            "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n",
            &Method::HEAD
        ),
        Ok((true, Framing::Length(0)))
    );
    let refused = [
        (
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Length: 7\r\n\r\n",
            "both Transfer-Encoding and Content-Length",
        ),
        (
            "HTTP/1.1 200 OK\r\nContent-Length: 7\r\nTransfer-Encoding: chunked\r\n\r\n",
            "both Transfer-Encoding and Content-Length",
        ),
        (
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n",
            "Transfer-Encoding \"gzip, chunked\" (only chunked is read)",
        ),
        (
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n",
            "(only chunked is read)",
        ),
        (
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: identity\r\n\r\n",
            "(only chunked is read)",
        ),
        (
            "HTTP/1.0 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n",
            "Transfer-Encoding in an HTTP/1.0 response",
        ),
        (
            "HTTP/1.1 200 OK\r\nContent-Length: +5\r\n\r\n",
            "Content-Length \"+5\"",
        ),
        (
            "HTTP/1.1 200 OK\r\nContent-Length: 0x5\r\n\r\n",
            "Content-Length \"0x5\"",
        ),
        (
            "HTTP/1.1 200 OK\r\nContent-Length: \r\n\r\n",
            "Content-Length \"\"",
        ),
        (
            "HTTP/1.1 200 OK\r\nContent-Length: 99999999999999999999999\r\n\r\n",
            "Content-Length",
        ),
        (
            "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n",
            "two different Content-Length",
        ),
        (
            "HTTP/1.1 200 OK\r\nContent-Length: 5, 6\r\n\r\n",
            "two different Content-Length",
        ),
        (
            "HTTP/1.1 101 Switching Protocols\r\nUpgrade: h2c\r\n\r\n",
            "a protocol switch nobody asked for",
        ),
        ("HTTP/1.1 200 OK\r\nX A: b\r\n\r\n", "invalid HTTP response"),
        (
            "HTTP/1.1 200 OK\r\nX-A: b\r\n folded\r\n\r\n",
            "invalid HTTP response",
        ),
        ("HTTP/1.1 20 OK\r\n\r\n", "invalid HTTP response"),
    ];
    for (head, why) in refused {
        let e = framing(head, &post).expect_err(head);
        assert!(e.starts_with("invalid HTTP response: "), "{e}");
        assert!(e.contains(why), "{head:?}: {e}");
    }
}

#[test]
fn chunk_sizes_are_hex_digits_only() {
    assert_eq!(chunk_size(b"1F;x=y").unwrap(), 31);
    assert_eq!(chunk_size(b"1f ;x").unwrap(), 31);
    assert_eq!(chunk_size(b"0").unwrap(), 0);
    assert_eq!(chunk_size(b"ffffffffffffffff").unwrap(), u64::MAX);
    for bad in [
        &b""[..],
        b"zz",
        b"+5",
        b"-5",
        b" 5",
        b"0x5",
        b"10000000000000000",
        b";x",
    ] {
        let e = chunk_size(bad).unwrap_err().to_string();
        assert!(e.starts_with("invalid HTTP response: chunk size "), "{e}");
    }
    // What the server sent is quoted short.
    let e = chunk_size(&[b'z'; 3000]).unwrap_err().to_string();
    assert!(e.len() < 100, "{e}");
}

#[tokio::test]
async fn every_buffer_a_server_fills_is_bounded() {
    let long_head = format!(
        "HTTP/1.1 200 OK\r\nX-A: {}\r\nContent-Length: 0\r\n\r\n",
        "a".repeat(70_000)
    );
    let many_fields = format!(
        "HTTP/1.1 200 OK\r\n{}Content-Length: 0\r\n\r\n",
        "X-A: b\r\n".repeat(200)
    );
    let endless_interim = "HTTP/1.1 100 Continue\r\n\r\n".repeat(20);
    let long_chunk_line = format!(
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1;{}\r\nx\r\n0\r\n\r\n",
        "e".repeat(5_000)
    );
    let endless_trailers = format!(
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n{}\r\n",
        "X-T: y\r\n".repeat(10_000)
    );
    let cases = [
        (
            long_head,
            "invalid HTTP response: a head longer than 65536 bytes",
        ),
        (
            many_fields,
            "invalid HTTP response: more than 128 header fields",
        ),
        (
            endless_interim,
            "invalid HTTP response: more than 8 interim (1xx) responses",
        ),
        (
            long_chunk_line,
            "invalid HTTP response: a chunk line longer than 4096 bytes",
        ),
        (
            endless_trailers,
            "invalid HTTP response: trailers longer than 65536 bytes",
        ),
        (
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabc\r\n0\r\n\r\n".into(),
            "invalid HTTP response: a chunk longer than its size",
        ),
        (
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\nab\r\n0\r\n\r\n".into(),
            "invalid HTTP response: a chunk line ended without CR",
        ),
    ];
    for (answer, want) in cases {
        let (url, server) = serve(vec![Answer::Bytes(answer.into_bytes())]).await;
        let w = wire(&url);
        assert_eq!(refusal(&w).await, want);
        assert!(w.pool.idle.lock().is_empty(), "{want}: not kept");
        server.abort();
    }
}

#[tokio::test]
async fn a_refused_answer_closes_its_connection() {
    // Both framings: the server might mean either; the next request gets a new connection.
    let (url, server) = serve(vec![
        ok("HTTP/1.1 200 OK\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n"),
        ok("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nno"),
        ok("HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nyes"),
    ])
    .await;
    let w = wire(&url);
    assert_eq!(
        refusal(&w).await,
        "invalid HTTP response: both Transfer-Encoding and Content-Length"
    );
    // More than the answer came: that connection is not reused either.
    let mut r = w.send(post("{}")).await.unwrap();
    assert_eq!(body_of(&mut r).await.unwrap(), b"ok");
    drop(r);
    let mut r = w.send(post("{}")).await.unwrap();
    assert_eq!(body_of(&mut r).await.unwrap(), b"yes");
    drop(r);
    assert_eq!(server.await.unwrap().connections, 3);
}

#[tokio::test]
async fn a_server_that_stalls_mid_body_hits_the_timeout_and_loses_the_connection() {
    let (url, server) = serve(vec![Answer::Stall(
        b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n{\"jsonrpc\"".to_vec(),
    )])
    .await;
    let w = wire(&url);
    let mut req = post("{}");
    req.timeout = Some(Duration::from_millis(200));
    let mut r = w.send(req).await.unwrap();
    let e = body_of(&mut r).await.unwrap_err();
    assert!(e.is_timeout(), "{e}");
    // The connection was let go at once (not when the answer is dropped).
    let seen = tokio::time::timeout(Duration::from_secs(5), server)
        .await
        .expect("the server saw the connection closed")
        .unwrap();
    assert!(seen.closed_by_client);
    assert!(w.pool.idle.lock().is_empty());
    // Without a timeout of its own, dropping the answer (as the transport does when the
    // caller's timeout cancels the request) closes the connection.
    let (url, server) = serve(vec![Answer::Stall(
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nab".to_vec(),
    )])
    .await;
    let w = wire(&url);
    let mut r = w.send(post("{}")).await.unwrap();
    assert_eq!(&r.chunk().await.unwrap().unwrap()[..], b"ab");
    let pending = tokio::time::timeout(Duration::from_millis(100), r.chunk()).await;
    assert!(pending.is_err(), "still waiting for the rest");
    drop(r);
    let seen = tokio::time::timeout(Duration::from_secs(5), server)
        .await
        .expect("the server saw the connection closed")
        .unwrap();
    assert!(seen.closed_by_client);
}

#[tokio::test]
async fn errors_carry_no_secret() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = Url::parse(&format!(
        "http://{}/mcp?token=QSECRET",
        listener.local_addr().unwrap()
    ))
    .unwrap();
    let answers = [
        "HTTP/1.1 200 OK\r\nX-A: \u{1}\r\n\r\n",
        "HTTP/1.1 200 OK\r\nContent-Length: abc\r\n\r\n",
        "SSH-2.0-not-http\r\n\r\n",
    ];
    let server = tokio::spawn(async move {
        for a in answers {
            let (mut s, _) = listener.accept().await.unwrap();
            read_request(&mut s).await;
            s.write_all(a.as_bytes()).await.unwrap();
        }
    });
    let w = wire(&url);
    let own = [(
        reqwest::header::AUTHORIZATION,
        HeaderValue::from_static("Bearer HSECRET"),
    )];
    for _ in answers {
        let req = WireRequest {
            method: &Method::POST,
            configured: &NONE,
            own: &own,
            body: Some(b"{}"),
            timeout: None,
        };
        let e = w.send(req).await.err().expect("refused").to_string();
        assert!(e.starts_with("invalid HTTP response: "), "{e}");
        assert!(!e.contains("HSECRET"), "{e}");
        assert!(!e.contains("token"), "{e}");
    }
    server.await.unwrap();
}
