//! `$ref` in a tool's input schema, resolved locally. Schemas generated from typed models
//! (Pydantic, zod) put shared parts under `$defs` and point at them; the model and the
//! try-a-tool form get the parts inlined instead. Only references inside the schema itself
//! (`#/…` JSON pointers) are followed: anything else (`https://…`, another file, an
//! anchor) is never fetched, and takes the place of a schema that accepts anything, with a
//! description that says so. A reference that leads back to itself (a recursive type)
//! stays a reference, and the definitions it points into stay beside it. Expansion is
//! bounded ([`MAX_RESOLVED_NODES`]): a schema that would grow past it is kept as it was,
//! with its outside references replaced as above.

use serde_json::{Map, Value};

use crate::mcp::schema_text::SchemaText;

/// The most JSON nodes a resolved schema may have; past it the references stay.
pub const MAX_RESOLVED_NODES: usize = 50_000;

/// Keywords whose values are data, not schemas: never searched for references.
const DATA_KEYWORDS: &[&str] = &["enum", "const", "default", "examples", "example"];
/// Where definitions live; dropped once nothing points into them.
const DEFINITIONS: &[&str] = &["$defs", "definitions"];

/// [`resolve_refs`] on a schema's text: the same text (shared) when it has no `$ref`.
pub fn resolve_refs_text(schema: &SchemaText) -> SchemaText {
    if !schema.mentions("\"$ref\"") {
        return schema.clone();
    }
    match resolve_refs(&schema.value()) {
        Some(resolved) => SchemaText::new(&resolved),
        None => schema.clone(),
    }
}

/// The schema with its local references inlined; `None` when it has no `$ref` at all.
pub fn resolve_refs(schema: &Value) -> Option<Value> {
    if !has_ref(schema) {
        return None;
    }
    let mut walk = Walk {
        root: schema,
        stack: Vec::new(),
        nodes: 0,
        kept_local: false,
        over_budget: false,
    };
    let resolved = walk.node(schema);
    if walk.over_budget {
        let mut outside_only = Walk {
            root: schema,
            stack: Vec::new(),
            nodes: 0,
            kept_local: false,
            over_budget: false,
        };
        return Some(outside_only.outside_refs_only(schema));
    }
    let Value::Object(mut map) = resolved else {
        return Some(resolved);
    };
    if walk.kept_local {
        // Recursive references point into the original definitions: keep them.
        if let Value::Object(orig) = schema {
            for key in DEFINITIONS {
                if let Some(defs) = orig.get(*key) {
                    map.insert((*key).to_string(), defs.clone());
                }
            }
        }
    } else {
        for key in DEFINITIONS {
            map.remove(*key);
        }
    }
    Some(Value::Object(map))
}

fn has_ref(v: &Value) -> bool {
    match v {
        Value::Object(map) => map
            .iter()
            .any(|(k, v)| k == "$ref" || (!DATA_KEYWORDS.contains(&k.as_str()) && has_ref(v))),
        Value::Array(items) => items.iter().any(has_ref),
        _ => false,
    }
}

struct Walk<'a> {
    root: &'a Value,
    /// The local references being expanded (to spot recursion).
    stack: Vec<&'a str>,
    nodes: usize,
    kept_local: bool,
    over_budget: bool,
}

impl<'a> Walk<'a> {
    fn node(&mut self, v: &'a Value) -> Value {
        self.nodes += 1;
        if self.nodes > MAX_RESOLVED_NODES {
            self.over_budget = true;
            return Value::Null;
        }
        match v {
            Value::Object(map) => match map.get("$ref").and_then(Value::as_str) {
                Some(r) => self.reference(r, map),
                None => Value::Object(self.members(map)),
            },
            Value::Array(items) => Value::Array(items.iter().map(|i| self.node(i)).collect()),
            other => other.clone(),
        }
    }

    fn members(&mut self, map: &'a Map<String, Value>) -> Map<String, Value> {
        let mut out = Map::with_capacity(map.len());
        for (k, v) in map {
            let v = match DATA_KEYWORDS.contains(&k.as_str()) {
                true => v.clone(),
                false => self.node(v),
            };
            out.insert(k.clone(), v);
        }
        out
    }

    /// `{"$ref": r, …siblings}`.
    fn reference(&mut self, r: &'a str, map: &'a Map<String, Value>) -> Value {
        let siblings = || map.iter().filter(|(k, _)| *k != "$ref");
        let Some(pointer) = r
            .strip_prefix('#')
            .filter(|p| p.is_empty() || p.starts_with('/'))
        else {
            return unresolved(r, siblings().map(|(k, v)| (k.clone(), v.clone())));
        };
        if self.stack.contains(&r) {
            // Recursive: stays a reference.
            self.kept_local = true;
            return Value::Object(self.members(map));
        }
        let Some(target) = self.root.pointer(&decode_pointer(pointer)) else {
            return unresolved(r, siblings().map(|(k, v)| (k.clone(), v.clone())));
        };
        self.stack.push(r);
        let resolved = self.node(target);
        self.stack.pop();
        match resolved {
            Value::Object(mut inlined) => {
                // Keywords beside the reference (a description, say) win.
                for (k, v) in siblings() {
                    let v = match DATA_KEYWORDS.contains(&k.as_str()) {
                        true => v.clone(),
                        false => self.node(v),
                    };
                    inlined.insert(k.clone(), v);
                }
                Value::Object(inlined)
            }
            other => other,
        }
    }

