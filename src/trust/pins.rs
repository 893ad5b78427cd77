//! Tool pinning: digests of the tool definitions a server had when it was first seen, so
//! that a later change (a rug pull) is held back until the user reviews it.
//!
//! A pin records, per project folder and server, each tool's name, description and input
//! schema together with a SHA-256 digest of their canonical JSON (object keys sorted, so key
//! order never matters). The definition itself is kept so a change can be shown as a diff.
//! Pins are a record of what was seen, not a grant: they are recorded on the first listing
//! of a server that has none, whatever approved it.
//!
//! The file (`pins.json`, beside `approvals.json`) is read once into memory on a blocking
//! thread (however many servers ask at once) and written atomically on a blocking thread;
//! no async runtime thread touches disk. Writes that pile up while one is under way are
//! folded into the next, and each writes straight from the cache without copying it. A
//! pinned schema is kept as its canonical JSON text, not as a parsed value: a project with
//! 10,000 tools holds a few megabytes of pins, not tens.

use parking_lot::Mutex;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::Value;
use sha2::{Digest, Sha256};

/// File name of the pin store, next to the approvals file.
pub const PINS_FILE: &str = "pins.json";

/// What was pinned for one tool.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolPin {
    /// SHA-256 (hex) of the canonical JSON of name, description and input schema.
    pub digest: String,
    #[serde(default)]
    pub description: String,
    /// The canonical JSON text of the input schema (parsed only to show a change).
    #[serde(default = "null_schema")]
    pub input_schema: Box<RawValue>,
}

fn null_schema() -> Box<RawValue> {
    RawValue::from_string("null".into()).expect("null is JSON")
}

impl ToolPin {
    /// The pin of one tool definition as a server lists it.
    pub fn new(name: &str, description: &str, input_schema: &Value) -> ToolPin {
        let schema = serde_json::to_string(&canonical(input_schema)).expect("json serializes");
        // The canonical body {"description", "inputSchema", "name"} (keys sorted), written
        // out around the schema's text instead of building it as a value again.
        let quote = |s: &str| serde_json::to_string(s).expect("json serializes");
        let body = format!(
            "{{\"description\":{},\"inputSchema\":{schema},\"name\":{}}}",
            quote(description),
            quote(name)
        );
        ToolPin {
            digest: hex(&Sha256::digest(body.as_bytes())),
            description: description.to_string(),
            input_schema: RawValue::from_string(schema).expect("serialized JSON"),
        }
    }

