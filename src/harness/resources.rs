//! The façade's resources for the engine: attachments and the built-in resource tools read
//! through the manager, and the picker list the front ends show after `@`.

use std::sync::Arc;

use futures::future::BoxFuture;
use futures::FutureExt;

use super::{Harness, FEATURES_WAIT};
use crate::engine::resources::ResourceAccess;
use crate::host::catalog::{Catalog, FeatureError, ServerResource, ServerTemplate};
use crate::manager::Manager;
use crate::mcp::features::ReadResourceResult;

/// Most picks [`Harness::resource_picks`] returns.
pub const MAX_PICKS: usize = 50;

/// The catalog of the manager's servers as the engine's window on resources.
struct CatalogResources {
    catalog: Catalog,
    manager: Manager,
}

impl ResourceAccess for CatalogResources {
    fn has_resources(&self) -> bool {
        self.catalog.has_resources(&self.manager)
    }

    fn list(
        &self,
        server: Option<String>,
    ) -> BoxFuture<'_, Result<crate::engine::resources::Listing, FeatureError>> {
        async move {
            let all = self
                .catalog
                .features(&self.manager, server.as_deref(), FEATURES_WAIT)
                .await?;
            let mut resources = Vec::new();
            let mut templates = Vec::new();
            for (s, f) in &all {
                resources.extend(f.resources.iter().map(|r| ServerResource {
                    server: s.clone(),
                    resource: r.clone(),
                }));
                templates.extend(f.templates.iter().map(|t| ServerTemplate {
                    server: s.clone(),
                    template: t.clone(),
                }));
            }
            Ok((resources, templates))
        }
        .boxed()
    }

    fn read(
        &self,
        server: String,
        uri: String,
    ) -> BoxFuture<'_, Result<ReadResourceResult, FeatureError>> {
        async move {
            self.catalog
                .read_resource(&self.manager, &server, &uri)
                .await
        }
        .boxed()
    }
}

impl Harness {
    /// How an engine made outside [`Harness::engine`] reads this project's resources.
    pub fn resource_access(&self) -> Arc<dyn ResourceAccess> {
        Arc::new(CatalogResources {
            catalog: self.catalog.clone(),
            manager: self.manager.clone(),
        })
    }

    /// The resources listed so far, without waiting for servers still being listed.
    pub async fn resources_now(&self) -> Vec<ServerResource> {
        let all = self
            .catalog
            .features(&self.manager, None, std::time::Duration::ZERO)
            .await
            .unwrap_or_default();
        all.iter()
            .flat_map(|(s, f)| {
                f.resources.iter().map(|r| ServerResource {
                    server: s.clone(),
                    resource: r.clone(),
                })
            })
            .collect()
    }

    /// The resources an `@` picker offers for what the user typed after `@`: every
    /// connected server's resources whose server, name, title or URI match `query`
    /// fuzzily (its characters in order), best first, at most [`MAX_PICKS`].
    pub async fn resource_picks(&self, query: &str) -> Vec<ServerResource> {
        let all = self.resources(None).await.unwrap_or_default();
        pick_resources(all, query, MAX_PICKS)
    }
}

/// Ranks resources by how well `query` matches them (see [`fuzzy_score`]).
pub fn pick_resources(all: Vec<ServerResource>, query: &str, limit: usize) -> Vec<ServerResource> {
    let mut scored: Vec<(i64, usize, ServerResource)> = all
        .into_iter()
        .enumerate()
        .filter_map(|(i, r)| {
            let name = r.resource.title.as_deref().unwrap_or(&r.resource.name);
            let hay = format!("{} {} {}", r.server, name, r.resource.uri);
            fuzzy_score(&hay, query).map(|s| (s, i, r))
        })
        .collect();
    scored.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    scored.into_iter().take(limit).map(|(_, _, r)| r).collect()
}

/// A fuzzy match of `query` in `hay` (case-insensitive; every query character in order):
/// `None` when it does not match, else a score that favours consecutive runs and an early
/// start.
pub fn fuzzy_score(hay: &str, query: &str) -> Option<i64> {
    let hay: Vec<char> = hay.chars().flat_map(char::to_lowercase).collect();
    let mut score = 0i64;
    let mut at = 0usize;
    let mut last: Option<usize> = None;
    for q in query.chars().flat_map(char::to_lowercase) {
        if q.is_whitespace() {
            continue;
        }
        let found = hay[at..].iter().position(|c| *c == q)? + at;
        score += match last {
            Some(l) if l + 1 == found => 8,
            _ => 1,
        };
        if last.is_none() {
            score -= (found as i64).min(20);
        }
        last = Some(found);
        at = found + 1;
    }
    Some(score)
}

