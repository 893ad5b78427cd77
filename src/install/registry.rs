//! The client of MCP registries' read API: `GET /v0.1/servers` (with `search`, `cursor`
//! paging and `version=latest`), `GET /v0.1/servers/{name}/versions` and
//! `GET /v0.1/servers/{name}/versions/{version}`.
//!
//! Several registries are asked at once and their answers put in the configured order:
//! one hit per server name, the first registry's winning, each labelled with its registry.
//! Everything a registry sends is bounded: the size of one answer
//! ([`MAX_RESPONSE_BYTES`]), the pages of one search ([`MAX_PAGES`]; a cursor seen twice
//! stops at once), the hits kept ([`MAX_RESULTS`]) and the time of one request. Answers
//! are kept on disk ([`super::cache`]): a repeated search is answered from there, and a
//! registry that cannot be reached is replaced by its last answer, labelled with its age.

use std::collections::HashSet;
use std::time::Duration;

use serde::Serialize;
use serde_json::Value;

use super::cache::{fmt_age, Cache, FRESH_FOR};
use super::record::{listed, parse_page, Listed, ServerRecord};

/// Largest answer read from a registry.
pub const MAX_RESPONSE_BYTES: usize = 4 * 1024 * 1024;
/// Most pages one search follows.
pub const MAX_PAGES: usize = 100;
/// Servers asked for per page.
pub const PAGE_SIZE: usize = 100;
/// Most hits one search keeps per registry.
pub const MAX_RESULTS: usize = 10_000;
/// Longest name, title, version or way of running of a hit, in bytes (longer is cut).
pub const MAX_HIT_TEXT: usize = 256;
/// Longest description of a hit, in bytes (the registry's own limit is 100 characters).
pub const MAX_HIT_DESCRIPTION: usize = 1024;
/// Most ways of running listed for one hit.
pub const MAX_HIT_RUNS: usize = 16;
/// How long one request may take, from connecting to the end of the answer.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(15);
/// How long connecting to a registry may take.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// What went wrong with one registry.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RegistryError {
    #[error("registry unreachable ({registry}): {reason}")]
    Unreachable { registry: String, reason: String },
    #[error("registry {registry} answered {status}{detail}")]
    Status {
        registry: String,
        status: u16,
        detail: String,
    },
    #[error("registry {registry} sent an answer larger than {} MiB; it was not read", MAX_RESPONSE_BYTES / (1024 * 1024))]
    TooLarge { registry: String },
    #[error("registry {registry} sent an answer that is not the registry API's: {reason}")]
    Garbage { registry: String, reason: String },
    #[error(
        "registry {registry} sent the same page cursor twice (a loop); stopped after {pages} pages"
    )]
    EndlessCursor { registry: String, pages: usize },
    #[error("registry {registry} kept sending pages: stopped after {MAX_PAGES}; narrow the search or use --limit")]
    TooManyPages { registry: String },
    #[error("no server named \"{name}\" in {}", .registries.join(", "))]
    NotFound {
        name: String,
        registries: Vec<String>,
    },
    #[error("server \"{name}\" has no version \"{version}\" in {registry}; see its versions with `harness9 mcp search {name}`")]
    NoSuchVersion {
        name: String,
        version: String,
        registry: String,
    },
}

impl RegistryError {
    /// A stable kebab-case code for front ends and `--json` output (never changes once
    /// released).
    pub fn code(&self) -> &'static str {
        match self {
            RegistryError::Unreachable { .. } => "registry-unreachable",
            RegistryError::Status { .. } => "registry-error",
            RegistryError::TooLarge { .. } => "registry-answer-too-large",
            RegistryError::Garbage { .. } => "registry-garbage",
            RegistryError::EndlessCursor { .. } => "registry-cursor-loop",
            RegistryError::TooManyPages { .. } => "registry-too-many-pages",
            RegistryError::NotFound { .. } => "unknown-registry-server",
            RegistryError::NoSuchVersion { .. } => "unknown-version",
        }
    }
}

