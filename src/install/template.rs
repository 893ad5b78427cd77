//! The entry an install writes, before the user's values are in: literal text and named
//! variables. [`Template::render`] makes the exact `.mcp.json` entry from the values
//! given: a plain variable's value is written as given, a secret one as its
//! `${input:NAME}` reference (its value goes to the credential store), and what depends on
//! an optional variable left empty is left out (an env var, a header, an argument).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::config::inputs;

/// A piece of text: literal, or a variable's value.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub enum Seg {
    Text(String),
    Var(String),
}

/// A text made of pieces.
pub type Text = Vec<Seg>;

/// One argument, or a flag with its value: left out as a whole when a variable in it is
/// optional and has no value.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ArgGroup {
    pub parts: Vec<Text>,
    /// A part that is one variable of several values (a bundle's `multiple` field) gives
    /// one argument per value.
    #[serde(default)]
    pub spread: bool,
}

/// How the entry reaches the server.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", tag = "type")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub enum Template {
    Stdio {
        command: String,
        args: Vec<ArgGroup>,
        env: Vec<(String, Text)>,
        /// The folder it runs in (a bundle's).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[cfg_attr(feature = "ts", ts(optional))]
        cwd: Option<String>,
    },
    Http {
        url: Text,
        headers: Vec<(String, Text)>,
    },
    Sse {
        url: Text,
        headers: Vec<(String, Text)>,
    },
}

/// The values a template is rendered with: plain values by name, and the names of secret
/// variables that have a value (kept elsewhere).
#[derive(Debug, Clone, Default)]
pub struct Values<'a> {
    pub plain: BTreeMap<&'a str, &'a str>,
    pub secret: Vec<&'a str>,
    /// Variables whose value is several values, one a line ([`SEPARATOR`]): a spread
    /// argument gets one argument each, any other text gets them joined with `,`.
    pub multiple: Vec<&'a str>,
}

/// What separates the values of a variable of several values.
pub const SEPARATOR: char = '\n';

impl Values<'_> {
    fn has(&self, name: &str) -> bool {
        self.plain.contains_key(name) || self.secret.contains(&name)
    }
}

/// A text with the values in; `None` when a variable in it has none.
fn fill(text: &Text, values: &Values<'_>) -> Option<String> {
    let mut out = String::new();
    for seg in text {
        match seg {
            Seg::Text(t) => out.push_str(t),
            Seg::Var(v) if values.secret.contains(&v.as_str()) => {
                out.push_str(&inputs::reference(v))
            }
            Seg::Var(v) if values.multiple.contains(&v.as_str()) => {
                out.push_str(&values.plain.get(v.as_str())?.replace(SEPARATOR, ","))
            }
            Seg::Var(v) => out.push_str(values.plain.get(v.as_str())?),
        }
    }
    Some(out)
}

/// The variables a text uses.
pub fn vars_of(text: &Text) -> impl Iterator<Item = &str> {
    text.iter().filter_map(|s| match s {
        Seg::Var(v) => Some(v.as_str()),
        Seg::Text(_) => None,
    })
}

impl Template {
    /// Every variable the template uses, in order, each once.
    pub fn vars(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        let mut take = |t: &Text| {
            for v in vars_of(t) {
                if !out.iter().any(|o| o == v) {
                    out.push(v.to_string());
                }
            }
        };
        match self {
            Template::Stdio { args, env, .. } => {
                args.iter().flat_map(|g| &g.parts).for_each(&mut take);
                env.iter().for_each(|(_, t)| take(t));
            }
            Template::Http { url, headers } | Template::Sse { url, headers } => {
                take(url);
                headers.iter().for_each(|(_, t)| take(t));
            }
        }
        out
    }

