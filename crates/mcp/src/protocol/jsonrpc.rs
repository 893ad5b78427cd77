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
pub const INTERNAL_ERROR: i64 = -32603;

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
    /// Kept raw so that a malformed error object still answers its request.
    #[serde(borrow, default)]
    pub error: Option<&'a RawValue>,
}

/// What an inbound message is.
pub enum Kind<'a> {
    /// An answer to one of our requests.
    Response {
        id: &'a RawValue,
        outcome: Result<&'a RawValue, RpcError>,
    },
    /// An answer to one of our requests that is not a valid JSON-RPC response (a malformed
    /// error object, or neither `result` nor `error`); the text says what is wrong.
    BadResponse {
        id: &'a RawValue,
        problem: String,
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
            (Some(id), None) => {
                let error = self.error.filter(|e| e.get() != "null");
                match (self.result, error) {
                    (_, Some(e)) => match parse_error(e) {
                        Ok(e) => Kind::Response {
                            id,
                            outcome: Err(e),
                        },
                        Err(problem) => Kind::BadResponse { id, problem },
                    },
                    (Some(r), None) => Kind::Response { id, outcome: Ok(r) },
                    (None, None) => Kind::BadResponse {
                        id,
                        problem: "the response has neither \"result\" nor \"error\"".into(),
                    },
                }
            }
            (None, None) => Kind::Invalid,
        }
    }
}

/// Longest piece of a malformed error object quoted in a message.
const QUOTE_LIMIT: usize = 200;

