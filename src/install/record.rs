//! The registry's `server.json` records, as the MCP Registry's read API serves them
//! (`GET /v0.1/servers`: `{servers: [{server, _meta}], metadata: {nextCursor, count}}`).
//!
//! Reading is lenient where it costs nothing (unknown fields are ignored, missing lists
//! are empty) and strict where it matters: a record whose fields have the wrong types is
//! left out of a listing (counted, never guessed at), and nothing of a record reaches a
//! command line without the checks of [`super::choose`].

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The key of the official registry's metadata in a listing's `_meta`.
pub const OFFICIAL_META: &str = "io.modelcontextprotocol.registry/official";

/// One server version as published (`server.json`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ServerRecord {
    #[serde(default)]
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(default)]
    pub description: String,
    #[serde(default)]
    pub version: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub website_url: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repository: Option<Repository>,
    #[serde(default)]
    pub packages: Vec<Package>,
    #[serde(default)]
    pub remotes: Vec<Remote>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Repository {
    #[serde(default)]
    pub url: String,
    #[serde(default)]
    pub source: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subfolder: Option<String>,
}

/// One way to run the server locally: a package of a package registry.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Package {
    /// `npm`, `pypi`, `oci`, `nuget`, `mcpb` (others are shown, not installed).
    #[serde(default)]
    pub registry_type: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub registry_base_url: Option<String>,
    #[serde(default)]
    pub identifier: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file_sha256: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runtime_hint: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transport: Option<Transport>,
    #[serde(default)]
    pub runtime_arguments: Vec<Argument>,
    #[serde(default)]
    pub package_arguments: Vec<Argument>,
    #[serde(default)]
    pub environment_variables: Vec<KeyValueInput>,
}

/// How a package speaks MCP (`stdio`, `streamable-http`, `sse`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Transport {
    #[serde(rename = "type", default)]
    pub kind: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    #[serde(default)]
    pub headers: Vec<KeyValueInput>,
}

/// A server the publisher runs: reached at a URL.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Remote {
    /// `streamable-http` or `sse`.
    #[serde(rename = "type", default)]
    pub kind: String,
    #[serde(default)]
    pub url: String,
    #[serde(default)]
    pub headers: Vec<KeyValueInput>,
    /// Values for `{name}` in the URL.
    #[serde(default)]
    pub variables: BTreeMap<String, Input>,
}

/// A value the user may give (or that is fixed by the record).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Input {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(default)]
    pub is_required: bool,
    /// `string`, `number`, `boolean`, `filepath`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format: Option<String>,
    /// A fixed value (`{name}` parts filled from `variables`); not asked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    #[serde(default)]
    pub is_secret: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub placeholder: Option<String>,
    #[serde(default)]
    pub choices: Vec<String>,
}

/// A command-line argument: `positional` (a value) or `named` (`--flag` and a value).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Argument {
    #[serde(rename = "type", default)]
    pub kind: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value_hint: Option<String>,
    #[serde(default)]
    pub is_repeated: bool,
    #[serde(flatten)]
    pub input: Input,
    #[serde(default)]
    pub variables: BTreeMap<String, Input>,
}

/// An environment variable or a header.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct KeyValueInput {
    #[serde(default)]
    pub name: String,
    #[serde(flatten)]
    pub input: Input,
    #[serde(default)]
    pub variables: BTreeMap<String, Input>,
}

/// One item of a listing: the record and what the registry says of it.
#[derive(Debug, Clone, PartialEq)]
pub struct Listed {
    pub server: ServerRecord,
    /// `_meta[OFFICIAL_META].isLatest` (`None` when the registry does not say).
    pub is_latest: Option<bool>,
    /// `_meta[OFFICIAL_META].status` (`active`, `deprecated`, `deleted`).
    pub status: Option<String>,
}

/// One page of `GET /v0.1/servers` (or of a server's versions).
#[derive(Debug, Clone, Default)]
pub struct Page {
    pub items: Vec<Listed>,
    /// Items that could not be read as records.
    pub unreadable: usize,
    pub next_cursor: Option<String>,
}

/// Why a page is not a page of the read API.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PageError {
    #[error("the answer is not JSON ({0})")]
    NotJson(String),
    #[error("the answer has no \"servers\" list")]
    NoServers,
}

/// One item (`{server, _meta}`, or a bare record) of a listing.
pub fn listed(item: &Value) -> Option<Listed> {
    let record = item.get("server").unwrap_or(item);
    let server: ServerRecord = serde_json::from_value(record.clone()).ok()?;
    if server.name.is_empty() {
        return None;
    }
    let official = item.get("_meta").and_then(|m| m.get(OFFICIAL_META));
    Some(Listed {
        server,
        is_latest: official
            .and_then(|o| o.get("isLatest"))
            .and_then(Value::as_bool),
        status: official
            .and_then(|o| o.get("status"))
            .and_then(Value::as_str)
            .map(str::to_string),
    })
}

/// Parses one page; items that are not records are counted, not guessed at.
pub fn parse_page(body: &[u8]) -> Result<Page, PageError> {
    let doc: Value = serde_json::from_slice(body).map_err(|e| PageError::NotJson(e.to_string()))?;
    let Some(Value::Array(items)) = doc.get("servers") else {
        return Err(PageError::NoServers);
    };
    let mut page = Page::default();
    for item in items {
        match listed(item) {
            Some(l) => page.items.push(l),
            None => page.unreadable += 1,
        }
    }
    page.next_cursor = doc
        .pointer("/metadata/nextCursor")
        .and_then(Value::as_str)
        .filter(|c| !c.is_empty())
        .map(str::to_string);
    Ok(page)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_page_keeps_what_it_can_read() {
        let body = serde_json::json!({
            "servers": [
                {"server": {"name": "io.github.a/b", "description": "d", "version": "1.0.0",
                            "packages": [{"registryType": "npm", "identifier": "b", "version": "1.0.0",
                                          "transport": {"type": "stdio"}}]},
                 "_meta": {OFFICIAL_META: {"isLatest": true, "status": "active"}}},
                {"server": {"name": "io.github.a/c", "packages": "not a list"}},
                {"server": {"description": "no name"}},
                7
            ],
            "metadata": {"nextCursor": "io.github.a/b:1.0.0", "count": 4}
        })
        .to_string();
        let page = parse_page(body.as_bytes()).unwrap();
        assert_eq!(page.items.len(), 1);
        assert_eq!(page.unreadable, 3);
        assert_eq!(page.items[0].is_latest, Some(true));
        assert_eq!(page.next_cursor.as_deref(), Some("io.github.a/b:1.0.0"));
        assert_eq!(
            parse_page(b"<html>").unwrap_err().to_string(),
            "the answer is not JSON (expected value at line 1 column 1)"
        );
        assert_eq!(parse_page(b"{}").unwrap_err(), PageError::NoServers);
    }
}
