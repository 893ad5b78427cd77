//! A bundle's `manifest.json` (the MCPB manifest, versions 0.1 to 0.4): what harness9 reads
//! of it, read strictly where it reaches a command line or a question (wrong types are an
//! error that names the field) and leniently elsewhere (unknown fields are ignored).
//!
//! [`Manifest::check`] refuses what a manifest must not claim: a name or version that
//! cannot name a folder, a server type harness9 does not run, an entry point that is not a
//! relative path inside the bundle, absurd lengths and counts, and `user_config` fields
//! whose types, defaults or bounds contradict each other.

use serde::Deserialize;
use serde_json::{Map, Value};

use crate::config::inputs::is_input_name;
use crate::install::build::{MAX_ITEMS, MAX_TEXT};
use crate::install::syntax::version_ok;

/// Largest `manifest.json` read.
pub const MAX_MANIFEST: u64 = 1024 * 1024;
/// Longest name.
pub const MAX_NAME: usize = 128;
/// Most tools or prompts a manifest may declare.
pub const MAX_DECLARED: usize = 1000;

/// What harness9 reads of `manifest.json`.
#[derive(Debug, Clone, Deserialize)]
pub struct Manifest {
    /// `manifest_version` (`dxt_version` in the first bundles).
    #[serde(default, alias = "dxt_version")]
    pub manifest_version: Option<String>,
    pub name: String,
    #[serde(default)]
    pub display_name: Option<String>,
    pub version: String,
    #[serde(default)]
    pub description: String,
    pub author: Author,
    #[serde(default)]
    pub repository: Option<Repository>,
    #[serde(default)]
    pub homepage: Option<String>,
    pub server: Server,
    #[serde(default)]
    pub tools: Vec<Declared>,
    #[serde(default)]
    pub tools_generated: bool,
    #[serde(default)]
    pub prompts: Vec<Declared>,
    #[serde(default)]
    pub prompts_generated: bool,
    #[serde(default)]
    pub compatibility: Option<Compatibility>,
    /// In the manifest's order.
    #[serde(default)]
    pub user_config: Map<String, Value>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Author {
    pub name: String,
    #[serde(default)]
    pub email: Option<String>,
    #[serde(default)]
    pub url: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Repository {
    #[serde(default)]
    pub url: String,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Server {
    #[serde(rename = "type")]
    pub kind: String,
    pub entry_point: String,
    #[serde(default)]
    pub mcp_config: Option<McpConfig>,
}

/// How to run the server; `${…}` variables are filled in at install.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct McpConfig {
    #[serde(default)]
    pub command: Option<String>,
    #[serde(default)]
    pub args: Option<Vec<String>>,
    /// In the manifest's order.
    #[serde(default)]
    pub env: Option<Map<String, Value>>,
    /// By platform (`darwin`, `win32`, `linux`): fields that replace the ones above.
    #[serde(default)]
    pub platform_overrides: Map<String, Value>,
}

/// A tool or prompt a manifest declares.
#[derive(Debug, Clone, Deserialize)]
pub struct Declared {
    pub name: String,
    #[serde(default)]
    pub description: Option<String>,
}

#[derive(Debug, Clone, Default, Deserialize)]
pub struct Compatibility {
    #[serde(default)]
    pub platforms: Option<Vec<String>>,
    /// `node`, `python`: semver ranges.
    #[serde(default)]
    pub runtimes: std::collections::BTreeMap<String, String>,
}

/// The type of a `user_config` field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldType {
    String,
    Number,
    Boolean,
    Directory,
    File,
}

impl FieldType {
    fn of(word: &str) -> Option<FieldType> {
        match word {
            "string" => Some(FieldType::String),
            "number" => Some(FieldType::Number),
            "boolean" => Some(FieldType::Boolean),
            "directory" => Some(FieldType::Directory),
            "file" => Some(FieldType::File),
            _ => None,
        }
    }

    pub fn word(self) -> &'static str {
        match self {
            FieldType::String => "string",
            FieldType::Number => "number",
            FieldType::Boolean => "boolean",
            FieldType::Directory => "directory",
            FieldType::File => "file",
        }
    }

    /// A path the user picks.
    pub fn is_path(self) -> bool {
        matches!(self, FieldType::Directory | FieldType::File)
    }
}

