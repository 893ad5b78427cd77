//! Output spill and paging: a tool result longer than the limit is cut for the model; the
//! whole text is saved under `{data dir}/tool-outputs/{conversation id}/{output id}.txt`
//! and the model is told how to read further pages with the built-in
//! [`READ_OUTPUT_TOOL`]. Offsets and lengths count characters, never splitting one. The
//! turn loop saves and reads these files on tokio's blocking pool, never on a runtime
//! thread; old ones are removed by [`super::spill_cleanup`].

use std::path::PathBuf;

use serde_json::{json, Value};

use super::builtin::BuiltinToolError;
use super::message::ToolDefinition;

/// Longest tool output (in characters, about 25,000 tokens) the model gets in one piece.
pub const DEFAULT_SPILL_LIMIT_CHARS: usize = 100_000;
/// Folder of spilled outputs in the data directory.
pub const OUTPUTS_DIR: &str = "tool-outputs";
/// The built-in tool that pages through a spilled output.
pub const READ_OUTPUT_TOOL: &str = "read_tool_output";

#[derive(Debug, Clone)]
pub struct Spill {
    dir: PathBuf,
    limit: usize,
}

/// The text the model sees for one output.
#[derive(Debug, PartialEq)]
pub struct Cut {
    pub text: String,
    /// Set when the output was spilled: the id to page with.
    pub spilled: Option<String>,
}

impl Spill {
    pub fn new(dir: PathBuf, limit: usize) -> Spill {
        Spill {
            dir,
            limit: limit.max(1),
        }
    }

    pub fn limit(&self) -> usize {
        self.limit
    }

    /// Whether this conversation has saved outputs (then the paging tool is offered).
    pub fn has_outputs(&self) -> bool {
        self.dir.is_dir()
    }

    /// Cuts `text` to the limit, saving the whole of it when it is longer.
    pub fn cut(&self, call_id: &str, text: String) -> std::io::Result<Cut> {
        let Some((end, _)) = text.char_indices().nth(self.limit) else {
            return Ok(Cut {
                text,
                spilled: None,
            });
        };
        let total = text.chars().count();
        let id = output_id(call_id);
        std::fs::create_dir_all(&self.dir)?;
        crate::config::write_atomically(&self.dir.join(format!("{id}.txt")), text.as_bytes())?;
        let mut shown = text;
        shown.truncate(end); // `end` is a character's offset (`char_indices`)
        shown.push_str(&format!(
            "\n\n[harness9: this output has {total} characters; only the first {} are shown. The whole output is saved as \"{id}\": call {READ_OUTPUT_TOOL} with {{\"id\": \"{id}\", \"offset\": {}}} to read the next page.]",
            self.limit, self.limit
        ));
        Ok(Cut {
            text: shown,
            spilled: Some(id),
        })
    }

    /// [`Spill::cut`] for async callers: a text within the limit comes back at once; a
    /// longer one is saved on tokio's blocking pool, so no runtime thread waits on the disk.
    pub async fn cut_off_runtime(&self, call_id: &str, text: String) -> std::io::Result<Cut> {
        if text.chars().nth(self.limit).is_none() {
            return Ok(Cut {
                text,
                spilled: None,
            });
        }
        let (spill, call_id) = (self.clone(), call_id.to_owned());
        tokio::task::spawn_blocking(move || spill.cut(&call_id, text))
            .await
            .map_err(|e| std::io::Error::other(format!("saving the output failed: {e}")))?
    }

    /// [`Spill::read_page`] for async callers: the file is read on tokio's blocking pool.
    pub async fn read_page_off_runtime(
        &self,
        arguments: &Value,
    ) -> Result<String, BuiltinToolError> {
        let (spill, arguments) = (self.clone(), arguments.clone());
        tokio::task::spawn_blocking(move || spill.read_page(&arguments))
            .await
            .unwrap_or_else(|e| Err(BuiltinToolError::ReadFailed(e.to_string())))
    }

    /// One page of a saved output, with a line saying where the next one starts.
    pub fn read_page(&self, arguments: &Value) -> Result<String, BuiltinToolError> {
        let id = arguments
            .get("id")
            .and_then(Value::as_str)
            .unwrap_or_default();
        if id.is_empty() || output_id(id) != id {
            return Err(BuiltinToolError::BadOutputId(id.to_string()));
        }
        let offset = arguments.get("offset").and_then(Value::as_u64).unwrap_or(0) as usize;
        let limit = arguments
            .get("limit")
            .and_then(Value::as_u64)
            .map_or(self.limit, |l| (l as usize).clamp(1, self.limit));
        let text = std::fs::read_to_string(self.dir.join(format!("{id}.txt")))
            .map_err(|_| BuiltinToolError::NoOutput(id.to_string()))?;
        let total = text.chars().count();
        if offset >= total {
            return Err(BuiltinToolError::PastEnd { offset, total });
        }
        let page: String = text.chars().skip(offset).take(limit).collect();
        let end = offset + page.chars().count();
        let footer = if end < total {
            format!("[harness9: characters {offset}–{end} of {total}; the next page starts at offset {end}]")
        } else {
            format!(
                "[harness9: characters {offset}–{end} of {total}; this is the end of the output]"
            )
        };
        Ok(format!("{page}\n\n{footer}"))
    }
}

/// A file-name-safe id for the output of one call.
fn output_id(call_id: &str) -> String {
    let cleaned: String = call_id
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '-')
        .take(64)
        .collect();
    if cleaned.is_empty() {
        "output".into()
    } else {
        cleaned
    }
}

/// The definition of [`READ_OUTPUT_TOOL`].
pub fn read_output_definition() -> ToolDefinition {
    ToolDefinition {
        name: READ_OUTPUT_TOOL.into(),
        description: "Reads a page of a tool output that was too long to show whole. Use the id and offset given where the output was cut off.".into(),
        input_schema: crate::mcp::schema_text::SchemaText::from(json!({
            "type": "object",
            "properties": {
                "id": {"type": "string", "description": "The saved output's id."},
                "offset": {"type": "integer", "description": "Character offset to start at (0 for the beginning)."},
                "limit": {"type": "integer", "description": "Most characters to return (default and maximum: one page)."}
            },
            "required": ["id"]
        })),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cut_and_page_through_multibyte_text() {
        let dir = tempfile::tempdir().unwrap();
        let spill = Spill::new(dir.path().to_path_buf(), 4);
        let short = spill.cut("c1", "äbc".into()).unwrap();
        assert_eq!(
            short,
            Cut {
                text: "äbc".into(),
                spilled: None
            }
        );
        let cut = spill.cut("toolu/../1", "äbcdéfghi".into()).unwrap();
        assert_eq!(cut.spilled.as_deref(), Some("toolu1"));
        assert!(cut
            .text
            .starts_with("äbcd\n\n[harness9: this output has 9 characters"));
        let page = spill
            .read_page(&json!({"id": "toolu1", "offset": 4}))
            .unwrap();
        assert_eq!(
            page,
            "éfgh\n\n[harness9: characters 4–8 of 9; the next page starts at offset 8]"
        );
        let last = spill
            .read_page(&json!({"id": "toolu1", "offset": 8}))
            .unwrap();
        assert!(last.ends_with("this is the end of the output]"));
        assert!(spill.read_page(&json!({"id": "../x"})).is_err());
    }
}
