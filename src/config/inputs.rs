//! Inputs: values an entry takes from the user's credential store instead of the file.
//!
//! An entry refers to one with `${input:NAME}` (VS Code's syntax for the same idea), in
//! `command`, `args`, `env` values, `url` and `headers` values. Loading keeps the reference
//! as written (it is not an environment variable), so the entry, its fingerprint and
//! everything shown of it carry the reference, never the value; the value is put in only
//! in memory, when the server starts ([`resolve`]). Another tool reading the same file sees
//! an unresolved `${input:NAME}` (or, for one that takes it as a variable name, an unset
//! variable), never a wrong value.
//!
//! `NAME` is 1 to [`MAX_INPUT_NAME`] characters of `A-Z a-z 0-9 _ -`. Which value a name
//! stands for is the credential store's business (per scope, project and server: see
//! [`crate::install::secrets`]).

use std::collections::BTreeSet;

use serde_json::Value;

use super::TransportConfig;

/// What starts an input reference inside `${…}`.
pub const INPUT_PREFIX: &str = "input:";

/// Longest input name.
pub const MAX_INPUT_NAME: usize = 64;

/// Whether `name` may follow `${input:`.
pub fn is_input_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= MAX_INPUT_NAME
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

/// The reference to input `name`, as written in an entry.
pub fn reference(name: &str) -> String {
    format!("${{{INPUT_PREFIX}{name}}}")
}

/// The input named by the body of a `${…}` (`input:NAME` → `NAME`), when it is one.
pub fn input_in(body: &str) -> Option<&str> {
    body.strip_prefix(INPUT_PREFIX).filter(|n| is_input_name(n))
}

/// Calls `f` with each `${…}` of `s`: its byte range and its body.
#[allow(
    clippy::string_slice,
    reason = "offsets are where `find` met ASCII `${` and `}`"
)]
fn each_reference(s: &str, mut f: impl FnMut(usize, usize, &str)) {
    let mut from = 0;
    while let Some(at) = s.get(from..).and_then(|r| r.find("${")) {
        let start = from + at;
        let Some(len) = s[start + 2..].find('}') else {
            return;
        };
        let end = start + 2 + len + 1;
        f(start, end, &s[start + 2..end - 1]);
        from = end;
    }
}

/// The input names `s` refers to, in order (each once).
pub fn names_in(s: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    each_reference(s, |_, _, body| {
        if let Some(n) = input_in(body) {
            if !out.iter().any(|o| o == n) {
                out.push(n.to_string());
            }
        }
    });
    out
}

/// Replaces every input reference of `s` with its value from `lookup`; the first name it
/// has no value for is the error.
#[allow(
    clippy::string_slice,
    reason = "ranges come from `each_reference`, at ASCII `${` and `}`"
)]
pub fn substitute(
    s: &str,
    lookup: &mut dyn FnMut(&str) -> Option<String>,
) -> Result<String, String> {
    let mut out = String::with_capacity(s.len());
    let mut kept = 0;
    let mut missing = None;
    each_reference(s, |start, end, body| {
        if missing.is_some() {
            return;
        }
        if let Some(n) = input_in(body) {
            match lookup(n) {
                Some(v) => {
                    out.push_str(&s[kept..start]);
                    out.push_str(&v);
                    kept = end;
                }
                None => missing = Some(n.to_string()),
            }
        }
    });
    if let Some(n) = missing {
        return Err(n);
    }
    out.push_str(&s[kept..]);
    Ok(out)
}

/// The input names an entry as written refers to (in `command`, `args`, `env`, `url` and
/// `headers`), sorted.
pub fn entry_inputs(raw: &Value) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    let mut take = |v: &Value| {
        if let Value::String(s) = v {
            names.extend(names_in(s));
        }
    };
    for key in ["command", "url"] {
        if let Some(v) = raw.get(key) {
            take(v);
        }
    }
    if let Some(Value::Array(args)) = raw.get("args") {
        args.iter().for_each(&mut take);
    }
    for key in ["env", "headers"] {
        match raw.get(key) {
            Some(Value::Object(m)) => m.values().for_each(&mut take),
            Some(Value::Array(items)) => items.iter().for_each(&mut take),
            _ => {}
        }
    }
    names
}

