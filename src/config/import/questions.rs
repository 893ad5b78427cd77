//! VS Code's inputs (values it asks its user for, `${input:ID}`) as questions asked at
//! import, before the plan is shown: a plain answer is written into the entries that use
//! it, a password stays a reference whose value goes to the credential store.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::FoundFile;

/// A value the tool asked its user for (a VS Code input), asked at import.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct InputQuestion {
    /// The name in `${input:NAME}`.
    pub name: String,
    /// The input's id in the tool's file.
    pub id: String,
    pub description: Option<String>,
    /// A password: its value goes to the credential store, the entry keeps the reference.
    pub secret: bool,
    pub default: Option<String>,
    /// The values to pick from (none: free text).
    pub choices: Vec<String>,
    /// The servers that use it (their names in the tool's file, or in harness9 in a plan).
    pub servers: Vec<String>,
}

/// The questions of every input the found servers use (each name once).
pub fn questions(found: &[FoundFile]) -> Vec<InputQuestion> {
    let mut out: Vec<InputQuestion> = Vec::new();
    for q in found.iter().flat_map(|f| &f.inputs) {
        match out.iter_mut().find(|o| o.name == q.name) {
            Some(o) => {
                for s in &q.servers {
                    if !o.servers.contains(s) {
                        o.servers.push(s.clone());
                    }
                }
                o.secret |= q.secret;
            }
            None => out.push(q.clone()),
        }
    }
    out
}

/// Puts the plain (not secret) answers into the servers that use them, each recorded as
/// translated; secret inputs keep their `${input:NAME}` (their values are kept in the
/// credential store after the write).
pub fn answer(found: &mut [FoundFile], answers: &BTreeMap<String, String>) {
    for file in found {
        let plain: Vec<(String, String)> = file
            .inputs
            .iter()
            .filter(|q| !q.secret)
            .filter_map(|q| Some((q.name.clone(), answers.get(&q.name)?.clone())))
            .filter(|(_, a)| !a.is_empty())
            .collect();
        for (name, value) in plain {
            let reference = crate::config::inputs::reference(&name);
            for (server, entry) in &mut file.servers {
                if replace_in(entry, &reference, &value) {
                    file.translated
                        .push((server.clone(), format!("{reference} → {value}")));
                }
            }
            file.inputs.retain(|q| q.name != name);
        }
    }
}

/// Replaces `from` with `to` in every string of `v`; whether any was.
fn replace_in(v: &mut Value, from: &str, to: &str) -> bool {
    match v {
        Value::String(s) if s.contains(from) => {
            *s = s.replace(from, to);
            true
        }
        Value::Array(a) => a
            .iter_mut()
            .fold(false, |acc, x| replace_in(x, from, to) | acc),
        Value::Object(m) => m
            .values_mut()
            .fold(false, |acc, x| replace_in(x, from, to) | acc),
        _ => false,
    }
}
