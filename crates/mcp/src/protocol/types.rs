//! MCP message payloads the client reads: initialize results, tool definitions and tool
//! results. Unknown fields and content types are kept, never rejected.

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Map, Value};

/// Protocol revision we offer in `initialize`.
pub const LATEST_PROTOCOL_VERSION: &str = "2025-11-25";

/// Legacy-era revisions we accept in the server's answer.
pub const SUPPORTED_PROTOCOL_VERSIONS: &[&str] =
    &["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Implementation {
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub version: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Icons of the server (2025-11-25); front ends load only [`Icon::is_loadable`] ones.
    ///
    /// [`Icon::is_loadable`]: Icon::is_loadable
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub icons: Vec<Icon>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InitializeResult {
    pub protocol_version: String,
    #[serde(default)]
    pub capabilities: Map<String, Value>,
    #[serde(default)]
    pub server_info: Implementation,
    #[serde(default)]
    pub instructions: Option<String>,
}

/// One tool as the server lists it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct ToolDef {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// As text, shared with the tool registry's copy (a large tool set holds each schema
    /// once, and small).
    #[serde(default)]
    pub input_schema: super::schema_text::SchemaText,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<Value>,
    /// Hints only: never trusted for security decisions (see [`ToolDef::hints`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Value>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub icons: Vec<Icon>,
    /// How the tool runs (2025-11-25: `taskSupport`, see [`ToolDef::task_support`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub execution: Option<Value>,
    /// The tool's `_meta` as sent (MCP Apps reads its view from it: [`ToolDef::ui`]).
    #[serde(default, rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Value>,
}

impl ToolDef {
    /// What `_meta.ui` says of the tool's interactive view and who may see the tool
    /// (MCP Apps); `None` when it says nothing (no view, visible to the model and views).
    pub fn ui(&self) -> Option<super::apps::ToolUi> {
        super::apps::ToolUi::of(self.meta.as_ref())
    }

    /// Whether the tool may or must run as a task (legacy era; forbidden when unsaid).
    pub fn task_support(&self) -> super::tasks::TaskSupport {
        super::tasks::TaskSupport::of_execution(self.execution.as_ref())
    }

    /// `readOnlyHint` from the server's annotations (an untrusted hint).
    pub fn read_only_hint(&self) -> bool {
        self.annotations
            .as_ref()
            .and_then(|a| a.get("readOnlyHint"))
            .and_then(Value::as_bool)
            .unwrap_or(false)
    }

    /// The annotations with the spec's defaults (untrusted hints).
    pub fn hints(&self) -> ToolAnnotations {
        ToolAnnotations::from_value(self.annotations.as_ref())
    }
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ListToolsPage {
    #[serde(default)]
    pub tools: Vec<ToolDef>,
    #[serde(default)]
    pub next_cursor: Option<String>,
}

/// The whole answer to `tools/call`.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct CallToolResult {
    #[serde(default)]
    pub content: Vec<Content>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structured_content: Option<Value>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub is_error: bool,
    #[serde(default, rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Value>,
}

/// One content block of a tool result.
#[derive(Debug, Clone, Serialize, PartialEq)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Content {
    Text {
        text: String,
    },
    Image {
        data: String,
        #[serde(rename = "mimeType")]
        mime_type: String,
    },
    Audio {
        data: String,
        #[serde(rename = "mimeType")]
        mime_type: String,
    },
    ResourceLink {
        uri: String,
        #[serde(default)]
        name: String,
        #[serde(default, rename = "mimeType", skip_serializing_if = "Option::is_none")]
        mime_type: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        description: Option<String>,
    },
    Resource {
        resource: Value,
    },
    /// A content type this client does not know, kept as the server sent it.
    #[serde(untagged)]
    #[cfg_attr(feature = "ts", ts(type = "{ [key in string]?: JsonValue }"))]
    Unknown(Value),
}

