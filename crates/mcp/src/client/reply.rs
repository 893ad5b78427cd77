//! What a request carries and what its answer is: the params of one request
//! ([`Params`]), a result as received ([`ReplyBody`]) and why there is none
//! ([`ReplyError`]), and the map of waiting requests by id.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::ops::Range;

use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::{subrange, ClientError};
use crate::protocol::jsonrpc::{Inbound as Msg, Kind, RpcError};

pub(super) type Reply = Result<ReplyBody, ReplyError>;

/// A result as received: the text of the message it came in and where in it the result
/// lies, so that large results are neither copied nor scanned once more before parsing.
///
/// A plain answer is recognised by its shape alone ([`jsonrpc::quick_result`]), without
/// reading the result: `checked` is then false, and the result is only known to be the
/// answer once it parses as one whole value. When it does not, the whole message is
/// decoded the usual way to find out what it really says.
pub(super) struct ReplyBody {
    pub(super) text: String,
    pub(super) range: Range<usize>,
    pub(super) checked: bool,
}

#[allow(
    clippy::string_slice,
    reason = "ranges come from `subrange` and `check`, which give character boundaries"
)]
impl ReplyBody {
    pub(super) fn whole(text: String) -> ReplyBody {
        let range = 0..text.len();
        ReplyBody {
            text,
            range,
            checked: true,
        }
    }

    pub(super) fn get(&self) -> &str {
        &self.text[self.range.clone()]
    }

    pub(super) fn parse<T: serde::de::DeserializeOwned>(
        &self,
        method: &str,
    ) -> Result<T, ClientError> {
        let invalid = |e: serde_json::Error| ClientError::Invalid {
            method: method.into(),
            detail: e.to_string(),
        };
        match serde_json::from_str(self.get()) {
            Ok(value) => Ok(value),
            Err(e) if self.checked => Err(invalid(e)),
            Err(_) => serde_json::from_str(&self.text[self.check(method)?]).map_err(invalid),
        }
    }

    pub(super) fn into_raw(self, method: &str) -> Result<Box<RawValue>, ClientError> {
        let invalid = |e: serde_json::Error| ClientError::Invalid {
            method: method.into(),
            detail: e.to_string(),
        };
        let range = match (self.checked, RawValue::from_string(self.get().to_owned())) {
            (_, Ok(raw)) => return Ok(raw),
            (true, Err(e)) => return Err(invalid(e)),
            (false, Err(_)) => self.check(method)?,
        };
        RawValue::from_string(self.text[range].to_owned()).map_err(invalid)
    }

    /// Decodes the whole message: where its result really is, or what it says instead.
    pub(super) fn check(&self, method: &str) -> Result<Range<usize>, ClientError> {
        let invalid = |detail: String| ClientError::Invalid {
            method: method.into(),
            detail,
        };
        let msg = serde_json::from_str::<Msg<'_>>(&self.text)
            .map_err(|e| invalid(format!("not valid JSON-RPC ({e})")))?;
        match msg.kind() {
            Kind::Response {
                outcome: Ok(raw), ..
            } => subrange(&self.text, raw.get())
                .ok_or_else(|| invalid("the result could not be located".into())),
            Kind::Response {
                outcome: Err(error),
                ..
            } => Err(ClientError::Rpc {
                method: method.into(),
                error: Box::new(error),
            }),
            Kind::BadResponse { problem, .. } => Err(invalid(problem)),
            Kind::Request { .. } | Kind::Notification { .. } | Kind::Invalid => {
                Err(invalid("not a JSON-RPC answer".into()))
            }
        }
    }
}

/// Hashes our integer request ids with one multiplication (they are not attacker-chosen:
/// we pick them), instead of SipHash on every request and answer.
#[derive(Default)]
pub(super) struct IdHasher(u64);

impl Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(*b)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0 ^ n).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

pub(super) type IdMap<V> = HashMap<u64, V, BuildHasherDefault<IdHasher>>;

/// The params of one request: a JSON value, or those of `tools/call`, written without
/// building a value first.
pub(super) enum Params<'a> {
    None,
    Value(Value),
    /// A JSON object as text, written as it is (MRTR retries keep `requestState` byte-exact).
    Raw(String),
    ToolCall {
        name: &'a str,
        arguments: Option<Value>,
    },
    /// `{"taskId": …}`: a request about one task (written without building a value).
    Task {
        task_id: &'a str,
    },
}

impl Params<'_> {
    pub(super) fn from_value(params: Option<Value>) -> Self {
        params.map_or(Params::None, Params::Value)
    }

    /// The params as a value (the slow path, for adding a progress token).
    pub(super) fn to_value(&self) -> Option<Value> {
        match self {
            Params::None => None,
            Params::Value(v) => Some(v.clone()),
            Params::Raw(text) => serde_json::from_str(text).ok(),
            Params::ToolCall { name, arguments } => {
                let mut params = Map::with_capacity(2);
                params.insert("name".into(), Value::String(name.to_string()));
                if let Some(a) = arguments {
                    params.insert("arguments".into(), a.clone());
                }
                Some(Value::Object(params))
            }
            Params::Task { task_id } => {
                let mut params = Map::with_capacity(1);
                params.insert("taskId".into(), Value::String(task_id.to_string()));
                Some(Value::Object(params))
            }
        }
    }
}

pub(super) enum ReplyError {
    Rpc(RpcError),
    /// The answer was not a valid JSON-RPC response; the text says why.
    Invalid(String),
    Closed(String),
}
