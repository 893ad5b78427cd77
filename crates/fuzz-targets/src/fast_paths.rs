//! Differential fuzz target: every place that decides something from a message's bytes
//! without parsing it must agree with a full parse, on every input. The JSON-RPC fast
//! answer path (`quick_result`) has its own target (`jsonrpc`).

use serde_json::Value;

use harness9::tools::schema_refs::{resolve_refs, resolve_refs_text};
use harness9_mcp::client::{parsed_reuse, plainly_complete, reuse, ResultHeader};
use harness9_mcp::protocol::era::{result_kind_of, ResultKind};
use harness9_mcp::protocol::jsonrpc;
use harness9_mcp::protocol::schema_text::SchemaText;
use harness9_mcp::protocol::types::CallToolResult;
use harness9_mcp::transport::mcp_headers::{header_params, header_params_text};

/// The input is one JSON text, as a server would send it: a modern result (is it plainly
/// complete? may it be cached, for how long? is it one plain text block?), a tool's input schema (compacted; has it
/// `$ref`s, `x-mcp-header` parameters?), or a message that may be a batch.
pub fn fast_paths(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    // Only whole JSON texts: the transport hands on nothing else, and a lone surrogate
    // escape (which the raw check takes) fails every full parse alike.
    let Ok(value) = serde_json::from_str::<Value>(text) else {
        return;
    };
    // MRTR: a result the bytes call complete is complete when parsed.
    if plainly_complete(data) {
        let parsed = serde_json::from_str::<ResultHeader>(text)
            .map_err(|e| e.to_string())
            .and_then(|h| result_kind_of(h.result_type.as_deref()).map_err(|e| e.to_string()));
        assert!(
            matches!(parsed, Ok(ResultKind::Complete)),
            "plainly complete, but parsed: {:?}",
            parsed.map(|k| matches!(k, ResultKind::Complete))
        );
    }
    // Tool results: a plain text block read from the bytes is what the parse gives.
    assert_eq!(
        CallToolResult::is_plain_text(text),
        CallToolResult::plain_text(text).is_some()
    );
    if CallToolResult::is_plain_text(text) {
        assert!(
            plainly_complete(data),
            "a plain text result that is not complete"
        );
    }
    if let Some(plain) = CallToolResult::plain_text(text) {
        let parsed = serde_json::from_str::<CallToolResult>(text).map_err(|e| e.to_string());
        assert_eq!(Ok(plain), parsed, "plain text result differs");
    }
    // List caching: the bytes skip only what the parse would not cache.
    assert_eq!(reuse(text), parsed_reuse(text), "cache hints differ");
    // Batches are told by their first byte.
    let mut count = 0;
    let decoded = jsonrpc::for_each_message(data, |_| count += 1);
    if let (Ok(()), Value::Array(items)) = (&decoded, &value) {
        assert_eq!(count, items.len(), "a batch lost messages");
    }
    // Schemas: compacted text means the same value; the looks for `$ref` and
    // `x-mcp-header` agree with the walks over the parsed schema.
    let Ok(schema) = serde_json::from_str::<SchemaText>(text) else {
        panic!("a JSON text that is no schema text");
    };
    assert_eq!(schema.value(), value, "compacting changed the schema");
    assert!(
        !schema.as_str().contains(['\n', '\r', '\t']),
        "whitespace left between tokens"
    );
    assert_eq!(
        header_params_text(&schema),
        header_params(&value),
        "x-mcp-header parameters differ"
    );
    // Compared as text: both sides write the same value the same way, and a float need
    // not survive a write and a read bit for bit.
    let resolved = resolve_refs_text(&schema);
    match resolve_refs(&value) {
        Some(full) => assert_eq!(
            resolved.as_str(),
            SchemaText::new(&full).as_str(),
            "$ref resolution differs"
        ),
        None => assert_eq!(
            resolved.as_str(),
            schema.as_str(),
            "a schema without $ref changed"
        ),
    }
}