impl<'de> Deserialize<'de> for Content {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(tag = "type", rename_all = "snake_case")]
        enum Known {
            Text {
                text: String,
            },
            Image {
                data: String,
                #[serde(rename = "mimeType")]
                mime_type: String,
            },
            Audio {
                data: String,
                #[serde(rename = "mimeType")]
                mime_type: String,
            },
            ResourceLink {
                uri: String,
                #[serde(default)]
                name: String,
                #[serde(default, rename = "mimeType")]
                mime_type: Option<String>,
                #[serde(default)]
                description: Option<String>,
            },
            Resource {
                resource: Value,
            },
        }
        // One pass over the object's entries, kept in order and without hashing: a plain
        // text block (the common case, and the large one) is taken out as it is; anything
        // else becomes a map and goes through the general path.
        let value = match d.deserialize_any(EntriesVisitor)? {
            Entries::Text(text) => return Ok(Content::Text { text }),
            Entries::Other(value) => value,
        };
        Ok(match serde_json::from_value::<Known>(value.clone()) {
            Ok(Known::Text { text }) => Content::Text { text },
            Ok(Known::Image { data, mime_type }) => Content::Image { data, mime_type },
            Ok(Known::Audio { data, mime_type }) => Content::Audio { data, mime_type },
            Ok(Known::ResourceLink {
                uri,
                name,
                mime_type,
                description,
            }) => Content::ResourceLink {
                uri,
                name,
                mime_type,
                description,
            },
            Ok(Known::Resource { resource }) => Content::Resource { resource },
            Err(_) => Content::Unknown(value),
        })
    }
}

enum Entries {
    Text(String),
    Other(Value),
}

/// The text of a plain text block result (see [`CallToolResult::plain_text`]).
fn plain_text_of(text: &str) -> Option<&str> {
    const HEAD: &str = r#"{"content":[{"type":"text","text":""#;
    const MODERN_HEAD: &str = r#"{"resultType":"complete","content":[{"type":"text","text":""#;
    const TAIL: &str = r#""}]}"#;
    let inner = text
        .strip_prefix(HEAD)
        .or_else(|| text.strip_prefix(MODERN_HEAD))?
        .strip_suffix(TAIL)?;
    // A quote would end the string early; a backslash or a control character would need
    // decoding (or be invalid JSON).
    (!super::jsonrpc::needs_escape(inner.as_bytes())).then_some(inner)
}

/// A key of a content block; the two the fast path needs are recognised without a copy.
enum Key {
    Type,
    Text,
    Other(String),
}

impl<'de> Deserialize<'de> for Key {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl serde::de::Visitor<'_> for KeyVisitor {
            type Value = Key;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a key")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Key, E> {
                Ok(match v {
                    "type" => Key::Type,
                    "text" => Key::Text,
                    other => Key::Other(other.to_owned()),
                })
            }
            fn visit_string<E: serde::de::Error>(self, v: String) -> Result<Key, E> {
                Ok(match v.as_str() {
                    "type" => Key::Type,
                    "text" => Key::Text,
                    _ => Key::Other(v),
                })
            }
        }
        d.deserialize_str(KeyVisitor)
    }
}

/// The entries as an object, built as `Value`'s own deserializer builds it (a repeated key
/// keeps its first place and its last value).
fn object(entries: impl Iterator<Item = (Key, Field)>) -> Value {
    let named = entries.map(|(k, v)| {
        let k = match k {
            Key::Type => "type".to_owned(),
            Key::Text => "text".to_owned(),
            Key::Other(k) => k,
        };
        (k, v.into_value())
    });
    Value::Object(named.collect())
}

/// The value of one entry of a content block: a string is kept as text (the word `text`,
/// the usual type, without an allocation), anything else as a [`Value`].
enum Field {
    TextWord,
    Str(String),
    Other(Value),
}

impl Field {
    fn into_value(self) -> Value {
        match self {
            Field::TextWord => Value::String("text".to_owned()),
            Field::Str(s) => Value::String(s),
            Field::Other(v) => v,
        }
    }

    fn into_text(self) -> Option<String> {
        match self {
            Field::TextWord => Some("text".to_owned()),
            Field::Str(s) => Some(s),
            Field::Other(_) => None,
        }
    }
}