/// One server found by a search.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct SearchHit {
    /// The registry it was found in (its base URL).
    pub registry: String,
    pub name: String,
    pub title: Option<String>,
    pub description: String,
    /// The latest version.
    pub version: String,
    /// How it runs: `npx`, `uvx`, `docker`, `dnx`, `mcpb`, or a remote's URL.
    pub runs: Vec<String>,
    /// `active`, `deprecated` or `deleted`, when the registry says.
    pub status: Option<String>,
}

/// A registry that failed, and what was shown instead.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct RegistryProblem {
    pub registry: String,
    pub code: String,
    pub message: String,
}

/// What a search found in every registry.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct SearchResults {
    pub hits: Vec<SearchHit>,
    /// What to know about the hits ("registry unreachable; showing results from 3 h ago").
    pub notes: Vec<String>,
    /// Registries that failed with no kept answer to show instead.
    pub problems: Vec<RegistryProblem>,
    /// Listed items that were not records (left out).
    pub unreadable: usize,
}

/// A record found for an install: where, and what the registry says of it.
#[derive(Debug, Clone, PartialEq)]
pub struct Found {
    pub registry: String,
    pub listed: Listed,
    /// Set when the registry could not be reached and a kept answer is used.
    pub note: Option<String>,
}

/// Asks registries; cheap to clone.
#[derive(Debug, Clone)]
pub struct RegistryClient {
    /// Built when first used (opening a project costs nothing).
    http: std::sync::Arc<std::sync::OnceLock<reqwest::Client>>,
    cache: Cache,
}

fn chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut parts = vec![e.to_string()];
    let mut src = e.source();
    while let Some(s) = src {
        let t = s.to_string();
        if !parts.iter().any(|p| p.contains(&t)) {
            parts.push(t);
        }
        src = s.source();
    }
    parts.join(": ")
}

impl RegistryClient {
    /// Keeps answers in `cache`.
    pub fn new(cache: Cache) -> RegistryClient {
        RegistryClient {
            http: Default::default(),
            cache,
        }
    }

    fn http(&self) -> &reqwest::Client {
        self.http.get_or_init(|| {
            reqwest::Client::builder()
                .connect_timeout(CONNECT_TIMEOUT)
                .timeout(REQUEST_TIMEOUT)
                .redirect(harness9_mcp::http::redirect::redirect_policy())
                .user_agent(concat!("harness9/", env!("CARGO_PKG_VERSION")))
                .build()
                .unwrap_or_default()
        })
    }

    /// Keeps answers in the user's data folder.
    pub fn for_user() -> RegistryClient {
        RegistryClient::new(Cache::at(
            crate::config::scopes::data_dir().join(super::cache::CACHE_DIR),
        ))
    }

    /// GETs one URL of `registry` and returns its body as JSON (`Ok(None)`: 404).
    async fn get(&self, registry: &str, url: url::Url) -> Result<Option<Value>, RegistryError> {
        let reg = || registry.to_string();
        let mut resp = self
            .http()
            .get(url.clone())
            .header("accept", "application/json")
            .send()
            .await
            .map_err(|e| RegistryError::Unreachable {
                registry: reg(),
                reason: harness9_mcp::http::errors::classify_failure(
                    &url,
                    &chain(&e),
                    e.is_timeout(),
                    e.is_connect(),
                ),
            })?;
        let status = resp.status();
        if status == reqwest::StatusCode::NOT_FOUND {
            return Ok(None);
        }
        let body = read_bounded(&mut resp, registry).await?;
        if !status.is_success() {
            let text = String::from_utf8_lossy(&body);
            let one: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
            let detail = crate::truncate::prefix(&one, 200);
            return Err(RegistryError::Status {
                registry: reg(),
                status: status.as_u16(),
                detail: if detail.is_empty() {
                    String::new()
                } else {
                    format!(": {detail}")
                },
            });
        }
        serde_json::from_slice(&body)
            .map(Some)
            .map_err(|e| RegistryError::Garbage {
                registry: reg(),
                reason: format!("not JSON ({e})"),
            })
    }

