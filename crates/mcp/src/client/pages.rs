//! Listings that follow `nextCursor`: the one loop every `*/list` request goes through
//! (tools, resources, resource templates, prompts, and the re-listing of tools after a
//! header mismatch). A cursor the server already gave, or more pages than the listing's
//! limit, ends the listing with an error: a server that loops is never asked forever.

use std::collections::HashSet;
use std::future::Future;

use serde::de::DeserializeOwned;
use serde_json::json;

use super::{ClientError, Params, ReplyBody};

/// Every item of `method`'s listing, page after page, in the server's order. `fetch` sends
/// one request with the given params (none for the first page, then `{"cursor": …}`);
/// `split` takes a page apart into its items and the next page's cursor.
pub(super) async fn all_pages<P, T, F, Fut>(
    method: &str,
    max_pages: usize,
    mut fetch: F,
    split: impl Fn(P) -> (Vec<T>, Option<String>),
) -> Result<Vec<T>, ClientError>
where
    P: DeserializeOwned,
    F: FnMut(Params<'static>) -> Fut,
    Fut: Future<Output = Result<ReplyBody, ClientError>>,
{
    let mut items = Vec::new();
    let mut seen = HashSet::new();
    let mut cursor: Option<String> = None;
    for _ in 0..max_pages {
        let params = match &cursor {
            Some(c) => Params::Value(json!({ "cursor": c })),
            None => Params::None,
        };
        let body = fetch(params).await?;
        let (page, next) = split(body.parse(method)?);
        drop(body);
        if items.is_empty() {
            items = page; // one page (the usual case): no copy
        } else {
            items.extend(page);
        }
        match next {
            None => return Ok(items),
            Some(c) if !seen.insert(c.clone()) => {
                return Err(ClientError::RepeatedCursor {
                    method: method.into(),
                    cursor: c,
                })
            }
            Some(c) => cursor = Some(c),
        }
    }
    Err(ClientError::Invalid {
        method: method.into(),
        detail: format!("more than {max_pages} pages"),
    })
}