/// One `user_config` field, checked.
#[derive(Debug, Clone, PartialEq)]
pub struct Field {
    pub key: String,
    pub kind: FieldType,
    pub title: Option<String>,
    pub description: Option<String>,
    pub required: bool,
    /// As written (variables not filled in yet); a list for `multiple` fields.
    pub default: Option<Vec<String>>,
    pub multiple: bool,
    pub sensitive: bool,
    pub min: Option<f64>,
    pub max: Option<f64>,
}

#[derive(Debug, Deserialize)]
struct RawField {
    #[serde(rename = "type")]
    kind: String,
    #[serde(default)]
    title: Option<String>,
    #[serde(default)]
    description: Option<String>,
    #[serde(default)]
    required: bool,
    #[serde(default)]
    default: Option<Value>,
    #[serde(default)]
    multiple: bool,
    #[serde(default)]
    sensitive: bool,
    #[serde(default)]
    min: Option<f64>,
    #[serde(default)]
    max: Option<f64>,
}

/// Parses `manifest.json`; the error says what is wrong, in words.
pub fn parse(bytes: &[u8]) -> Result<Manifest, String> {
    let m: Manifest = serde_json::from_slice(bytes)
        .map_err(|e| format!("its manifest.json is not a valid manifest ({e})"))?;
    m.check()?;
    Ok(m)
}

fn short(what: &str, s: &str, max: usize) -> Result<(), String> {
    if s.len() > max {
        return Err(format!("its {what} is longer than {max} bytes"));
    }
    if s.chars().any(char::is_control) {
        return Err(format!("its {what} has control characters"));
    }
    Ok(())
}

/// Whether `p` is a relative path of normal parts (`a/b.js`; no `..`, no root, no drive).
pub fn relative_path_ok(p: &str) -> bool {
    !p.is_empty()
        && p.len() <= 1024
        && !p.starts_with('/')
        && !p.contains('\\')
        && !p.contains('\0')
        && !p.contains(':')
        && p.split('/')
            .all(|part| !part.is_empty() && part != "." && part != "..")
}

impl Manifest {
    /// Refuses what a manifest must not claim (see the module's docs).
    pub fn check(&self) -> Result<(), String> {
        short("name", &self.name, MAX_NAME)?;
        if self.name.trim().is_empty() {
            return Err("its name is empty".into());
        }
        if !version_ok(&self.version) {
            return Err(format!(
                "its version \"{}\" is not a version (letters, digits, '.', '-', '+'; at most 100)",
                crate::truncate::prefix(&self.version, 100)
            ));
        }
        short("author's name", &self.author.name, 256)?;
        match self.server.kind.as_str() {
            "node" | "python" | "uv" | "binary" => {}
            other => {
                return Err(format!(
                    "its server type \"{}\" is not one harness9 runs (node, python, uv, binary)",
                    crate::truncate::prefix(other, 64)
                ))
            }
        }
        let ep = self
            .server
            .entry_point
            .strip_prefix("./")
            .unwrap_or(&self.server.entry_point);
        if !relative_path_ok(ep) {
            return Err(format!(
                "its entry point \"{}\" is not a relative path inside the bundle",
                crate::truncate::prefix(&self.server.entry_point, 200)
            ));
        }
        if self.tools.len() > MAX_DECLARED || self.prompts.len() > MAX_DECLARED {
            return Err(format!(
                "it declares more than {MAX_DECLARED} tools or prompts"
            ));
        }
        for d in self.tools.iter().chain(&self.prompts) {
            short("tool or prompt name", &d.name, MAX_NAME)?;
        }
        if let Some(c) = &self.server.mcp_config {
            check_config(c)?;
            if c.platform_overrides.len() > 8 {
                return Err("it has more than 8 platform overrides".into());
            }
            for (platform, o) in &c.platform_overrides {
                let o: McpConfig = serde_json::from_value(o.clone()).map_err(|e| {
                    format!(
                        "its platform override \"{}\" is not valid ({e})",
                        crate::truncate::prefix(platform, 32)
                    )
                })?;
                check_config(&o)?;
            }
        }
        if self.user_config.len() > MAX_ITEMS {
            return Err(format!("it asks for more than {MAX_ITEMS} values"));
        }
        self.fields()?;
        Ok(())
    }

