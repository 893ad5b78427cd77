//! Context cost: how many tokens a tool's definition takes in the model's context.
//!
//! The estimate is the size in bytes of the compact JSON the model is sent for the tool
//! (`{"name":…,"description":…,"input_schema":…}`), divided by [`BYTES_PER_TOKEN`] and
//! rounded up. Tokenizers of current models average about four bytes of English or JSON per
//! token, so this is close enough to tell a 300-token server from a 30,000-token one without
//! shipping a tokenizer. It is computed once per tool when the registry builds the specs.

use std::collections::BTreeMap;
use std::io;

use serde::Serialize;

use crate::mcp::schema_text::SchemaText;

use super::ToolSpec;

/// Bytes of definition JSON counted as one token.
pub const BYTES_PER_TOKEN: usize = 4;

/// The estimated tokens of one tool definition (see the module docs).
pub fn context_tokens(spec: &ToolSpec) -> u32 {
    definition_tokens(&spec.name, &spec.description, &spec.input_schema)
}

/// The estimate for a definition given by its parts.
pub fn definition_tokens(name: &str, description: &str, input_schema: &SchemaText) -> u32 {
    tokens_of_bytes(definition_bytes(name, description, input_schema))
}

/// Tokens of a definition this many bytes long.
pub fn tokens_of_bytes(bytes: usize) -> u32 {
    u32::try_from(bytes.div_ceil(BYTES_PER_TOKEN)).unwrap_or(u32::MAX)
}

/// Bytes of the compact definition JSON. A name made only of `[A-Za-z0-9_-]` (every
/// model-facing MCP tool name) adds exactly its length, so the registry measures the rest
/// once per server listing and adds the name it assigns.
pub fn definition_bytes(name: &str, description: &str, input_schema: &SchemaText) -> usize {
    #[derive(Serialize)]
    struct Definition<'a> {
        name: &'a str,
        description: &'a str,
        input_schema: &'a SchemaText,
    }
    let mut counter = ByteCounter(0);
    // Writing into a counter cannot fail, and the schema's text is written as it is.
    let _ = serde_json::to_writer(
        &mut counter,
        &Definition {
            name,
            description,
            input_schema,
        },
    );
    counter.0
}

/// Counts bytes instead of keeping them.
struct ByteCounter(usize);

impl io::Write for ByteCounter {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0 += buf.len();
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// The tools of one MCP server and what their definitions cost.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct ServerCost {
    pub tools: u32,
    /// Estimated tokens of all its tool definitions.
    pub tokens: u32,
}

/// The context cost of every MCP server's tools (built-in tools are not counted).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ContextCost {
    /// Per server, by name; a server without usable tools is absent.
    pub servers: BTreeMap<String, ServerCost>,
}

impl ContextCost {
    /// The cost of one server (zero when it has no tools in the registry).
    pub fn server(&self, name: &str) -> ServerCost {
        self.servers.get(name).copied().unwrap_or_default()
    }

    /// Estimated tokens of every MCP tool definition.
    pub fn total_tokens(&self) -> u64 {
        self.servers.values().map(|s| u64::from(s.tokens)).sum()
    }

    /// Number of MCP tools.
    pub fn total_tools(&self) -> u64 {
        self.servers.values().map(|s| u64::from(s.tools)).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_estimate_is_the_definition_json_bytes_over_four_rounded_up() {
        let schema = json!({"type": "object", "properties": {"path": {"type": "string"}}});
        let exact = serde_json::to_string(&json!({
            "name": "mcp__fs__read",
            "description": "Reads a file.",
            "input_schema": schema,
        }))
        .unwrap()
        .len();
        assert_eq!(exact, 127);
        assert_eq!(
            definition_tokens("mcp__fs__read", "Reads a file.", &SchemaText::new(&schema)),
            32 // 127 / 4 = 31.75, rounded up
        );
        // Escapes count as the bytes the model is sent.
        let plain = definition_tokens("t", "ab", &SchemaText::new(&json!({})));
        let quoted = definition_tokens("t", "a\"b\"c", &SchemaText::new(&json!({})));
        assert_eq!(
            (plain, quoted),
            (
                r#"{"name":"t","description":"ab","input_schema":{}}"#
                    .len()
                    .div_ceil(4) as u32,
                r#"{"name":"t","description":"a\"b\"c","input_schema":{}}"#
                    .len()
                    .div_ceil(4) as u32
            )
        );
    }

    #[test]
    fn a_clean_name_adds_its_length() {
        let schema = json!({"type": "object", "properties": {"q": {"type": "string", "description": "a \"quoted\" word"}}});
        let name = "mcp__srv__search-2_abc";
        assert_eq!(
            definition_bytes(name, "Finds \"things\".", &SchemaText::new(&schema)),
            definition_bytes("", "Finds \"things\".", &SchemaText::new(&schema)) + name.len()
        );
    }

    #[test]
    fn totals_add_up_the_servers() {
        let mut cost = ContextCost::default();
        cost.servers.insert(
            "a".into(),
            ServerCost {
                tools: 2,
                tokens: 300,
            },
        );
        cost.servers.insert(
            "b".into(),
            ServerCost {
                tools: 1,
                tokens: 45,
            },
        );
        assert_eq!((cost.total_tools(), cost.total_tokens()), (3, 345));
        assert_eq!(cost.server("missing"), ServerCost::default());
    }
}