impl<'de> Deserialize<'de> for Field {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct FieldVisitor;
        impl<'de> serde::de::Visitor<'de> for FieldVisitor {
            type Value = Field;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a JSON value")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Field, E> {
                Ok(match v {
                    "text" => Field::TextWord,
                    _ => Field::Str(v.to_owned()),
                })
            }
            fn visit_string<E: serde::de::Error>(self, v: String) -> Result<Field, E> {
                Ok(match v.as_str() {
                    "text" => Field::TextWord,
                    _ => Field::Str(v),
                })
            }
            fn visit_bool<E: serde::de::Error>(self, v: bool) -> Result<Field, E> {
                Ok(Field::Other(Value::Bool(v)))
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<Field, E> {
                Ok(Field::Other(Value::from(v)))
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Field, E> {
                Ok(Field::Other(Value::from(v)))
            }
            fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<Field, E> {
                Ok(Field::Other(Value::from(v)))
            }
            fn visit_unit<E: serde::de::Error>(self) -> Result<Field, E> {
                Ok(Field::Other(Value::Null))
            }
            fn visit_none<E: serde::de::Error>(self) -> Result<Field, E> {
                Ok(Field::Other(Value::Null))
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(self, seq: A) -> Result<Field, A::Error> {
                let de = serde::de::value::SeqAccessDeserializer::new(seq);
                Value::deserialize(de).map(Field::Other)
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, map: A) -> Result<Field, A::Error> {
                let de = serde::de::value::MapAccessDeserializer::new(map);
                Value::deserialize(de).map(Field::Other)
            }
        }
        d.deserialize_any(FieldVisitor)
    }
}

/// Reads one content block; see [`Content`]'s `Deserialize`.
struct EntriesVisitor;

impl<'de> serde::de::Visitor<'de> for EntriesVisitor {
    type Value = Entries;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a content block")
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Entries, A::Error> {
        // The first two entries in place (a plain text block has no more), the rest in a
        // vector that allocates only when there is a third.
        let mut first: Option<(Key, Field)> = None;
        let mut second: Option<(Key, Field)> = None;
        let mut more: Vec<(Key, Field)> = Vec::new();
        while let Some(key) = map.next_key::<Key>()? {
            let value = map.next_value::<Field>()?;
            if first.is_none() {
                first = Some((key, value));
            } else if second.is_none() {
                second = Some((key, value));
            } else {
                more.push((key, value));
            }
        }
        match (first, second) {
            (Some((Key::Type, Field::TextWord)), Some((Key::Text, text)))
            | (Some((Key::Text, text)), Some((Key::Type, Field::TextWord)))
                if more.is_empty() && !matches!(text, Field::Other(_)) =>
            {
                Ok(Entries::Text(text.into_text().unwrap_or_default()))
            }
            (first, second) => Ok(Entries::Other(object(
                first.into_iter().chain(second).chain(more),
            ))),
        }
    }

    // Not an object: keep the value as it is (it becomes `Content::Unknown`).
    fn visit_bool<E: serde::de::Error>(self, v: bool) -> Result<Entries, E> {
        Ok(Entries::Other(Value::Bool(v)))
    }
    fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<Entries, E> {
        Ok(Entries::Other(Value::from(v)))
    }
    fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Entries, E> {
        Ok(Entries::Other(Value::from(v)))
    }
    fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<Entries, E> {
        Ok(Entries::Other(Value::from(v)))
    }
    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Entries, E> {
        Ok(Entries::Other(Value::String(v.to_owned())))
    }
    fn visit_string<E: serde::de::Error>(self, v: String) -> Result<Entries, E> {
        Ok(Entries::Other(Value::String(v)))
    }
    fn visit_unit<E: serde::de::Error>(self) -> Result<Entries, E> {
        Ok(Entries::Other(Value::Null))
    }
    fn visit_none<E: serde::de::Error>(self) -> Result<Entries, E> {
        Ok(Entries::Other(Value::Null))
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Entries, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element::<Value>()? {
            items.push(item);
        }
        Ok(Entries::Other(Value::Array(items)))
    }
}

impl CallToolResult {
    /// The result when `text` is exactly one plain text block:
    /// `{"content":[{"type":"text","text":"…"}]}`, compact, optionally with
    /// `"resultType":"complete",` first (as modern servers write it), the text without
    /// escapes or control characters. That is the usual answer, and the full parse of
    /// those bytes gives this very value; `None` for anything else (parse it then).
    #[doc(hidden)]
    pub fn plain_text(text: &str) -> Option<CallToolResult> {
        let inner = plain_text_of(text)?;
        Some(CallToolResult {
            content: vec![Content::Text {
                text: inner.to_owned(),
            }],
            ..CallToolResult::default()
        })
    }

    /// Whether `text` is a result [`CallToolResult::plain_text`] reads (such a result is
    /// also complete in the modern era's terms).
    #[doc(hidden)]
    pub fn is_plain_text(text: &str) -> bool {
        plain_text_of(text).is_some()
    }

    /// A result that carries only an error message, for failures the model should see.
    pub fn error_text(message: impl Into<String>) -> CallToolResult {
        CallToolResult {
            content: vec![Content::Text {
                text: message.into(),
            }],
            is_error: true,
            ..Default::default()
        }
    }

