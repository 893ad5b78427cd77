//! How the HTTP transports send one request and read its answer: an [`Exchange`] (method,
//! target, headers, body) goes out either through reqwest or, for the server's own URL when
//! it is plain `http://` with no proxy configured (a local server, the usual case), through
//! the lean HTTP/1.1 client of [`super::h1`]. Either way the caller gets an
//! [`HttpResponse`] (status, headers, body read chunk by chunk) or an [`HttpError`]. Polls
//! may go several at once on one connection ([`Exchange::pipeline`]).

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use reqwest::{Method, StatusCode, Url};

use super::h1::{Pipeline, Wire, WireError, WireRequest, WireResponse};

/// Where an exchange goes.
#[derive(Clone, Debug)]
pub(crate) enum Target {
    /// The server's URL (from `.mcp.json`).
    Own,
    /// Another URL (a legacy session's endpoint).
    Other(Url),
}

/// One HTTP request, before it is sent.
pub(crate) struct Exchange {
    pub(crate) method: Method,
    pub(crate) target: Target,
    /// The headers from `.mcp.json`, shared by every exchange (not copied for each).
    pub(crate) configured: Arc<HeaderMap>,
    /// This exchange's own headers; each replaces a configured one of the same name.
    pub(crate) own: Vec<(HeaderName, HeaderValue)>,
    pub(crate) body: Option<Bytes>,
    /// For the whole exchange, body included.
    pub(crate) timeout: Option<Duration>,
}

impl Exchange {
    /// A request with the configured headers and room for `own` more of its own.
    pub(crate) fn new(
        method: Method,
        target: Target,
        configured: Arc<HeaderMap>,
        own: usize,
    ) -> Exchange {
        Exchange {
            method,
            target,
            configured,
            own: Vec::with_capacity(own),
            body: None,
            timeout: None,
        }
    }

    pub(crate) fn header(mut self, name: HeaderName, value: HeaderValue) -> Exchange {
        self.set(name, value);
        self
    }

    /// Sets one of the exchange's own headers (replacing an earlier value).
    pub(crate) fn set(&mut self, name: HeaderName, value: HeaderValue) {
        match self.own.iter_mut().find(|(n, _)| *n == name) {
            Some(slot) => slot.1 = value,
            None => self.own.push((name, value)),
        }
    }

    /// The value the request carries for `name`.
    pub(crate) fn get(&self, name: &HeaderName) -> Option<&HeaderValue> {
        match self.own.iter().find(|(n, _)| n == name) {
            Some((_, v)) => Some(v),
            None => self.configured.get(name),
        }
    }

    pub(crate) fn body(mut self, body: Bytes) -> Exchange {
        self.body = Some(body);
        self
    }

    pub(crate) fn timeout(mut self, timeout: Duration) -> Exchange {
        self.timeout = Some(timeout);
        self
    }

    /// The request through the lean client (to the server's own URL).
    pub(crate) async fn send_lean(&self, wire: &Wire) -> Result<HttpResponse, HttpError> {
        match wire.send(self.lean()).await {
            Ok(r) => Ok(r.into()),
            Err(e) => Err(HttpError::Wire(e)),
        }
    }

    fn lean(&self) -> WireRequest<'_> {
        WireRequest {
            method: &self.method,
            configured: &self.configured,
            own: &self.own,
            body: self.body.as_deref(),
            timeout: self.timeout,
        }
    }

    /// Several POSTs to the server's own URL through the lean client, written back to back
    /// on one connection that has shown it can carry them (HTTP/1.1 pipelining, for
    /// requests that are safe to send again); the first one's timeout covers them all.
    /// `None`: nothing was sent (no such connection is idle; send them one by one).
    pub(crate) async fn pipeline(
        exchanges: &[Exchange],
        wire: &Wire,
    ) -> Option<Result<Answers, HttpError>> {
        let reqs: Vec<WireRequest<'_>> = exchanges.iter().map(Exchange::lean).collect();
        let timeout = exchanges.first().and_then(|e| e.timeout);
        match wire.pipeline(&reqs, timeout).await? {
            Ok(line) => Some(Ok(Answers(line))),
            Err(e) => Some(Err(HttpError::Wire(e))),
        }
    }

    /// The same request through reqwest (`own` is the server's URL).
    pub(crate) fn into_reqwest(
        self,
        client: &reqwest::Client,
        own: &Url,
    ) -> reqwest::RequestBuilder {
        let url = match self.target {
            Target::Own => own.clone(),
            Target::Other(u) => u,
        };
        let mut headers = HeaderMap::clone(&self.configured);
        for (name, value) in self.own {
            headers.insert(name, value);
        }
        let mut req = client.request(self.method, url).headers(headers);
        if let Some(b) = self.body {
            req = req.body(b);
        }
        if let Some(t) = self.timeout {
            req = req.timeout(t);
        }
        req
    }
}