    /// The `user_config` fields, checked, in the manifest's order.
    pub fn fields(&self) -> Result<Vec<Field>, String> {
        let mut out = Vec::new();
        for (key, raw) in &self.user_config {
            if !is_input_name(key) {
                return Err(format!(
                    "its user_config key \"{}\" is not a name (1 to 64 letters, digits, '_' and '-')",
                    crate::truncate::prefix(key, 64)
                ));
            }
            let raw: RawField = serde_json::from_value(raw.clone())
                .map_err(|e| format!("its user_config \"{key}\" is not valid ({e})"))?;
            let Some(kind) = FieldType::of(&raw.kind) else {
                return Err(format!(
                    "its user_config \"{key}\" has type \"{}\" (not string, number, boolean, directory or file)",
                    crate::truncate::prefix(&raw.kind, 32)
                ));
            };
            if raw.multiple && !kind.is_path() {
                return Err(format!(
                    "its user_config \"{key}\" is a {} with several values (only directories and files may have several)",
                    kind.word()
                ));
            }
            if raw.sensitive && kind != FieldType::String {
                return Err(format!(
                    "its user_config \"{key}\" is a sensitive {} (only strings are sensitive)",
                    kind.word()
                ));
            }
            if (raw.min.is_some() || raw.max.is_some()) && kind != FieldType::Number {
                return Err(format!(
                    "its user_config \"{key}\" has min or max but is not a number"
                ));
            }
            if let (Some(a), Some(b)) = (raw.min, raw.max) {
                if a > b {
                    return Err(format!("its user_config \"{key}\" has min above max"));
                }
            }
            if [&raw.title, &raw.description]
                .into_iter()
                .flatten()
                .any(|t| t.len() > 4096)
            {
                return Err(format!(
                    "its user_config \"{key}\" has a title or description longer than 4096 bytes"
                ));
            }
            let default = match &raw.default {
                None | Some(Value::Null) => None,
                Some(v) => Some(default_of(key, kind, raw.multiple, v, raw.min, raw.max)?),
            };
            out.push(Field {
                key: key.clone(),
                kind,
                title: raw.title,
                description: raw.description,
                required: raw.required,
                default,
                multiple: raw.multiple,
                sensitive: raw.sensitive,
                min: raw.min,
                max: raw.max,
            });
        }
        Ok(out)
    }
}

fn check_config(c: &McpConfig) -> Result<(), String> {
    if let Some(cmd) = &c.command {
        short("command", cmd, MAX_TEXT)?;
        if cmd.trim().is_empty() {
            return Err("its command is empty".into());
        }
    }
    if let Some(args) = &c.args {
        if args.len() > MAX_ITEMS {
            return Err(format!("it has more than {MAX_ITEMS} arguments"));
        }
        for a in args {
            short("argument", a, MAX_TEXT)?;
        }
    }
    if let Some(env) = &c.env {
        if env.len() > MAX_ITEMS {
            return Err(format!(
                "it sets more than {MAX_ITEMS} environment variables"
            ));
        }
        for (k, v) in env {
            if !crate::install::syntax::env_name_ok(k) {
                return Err(format!(
                    "\"{}\" is not an environment variable name",
                    crate::truncate::prefix(k, 64)
                ));
            }
            let Some(v) = v.as_str() else {
                return Err(format!("the value of environment variable {k} is not text"));
            };
            short("environment value", v, MAX_TEXT)?;
        }
    }
    Ok(())
}

