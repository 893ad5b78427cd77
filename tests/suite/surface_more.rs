//! Tool annotations and titles, logging levels kept across restarts, and extra roots kept
//! per project, through the façade against real servers (server-everything, our fixture).

use std::time::Duration;

use harness9::harness::{RootsError, RootsStore, EXTRA_ROOTS_FILE};
use harness9::manager::ServerState;
use harness9::mcp::features::LogLevel;
use harness9::mcp::LogSource;
use harness9::Harness;
use serde_json::json;

use super::support::wait::{poll_until_async, tool_answer_contains, wait_for_tool, DEADLINE};
use super::support::{fixture_bin, Project};

fn open(p: &Project) -> Harness {
    p.harness()
        .with_roots_store(RootsStore::in_dir(p.data.path()))
}

async fn started(p: &Project) -> Harness {
    let h = open(p);
    h.start(None).await;
    h.manager().wait_settled(Duration::from_secs(30)).await;
    h
}

#[tokio::test]
async fn everything_tools_carry_titles_and_hints() {
    let Some(p) = Project::everything() else {
        return;
    };
    let h = started(&p).await;
    wait_for_tool(h.registry(), "ev", "get-roots-list").await;
    let tools = h.tools(Some("ev"));
    let roots = tools
        .iter()
        .find(|t| t.name == "mcp__ev__get-roots-list")
        .unwrap();
    assert_eq!(roots.display.title.as_deref(), Some("Get Roots List Tool"));
    assert!(roots.display.annotations.read_only());
    assert!(!roots.destructive());
    assert_eq!(
        roots.display.annotations.marks(),
        ["read-only", "idempotent"]
    );
    // Not read-only, and says it is not destructive.
    let gzip = tools
        .iter()
        .find(|t| t.name == "mcp__ev__gzip-file-as-resource")
        .unwrap();
    assert!(!gzip.destructive());
    assert_eq!(
        gzip.display.annotations.marks(),
        ["idempotent", "open-world"]
    );
    h.shutdown().await;
}

/// The fixture's tools carry no hints: by the spec's defaults they are destructive, and the
/// engine asks about them even where its default would allow them; the user's own rule wins.
#[tokio::test]
async fn tools_without_hints_are_destructive_and_asked_about() {
    use harness9::engine::permissions::{Permissions, Verdict};
    use harness9::engine::{PermissionOptions, ToolPermission};
    let p = Project::new(&json!({"mcpServers": {"fx": {"command": fixture_bin(), "args": []}}}));
    let h = started(&p).await;
    let echo = h
        .tools(Some("fx"))
        .into_iter()
        .find(|t| t.name == "mcp__fx__echo")
        .unwrap();
    assert!(echo.destructive());
    assert!(echo.display.annotations.marks().is_empty());
    let lenient = |allow: Vec<String>| {
        Permissions::new(
            PermissionOptions {
                default: ToolPermission::Allow,
                allow,
                ..PermissionOptions::default()
            },
            Default::default(),
        )
    };
    assert_eq!(lenient(Vec::new()).check(&echo), Verdict::Ask);
    assert_eq!(
        lenient(vec!["mcp__fx__echo".into()]).check(&echo),
        Verdict::Allow
    );
    h.shutdown().await;
}

#[tokio::test]
async fn log_level_is_remembered_and_set_again_after_a_restart() {
    let p = Project::new(&json!({"mcpServers": {"fx": {"command": fixture_bin(), "args": []}}}));
    let h = started(&p).await;
    let d = h.server_details("fx").unwrap();
    assert!(d.logging);
    assert_eq!(d.log_level, None);
    h.set_log_level("fx", LogLevel::Error).await.unwrap();
    assert_eq!(
        h.server_details("fx").unwrap().log_level,
        Some(LogLevel::Error)
    );
    let said = |h: &Harness| {
        h.server_log("fx", 500)
            .unwrap()
            .iter()
            .filter(|l| {
                l.source == LogSource::Server
                    && l.level == "error"
                    && l.text == "[fixture] logging level set to error"
            })
            .count()
    };
    poll_until_async("the server to say its level", DEADLINE, || said(&h) >= 1).await;
    h.restart_server("fx").await;
    h.manager().wait_settled(Duration::from_secs(20)).await;
    assert!(matches!(
        h.status().servers[0].state,
        ServerState::Connected { .. }
    ));
    // The new process got the level without the user choosing it again.
    poll_until_async("the new process to say its level", DEADLINE, || {
        said(&h) >= 2
    })
    .await;
    assert_eq!(
        h.server_details("fx").unwrap().log_level,
        Some(LogLevel::Error)
    );
    assert!(h
        .server_log("fx", 500)
        .unwrap()
        .iter()
        .any(|l| l.source == LogSource::Host
            && l.text == "logging level error set again after the start"));
    h.shutdown().await;
}

#[tokio::test]
async fn extra_roots_are_kept_per_project_and_servers_see_them() {
    let Some(p) = Project::everything() else {
        return;
    };
    let config_before = std::fs::read_to_string(p.path().join(".mcp.json")).unwrap();
    let extra = tempfile::tempdir().unwrap();
    let extra_path = std::fs::canonicalize(extra.path()).unwrap();

    let h = started(&p).await;
    wait_for_tool(h.registry(), "ev", "get-roots-list").await;
    assert!(h.extra_roots().is_empty());
    let now = h.add_extra_root(extra.path()).unwrap();
    assert_eq!(now, std::slice::from_ref(&extra_path));
    let extra_uri = h.roots()[1].uri.clone();
    tool_answer_contains(&h, "ev", "get-roots-list", &extra_uri).await;

    // What the user is told when an add makes no sense.
    let missing = p.path().join("nope");
    assert_eq!(
        h.add_extra_root(&missing).unwrap_err().to_string(),
        format!(
            "{} is not a folder; give the path of an existing folder",
            missing.display()
        )
    );
    assert!(matches!(
        h.add_extra_root(p.path()).unwrap_err(),
        RootsError::IsProject { .. }
    ));
    assert!(matches!(
        h.add_extra_root(extra.path()).unwrap_err(),
        RootsError::AlreadyThere { .. }
    ));
    h.shutdown().await;

    // Kept in the data folder (not in .mcp.json) and applied when the project opens again.
    assert!(p.data.path().join(EXTRA_ROOTS_FILE).exists());
    assert_eq!(
        std::fs::read_to_string(p.path().join(".mcp.json")).unwrap(),
        config_before
    );
    let h = started(&p).await;
    assert_eq!(h.extra_roots(), std::slice::from_ref(&extra_path));
    assert_eq!(h.roots()[1].uri, extra_uri);
    wait_for_tool(h.registry(), "ev", "get-roots-list").await;
    tool_answer_contains(&h, "ev", "get-roots-list", &extra_uri).await;
    assert!(h.remove_extra_root(&extra_path).unwrap().is_empty());
    assert_eq!(h.roots().len(), 1);
    h.shutdown().await;
    assert!(open(&p).extra_roots().is_empty());
}