/// The answers to pipelined requests ([`Exchange::pipeline`]), in the order they were sent.
pub(crate) struct Answers(Pipeline);

impl Answers {
    /// The next answer; each one must be read whole (or dropped) before the next is asked
    /// for. An error: it did not come, nor will the ones after it.
    pub(crate) async fn next(&mut self) -> Result<HttpResponse, HttpError> {
        match self.0.next().await {
            Ok(r) => Ok(r.into()),
            Err(e) => Err(HttpError::Wire(e)),
        }
    }
}

/// Why an exchange got no response.
#[derive(Debug)]
pub(crate) enum HttpError {
    Reqwest(reqwest::Error),
    Wire(WireError),
}

impl HttpError {
    pub(crate) fn is_timeout(&self) -> bool {
        match self {
            HttpError::Reqwest(e) => e.is_timeout(),
            HttpError::Wire(e) => e.is_timeout(),
        }
    }

    pub(crate) fn is_connect(&self) -> bool {
        match self {
            HttpError::Reqwest(e) => e.is_connect(),
            HttpError::Wire(e) => e.is_connect(),
        }
    }
}

impl std::fmt::Display for HttpError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            HttpError::Reqwest(e) => e.fmt(f),
            HttpError::Wire(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for HttpError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            HttpError::Reqwest(e) => e.source(),
            HttpError::Wire(_) => None,
        }
    }
}

impl From<reqwest::Error> for HttpError {
    fn from(e: reqwest::Error) -> HttpError {
        HttpError::Reqwest(e)
    }
}

/// A response: status and headers, and its body read chunk by chunk.
pub(crate) struct HttpResponse {
    answer: Answer,
    /// Why a refusal was not retried (the transport's sign-in retry).
    refusal: Option<String>,
}

enum Answer {
    Reqwest(reqwest::Response),
    Wire(WireResponse),
}

impl From<WireResponse> for HttpResponse {
    fn from(w: WireResponse) -> HttpResponse {
        HttpResponse {
            answer: Answer::Wire(w),
            refusal: None,
        }
    }
}

impl From<reqwest::Response> for HttpResponse {
    fn from(r: reqwest::Response) -> HttpResponse {
        HttpResponse {
            answer: Answer::Reqwest(r),
            refusal: None,
        }
    }
}

impl HttpResponse {
    pub(crate) fn status(&self) -> StatusCode {
        match &self.answer {
            Answer::Reqwest(r) => r.status(),
            Answer::Wire(w) => w.status(),
        }
    }

    pub(crate) fn headers(&self) -> &HeaderMap {
        match &self.answer {
            Answer::Reqwest(r) => r.headers(),
            Answer::Wire(w) => w.headers(),
        }
    }

    /// The `Content-Length` the server declared.
    pub(crate) fn content_length(&self) -> Option<u64> {
        match &self.answer {
            Answer::Reqwest(r) => r.content_length(),
            Answer::Wire(w) => w.content_length(),
        }
    }

    /// The next piece of the body; `None` at its end.
    pub(crate) async fn chunk(&mut self) -> Result<Option<Bytes>, HttpError> {
        match &mut self.answer {
            Answer::Reqwest(r) => r.chunk().await.map_err(HttpError::Reqwest),
            Answer::Wire(w) => w.chunk().await.map_err(HttpError::Wire),
        }
    }

    pub(crate) fn refusal(&self) -> Option<&str> {
        self.refusal.as_deref()
    }

    pub(crate) fn set_refusal(&mut self, why: String) {
        self.refusal = Some(why);
    }
}
