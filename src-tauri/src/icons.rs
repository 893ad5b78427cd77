//! Server and tool icons cross to the web view only as `data:` URLs that the backend
//! fetched and checked ([`harness9::icons`]): the window never loads an image a server
//! names, so its CSP allows no network image source.

use std::sync::LazyLock;

use harness9::harness::ToolEntry;
use harness9::host::catalog::ServerDetails;
use harness9::icons::IconCache;

/// One cache for the whole app: an icon is fetched once per run.
static ICONS: LazyLock<IconCache> = LazyLock::new(IconCache::default);

/// A tool listing with every icon replaced by its checked `data:` URL (refused ones left out).
pub async fn tool_entries(mut entries: Vec<ToolEntry>) -> Vec<ToolEntry> {
    let lists = entries
        .iter_mut()
        .map(|e| std::mem::take(&mut e.icons))
        .collect();
    let checked = ICONS.as_data_many(lists).await;
    for (entry, icons) in entries.iter_mut().zip(checked) {
        entry.icons = icons;
    }
    entries
}

/// A server's details with its icons as checked `data:` URLs.
pub async fn details(details: Option<ServerDetails>) -> Option<ServerDetails> {
    let mut details = details?;
    details.icons = ICONS.as_data(&details.icons).await;
    Some(details)
}
