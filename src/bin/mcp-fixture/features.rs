//! Synthetic resources and prompts for the benchmark and the tests:
//! `REFSERVER_RESOURCES=N` lists N resources (`fixture://resource/{i}`, readable as text)
//! and one template, `REFSERVER_PROMPTS=N` lists N prompts (`prompt-{i}`, with a required
//! `topic` argument), both in pages of [`FEATURE_PAGE`]. The capabilities are declared
//! only when asked for, so other runs see the fixture as before.

use serde_json::value::RawValue;
use serde_json::{json, Value};

use super::{as_string, env_number, Out, Params};

/// Items per page of `resources/list` and `prompts/list`.
const FEATURE_PAGE: usize = 1_000;

pub(crate) struct Features {
    resources: Vec<String>,
    prompts: Vec<String>,
}

impl Features {
    pub(crate) fn from_env() -> Features {
        let resources = (0..env_number("REFSERVER_RESOURCES") as usize)
            .map(|i| {
                json!({
                    "uri": format!("fixture://resource/{i}"),
                    "name": format!("resource-{i}"),
                    "title": format!("Resource {i}"),
                    "mimeType": "text/plain",
                    "description": format!("Synthetic resource number {i} for the benchmark."),
                })
                .to_string()
            })
            .collect();
        let prompts = (0..env_number("REFSERVER_PROMPTS") as usize)
            .map(|i| {
                json!({
                    "name": format!("prompt-{i}"),
                    "description": format!("Synthetic prompt number {i}."),
                    "arguments": [
                        {"name": "topic", "description": "What it is about", "required": true},
                        {"name": "tone"}
                    ],
                })
                .to_string()
            })
            .collect();
        Features { resources, prompts }
    }

    /// Adds the declared capabilities to `caps`.
    pub(crate) fn declare(&self, caps: &mut Value) {
        if !self.resources.is_empty() {
            caps["resources"] = json!({"listChanged": true});
        }
        if !self.prompts.is_empty() {
            caps["prompts"] = json!({"listChanged": true});
        }
    }

    /// Answers a features request; false when `method` is not one.
    pub(crate) fn handle(
        &self,
        out: &mut Out,
        method: &str,
        id: &RawValue,
        params: &Params,
    ) -> bool {
        match method {
            "resources/list" if !self.resources.is_empty() => {
                page(out, id, params, &self.resources, "resources")
            }
            "resources/templates/list" if !self.resources.is_empty() => out.result(
                id,
                [r#"{"resourceTemplates":[{"uriTemplate":"fixture://resource/{index}","name":"resource-by-index","mimeType":"text/plain"}]}"#],
            ),
            "resources/read" if !self.resources.is_empty() => {
                let uri = as_string(params.uri).unwrap_or_default();
                let index = uri
                    .strip_prefix("fixture://resource/")
                    .and_then(|i| i.parse::<usize>().ok())
                    .filter(|i| *i < self.resources.len());
                match index {
                    Some(i) => {
                        let body = json!({"contents": [{"uri": uri, "mimeType": "text/plain", "text": format!("resource {i}")}]});
                        out.result(id, [body.to_string().as_str()]);
                    }
                    None => out.error(id, -32002, &format!("Resource not found: {uri}"), None),
                }
            }
            "prompts/list" if !self.prompts.is_empty() => {
                page(out, id, params, &self.prompts, "prompts")
            }
            "prompts/get" if !self.prompts.is_empty() => {
                let name = as_string(params.name).unwrap_or_default();
                let topic = params
                    .arguments
                    .as_ref()
                    .and_then(|a| as_string(a.topic));
                let known = name
                    .strip_prefix("prompt-")
                    .and_then(|i| i.parse::<usize>().ok())
                    .is_some_and(|i| i < self.prompts.len());
                match (known, topic) {
                    (false, _) => out.error(id, -32602, &format!("Unknown prompt: {name}"), None),
                    (true, None) => out.error(id, -32602, "Missing required argument: topic", None),
                    (true, Some(topic)) => {
                        let body = json!({"messages": [{"role": "user", "content": {"type": "text", "text": format!("{name} about {topic}")}}]});
                        out.result(id, [body.to_string().as_str()]);
                    }
                }
            }
            _ => return false,
        }
        true
    }
}

/// One page of `entries` under `key`, the cursor being the offset of the next page.
fn page(out: &mut Out, id: &RawValue, params: &Params, entries: &[String], key: &str) {
    let start = match as_string(params.cursor) {
        None => 0,
        Some(c) => match c.parse::<usize>() {
            Ok(n) if n < entries.len() => n,
            _ => return out.error(id, -32602, &format!("Invalid cursor: {c}"), None),
        },
    };
    let end = (start + FEATURE_PAGE).min(entries.len());
    let mut body = String::with_capacity(
        entries[start..end]
            .iter()
            .map(|e| e.len() + 1)
            .sum::<usize>()
            + 64,
    );
    body.push_str(&format!(r#"{{"{key}":["#));
    for (i, e) in entries[start..end].iter().enumerate() {
        if i > 0 {
            body.push(',');
        }
        body.push_str(e);
    }
    body.push(']');
    if end < entries.len() {
        body.push_str(&format!(r#","nextCursor":"{end}""#));
    }
    body.push('}');
    out.result(id, [body.as_str()]);
}