    /// Every page of a search of one registry (stops at `limit` records).
    async fn fetch_search(
        &self,
        registry: &str,
        query: &str,
        limit: Option<usize>,
    ) -> Result<(Vec<Value>, bool), RegistryError> {
        let mut items: Vec<Value> = Vec::new();
        let mut seen: HashSet<String> = HashSet::new();
        let mut cursor: Option<String> = None;
        let want = limit.unwrap_or(MAX_RESULTS).min(MAX_RESULTS);
        for page_no in 0.. {
            if page_no >= MAX_PAGES {
                return Err(RegistryError::TooManyPages {
                    registry: registry.into(),
                });
            }
            let mut url = api_url(registry, &[])?;
            {
                let mut q = url.query_pairs_mut();
                if !query.is_empty() {
                    q.append_pair("search", query);
                }
                q.append_pair("version", "latest");
                q.append_pair("limit", &PAGE_SIZE.min(want).max(1).to_string());
                if let Some(c) = &cursor {
                    q.append_pair("cursor", c);
                }
            }
            let body = self
                .get(registry, url)
                .await?
                .ok_or_else(|| RegistryError::Garbage {
                    registry: registry.into(),
                    reason: "the server list is not there (404); is this the registry's URL?"
                        .into(),
                })?;
            let servers = match body.get("servers") {
                Some(Value::Array(s)) => s.clone(),
                _ => {
                    return Err(RegistryError::Garbage {
                        registry: registry.into(),
                        reason: "the answer has no \"servers\" list".into(),
                    })
                }
            };
            items.extend(servers);
            if items.len() >= want {
                items.truncate(want);
                return Ok((items, false));
            }
            let next = body
                .pointer("/metadata/nextCursor")
                .and_then(Value::as_str)
                .filter(|c| !c.is_empty())
                .map(str::to_string);
            match next {
                None => return Ok((items, true)),
                Some(c) if !seen.insert(c.clone()) => {
                    return Err(RegistryError::EndlessCursor {
                        registry: registry.into(),
                        pages: page_no + 1,
                    })
                }
                Some(c) => cursor = Some(c),
            }
        }
        unreachable!("the loop returns")
    }

    /// One registry's items for a search: kept ones when fresh, else fetched (and kept);
    /// when fetching fails, kept ones of any age with a note.
    async fn search_one(
        &self,
        registry: &str,
        query: &str,
        limit: Option<usize>,
    ) -> (Vec<Value>, Option<String>, Option<RegistryError>) {
        let key = format!("search {registry} {query}");
        let kept = self.cache.get(&key);
        let usable = |k: &super::cache::Kept| {
            let complete = k.body.get("complete").and_then(Value::as_bool) == Some(true);
            let n = k
                .body
                .get("items")
                .and_then(Value::as_array)
                .map_or(0, Vec::len);
            complete || limit.is_some_and(|l| n >= l)
        };
        let items_of = |k: &super::cache::Kept| {
            k.body
                .get("items")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default()
        };
        if let Some(k) = kept.as_ref().filter(|k| k.age < FRESH_FOR && usable(k)) {
            return (items_of(k), None, None);
        }
        match self.fetch_search(registry, query, limit).await {
            Ok((items, complete)) => {
                self.cache.put(
                    &key,
                    &serde_json::json!({"items": items, "complete": complete}),
                );
                (items, None, None)
            }
            Err(e) => match kept {
                Some(k) => {
                    let note = stale_note(&e, registry, k.age);
                    (items_of(&k), Some(note), None)
                }
                None => (Vec::new(), None, Some(e)),
            },
        }
    }

