//! JSON-RPC 2.0 framing shared by every transport: decoding one inbound message without
//! copying its payload, and encoding outbound requests, notifications and responses.

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::Value;

/// A JSON-RPC error object.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RpcError {
    pub code: i64,
    pub message: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
}

pub const METHOD_NOT_FOUND: i64 = -32601;
pub const INVALID_PARAMS: i64 = -32602;

/// One inbound message, borrowed from the line or body it was read from.
#[derive(Debug, Deserialize)]
pub struct Inbound<'a> {
    #[serde(borrow, default)]
    pub id: Option<&'a RawValue>,
    #[serde(default)]
    pub method: Option<String>,
    #[serde(borrow, default)]
    pub params: Option<&'a RawValue>,
    #[serde(borrow, default)]
    pub result: Option<&'a RawValue>,
    #[serde(default)]
    pub error: Option<RpcError>,
}

/// What an inbound message is.
pub enum Kind<'a> {
    /// An answer to one of our requests.
    Response {
        id: &'a RawValue,
        outcome: Result<&'a RawValue, RpcError>,
    },
    /// A request from the server that expects an answer.
    Request {
        id: &'a RawValue,
        method: String,
        params: Option<&'a RawValue>,
    },
    Notification {
        method: String,
        params: Option<&'a RawValue>,
    },
    Invalid,
}

impl<'a> Inbound<'a> {
    pub fn kind(self) -> Kind<'a> {
        let id = self.id.filter(|id| id.get() != "null");
        match (id, self.method) {
            (Some(id), Some(method)) => Kind::Request {
                id,
                method,
                params: self.params,
            },
            (None, Some(method)) => Kind::Notification {
                method,
                params: self.params,
            },
            (Some(id), None) => match (self.result, self.error) {
                (_, Some(e)) => Kind::Response {
                    id,
                    outcome: Err(e),
                },
                (Some(r), None) => Kind::Response { id, outcome: Ok(r) },
                (None, None) => Kind::Invalid,
            },
            (None, None) => Kind::Invalid,
        }
    }
}

/// Decodes one message; a JSON array (a 2025-03-26 batch) yields each element.
pub fn for_each_message<'a>(
    bytes: &'a [u8],
    mut f: impl FnMut(Inbound<'a>),
) -> Result<(), serde_json::Error> {
    let first = bytes.iter().find(|b| !b.is_ascii_whitespace());
    if first == Some(&b'[') {
        let items: Vec<&'a RawValue> = serde_json::from_slice(bytes)?;
        for item in items {
            f(serde_json::from_str(item.get())?);
        }
    } else {
        f(serde_json::from_slice(bytes)?);
    }
    Ok(())
}

/// Our request ids are integers; answers with any other id are not ours.
pub fn parse_id(id: &RawValue) -> Option<u64> {
    id.get().parse().ok()
}

/// `{"jsonrpc":"2.0","id":N,"method":M,"params":P}` as bytes.
pub fn encode_request(id: u64, method: &str, params: Option<&Value>) -> Vec<u8> {
    #[derive(Serialize)]
    struct Req<'a> {
        jsonrpc: &'static str,
        id: u64,
        method: &'a str,
        #[serde(skip_serializing_if = "Option::is_none")]
        params: Option<&'a Value>,
    }
    serde_json::to_vec(&Req {
        jsonrpc: "2.0",
        id,
        method,
        params,
    })
    .expect("request serializes")
}

pub fn encode_notification(method: &str, params: Option<&Value>) -> Vec<u8> {
    #[derive(Serialize)]
    struct Note<'a> {
        jsonrpc: &'static str,
        method: &'a str,
        #[serde(skip_serializing_if = "Option::is_none")]
        params: Option<&'a Value>,
    }
    serde_json::to_vec(&Note {
        jsonrpc: "2.0",
        method,
        params,
    })
    .expect("notification serializes")
}

pub fn encode_response(id: &RawValue, outcome: Result<Value, RpcError>) -> Vec<u8> {
    #[derive(Serialize)]
    struct Resp<'a> {
        jsonrpc: &'static str,
        id: &'a RawValue,
        #[serde(skip_serializing_if = "Option::is_none")]
        result: Option<Value>,
        #[serde(skip_serializing_if = "Option::is_none")]
        error: Option<RpcError>,
    }
    let (result, error) = match outcome {
        Ok(r) => (Some(r), None),
        Err(e) => (None, Some(e)),
    };
    serde_json::to_vec(&Resp {
        jsonrpc: "2.0",
        id,
        result,
        error,
    })
    .expect("response serializes")
}