    /// The pinned input schema as a value, keys sorted.
    pub fn schema(&self) -> Value {
        serde_json::from_str(self.input_schema.get())
            .map(|v: Value| canonical(&v))
            .unwrap_or(Value::Null)
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

impl PartialEq for ToolPin {
    fn eq(&self, other: &Self) -> bool {
        self.digest == other.digest
            && self.description == other.description
            && self.input_schema.get() == other.input_schema.get()
    }
}

/// How one listed tool differs from its pin.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "change", rename_all = "kebab-case")]
pub enum ToolChange {
    /// Not in the pins: the server added it after it was first seen.
    New,
    /// Description and/or input schema differ from the pin.
    #[serde(rename_all = "camelCase")]
    Changed {
        /// `(pinned, now)` when the description changed.
        description: Option<(String, String)>,
        /// `(pinned, now)` canonical JSON when the input schema changed.
        input_schema: Option<(Value, Value)>,
    },
}

impl ToolChange {
    /// One line for messages: "it is new", "its description changed", ...
    pub fn summary(&self) -> String {
        match self {
            ToolChange::New => "it is new".into(),
            ToolChange::Changed {
                description,
                input_schema,
            } => match (description.is_some(), input_schema.is_some()) {
                (true, true) => "its description and input schema changed".into(),
                (true, false) => "its description changed".into(),
                (false, true) => "its input schema changed".into(),
                (false, false) => "its definition changed".into(),
            },
        }
    }

    /// A readable diff: `-` pinned lines, `+` current lines.
    pub fn diff(&self) -> Vec<String> {
        let mut out = Vec::new();
        match self {
            ToolChange::New => out.push("new tool (not seen before)".to_string()),
            ToolChange::Changed {
                description,
                input_schema,
            } => {
                if let Some((old, new)) = description {
                    out.push("description:".to_string());
                    line_diff(old, new, &mut out);
                }
                if let Some((old, new)) = input_schema {
                    out.push("input schema:".to_string());
                    let pretty = |v: &Value| serde_json::to_string_pretty(v).unwrap_or_default();
                    line_diff(&pretty(old), &pretty(new), &mut out);
                }
            }
        }
        out
    }
}

/// A small line diff (longest common subsequence); enough for descriptions and schemas.
fn line_diff(old: &str, new: &str, out: &mut Vec<String>) {
    let a: Vec<&str> = old.lines().collect();
    let b: Vec<&str> = new.lines().collect();
    let mut lcs = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for i in (0..a.len()).rev() {
        for j in (0..b.len()).rev() {
            lcs[i][j] = if a[i] == b[j] {
                lcs[i + 1][j + 1] + 1
            } else {
                lcs[i + 1][j].max(lcs[i][j + 1])
            };
        }
    }
    let (mut i, mut j) = (0, 0);
    while i < a.len() || j < b.len() {
        if i < a.len() && j < b.len() && a[i] == b[j] {
            out.push(format!("    {}", a[i]));
            i += 1;
            j += 1;
        } else if j < b.len() && (i == a.len() || lcs[i][j + 1] >= lcs[i + 1][j]) {
            out.push(format!("  + {}", b[j]));
            j += 1;
        } else {
            out.push(format!("  - {}", a[i]));
            i += 1;
        }
    }
}

/// A tool held back from the model until the user accepts its change.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct HeldTool {
    pub server: String,
    pub tool: String,
    #[serde(flatten)]
    pub change: ToolChange,
}

/// The canonical JSON of a value: object keys sorted at every level.
pub fn canonical(v: &Value) -> Value {
    match v {
        Value::Object(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort();
            Value::Object(
                keys.into_iter()
                    .map(|k| (k.clone(), canonical(&m[k])))
                    .collect(),
            )
        }
        Value::Array(a) => Value::Array(a.iter().map(canonical).collect()),
        other => other.clone(),
    }
}

/// Digest of a tool's name, description and input schema (key order does not matter).
pub fn digest(name: &str, description: &str, input_schema: &Value) -> String {
    let body = canonical(&serde_json::json!({
        "name": name,
        "description": description,
        "inputSchema": input_schema,
    }));
    let text = serde_json::to_string(&body).expect("json serializes");
    hex(&Sha256::digest(text.as_bytes()))
}

/// Compares a listing (tool name and its pin as listed now) with the pins of its server;
/// `None` pins means first sight, where nothing is held.
pub fn compare(
    server: &str,
    pins: Option<&BTreeMap<String, ToolPin>>,
    listing: &[(String, ToolPin)],
) -> Vec<HeldTool> {
    let Some(pins) = pins else {
        return Vec::new();
    };
    let mut held = Vec::new();
    for (name, now) in listing {
        let change = match pins.get(name) {
            None => ToolChange::New,
            Some(pin) if pin.digest == now.digest => continue,
            Some(pin) => {
                let (was, is) = (pin.schema(), now.schema());
                ToolChange::Changed {
                    description: (pin.description != now.description)
                        .then(|| (pin.description.clone(), now.description.clone())),
                    input_schema: (was != is).then_some((was, is)),
                }
            }
        };
        held.push(HeldTool {
            server: server.to_string(),
            tool: name.clone(),
            change,
        });
    }
    held
}

/// project folder → server name → tool name → pin
type PinMap = BTreeMap<String, BTreeMap<String, BTreeMap<String, ToolPin>>>;

#[derive(Debug, Default, Deserialize)]
struct PinFile {
    #[serde(default)]
    projects: PinMap,
}

/// The file as written: straight from the cache.
#[derive(Serialize)]
struct PinFileRef<'a> {
    projects: &'a PinMap,
}

/// The pins of every project, cached in memory. Cheap to clone; clones share the cache.
#[derive(Debug, Clone)]
pub struct PinStore {
    path: PathBuf,
    cache: Arc<Mutex<Option<PinMap>>>,
    /// One reader of the file, however many servers ask at once.
    loading: Arc<tokio::sync::Mutex<()>>,
    /// Serialises writers; only ever taken on a blocking thread.
    write: Arc<Mutex<()>>,
    /// The cache changed since it was last written.
    dirty: Arc<AtomicBool>,
}

impl PinStore {
    pub fn at(path: PathBuf) -> Self {
        PinStore {
            path,
            cache: Arc::default(),
            loading: Arc::default(),
            write: Arc::default(),
            dirty: Arc::default(),
        }
    }