    /// Searches every registry (at once), merged in their order: one hit per name, the
    /// first registry's winning. `query` is matched by each registry (by name).
    pub async fn search(
        &self,
        registries: &[String],
        query: &str,
        limit: Option<usize>,
    ) -> SearchResults {
        let answers =
            futures::future::join_all(registries.iter().map(|r| self.search_one(r, query, limit)))
                .await;
        let mut out = SearchResults::default();
        let mut names: HashSet<String> = HashSet::new();
        for (registry, (items, note, problem)) in registries.iter().zip(answers) {
            out.notes.extend(note);
            if let Some(e) = problem {
                out.problems.push(RegistryProblem {
                    registry: registry.clone(),
                    code: e.code().into(),
                    message: e.to_string(),
                });
            }
            // One version per name: the one the registry marks latest, else the first.
            let mut mine: Vec<Listed> = Vec::new();
            for item in &items {
                let Some(l) = listed(item) else {
                    out.unreadable += 1;
                    continue;
                };
                match mine.iter_mut().find(|m| m.server.name == l.server.name) {
                    Some(m) if m.is_latest != Some(true) && l.is_latest == Some(true) => *m = l,
                    Some(_) => {}
                    None => mine.push(l),
                }
            }
            for l in mine {
                if !names.insert(l.server.name.clone()) {
                    continue;
                }
                let clip = |s: &str, n: usize| crate::truncate::prefix(s, n).to_string();
                out.hits.push(SearchHit {
                    registry: registry.clone(),
                    runs: super::kind::runs(&l.server)
                        .iter()
                        .take(MAX_HIT_RUNS)
                        .map(|r| clip(r, MAX_HIT_TEXT))
                        .collect(),
                    name: clip(&l.server.name, MAX_HIT_TEXT),
                    title: l.server.title.as_deref().map(|t| clip(t, MAX_HIT_TEXT)),
                    description: clip(&l.server.description, MAX_HIT_DESCRIPTION),
                    version: clip(&l.server.version, MAX_HIT_TEXT),
                    status: l.status.as_deref().map(|t| clip(t, MAX_HIT_TEXT)),
                });
            }
        }
        if let Some(l) = limit {
            out.hits.truncate(l);
        }
        out
    }

    /// The record of `name` at `version` (`None`: the latest) from the first registry that
    /// has it.
    pub async fn record(
        &self,
        registries: &[String],
        name: &str,
        version: Option<&str>,
    ) -> Result<Found, RegistryError> {
        let mut first_error = None;
        for registry in registries {
            match self.record_in(registry, name, version).await {
                Ok(Some(found)) => return Ok(found),
                Ok(None) => {}
                Err(e) => {
                    first_error.get_or_insert(e);
                }
            }
        }
        Err(first_error.unwrap_or_else(|| RegistryError::NotFound {
            name: name.into(),
            registries: registries.to_vec(),
        }))
    }

    /// The record of `name` in one registry; `Ok(None)` when it has no such server.
    pub async fn record_in(
        &self,
        registry: &str,
        name: &str,
        version: Option<&str>,
    ) -> Result<Option<Found>, RegistryError> {
        let v = version.unwrap_or("latest");
        let key = format!("server {registry} {name} {v}");
        let kept = self.cache.get(&key);
        // An exact version never changes; "latest" does.
        if let Some(k) = kept
            .as_ref()
            .filter(|k| version.is_some() || k.age < FRESH_FOR)
        {
            if let Some(l) = listed(&k.body) {
                return Ok(Some(Found {
                    registry: registry.into(),
                    listed: l,
                    note: None,
                }));
            }
        }
        let url = api_url(registry, &["servers", name, "versions", v])?;
        let fetched = match self.get(registry, url).await {
            Ok(b) => b,
            Err(e) => {
                return match kept.as_ref().and_then(|k| Some((listed(&k.body)?, k.age))) {
                    Some((l, age)) => Ok(Some(Found {
                        registry: registry.into(),
                        listed: l,
                        note: Some(stale_note(&e, registry, age)),
                    })),
                    None => Err(e),
                }
            }
        };
        let Some(body) = fetched else {
            let latest = api_url(registry, &["servers", name, "versions", "latest"])?;
            if version.is_some() && self.get(registry, latest).await?.is_some() {
                return Err(RegistryError::NoSuchVersion {
                    name: name.into(),
                    version: v.into(),
                    registry: registry.into(),
                });
            }
            return Ok(None);
        };
        let l = listed(&body).ok_or_else(|| RegistryError::Garbage {
            registry: registry.into(),
            reason: format!("the record of \"{name}\" is not a server.json"),
        })?;
        if l.server.name != name {
            return Err(RegistryError::Garbage {
                registry: registry.into(),
                reason: format!(
                    "asked for \"{name}\", it answered with \"{}\"",
                    l.server.name
                ),
            });
        }
        self.cache.put(&key, &body);
        Ok(Some(Found {
            registry: registry.into(),
            listed: l,
            note: None,
        }))
    }