/// The input names a transport refers to, sorted.
pub fn transport_inputs(t: &TransportConfig) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    let mut take = |s: &str| names.extend(names_in(s));
    match t {
        TransportConfig::Stdio {
            command, args, env, ..
        } => {
            take(command);
            args.iter().for_each(|a| take(a));
            env.iter().for_each(|(_, v)| take(v));
        }
        TransportConfig::Http { url, headers } | TransportConfig::Sse { url, headers } => {
            take(url);
            headers.iter().for_each(|(_, v)| take(v));
        }
    }
    names
}

/// The transport with every input reference replaced by its value (in memory, for one
/// start); the first input without a value is the error.
pub fn resolve(
    t: &TransportConfig,
    lookup: &mut dyn FnMut(&str) -> Option<String>,
) -> Result<TransportConfig, String> {
    let mut one = |s: &str| substitute(s, lookup);
    Ok(match t {
        TransportConfig::Stdio {
            command,
            args,
            env,
            cwd,
        } => TransportConfig::Stdio {
            command: one(command)?,
            args: args.iter().map(|a| one(a)).collect::<Result<_, _>>()?,
            env: env
                .iter()
                .map(|(k, v)| Ok((k.clone(), one(v)?)))
                .collect::<Result<_, String>>()?,
            cwd: cwd.clone(),
        },
        TransportConfig::Http { url, headers } => TransportConfig::Http {
            url: one(url)?,
            headers: headers
                .iter()
                .map(|(k, v)| Ok((k.clone(), one(v)?)))
                .collect::<Result<_, String>>()?,
        },
        TransportConfig::Sse { url, headers } => TransportConfig::Sse {
            url: one(url)?,
            headers: headers
                .iter()
                .map(|(k, v)| Ok((k.clone(), one(v)?)))
                .collect::<Result<_, String>>()?,
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn names_and_substitution() {
        assert_eq!(
            names_in("Bearer ${input:TOKEN} ${HOME} ${input:TOKEN}${input:b-2}"),
            vec!["TOKEN", "b-2"]
        );
        // Not input names: kept as written.
        assert_eq!(
            names_in("${input:} ${input:a.b} ${input:x y}"),
            Vec::<String>::new()
        );
        let mut look = |n: &str| (n == "TOKEN").then(|| "s3cr3t".to_string());
        assert_eq!(
            substitute("Bearer ${input:TOKEN}!${HOME}", &mut look),
            Ok("Bearer s3cr3t!${HOME}".to_string())
        );
        assert_eq!(
            substitute("${input:OTHER}", &mut look),
            Err("OTHER".to_string())
        );
        assert_eq!(
            substitute("${input:TOKEN", &mut look),
            Ok("${input:TOKEN".into())
        );
        assert_eq!(
            substitute("é${input:TOKEN}é", &mut look),
            Ok("és3cr3té".into())
        );
    }

    #[test]
    fn an_entry_keeps_its_references_and_a_start_resolves_them() {
        let raw = json!({"command": "srv", "args": ["--key", "${input:KEY}"],
                         "env": {"A": "${input:A}", "B": "plain"}});
        assert_eq!(
            entry_inputs(&raw).into_iter().collect::<Vec<_>>(),
            vec!["A", "KEY"]
        );
        let cfg = crate::config::parse_entry("s", &raw, &|_| None).unwrap();
        let TransportConfig::Stdio { args, env, .. } = &cfg.transport else {
            panic!()
        };
        assert_eq!(args, &vec!["--key".to_string(), "${input:KEY}".to_string()]);
        assert_eq!(env[0], ("A".to_string(), "${input:A}".to_string()));
        let resolved = resolve(&cfg.transport, &mut |n| Some(format!("<{n}>"))).unwrap();
        let TransportConfig::Stdio { args, env, .. } = resolved else {
            panic!()
        };
        assert_eq!(args[1], "<KEY>");
        assert_eq!(env[0].1, "<A>");
        assert_eq!(
            resolve(&cfg.transport, &mut |_| None).unwrap_err(),
            "KEY",
            "the first missing one, in the order of the entry"
        );
    }
}