#[cfg(test)]
mod tests {
    use super::fuzzy_score;

    #[test]
    fn file_names_are_safe() {
        assert_eq!(
            super::file_name("demo://resource/static/document/1.png"),
            "1.png"
        );
        assert_eq!(super::file_name("file:///etc/../.hidden"), "hidden");
        assert_eq!(super::file_name("x://a/b c?q=1"), "b_c");
        assert_eq!(super::file_name("demo://"), "resource");
    }

    #[test]
    fn fuzzy_favours_runs() {
        assert!(fuzzy_score(
            "everything Resource 1 demo://resource/static/document/1",
            "res1"
        )
        .is_some());
        assert_eq!(fuzzy_score("abc", "abd"), None);
        assert!(fuzzy_score("readme", "read") > fuzzy_score("r-e-a-d", "read"));
    }
}

/// Why a resource could not be saved to a file.
#[derive(Debug, thiserror::Error)]
pub enum SaveResourceError {
    #[error(transparent)]
    Read(#[from] crate::host::catalog::FeatureError),
    #[error("the server returned no content for {uri}")]
    Empty { uri: String },
    #[error("the server sent {uri} with invalid base64 data; nothing was saved")]
    BadData { uri: String },
    #[error("cannot write {path}: {error}; check that the folder exists and is writable")]
    Io { path: String, error: std::io::Error },
}

impl SaveResourceError {
    /// A stable kebab-case code for front ends and `--json` output (never changes once
    /// released).
    pub fn code(&self) -> &'static str {
        match self {
            SaveResourceError::Read(e) => e.code(),
            SaveResourceError::Empty { .. } => "empty-resource",
            SaveResourceError::BadData { .. } => "invalid-resource-data",
            SaveResourceError::Io { .. } => "write-failed",
        }
    }
}

impl Harness {
    /// Reads a resource and writes its first content (binary decoded) into `folder`, under
    /// the last segment of its URI (made unique). Returns the file written.
    pub async fn save_resource(
        &self,
        server: &str,
        uri: &str,
        folder: &std::path::Path,
    ) -> Result<std::path::PathBuf, SaveResourceError> {
        use base64::Engine as _;
        let read = self.read_resource(server, uri).await?;
        let Some(c) = read.contents.first() else {
            return Err(SaveResourceError::Empty { uri: uri.into() });
        };
        let bytes = match (&c.text, &c.blob) {
            (Some(t), _) => t.as_bytes().to_vec(),
            (None, Some(b)) => {
                let clean: String = b.chars().filter(|c| !c.is_whitespace()).collect();
                base64::engine::general_purpose::STANDARD_NO_PAD
                    .decode(clean.trim_end_matches('='))
                    .map_err(|_| SaveResourceError::BadData { uri: uri.into() })?
            }
            (None, None) => return Err(SaveResourceError::Empty { uri: uri.into() }),
        };
        let path = unique_path(folder, &file_name(&c.uri));
        let at = path.clone();
        let written = tokio::task::spawn_blocking(move || std::fs::write(&at, bytes))
            .await
            .map_err(std::io::Error::other)
            .and_then(|r| r);
        written.map_err(|error| SaveResourceError::Io {
            path: path.display().to_string(),
            error,
        })?;
        Ok(path)
    }
}

/// A safe file name from a URI: its last path segment, characters outside
/// `[A-Za-z0-9._-]` replaced, never empty, never hidden.
pub fn file_name(uri: &str) -> String {
    let tail = uri
        .split(['?', '#'])
        .next()
        .unwrap_or("")
        .trim_end_matches('/')
        .rsplit(['/', ':'])
        .next()
        .unwrap_or("");
    let clean: String = tail
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "._-".contains(c) {
                c
            } else {
                '_'
            }
        })
        .take(100)
        .collect();
    let clean = clean.trim_start_matches('.').to_string();
    if clean.is_empty() {
        "resource".into()
    } else {
        clean
    }
}

fn unique_path(folder: &std::path::Path, name: &str) -> std::path::PathBuf {
    let first = folder.join(name);
    if !first.exists() {
        return first;
    }
    let (stem, ext) = match name.rsplit_once('.') {
        Some((s, e)) if !s.is_empty() => (s, format!(".{e}")),
        _ => (name, String::new()),
    };
    (1..)
        .map(|i| folder.join(format!("{stem} ({i}){ext}")))
        .find(|p| !p.exists())
        .expect("some name is free")
}