    /// Every version of `name` in `registry`, as listed (newest first, by the API).
    pub async fn versions(&self, registry: &str, name: &str) -> Result<Vec<Listed>, RegistryError> {
        let url = api_url(registry, &["servers", name, "versions"])?;
        let body = self
            .get(registry, url)
            .await?
            .ok_or_else(|| RegistryError::NotFound {
                name: name.into(),
                registries: vec![registry.into()],
            })?;
        let page = parse_page(body.to_string().as_bytes()).map_err(|e| RegistryError::Garbage {
            registry: registry.into(),
            reason: e.to_string(),
        })?;
        Ok(page.items)
    }
}

/// The note shown when a kept answer stands in for a registry that failed.
fn stale_note(e: &RegistryError, registry: &str, age: Duration) -> String {
    match e {
        RegistryError::Unreachable { .. } => format!(
            "registry unreachable ({registry}); showing results from {}",
            fmt_age(age)
        ),
        other => format!("{other}; showing results from {}", fmt_age(age)),
    }
}

/// `{registry}/v0.1/{segments…}` with each segment percent-encoded (a name's `/` too).
fn api_url(registry: &str, segments: &[&str]) -> Result<url::Url, RegistryError> {
    let mut url = url::Url::parse(registry).map_err(|e| RegistryError::Unreachable {
        registry: registry.into(),
        reason: format!("bad URL: {e}"),
    })?;
    {
        let mut path = url
            .path_segments_mut()
            .map_err(|_| RegistryError::Unreachable {
                registry: registry.into(),
                reason: "the URL cannot have a path".into(),
            })?;
        path.pop_if_empty().push("v0.1");
        if segments.is_empty() {
            path.push("servers");
        }
        for s in segments {
            path.push(s);
        }
    }
    Ok(url)
}

/// Reads a body of at most [`MAX_RESPONSE_BYTES`].
async fn read_bounded(
    resp: &mut reqwest::Response,
    registry: &str,
) -> Result<Vec<u8>, RegistryError> {
    if resp.content_length().unwrap_or(0) > MAX_RESPONSE_BYTES as u64 {
        return Err(RegistryError::TooLarge {
            registry: registry.into(),
        });
    }
    let mut body = Vec::new();
    loop {
        match resp.chunk().await {
            Ok(Some(c)) => {
                if body.len() + c.len() > MAX_RESPONSE_BYTES {
                    return Err(RegistryError::TooLarge {
                        registry: registry.into(),
                    });
                }
                body.extend_from_slice(&c);
            }
            Ok(None) => return Ok(body),
            Err(e) => {
                return Err(RegistryError::Unreachable {
                    registry: registry.into(),
                    reason: format!("reading the answer failed: {}", chain(&e)),
                })
            }
        }
    }
}

/// The records of a listing, as read (for tests and front ends that hold raw pages).
pub fn records(items: &[Value]) -> Vec<ServerRecord> {
    items.iter().filter_map(listed).map(|l| l.server).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn api_urls_encode_names() {
        assert_eq!(
            api_url(
                "https://r.example/base",
                &["servers", "io.github.a/b", "versions", "latest"]
            )
            .unwrap()
            .as_str(),
            "https://r.example/base/v0.1/servers/io.github.a%2Fb/versions/latest"
        );
        assert_eq!(
            api_url("https://r.example", &[]).unwrap().as_str(),
            "https://r.example/v0.1/servers"
        );
    }
}