    /// The result as text for a model: text blocks as they are, other blocks as short
    /// bracketed descriptions, structured content as JSON when there is no text.
    pub fn to_text(&self) -> String {
        let mut parts: Vec<String> = Vec::with_capacity(self.content.len());
        for c in &self.content {
            parts.push(match c {
                Content::Text { text } => text.clone(),
                Content::Image { data, mime_type } => {
                    format!("[image: {mime_type}, {} bytes]", base64_len(data))
                }
                Content::Audio { data, mime_type } => {
                    format!("[audio: {mime_type}, {} bytes]", base64_len(data))
                }
                Content::ResourceLink { uri, name, .. } => {
                    format!("[resource link: {name} <{uri}>]")
                }
                Content::Resource { resource } => match resource.get("text") {
                    Some(Value::String(t)) => t.clone(),
                    _ => format!(
                        "[resource: {}]",
                        resource.get("uri").and_then(Value::as_str).unwrap_or("?")
                    ),
                },
                Content::Unknown(v) => v.to_string(),
            });
        }
        let has_text = self
            .content
            .iter()
            .any(|c| matches!(c, Content::Text { .. }));
        if let (false, Some(s)) = (has_text, &self.structured_content) {
            parts.push(s.to_string());
        }
        parts.join("\n")
    }
}

pub(crate) fn base64_len(data: &str) -> usize {
    let pad = data.bytes().rev().take_while(|b| *b == b'=').count();
    ((data.len() / 4) * 3).saturating_sub(pad.min(2))
}

/// A progress notification for one in-flight request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Progress {
    pub progress: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

/// An icon a server offers for a tool, resource, prompt or itself. Only `https:` and
/// `data:` icons are ever loaded ([`Icon::is_loadable`]).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct Icon {
    pub src: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sizes: Vec<String>,
    /// `light` or `dark`, when the icon is meant for one theme.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub theme: Option<String>,
}

impl Icon {
    /// Whether a front end may load it: `https:` and `data:` only (never `http:`,
    /// `file:` or `javascript:`).
    pub fn is_loadable(&self) -> bool {
        let scheme = self.src.split(':').next().unwrap_or("");
        scheme.eq_ignore_ascii_case("https") || scheme.eq_ignore_ascii_case("data")
    }
}

/// A tool's annotations as the spec defines them, with the spec's defaults. Hints from
/// the server: untrusted, used to decide what to ask, never to skip asking.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct ToolAnnotations {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_only_hint: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub destructive_hint: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idempotent_hint: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open_world_hint: Option<bool>,
}

impl ToolAnnotations {
    /// Reads the annotations of a tool (absent or malformed: all defaults).
    pub fn from_value(v: Option<&Value>) -> ToolAnnotations {
        v.and_then(|v| serde_json::from_value(v.clone()).ok())
            .unwrap_or_default()
    }

    /// `readOnlyHint`, default false.
    pub fn read_only(&self) -> bool {
        self.read_only_hint.unwrap_or(false)
    }

    /// `destructiveHint`, default true; meaningless (false) for a read-only tool.
    pub fn destructive(&self) -> bool {
        !self.read_only() && self.destructive_hint.unwrap_or(true)
    }

    /// `idempotentHint`, default false.
    pub fn idempotent(&self) -> bool {
        self.idempotent_hint.unwrap_or(false)
    }

    /// `openWorldHint`, default true.
    pub fn open_world(&self) -> bool {
        self.open_world_hint.unwrap_or(true)
    }

    /// The annotations as a front end shows them.
    pub fn hints(&self) -> ToolHints {
        ToolHints {
            read_only_hint: self.read_only_hint,
            destructive_hint: self.destructive_hint,
            idempotent_hint: self.idempotent_hint,
            open_world_hint: self.open_world_hint,
            read_only: self.read_only(),
            destructive: self.destructive(),
            idempotent: self.idempotent(),
            open_world: self.open_world(),
            marks: self.marks(),
        }
    }

    /// Short marks for a listing: `read-only`, `destructive`, `idempotent`, `open-world`
    /// (only the ones the server set or that follow from its hints).
    pub fn marks(&self) -> Vec<&'static str> {
        let mut marks = Vec::new();
        if self.read_only() {
            marks.push("read-only");
        } else if self.destructive_hint.is_some() || self.read_only_hint.is_some() {
            // Without any hint the default (destructive) says nothing about the tool.
            if self.destructive() {
                marks.push("destructive");
            }
        }
        if self.idempotent() {
            marks.push("idempotent");
        }
        if self.open_world_hint == Some(true) {
            marks.push("open-world");
        }
        marks
    }
}