/// A default as text (a list for `multiple`), checked against the field's type.
fn default_of(
    key: &str,
    kind: FieldType,
    multiple: bool,
    v: &Value,
    min: Option<f64>,
    max: Option<f64>,
) -> Result<Vec<String>, String> {
    let bad = || {
        Err(format!(
            "its user_config \"{key}\" has a default that is not a {}{}",
            kind.word(),
            if multiple { " list" } else { "" }
        ))
    };
    let one = |v: &Value| -> Option<String> {
        match (kind, v) {
            (FieldType::Number, Value::Number(n)) => {
                let x = n.as_f64()?;
                (min.is_none_or(|m| x >= m) && max.is_none_or(|m| x <= m)).then(|| n.to_string())
            }
            (FieldType::Boolean, Value::Bool(b)) => Some(b.to_string()),
            (FieldType::String | FieldType::Directory | FieldType::File, Value::String(s))
                if s.len() <= MAX_TEXT && !s.chars().any(char::is_control) =>
            {
                Some(s.clone())
            }
            _ => None,
        }
    };
    match v {
        Value::Array(items) if multiple && items.len() <= MAX_ITEMS => {
            let mut out = Vec::new();
            for i in items {
                match one(i) {
                    Some(s) => out.push(s),
                    None => return bad(),
                }
            }
            Ok(out)
        }
        v => match one(v) {
            Some(s) => Ok(vec![s]),
            None => bad(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn base() -> Value {
        json!({"manifest_version": "0.3", "name": "hello", "version": "1.0.0",
               "description": "d", "author": {"name": "A"},
               "server": {"type": "node", "entry_point": "server/index.js",
                          "mcp_config": {"command": "node", "args": ["${__dirname}/server/index.js"]}}})
    }

    fn err(patch: impl FnOnce(&mut Value)) -> String {
        let mut v = base();
        patch(&mut v);
        parse(v.to_string().as_bytes()).unwrap_err()
    }

    #[test]
    fn lies_are_refused_with_the_field_named() {
        assert!(parse(base().to_string().as_bytes()).is_ok());
        assert_eq!(
            err(|v| v["server"]["type"] = json!("ruby")),
            "its server type \"ruby\" is not one harness9 runs (node, python, uv, binary)"
        );
        assert_eq!(
            err(|v| v["server"]["entry_point"] = json!("../../etc/passwd")),
            "its entry point \"../../etc/passwd\" is not a relative path inside the bundle"
        );
        assert_eq!(
            err(|v| v["name"] = json!("x".repeat(1000))),
            "its name is longer than 128 bytes"
        );
        assert_eq!(
            err(|v| v["version"] = json!("--force")),
            "its version \"--force\" is not a version (letters, digits, '.', '-', '+'; at most 100)"
        );
        assert!(err(|v| v["server"]["entry_point"] = json!(7))
            .starts_with("its manifest.json is not a valid manifest (invalid type: integer `7`, expected a string"));
        assert_eq!(
            err(|v| v["user_config"] = json!({"n": {"type": "number", "default": "ten"}})),
            "its user_config \"n\" has a default that is not a number"
        );
        assert_eq!(
            err(|v| v["user_config"] = json!({"n": {"type": "number", "default": 50, "max": 10}})),
            "its user_config \"n\" has a default that is not a number"
        );
        assert_eq!(
            err(|v| v["user_config"] = json!({"n": {"type": "colour"}})),
            "its user_config \"n\" has type \"colour\" (not string, number, boolean, directory or file)"
        );
        assert_eq!(
            err(|v| v["user_config"] = json!({"k": {"type": "boolean", "sensitive": true}})),
            "its user_config \"k\" is a sensitive boolean (only strings are sensitive)"
        );
        assert_eq!(
            err(|v| v["user_config"] = json!({"a b": {"type": "string"}})),
            "its user_config key \"a b\" is not a name (1 to 64 letters, digits, '_' and '-')"
        );
        assert_eq!(
            err(|v| v["server"]["mcp_config"]["args"] = json!(vec!["x"; 65])),
            "it has more than 64 arguments"
        );
    }

    #[test]
    fn fields_keep_their_order_types_and_defaults() {
        let mut v = base();
        v["user_config"] = json!({
            "dirs": {"type": "directory", "multiple": true, "required": true, "default": ["${HOME}/a", "/b"]},
            "key": {"type": "string", "sensitive": true},
            "max": {"type": "number", "default": 10, "min": 1, "max": 100},
            "ro": {"type": "boolean", "default": true}
        });
        let m = parse(v.to_string().as_bytes()).unwrap();
        let f = m.fields().unwrap();
        let keys: Vec<&str> = f.iter().map(|f| f.key.as_str()).collect();
        assert_eq!(keys, ["dirs", "key", "max", "ro"]);
        assert_eq!(
            f[0].default,
            Some(vec!["${HOME}/a".to_string(), "/b".to_string()])
        );
        assert_eq!(f[2].default, Some(vec!["10".to_string()]));
        assert_eq!(f[3].default, Some(vec!["true".to_string()]));
        assert!(f[1].sensitive && !f[1].required);
    }
}