    /// `pins.json` beside the given approvals file.
    pub fn beside(approvals: &Path) -> Self {
        Self::at(approvals.with_file_name(PINS_FILE))
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    async fn loaded(&self) {
        if self.cache.lock().is_some() {
            return;
        }
        let _one = self.loading.lock().await;
        if self.cache.lock().is_some() {
            return;
        }
        let path = self.path.clone();
        let file: PinFile = tokio::task::spawn_blocking(move || {
            std::fs::read(&path)
                .ok()
                .and_then(|b| serde_json::from_slice(&b).ok())
                .unwrap_or_default()
        })
        .await
        .unwrap_or_default();
        let mut cache = self.cache.lock();
        if cache.is_none() {
            *cache = Some(file.projects);
        }
    }

    /// The pins of one server, `None` when it was never seen.
    pub async fn server_pins(
        &self,
        project: &Path,
        server: &str,
    ) -> Option<BTreeMap<String, ToolPin>> {
        self.loaded().await;
        let key = project_key(project);
        self.cache
            .lock()
            .as_ref()
            .and_then(|m| m.get(&key))
            .and_then(|p| p.get(server))
            .cloned()
    }

    /// Pins these tools (adding to or replacing the server's pins) and writes the store.
    /// Tools not named here keep their pins.
    pub async fn record(
        &self,
        project: &Path,
        server: &str,
        tools: Vec<(String, ToolPin)>,
    ) -> std::io::Result<()> {
        self.loaded().await;
        let key = project_key(project);
        {
            let mut cache = self.cache.lock();
            let pins = cache
                .get_or_insert_with(BTreeMap::new)
                .entry(key)
                .or_default()
                .entry(server.to_string())
                .or_default();
            pins.extend(tools);
        }
        self.dirty.store(true, Ordering::Release);
        let store = self.clone();
        tokio::task::spawn_blocking(move || store.write_now())
            .await
            .unwrap_or_else(|e| Err(std::io::Error::other(e)))
    }

    /// Writes the latest cached state, unless a writer before it already did.
    fn write_now(&self) -> std::io::Result<()> {
        let _guard = self.write.lock();
        if !self.dirty.swap(false, Ordering::AcqRel) {
            return Ok(());
        }
        let bytes = {
            let cache = self.cache.lock();
            let empty = PinMap::new();
            let file = PinFileRef {
                projects: cache.as_ref().unwrap_or(&empty),
            };
            serde_json::to_vec_pretty(&file).expect("pins serialize")
        };
        let written = self
            .path
            .parent()
            .map_or(Ok(()), std::fs::create_dir_all)
            .and_then(|()| crate::config::write_atomically(&self.path, &bytes));
        if written.is_err() {
            self.dirty.store(true, Ordering::Release);
        }
        written
    }
}

fn project_key(project: &Path) -> String {
    std::fs::canonicalize(project)
        .unwrap_or_else(|_| project.to_path_buf())
        .display()
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn def(name: &str, description: &str, schema: Value) -> (String, ToolPin) {
        (name.to_string(), ToolPin::new(name, description, &schema))
    }

    #[test]
    fn key_order_does_not_change_the_digest() {
        let a = def(
            "t",
            "d",
            json!({"type": "object", "properties": {"a": {"type": "string"}, "b": {}}}),
        );
        let b = def(
            "t",
            "d",
            json!({"properties": {"b": {}, "a": {"type": "string"}}, "type": "object"}),
        );
        assert_eq!(a.1.digest, b.1.digest);
        assert_ne!(
            a.1.digest,
            def("t", "e", json!({"type": "object"})).1.digest
        );
    }

    #[test]
    fn pins_keep_the_digest_of_earlier_files_and_read_them_back() {
        let schema = json!({"type": "object", "properties": {"q": {"type": "string", "description": "é \"x\""}}});
        let pin = ToolPin::new("search", "Finds \"things\"\n", &schema);
        assert_eq!(pin.digest, digest("search", "Finds \"things\"\n", &schema));
        // A file written before the schema was kept as text (pretty, keys in any order).
        let old = json!({"projects": {"/p": {"s": {"search": {
            "digest": pin.digest,
            "description": "Finds \"things\"\n",
            "inputSchema": {"properties": {"q": {"description": "é \"x\"", "type": "string"}}, "type": "object"}
        }}}}});
        let file: PinFile =
            serde_json::from_str(&serde_json::to_string_pretty(&old).unwrap()).unwrap();
        let read = &file.projects["/p"]["s"]["search"];
        assert_eq!(read.schema(), canonical(&schema));
        assert_eq!(
            compare(
                "s",
                Some(&file.projects["/p"]["s"]),
                &[("search".into(), pin)]
            ),
            vec![]
        );
    }

    #[test]
    fn new_and_changed_tools_are_held_unchanged_are_not() {
        let old = def("a", "adds", json!({"type": "object"}));
        let pins: BTreeMap<String, ToolPin> = [old.clone()].into();
        assert_eq!(compare("s", None, std::slice::from_ref(&old)), vec![]);
        assert_eq!(
            compare("s", Some(&pins), std::slice::from_ref(&old)),
            vec![]
        );
        let listing = [
            def("a", "adds; also reads ~/.ssh", json!({"type": "object"})),
            def("b", "", json!({})),
        ];
        assert_eq!(
            compare("s", Some(&pins), &listing),
            vec![
                HeldTool {
                    server: "s".into(),
                    tool: "a".into(),
                    change: ToolChange::Changed {
                        description: Some(("adds".into(), "adds; also reads ~/.ssh".into())),
                        input_schema: None,
                    },
                },
                HeldTool {
                    server: "s".into(),
                    tool: "b".into(),
                    change: ToolChange::New
                },
            ]
        );
    }
}