    /// The `.mcp.json` entry with `values` in. Parts whose variables have no value are
    /// left out (the caller has made sure required ones have one).
    pub fn render(&self, values: &Values<'_>) -> Value {
        let mut entry = Map::new();
        let pairs = |list: &[(String, Text)]| {
            let mut m = Map::new();
            for (k, t) in list {
                if let Some(v) = fill(t, values) {
                    m.insert(k.clone(), Value::from(v));
                }
            }
            m
        };
        match self {
            Template::Stdio {
                command,
                args,
                env,
                cwd,
            } => {
                entry.insert("type".into(), Value::from("stdio"));
                entry.insert("command".into(), Value::from(command.as_str()));
                let mut out: Vec<Value> = Vec::new();
                for g in args {
                    if g.spread {
                        for p in &g.parts {
                            match p.as_slice() {
                                [Seg::Var(v)] => {
                                    if let Some(x) = values.plain.get(v.as_str()) {
                                        out.extend(
                                            x.split(SEPARATOR)
                                                .filter(|s| !s.is_empty())
                                                .map(Value::from),
                                        );
                                    }
                                }
                                _ => out.extend(fill(p, values).map(Value::from)),
                            }
                        }
                    } else if g.parts.iter().flat_map(vars_of).all(|v| values.has(v)) {
                        out.extend(
                            g.parts
                                .iter()
                                .filter_map(|p| fill(p, values))
                                .map(Value::from),
                        );
                    }
                }
                entry.insert("args".into(), Value::Array(out));
                let env = pairs(env);
                if !env.is_empty() {
                    entry.insert("env".into(), Value::Object(env));
                }
                if let Some(cwd) = cwd {
                    entry.insert("cwd".into(), Value::from(cwd.as_str()));
                }
            }
            Template::Http { url, headers } | Template::Sse { url, headers } => {
                let kind = if matches!(self, Template::Http { .. }) {
                    "http"
                } else {
                    "sse"
                };
                entry.insert("type".into(), Value::from(kind));
                entry.insert(
                    "url".into(),
                    Value::from(fill(url, values).unwrap_or_default()),
                );
                let headers = pairs(headers);
                if !headers.is_empty() {
                    entry.insert("headers".into(), Value::Object(headers));
                }
            }
        }
        Value::Object(entry)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn values_plain_secret_and_missing() {
        let t = Template::Stdio {
            command: "npx".into(),
            args: vec![
                ArgGroup {
                    parts: vec![vec![Seg::Text("-y".into())]],
                    spread: false,
                },
                ArgGroup {
                    parts: vec![
                        vec![Seg::Text("--dir".into())],
                        vec![Seg::Var("dir".into())],
                    ],
                    spread: false,
                },
                ArgGroup {
                    parts: vec![vec![Seg::Text("--key=".into()), Seg::Var("KEY".into())]],
                    spread: false,
                },
                ArgGroup {
                    parts: vec![vec![Seg::Var("dirs".into())]],
                    spread: true,
                },
            ],
            env: vec![
                ("TOKEN".into(), vec![Seg::Var("TOKEN".into())]),
                ("LOG".into(), vec![Seg::Var("LOG".into())]),
                ("DIRS".into(), vec![Seg::Var("dirs".into())]),
            ],
            cwd: None,
        };
        assert_eq!(t.vars(), vec!["dir", "KEY", "dirs", "TOKEN", "LOG"]);
        let mut v = Values::default();
        v.plain.insert("KEY", "k 1");
        v.secret.push("TOKEN");
        assert_eq!(
            t.render(&v),
            json!({"type": "stdio", "command": "npx", "args": ["-y", "--key=k 1"],
                   "env": {"TOKEN": "${input:TOKEN}"}})
        );
        v.plain.insert("dir", "/tmp/x");
        assert_eq!(
            t.render(&v)["args"],
            json!(["-y", "--dir", "/tmp/x", "--key=k 1"])
        );
        v.plain.insert("dirs", "/a\n/b c");
        v.multiple.push("dirs");
        let e = t.render(&v);
        assert_eq!(
            e["args"],
            json!(["-y", "--dir", "/tmp/x", "--key=k 1", "/a", "/b c"])
        );
        assert_eq!(e["env"]["DIRS"], "/a,/b c");
    }
}
