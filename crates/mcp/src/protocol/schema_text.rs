//! A tool's input schema kept as compact JSON text. A server with thousands of tools sends
//! thousands of schemas; held as parsed values, each is a tree of maps several times the
//! size of its text. Most schemas are only ever passed on (to the model, to a front end),
//! so the text is kept and parsed where a form, a check or a diff needs the value.

use std::fmt;
use std::sync::Arc;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::value::RawValue;
use serde_json::Value;

/// A JSON value (a tool's input schema) as shared, compact JSON text.
#[derive(Clone)]
pub struct SchemaText(Arc<RawValue>);

impl SchemaText {
    /// The text of `value`.
    pub fn new(value: &Value) -> SchemaText {
        let raw = serde_json::value::to_raw_value(value).expect("a JSON value serializes");
        SchemaText(Arc::from(raw))
    }

    /// `{"type":"object"}`: what a tool without a schema takes.
    pub fn empty_object() -> SchemaText {
        SchemaText::new(&serde_json::json!({"type": "object"}))
    }

    /// The JSON text, compact.
    pub fn as_str(&self) -> &str {
        self.0.get()
    }

    /// The parsed value (`null` in the unlikely case the text nests deeper than the
    /// parser allows).
    pub fn value(&self) -> Value {
        serde_json::from_str(self.as_str()).unwrap_or(Value::Null)
    }

    /// Whether the text may hold `needle` (a cheap first look before parsing, e.g. for
    /// `"$ref"`): it does, or an escape may spell it (`"\u0024ref"` is `"$ref"`).
    pub fn mentions(&self, needle: &str) -> bool {
        let text = self.as_str().as_bytes();
        memchr::memmem::find(text, needle.as_bytes()).is_some() || escapes_ascii(text)
    }
}

impl Default for SchemaText {
    fn default() -> Self {
        SchemaText::empty_object()
    }
}

/// Equal as JSON values: the same members in any order.
impl PartialEq for SchemaText {
    fn eq(&self, other: &Self) -> bool {
        self.as_str() == other.as_str() || self.value() == other.value()
    }
}

impl fmt::Debug for SchemaText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl fmt::Display for SchemaText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl From<Value> for SchemaText {
    fn from(value: Value) -> Self {
        SchemaText::new(&value)
    }
}

impl Serialize for SchemaText {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for SchemaText {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let raw = Box::<RawValue>::deserialize(deserializer)?;
        Ok(match compact(raw.get()) {
            None => SchemaText(Arc::from(raw)),
            Some(text) => SchemaText(Arc::from(
                RawValue::from_string(text).map_err(serde::de::Error::custom)?,
            )),
        })
    }
}

/// Whether JSON text has a `\u00XX` escape of an ASCII character: such a key or value
/// reads differently once parsed than its bytes do, so a look at the bytes for a key
/// (`"resultType"`, `"$ref"`) must give way to a parse. Servers escape non-ASCII text
/// (`\u00e9`), rarely ASCII, so the parse stays rare.
pub fn escapes_ascii(text: &[u8]) -> bool {
    // Most texts have no backslash at all, which one byte search tells fastest.
    memchr::memchr(b'\\', text).is_some()
        && ESCAPE
            .find_iter(text)
            .any(|at| matches!(text.get(at + 4), Some(b'0'..=b'7')))
}

/// The searcher for `\u00`, built once: every modern answer is searched for it, and
/// building a searcher costs more than searching a small answer.
static ESCAPE: std::sync::LazyLock<memchr::memmem::Finder<'static>> =
    std::sync::LazyLock::new(|| memchr::memmem::Finder::new(b"\\u00"));

/// `text` without the whitespace between its tokens, or `None` when it has none. `text`
/// is valid JSON: only strings need care (their spaces stay).
fn compact(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut scan = Scan::default();
    let first = bytes.iter().position(|&b| scan.is_gap(b))?;
    let mut out = Vec::with_capacity(text.len());
    out.extend_from_slice(&bytes[..first]);
    out.extend(bytes[first + 1..].iter().filter(|&&b| !scan.is_gap(b)));
    // Only ASCII whitespace was left out, between tokens: still UTF-8.
    String::from_utf8(out).ok()
}

/// Walks JSON text byte by byte, knowing whether it is inside a string.
#[derive(Default)]
struct Scan {
    in_string: bool,
    escaped: bool,
}

impl Scan {
    /// Whether `b`, the next byte, is whitespace between tokens.
    fn is_gap(&mut self, b: u8) -> bool {
        if self.in_string {
            if self.escaped {
                self.escaped = false;
            } else if b == b'\\' {
                self.escaped = true;
            } else if b == b'"' {
                self.in_string = false;
            }
            false
        } else if b.is_ascii_whitespace() {
            true
        } else {
            self.in_string = b == b'"';
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_text_is_compact_and_strings_keep_their_spaces() {
        let s: SchemaText = serde_json::from_str(
            "{ \"type\" : \"object\",\n \"description\": \"a \\\" b\\\\ \", \"x\": [ 1, 2 ] }",
        )
        .unwrap();
        assert_eq!(
            s.as_str(),
            r#"{"type":"object","description":"a \" b\\ ","x":[1,2]}"#
        );
        assert_eq!(s.value()["description"], json!("a \" b\\ "));
        let compact: SchemaText = serde_json::from_str(r#"{"a":"b c"}"#).unwrap();
        assert_eq!(compact.as_str(), r#"{"a":"b c"}"#);
    }

    #[test]
    fn it_serializes_as_the_json_it_holds() {
        let s = SchemaText::new(&json!({"type": "object", "properties": {}}));
        assert_eq!(
            serde_json::to_value(&s).unwrap(),
            json!({"type": "object", "properties": {}})
        );
        assert_eq!(
            serde_json::to_string(&json!({"s": s})).unwrap(),
            r#"{"s":{"type":"object","properties":{}}}"#
        );
        assert!(s.mentions("\"properties\""));
        assert!(!s.mentions("$ref"));
        assert_eq!(SchemaText::default().value(), json!({"type": "object"}));
        assert_eq!(
            SchemaText::new(&json!({"a": 1, "b": [2]})),
            serde_json::from_str::<SchemaText>(r#"{"b": [2], "a": 1}"#).unwrap()
        );
    }
}