/// A tool's annotations as a details view shows them: what the server set (`None`: not
/// set) and what counts, with the spec's defaults.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct ToolHints {
    pub read_only_hint: Option<bool>,
    pub destructive_hint: Option<bool>,
    pub idempotent_hint: Option<bool>,
    pub open_world_hint: Option<bool>,
    /// `destructive` counts only when the tool is not read-only.
    pub read_only: bool,
    pub destructive: bool,
    pub idempotent: bool,
    pub open_world: bool,
    /// [`ToolAnnotations::marks`].
    pub marks: Vec<&'static str>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parse(v: &str) -> Content {
        serde_json::from_str(v).unwrap()
    }

    #[test]
    fn content_blocks() {
        let text = |t: &str| Content::Text { text: t.into() };
        assert_eq!(parse(r#"{"type":"text","text":"hi"}"#), text("hi"));
        assert_eq!(parse(r#"{"text":"hi","type":"text"}"#), text("hi"));
        assert_eq!(
            parse(r#"{"type":"text","text":"hi","annotations":{"priority":1}}"#),
            text("hi")
        );
        assert_eq!(parse(r#"{"type":"text","text":"a","text":"b"}"#), text("b"));
        assert_eq!(parse(r#"{"type":"text","text":"text"}"#), text("text"));
        assert_eq!(parse(r#"{"text":"t\u00e9","type":"text"}"#), text("té"));
        assert_eq!(
            parse(r#"{"type":"text","type":"text","text":"x"}"#),
            text("x")
        );
        let nested = r#"{"type":"text","text":{"a":[1,2.5,"s"]}}"#;
        assert_eq!(
            parse(nested),
            Content::Unknown(serde_json::from_str(nested).unwrap())
        );
        let odd_type = r#"{"type":"other","text":"x"}"#;
        assert_eq!(
            parse(odd_type),
            Content::Unknown(serde_json::from_str(odd_type).unwrap())
        );
        assert_eq!(parse("{}"), Content::Unknown(json!({})));
        assert_eq!(
            parse(r#"{"type":"image","data":"AA==","mimeType":"image/png"}"#),
            Content::Image {
                data: "AA==".into(),
                mime_type: "image/png".into()
            }
        );
        let odd = r#"{"type":"hologram","z":1,"a":[true,null]}"#;
        let Content::Unknown(v) = parse(odd) else {
            panic!("expected an unknown block")
        };
        assert_eq!(v.to_string(), odd);
        assert_eq!(
            parse(r#"{"type":"text","text":7}"#),
            Content::Unknown(json!({"type": "text", "text": 7}))
        );
        assert_eq!(
            parse(r#""just text""#),
            Content::Unknown(json!("just text"))
        );
        assert_eq!(parse("[1,2]"), Content::Unknown(json!([1, 2])));
        let from_value: Content =
            serde_json::from_value(json!({"type": "text", "text": "v"})).unwrap();
        assert_eq!(from_value, text("v"));
    }

    #[test]
    fn plain_text_results_match_the_full_parse() {
        let full = |t: &str| serde_json::from_str::<CallToolResult>(t).unwrap();
        let long = format!("{}é and more", "x".repeat(100));
        for taken in [
            r#"{"content":[{"type":"text","text":"hi"}]}"#.to_string(),
            r#"{"content":[{"type":"text","text":""}]}"#.to_string(),
            r#"{"resultType":"complete","content":[{"type":"text","text":"ok"}]}"#.to_string(),
            format!(r#"{{"content":[{{"type":"text","text":"{long}"}}]}}"#),
        ] {
            assert_eq!(
                CallToolResult::plain_text(&taken),
                Some(full(&taken)),
                "{taken}"
            );
        }
        for parsed in [
            r#"{"content":[{"type":"text","text":"a\"b"}]}"#,
            r#"{"content":[{"type":"text","text":"t\u00e9"}]}"#,
            r#"{"content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}"#,
            r#"{"content":[{"type":"text","text":"x"}],"isError":true}"#,
            r#"{"content":[{"type":"text","text":"x"}] }"#,
            r#"{"content":[{"type":"text","text":"x"}]}]}"#,
            r#"{"resultType":"input_required","content":[{"type":"text","text":"x"}]}"#,
            "{\"content\":[{\"type\":\"text\",\"text\":\"tab\there\"}]}",
        ] {
            assert_eq!(CallToolResult::plain_text(parsed), None, "{parsed}");
        }
        // Thirty-two bytes a step: a quote anywhere in a long text is seen.
        for at in 0..70 {
            let mut text = "y".repeat(70);
            text.replace_range(at..=at, "\"");
            let body = format!(r#"{{"content":[{{"type":"text","text":"{text}"}}]}}"#);
            assert_eq!(CallToolResult::plain_text(&body), None, "{at}");
        }
    }
}