    /// The schema as it is, but with every reference that is not local replaced.
    fn outside_refs_only(&mut self, v: &Value) -> Value {
        match v {
            Value::Object(map) => {
                if let Some(r) = map.get("$ref").and_then(Value::as_str) {
                    if !r.starts_with("#/") && r != "#" {
                        let rest = map.iter().filter(|(k, _)| *k != "$ref");
                        return unresolved(r, rest.map(|(k, v)| (k.clone(), v.clone())));
                    }
                }
                let out = map
                    .iter()
                    .map(|(k, v)| match DATA_KEYWORDS.contains(&k.as_str()) {
                        true => (k.clone(), v.clone()),
                        false => (k.clone(), self.outside_refs_only(v)),
                    })
                    .collect();
                Value::Object(out)
            }
            Value::Array(items) => {
                Value::Array(items.iter().map(|i| self.outside_refs_only(i)).collect())
            }
            other => other.clone(),
        }
    }
}

/// What stands for a reference harness9 does not follow: any value, saying why.
fn unresolved(r: &str, siblings: impl Iterator<Item = (String, Value)>) -> Value {
    let mut out: Map<String, Value> = siblings.collect();
    let note = format!("(the schema at {r} was not fetched: any value is accepted here)");
    let description = match out.get("description").and_then(Value::as_str) {
        Some(d) => format!("{d} {note}"),
        None => note,
    };
    out.insert("description".into(), Value::String(description));
    Value::Object(out)
}

/// A URI fragment's JSON pointer, with `%XX` escapes decoded.
fn decode_pointer(p: &str) -> String {
    if !p.contains('%') {
        return p.to_string();
    }
    let bytes = p.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            if let (Some(h), Some(l)) = (hex(bytes[i + 1]), hex(bytes[i + 2])) {
                out.push((h * 16 + l) as u8);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn local_references_are_inlined_and_definitions_dropped() {
        let schema = json!({
            "type": "object",
            "$defs": {"City": {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}},
            "properties": {
                "from": {"$ref": "#/$defs/City", "description": "where"},
                "to": {"$ref": "#/$defs/City"},
                "tags": {"enum": [{"$ref": "data, not a schema"}]}
            }
        });
        let got = resolve_refs(&schema).unwrap();
        let city = json!({"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]});
        let mut from = city.clone();
        from["description"] = json!("where");
        assert_eq!(
            got,
            json!({"type": "object", "properties": {
                "from": from, "to": city, "tags": {"enum": [{"$ref": "data, not a schema"}]}
            }})
        );
        assert_eq!(resolve_refs(&json!({"type": "object"})), None);
    }

    #[test]
    fn outside_references_are_never_fetched_and_recursion_stays() {
        let schema = json!({
            "type": "object",
            "definitions": {"Node": {"type": "object", "properties": {
                "next": {"$ref": "#/definitions/Node"},
                "a~b": {"type": "integer"}
            }}},
            "properties": {
                "remote": {"$ref": "https://example.test/schema.json", "description": "Far."},
                "anchor": {"$ref": "#thing"},
                "missing": {"$ref": "#/$defs/Nope"},
                "node": {"$ref": "#/definitions/Node"},
                "escaped": {"$ref": "#/definitions/Node/properties/a~0b"},
                "encoded": {"$ref": "#/definitions/Node/properties/a%7E0b"}
            }
        });
        let got = resolve_refs(&schema).unwrap();
        let p = &got["properties"];
        assert_eq!(
            p["remote"],
            json!({"description": "Far. (the schema at https://example.test/schema.json was not fetched: any value is accepted here)"})
        );
        assert!(p["anchor"]["description"]
            .as_str()
            .unwrap()
            .contains("#thing"));
        assert!(p["missing"]["description"]
            .as_str()
            .unwrap()
            .contains("not fetched"));
        assert_eq!(
            p["node"]["properties"]["next"],
            json!({"$ref": "#/definitions/Node"})
        );
        assert_eq!(p["escaped"], json!({"type": "integer"}));
        assert_eq!(p["encoded"], json!({"type": "integer"}));
        // The recursive reference still has its target.
        assert!(got["definitions"]["Node"].is_object());
    }

    #[test]
    fn an_exploding_schema_keeps_its_references() {
        // Each level points at the next twice: 2^30 nodes if inlined.
        let mut defs = Map::new();
        for i in 0..30 {
            defs.insert(
                format!("L{i}"),
                json!({"type": "array", "items": [{"$ref": format!("#/$defs/L{}", i + 1)}, {"$ref": format!("#/$defs/L{}", i + 1)}]}),
            );
        }
        defs.insert("L30".into(), json!({"type": "string"}));
        let schema = json!({"$defs": defs, "properties": {"x": {"$ref": "#/$defs/L0"}, "y": {"$ref": "http://x.test/a"}}});
        let got = resolve_refs(&schema).unwrap();
        assert_eq!(got["properties"]["x"], json!({"$ref": "#/$defs/L0"}));
        assert!(got["properties"]["y"]["description"].is_string());
        assert_eq!(got["$defs"], schema["$defs"]);
    }
}