/// Decodes a JSON-RPC error object, or says what is wrong with it.
fn parse_error(raw: &RawValue) -> Result<RpcError, String> {
    let text = raw.get();
    let quoted = || {
        text.get(..text.floor_char_boundary(QUOTE_LIMIT))
            .unwrap_or_default()
    };
    let value: Value = serde_json::from_str(raw.get()).map_err(|e| e.to_string())?;
    let Value::Object(obj) = value else {
        return Err(format!("the error is not an object: {}", quoted()));
    };
    let code = match obj.get("code") {
        Some(Value::Number(n)) => n.as_i64(),
        _ => None,
    };
    let Some(code) = code else {
        return Err(format!(
            "the error object's \"code\" is missing or not an integer: {}",
            quoted()
        ));
    };
    let Some(Value::String(message)) = obj.get("message") else {
        return Err(format!(
            "the error object has no \"message\" string: {}",
            quoted()
        ));
    };
    Ok(RpcError {
        code,
        message: message.clone(),
        data: obj.get("data").cloned(),
    })
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

/// Recognises a plain success answer by its shape, without reading its result:
/// `{"jsonrpc":"2.0","id":N,"result":R}` or `{"result":R,"jsonrpc":"2.0","id":N}`, compact,
/// N a non-negative integer. Returns N and where R lies in `text`. R is not checked: the
/// message is that answer only if R then parses as one whole JSON value (the fixed text
/// around it leaves no other reading); when it does not, decode the message in full.
#[doc(hidden)]
pub fn quick_result(text: &str) -> Option<(u64, std::ops::Range<usize>)> {
    const HEAD: &[u8] = br#"{"jsonrpc":"2.0","id":"#;
    const RESULT: &[u8] = br#","result":"#;
    const RESULT_FIRST: &[u8] = br#"{"result":"#;
    const TAIL: &[u8] = br#","jsonrpc":"2.0","id":"#;
    let bytes = text.as_bytes();
    // JSON whitespace only: a form feed is ASCII whitespace but not JSON.
    let json_space = |b: &u8| matches!(b, b' ' | b'\t' | b'\n' | b'\r');
    let start = bytes.iter().position(|b| !json_space(b))?;
    let end = bytes.iter().rposition(|b| !json_space(b))? + 1;
    let body = &bytes[start..end];
    if body.last() != Some(&b'}') {
        return None;
    }
    let close = end - 1; // the final brace
    if body.starts_with(HEAD) {
        let digits_at = start + HEAD.len();
        let digits = bytes[digits_at..close]
            .iter()
            .take_while(|b| b.is_ascii_digit())
            .count();
        let id = request_id(&bytes[digits_at..digits_at + digits])?;
        let value_at = digits_at + digits + RESULT.len();
        (bytes.get(digits_at + digits..value_at)? == RESULT && value_at < close)
            .then_some((id, value_at..close))
    } else if body.starts_with(RESULT_FIRST) {
        let value_at = start + RESULT_FIRST.len();
        let digits = bytes[value_at..close]
            .iter()
            .rev()
            .take_while(|b| b.is_ascii_digit())
            .count();
        let id = request_id(&bytes[close - digits..close])?;
        let value_end = (close - digits).checked_sub(TAIL.len())?;
        (value_end > value_at && &bytes[value_end..close - digits] == TAIL)
            .then_some((id, value_at..value_end))
    } else {
        None
    }
}

/// The digits of a JSON integer (no leading zero) as a u64.
fn request_id(digits: &[u8]) -> Option<u64> {
    if digits.is_empty() || (digits.len() > 1 && digits[0] == b'0') {
        return None;
    }
    // What `str::parse::<u64>` gives for ASCII digits, without its generality.
    digits.iter().try_fold(0u64, |n, d| {
        let digit = d.is_ascii_digit().then(|| u64::from(d - b'0'))?;
        n.checked_mul(10)?.checked_add(digit)
    })
}

/// Our request ids are integers; answers with any other id are not ours.
pub fn parse_id(id: &RawValue) -> Option<u64> {
    id.get().parse().ok()
}

/// `{"jsonrpc":"2.0","id":N,"method":M,"params":P}` as bytes.
pub fn encode_request(id: u64, method: &str, params: Option<&Value>) -> Vec<u8> {
    encode_request_with(id, method, 0, params.is_some(), |out| {
        if let Some(p) = params {
            write_value(out, p);
        }
    })
}

/// Like [`encode_request`], with the params written by `write_params` (when `has_params`),
/// so a caller can skip building a [`Value`] for them. `room` is what the caller knows it
/// will add beyond a typical small request (a modern request's `_meta`), so the buffer is
/// sized once.
pub(crate) fn encode_request_with(
    id: u64,
    method: &str,
    room: usize,
    has_params: bool,
    write_params: impl FnOnce(&mut Vec<u8>),
) -> Vec<u8> {
    // Room for a typical small request, so it is written without growing the buffer.
    let mut out = Vec::with_capacity(256 + method.len() + room);
    out.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
    write_u64(&mut out, id);
    out.extend_from_slice(br#","method":"#);
    write_str(&mut out, method);
    if has_params {
        out.extend_from_slice(br#","params":"#);
        write_params(&mut out);
    }
    out.push(b'}');
    out
}

pub fn encode_notification(method: &str, params: Option<&Value>) -> Vec<u8> {
    let mut out = Vec::with_capacity(64 + method.len());
    out.extend_from_slice(br#"{"jsonrpc":"2.0","method":"#);
    write_str(&mut out, method);
    if let Some(p) = params {
        out.extend_from_slice(br#","params":"#);
        write_value(&mut out, p);
    }
    out.push(b'}');
    out
}

pub fn encode_response(id: &RawValue, outcome: Result<Value, RpcError>) -> Vec<u8> {
    let mut out = Vec::with_capacity(64 + id.get().len());
    out.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
    out.extend_from_slice(id.get().as_bytes());
    match outcome {
        Ok(result) => {
            out.extend_from_slice(br#","result":"#);
            write_value(&mut out, &result);
        }
        Err(error) => {
            out.extend_from_slice(br#","error":"#);
            serde_json::to_writer(&mut out, &error).expect("error serializes");
        }
    }
    out.push(b'}');
    out
}

// ----------------------------------------------------------------------------
// A JSON writer for the hot path. It writes what serde_json writes (same escapes, same
// number formatting, keys in map order) but scans strings eight bytes at a time, which
// matters for multi-megabyte arguments.

/// Writes `v` as compact JSON.
#[doc(hidden)]
pub fn write_value(out: &mut Vec<u8>, v: &Value) {
    match v {
        Value::Null => out.extend_from_slice(b"null"),
        Value::Bool(true) => out.extend_from_slice(b"true"),
        Value::Bool(false) => out.extend_from_slice(b"false"),
        Value::Number(n) => match n.as_u64() {
            Some(u) => write_u64(out, u),
            None => serde_json::to_writer(&mut *out, n).expect("number serializes"),
        },
        Value::String(s) => write_str(out, s),
        Value::Array(items) => {
            out.push(b'[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_value(out, item);
            }
            out.push(b']');
        }
        Value::Object(map) => {
            out.push(b'{');
            for (i, (k, item)) in map.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_str(out, k);
                out.push(b':');
                write_value(out, item);
            }
            out.push(b'}');
        }
    }
}

/// Writes a non-negative integer in decimal.
pub(crate) fn write_u64(out: &mut Vec<u8>, mut n: u64) {
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    loop {
        at -= 1;
        digits[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    out.extend_from_slice(&digits[at..]);
}

const LANES: u64 = 0x0101_0101_0101_0101;
const HIGH_BITS: u64 = 0x8080_8080_8080_8080;

/// True when one of the eight bytes of `w` is a control character, `"` or `\`.
/// (The classic "has a byte below n" and "has a zero byte" word tests; both are exact
/// as yes/no answers.)
fn word_needs_escape(w: u64) -> bool {
    escape_bits(w) != 0
}

/// Nonzero when one of the eight bytes of `w` is a control character, `"` or `\`.
fn escape_bits(w: u64) -> u64 {
    let control = w.wrapping_sub(LANES * 0x20) & !w;
    let q = w ^ (LANES * u64::from(b'"'));
    let quote = q.wrapping_sub(LANES) & !q;
    let b = w ^ (LANES * u64::from(b'\\'));
    let backslash = b.wrapping_sub(LANES) & !b;
    (control | quote | backslash) & HIGH_BITS
}

fn byte_needs_escape(b: u8) -> bool {
    b < 0x20 || b == b'"' || b == b'\\'
}

/// Whether `bytes` holds a character a JSON string must escape (a control character, `"`
/// or `\`): thirty-two bytes a step, for multi-megabyte texts.
pub(crate) fn needs_escape(bytes: &[u8]) -> bool {
    let mut blocks = bytes.chunks_exact(32);
    for block in &mut blocks {
        let word = |i: usize| {
            let eight = block.get(i..i + 8).and_then(|w| w.try_into().ok());
            u64::from_le_bytes(eight.unwrap_or_default())
        };
        let (a, b, c, d) = (word(0), word(8), word(16), word(24));
        if escape_bits(a) | escape_bits(b) | escape_bits(c) | escape_bits(d) != 0 {
            return true;
        }
    }
    blocks.remainder().iter().any(|&b| byte_needs_escape(b))
}

/// Writes `s` as a JSON string literal.
pub(crate) fn write_str(out: &mut Vec<u8>, s: &str) {
    let bytes = s.as_bytes();
    out.reserve(bytes.len() + 2);
    out.push(b'"');
    // Most strings need no escape: one scan, one copy.
    if !needs_escape(bytes) {
        out.extend_from_slice(bytes);
        out.push(b'"');
        return;
    }
    let mut run = 0; // start of the bytes not yet copied
    let mut i = 0;
    while i < bytes.len() {
        if let Some(word) = bytes.get(i..i + 8) {
            let w = u64::from_le_bytes(word.try_into().expect("eight bytes"));
            if !word_needs_escape(w) {
                i += 8;
                continue;
            }
        }
        let end = (i + 8).min(bytes.len());
        while i < end {
            let b = bytes[i];
            if byte_needs_escape(b) {
                out.extend_from_slice(&bytes[run..i]);
                write_escape(out, b);
                run = i + 1;
            }
            i += 1;
        }
    }
    out.extend_from_slice(&bytes[run..]);
    out.push(b'"');
}

fn write_escape(out: &mut Vec<u8>, b: u8) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    match b {
        b'"' => out.extend_from_slice(b"\\\""),
        b'\\' => out.extend_from_slice(b"\\\\"),
        b'\n' => out.extend_from_slice(b"\\n"),
        b'\r' => out.extend_from_slice(b"\\r"),
        b'\t' => out.extend_from_slice(b"\\t"),
        0x08 => out.extend_from_slice(b"\\b"),
        0x0c => out.extend_from_slice(b"\\f"),
        _ => out.extend_from_slice(&[
            b'\\',
            b'u',
            b'0',
            b'0',
            HEX[usize::from(b >> 4)],
            HEX[usize::from(b & 0xf)],
        ]),
    }
}

#[cfg(test)]
#[allow(clippy::string_slice, reason = "test texts and ranges of our own")]
mod tests {
    use super::*;
    use serde_json::json;

    fn ours(v: &Value) -> String {
        let mut out = Vec::new();
        write_value(&mut out, v);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn writer_matches_serde_json() {
        let mut every_char = String::new();
        for c in (0u32..0x250).chain([0x2028, 0x1F600]) {
            every_char.extend(char::from_u32(c));
        }
        let values = [
            json!(null),
            json!([true, false, 0, 7, u64::MAX, -1, i64::MIN, 1.5, -0.25, 1e300]),
            json!({"b": "x", "a": {"nested": [1, "two", {"three": null}]}, "": ""}),
            json!(every_char),
            json!("exactly8"),
            json!("quote\" at 7"),
            json!("0123456\\back"),
            json!("a\u{7f}b\u{1f}c"),
            json!({"tab\there": "new\nline", "é": "ü"}),
        ];
        for v in values {
            assert_eq!(ours(&v), serde_json::to_string(&v).unwrap());
        }
        // Every position of an escape relative to the eight-byte words.
        for len in 0..24 {
            for at in 0..len {
                for special in ['"', '\\', '\n', '\u{1}', '\u{1f}', ' ', '\u{e9}'] {
                    let mut s: String = "abcdefghijklmnopqrstuvwx"[..len].to_string();
                    s.replace_range(at..at + 1, &special.to_string());
                    let v = json!(s);
                    assert_eq!(ours(&v), serde_json::to_string(&v).unwrap(), "{s:?}");
                }
            }
        }
    }

    #[test]
    fn quick_results() {
        fn at(text: &str) -> Option<(u64, &str)> {
            quick_result(text).map(|(id, r)| (id, &text[r]))
        }
        assert_eq!(
            at(r#"{"jsonrpc":"2.0","id":12,"result":{"a":[1]}}"#),
            Some((12, r#"{"a":[1]}"#))
        );
        assert_eq!(
            at(r#"  {"result":"x","jsonrpc":"2.0","id":0} "#),
            Some((0, r#""x""#))
        );
        for not_plain in [
            r#"{"jsonrpc":"2.0","id":"7","result":{}}"#,
            r#"{"jsonrpc":"2.0","id":07,"result":{}}"#,
            r#"{"jsonrpc":"2.0","id":7,"result":}"#,
            r#"{"jsonrpc":"2.0","id":7,"error":{"code":1,"message":"m"}}"#,
            r#"{"jsonrpc":"2.0","method":"ping","id":7}"#,
            r#"{"jsonrpc":"2.0","id":7}"#,
            r#"{"jsonrpc": "2.0", "id": 7, "result": {}}"#,
            r#"{"result":{},"jsonrpc":"2.0","id":}"#,
            r#"{"result":,"jsonrpc":"2.0","id":3}"#,
            r#"{"jsonrpc":"2.0","id":99999999999999999999,"result":{}}"#,
            r#"[{"jsonrpc":"2.0","id":7,"result":{}}]"#,
            "",
            "}",
        ] {
            assert_eq!(at(not_plain), None, "{not_plain}");
        }
        // The shape only: what lies between is for the caller to check.
        assert_eq!(
            at(r#"{"jsonrpc":"2.0","id":1,"result":{},"error":{}}"#),
            Some((1, r#"{},"error":{}"#))
        );
    }

    #[test]
    fn encodings() {
        let params = json!({"name": "echo", "arguments": {"text": "hi"}});
        assert_eq!(
            String::from_utf8(encode_request(42, "tools/call", Some(&params))).unwrap(),
            r#"{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}"#
        );
        assert_eq!(
            String::from_utf8(encode_request(0, "ping", None)).unwrap(),
            r#"{"jsonrpc":"2.0","id":0,"method":"ping"}"#
        );
        assert_eq!(
            String::from_utf8(encode_notification("notifications/initialized", None)).unwrap(),
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#
        );
        let id = RawValue::from_string("\"srv-1\"".into()).unwrap();
        assert_eq!(
            String::from_utf8(encode_response(&id, Ok(json!({})))).unwrap(),
            r#"{"jsonrpc":"2.0","id":"srv-1","result":{}}"#
        );
        let error = RpcError {
            code: METHOD_NOT_FOUND,
            message: "no".into(),
            data: None,
        };
        assert_eq!(
            String::from_utf8(encode_response(&id, Err(error))).unwrap(),
            r#"{"jsonrpc":"2.0","id":"srv-1","error":{"code":-32601,"message":"no"}}"#
        );
    }

    #[test]
    fn malformed_answers_are_bad_responses() {
        let kind = |text: &str| -> Result<Result<i64, String>, ()> {
            let msg: Inbound<'_> = serde_json::from_str(text).unwrap();
            match msg.kind() {
                Kind::Response {
                    outcome: Err(e), ..
                } => Ok(Ok(e.code)),
                Kind::BadResponse { problem, .. } => Ok(Err(problem)),
                Kind::Response { outcome: Ok(_), .. }
                | Kind::Request { .. }
                | Kind::Notification { .. }
                | Kind::Invalid => Err(()),
            }
        };
        assert_eq!(
            kind(r#"{"jsonrpc":"2.0","id":1,"error":{"code":-1,"message":"m"}}"#),
            Ok(Ok(-1))
        );
        for (text, problem) in [
            (
                r#"{"id":1,"error":{"code":1.5,"message":"m"}}"#,
                "\"code\" is missing or not an integer",
            ),
            (
                r#"{"id":1,"error":{"code":1}}"#,
                "has no \"message\" string",
            ),
            (r#"{"id":1,"error":[1]}"#, "the error is not an object"),
            (r#"{"id":1}"#, "neither \"result\" nor \"error\""),
            (
                r#"{"id":1,"error":null}"#,
                "neither \"result\" nor \"error\"",
            ),
        ] {
            match kind(text) {
                Ok(Err(p)) => assert!(p.contains(problem), "{text}: {p}"),
                other => panic!("{text}: {other:?}"),
            }
        }
    }
}
