//! Pipelined requests against small raw TCP servers: written back to back only on a
//! connection that has shown it can carry them, answered in order, and every way a
//! pipeline can end early said so, answer by answer.

use std::time::Duration;

use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use reqwest::{Method, Url};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

use super::{Wire, WireError, WireRequest, WireResponse};

/// What a test server does next on a connection.
enum Step {
    /// Writes these bytes once this many requests in all have arrived on the connection.
    Answer { after: usize, bytes: &'static str },
    /// Closes the connection the orderly way (what was written arrives), reading and
    /// never answering what else comes.
    Close,
    /// Answers nothing more, keeping the connection open until the client closes it.
    Stall,
}

use Step::{Answer, Close, Stall};

/// What a test server saw: the bodies of the requests, by connection.
#[derive(Debug, Default)]
struct Seen {
    connections: Vec<Vec<String>>,
}

/// A server that plays `script`, one list of steps per connection, in turn.
async fn serve(script: Vec<Vec<Step>>) -> (Url, tokio::task::JoinHandle<Seen>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = Url::parse(&format!("http://{}/mcp", listener.local_addr().unwrap())).unwrap();
    let task = tokio::spawn(async move {
        let mut seen = Seen::default();
        for steps in script {
            let (mut s, _) = listener.accept().await.unwrap();
            let mut bodies = Vec::new();
            let mut buf = Vec::new();
            for step in steps {
                match step {
                    Answer { after, bytes } => {
                        while bodies.len() < after {
                            let mut more = [0u8; 4096];
                            let n = s.read(&mut more).await.unwrap();
                            assert!(n > 0, "the client closed before request {after}");
                            buf.extend_from_slice(&more[..n]);
                            while let Some(body) = take_request(&mut buf) {
                                bodies.push(body);
                            }
                        }
                        s.write_all(bytes.as_bytes()).await.unwrap();
                    }
                    Close => {
                        let _ = s.shutdown().await;
                        let mut rest = Vec::new();
                        let _ = s.read_to_end(&mut rest).await;
                        buf.extend_from_slice(&rest);
                        while let Some(body) = take_request(&mut buf) {
                            bodies.push(body);
                        }
                    }
                    Stall => {
                        let mut rest = Vec::new();
                        let _ = s.read_to_end(&mut rest).await;
                    }
                }
            }
            seen.connections.push(bodies);
        }
        seen
    });
    (url, task)
}

/// One whole request off the front of `buf` (its body, by its `content-length`).
fn take_request(buf: &mut Vec<u8>) -> Option<String> {
    let head_end = memchr::memmem::find(buf, b"\r\n\r\n")? + 4;
    let head = String::from_utf8_lossy(&buf[..head_end]).to_ascii_lowercase();
    let len: usize = head
        .split("content-length: ")
        .nth(1)
        .and_then(|r| r.split("\r\n").next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    if buf.len() < head_end + len {
        return None;
    }
    let body = String::from_utf8_lossy(&buf[head_end..head_end + len]).into_owned();
    buf.drain(..head_end + len);
    Some(body)
}

static NONE: std::sync::LazyLock<HeaderMap> = std::sync::LazyLock::new(HeaderMap::new);
const OWN: [(HeaderName, HeaderValue); 0] = [];

fn post(body: &'static str) -> WireRequest<'static> {
    WireRequest {
        method: &Method::POST,
        configured: &NONE,
        own: &OWN,
        body: Some(body.as_bytes()),
        timeout: None,
    }
}

fn wire(url: &Url) -> Wire {
    Wire::for_url(url, "t/1", Duration::from_secs(5)).unwrap()
}

async fn body_of(resp: &mut WireResponse) -> Result<String, WireError> {
    let mut out = Vec::new();
    while let Some(c) = resp.chunk().await? {
        out.extend_from_slice(&c);
    }
    Ok(String::from_utf8(out).unwrap())
}

/// One request sent alone and its answer read whole: the connection has shown what it is.
async fn alone(w: &Wire, body: &'static str) -> String {
    let mut r = w.send(post(body)).await.unwrap();
    body_of(&mut r).await.unwrap()
}

const OK_R0: &str = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nr0";

#[tokio::test]
async fn requests_go_back_to_back_on_a_proven_connection_and_are_answered_in_order() {
    let (url, server) = serve(vec![vec![
        Answer {
            after: 1,
            bytes: OK_R0,
        },
        // Nothing is answered before the three pipelined requests have all arrived.
        Answer {
            after: 4,
            bytes: "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nr1",
        },
        Answer {
            after: 4,
            bytes: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nr2\r\n0\r\n\r\n",
        },
        Answer {
            after: 4,
            bytes: "HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\n",
        },
        Answer {
            after: 5,
            bytes: OK_R0,
        },
    ]])
    .await;
    let w = wire(&url);
    assert!(
        w.pipeline(&[post("a"), post("b")], None).await.is_none(),
        "no connection has shown it can: nothing is written"
    );
    assert_eq!(alone(&w, "first").await, "r0");
    assert!(
        w.pipeline(&[post("alone")], None).await.is_none(),
        "one request is not a pipeline"
    );
    let mut line = w
        .pipeline(&[post("a"), post("b"), post("c")], None)
        .await
        .expect("a proven connection is idle")
        .unwrap();
    let mut r = line.next().await.unwrap();
    assert_eq!(body_of(&mut r).await.unwrap(), "r1");
    let mut r = line.next().await.unwrap();
    assert_eq!(body_of(&mut r).await.unwrap(), "r2");
    let mut r = line.next().await.unwrap();
    assert_eq!(r.status().as_u16(), 202);
    assert_eq!(body_of(&mut r).await.unwrap(), "");
    drop(line);
    assert_eq!(w.pool.idle.lock().len(), 1, "the connection is kept after");
    assert_eq!(alone(&w, "last").await, "r0");
    drop(w);
    let seen = server.await.unwrap();
    assert_eq!(seen.connections, vec![vec!["first", "a", "b", "c", "last"]]);
}

#[tokio::test]
async fn a_server_that_closes_after_some_answers_leaves_the_rest_unanswered() {
    let (url, server) = serve(vec![vec![
        Answer {
            after: 1,
            bytes: OK_R0,
        },
        Answer {
            after: 4,
            bytes: "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nr1",
        },
        Close,
    ]])
    .await;
    let w = wire(&url);
    alone(&w, "first").await;
    let mut line = w
        .pipeline(&[post("a"), post("b"), post("c")], None)
        .await
        .unwrap()
        .unwrap();
    let mut r = line.next().await.unwrap();
    assert_eq!(body_of(&mut r).await.unwrap(), "r1");
    let e = line.next().await.err().expect("b is never answered");
    assert_eq!(e.to_string(), "connection closed before message completed");
    let e = line.next().await.err().expect("nor is c");
    assert!(
        e.to_string()
            .starts_with("connection closed before a pipelined answer"),
        "{e}"
    );
    assert!(w.pool.idle.lock().is_empty());
    drop(line);
    let seen = server.await.unwrap();
    assert_eq!(seen.connections, vec![vec!["first", "a", "b", "c"]]);
}

#[tokio::test]
async fn an_answer_with_connection_close_ends_the_pipeline_after_its_body() {
    let (url, server) = serve(vec![vec![
        Answer {
            after: 1,
            bytes: OK_R0,
        },
        Answer {
            after: 3,
            bytes: "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nr1",
        },
        Close,
    ]])
    .await;
    let w = wire(&url);
    alone(&w, "first").await;
    let mut line = w
        .pipeline(&[post("a"), post("b")], None)
        .await
        .unwrap()
        .unwrap();
    let mut r = line.next().await.unwrap();
    assert_eq!(body_of(&mut r).await.unwrap(), "r1");
    let e = line
        .next()
        .await
        .err()
        .expect("b is not read after a close");
    assert!(
        e.to_string()
            .starts_with("connection closed before a pipelined answer"),
        "{e}"
    );
    assert!(w.pool.idle.lock().is_empty());
    drop(line);
    server.await.unwrap();
}

#[tokio::test]
async fn an_event_stream_answer_is_read_whole_and_its_connection_never_pipelined_again() {
    let (url, server) = serve(vec![vec![
        Answer { after: 1, bytes: OK_R0 },
        Answer {
            after: 3,
            bytes: "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\nf\r\ndata: {\"a\":1}\n\n\r\n0\r\n\r\n",
        },
        Answer {
            after: 3,
            bytes: "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nr2",
        },
        Answer { after: 4, bytes: OK_R0 },
    ]])
    .await;
    let w = wire(&url);
    alone(&w, "first").await;
    let mut line = w
        .pipeline(&[post("a"), post("b")], None)
        .await
        .unwrap()
        .unwrap();
    let mut r = line.next().await.unwrap();
    assert_eq!(body_of(&mut r).await.unwrap(), "data: {\"a\":1}\n\n");
    let mut r = line.next().await.unwrap();
    assert_eq!(body_of(&mut r).await.unwrap(), "r2");
    drop(line);
    assert_eq!(w.pool.idle.lock().len(), 1, "the connection is kept");
    assert!(
        w.pipeline(&[post("x"), post("y")], None).await.is_none(),
        "but never pipelined again"
    );
    assert_eq!(alone(&w, "last").await, "r0");
    drop(w);
    let seen = server.await.unwrap();
    assert_eq!(seen.connections, vec![vec!["first", "a", "b", "last"]]);
}

#[tokio::test]
async fn only_an_http11_answer_framed_and_kept_alive_proves_a_connection() {
    let (url, server) = serve(vec![vec![
        Answer {
            after: 1,
            bytes: "HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 2\r\n\r\nr0",
        },
        Answer {
            after: 2,
            bytes:
                "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nContent-Length: 2\r\n\r\nr0",
        },
        Answer {
            after: 3,
            bytes: OK_R0,
        },
    ]])
    .await;
    let w = wire(&url);
    assert_eq!(alone(&w, "1.0").await, "r0");
    assert_eq!(w.pool.idle.lock().len(), 1, "kept alive");
    assert!(w.pipeline(&[post("x"), post("y")], None).await.is_none());
    assert_eq!(alone(&w, "stream").await, "r0");
    assert_eq!(alone(&w, "json").await, "r0");
    assert_eq!(w.pool.idle.lock().len(), 1);
    assert!(
        w.pipeline(&[post("x"), post("y")], None).await.is_none(),
        "a connection that carried an event stream is never proven"
    );
    drop(w);
    server.await.unwrap();
}

#[tokio::test]
async fn a_pipeline_whose_answers_stall_times_out_and_loses_its_connection() {
    let (url, server) = serve(vec![vec![
        Answer {
            after: 1,
            bytes: OK_R0,
        },
        Stall,
    ]])
    .await;
    let w = wire(&url);
    alone(&w, "first").await;
    let timeout = Some(Duration::from_millis(200));
    let mut line = w
        .pipeline(&[post("a"), post("b")], timeout)
        .await
        .unwrap()
        .unwrap();
    let e = line.next().await.err().expect("no answer comes");
    assert!(e.is_timeout(), "{e}");
    assert!(line.next().await.is_err());
    assert!(w.pool.idle.lock().is_empty());
    drop(line);
    server.await.unwrap();
}
