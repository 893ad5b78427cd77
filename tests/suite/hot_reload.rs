//! What long-running front ends add to the manager: hot reload of `.mcp.json` (the config
//! watcher) and the automatic restart of crashed stdio servers with backoff.

use std::sync::Arc;
use std::time::Duration;

use harness9::manager::{ApprovalPolicy, RestartPolicy, ServerState};
use harness9::watch::{ConfigWatcher, RELOAD_DEBOUNCE};
use serde_json::json;

use super::support::process::{processes_with_mark, unique_mark};
use super::support::wait::{connected, holds_for};
use super::support::{fixture_bin, state_of, wait_until, Project};

fn fast_restarts(max_attempts: u32) -> Option<RestartPolicy> {
    Some(RestartPolicy {
        max_attempts,
        first_delay: Duration::from_millis(50),
        stable_after: Duration::from_secs(60),
    })
}

#[tokio::test]
async fn a_crashed_stdio_server_is_restarted_and_its_tools_come_back() {
    let p = Project::new(&json!({"mcpServers": {"fx": {"command": fixture_bin()}}}));
    let m = p.manager(ApprovalPolicy::AllowAll);
    m.set_restart_policy(fast_restarts(3));
    m.reload(&p.config()).await;
    m.wait_settled(Duration::from_secs(10)).await;
    let first = m.client("fx").unwrap();
    let crash = m.registry().get("mcp__fx__crash").unwrap();
    assert!(crash.call(json!({}), Default::default()).await.is_err());
    // It comes back by itself, with a new process, and the registry has its tools again.
    wait_until(&m, "fx restarted", |s| {
        s.servers[0]
            .restart
            .as_ref()
            .is_some_and(|r| r.attempt == 1)
            && connected(&s.servers[0].state)
    })
    .await;
    assert!(!Arc::ptr_eq(&first, &m.client("fx").unwrap()));
    assert!(m.registry().get("mcp__fx__crash").is_some());
    let restart = m.snapshot().servers[0].restart.clone().unwrap();
    assert_eq!(
        (restart.max_attempts, restart.retry_in_ms, restart.gave_up),
        (3, None, false)
    );
    let log: Vec<String> = m
        .log("fx")
        .unwrap()
        .tail(100)
        .into_iter()
        .map(|l| l.text)
        .collect();
    assert!(
        log.iter()
            .any(|l| l == "the server crashed; restarting in 50 ms (attempt 1 of 3)"),
        "{log:?}"
    );
}

#[tokio::test]
async fn restarts_stop_after_the_last_attempt_and_a_manual_restart_resets_them() {
    let p = Project::new(&json!({"mcpServers": {"fx": {"command": fixture_bin()}}}));
    let m = p.manager(ApprovalPolicy::AllowAll);
    m.set_restart_policy(fast_restarts(1));
    m.reload(&p.config()).await;
    for round in 0..2 {
        wait_until(&m, "connected", |s| connected(&s.servers[0].state)).await;
        let crash = m.registry().get("mcp__fx__crash").unwrap();
        let _ = crash.call(json!({}), Default::default()).await;
        if round == 0 {
            wait_until(&m, "restarted once", |s| {
                s.servers[0]
                    .restart
                    .as_ref()
                    .is_some_and(|r| r.attempt == 1 && r.retry_in_ms.is_none())
                    && connected(&s.servers[0].state)
            })
            .await;
        }
    }
    wait_until(&m, "gave up", |s| {
        s.servers[0].restart.as_ref().is_some_and(|r| r.gave_up)
            && matches!(s.servers[0].state, ServerState::Failed { .. })
    })
    .await;
    // No restart follows (it would come after 50 ms).
    holds_for("failed, without tools", Duration::from_millis(300), || {
        matches!(state_of(&m, "fx"), ServerState::Failed { .. }) && m.registry().is_empty()
    })
    .await;
    let log: Vec<String> = m
        .log("fx")
        .unwrap()
        .tail(100)
        .into_iter()
        .map(|l| l.text)
        .collect();
    assert!(
        log.iter()
            .any(|l| l
                == "the server crashed 2 times in a row; not restarting it again (use Restart)"),
        "{log:?}"
    );
    m.restart("fx").await;
    assert_eq!(m.snapshot().servers[0].restart, None);
    wait_until(&m, "connected again", |s| connected(&s.servers[0].state)).await;
}

#[tokio::test]
async fn a_stopped_server_is_not_restarted() {
    let p = Project::new(&json!({"mcpServers": {"fx": {"command": fixture_bin()}}}));
    let m = p.manager(ApprovalPolicy::AllowAll);
    m.set_restart_policy(fast_restarts(3));
    m.reload(&p.config()).await;
    m.wait_settled(Duration::from_secs(10)).await;
    m.stop("fx").await;
    // No restart follows (it would come after 50 ms).
    holds_for(
        "stopped, no restart planned",
        Duration::from_millis(300),
        || state_of(&m, "fx") == ServerState::Stopped && m.snapshot().servers[0].restart.is_none(),
    )
    .await;
}

#[tokio::test]
async fn edits_of_the_file_reload_only_the_changed_servers() {
    let p = Project::new(&json!({"mcpServers": {
        "a": {"command": fixture_bin()},
        "b": {"command": fixture_bin()}
    }}));
    let m = p.manager(ApprovalPolicy::AllowAll);
    m.reload(&p.config()).await;
    m.wait_settled(Duration::from_secs(10)).await;
    let watcher = ConfigWatcher::start_files(m.clone(), p.scope_files()).unwrap();
    let mut changes = watcher.subscribe();
    let a = m.client("a").unwrap();
    let b = m.client("b").unwrap();

    // An editor-style save: write a temp file and rename it over .mcp.json.
    let text = serde_json::to_string_pretty(&json!({"mcpServers": {
        "a": {"command": fixture_bin()},
        "b": {"command": fixture_bin(), "env": {"CHANGED": "1"}},
        "c": {"command": fixture_bin(), "disabled": true}
    }}))
    .unwrap();
    let tmp = p.path().join(".mcp.json.tmp-edit");
    std::fs::write(&tmp, &text).unwrap();
    std::fs::rename(&tmp, p.path().join(".mcp.json")).unwrap();

    tokio::time::timeout(Duration::from_secs(10), changes.changed())
        .await
        .expect("the watcher noticed the edit")
        .unwrap();
    assert_eq!(changes.borrow().revision, 1);
    assert_eq!(
        changes.borrow().hash,
        harness9::inspect::content_hash(&text)
    );
    wait_until(&m, "b back and c disabled", |s| {
        s.servers.len() == 3
            && s.servers.iter().filter(|x| connected(&x.state)).count() == 2
            && s.servers[2].state == ServerState::Disabled
    })
    .await;
    assert!(Arc::ptr_eq(&a, &m.client("a").unwrap()), "a was restarted");
    assert!(
        !Arc::ptr_eq(&b, &m.client("b").unwrap()),
        "b was not restarted"
    );

    // Touching the file without changing it reloads nothing; a burst of writes is one reload.
    std::fs::write(p.path().join(".mcp.json"), &text).unwrap();
    for i in 0..5 {
        let t = text.replace("\"CHANGED\": \"1\"", &format!("\"CHANGED\": \"{}\"", i + 2));
        std::fs::write(p.path().join(".mcp.json"), t).unwrap();
    }
    tokio::time::timeout(Duration::from_secs(10), changes.changed())
        .await
        .expect("the watcher noticed the burst")
        .unwrap();
    // No second reload follows (it would come one debounce after the first).
    holds_for("one reload for the burst", RELOAD_DEBOUNCE * 3, || {
        changes.borrow().revision == 2
    })
    .await;

    // Invalid JSON keeps the running servers and reports the error.
    std::fs::write(p.path().join(".mcp.json"), "{ nope").unwrap();
    tokio::time::timeout(Duration::from_secs(10), changes.changed())
        .await
        .expect("the watcher noticed the broken file")
        .unwrap();
    wait_until(&m, "config error shown", |s| s.config_error.is_some()).await;
    assert!(connected(&state_of(&m, "a")));
    drop(watcher);
    m.shutdown().await;
}

/// A reload never waits for old servers to exit: one slow to stop (it ignores SIGTERM and
/// lingers after its stdin closes) is removed and another changed at once; the changed one
/// comes back by itself once its old process has gone.
#[tokio::test]
async fn a_reload_returns_before_slow_servers_have_stopped() {
    let script = "trap '' TERM; \"$0\"; sleep 30";
    let slow = json!({"command": "sh", "args": ["-c", script, fixture_bin()]});
    let mark = unique_mark();
    let mut gone = slow.clone();
    gone["env"] = json!({"H9_TEST_MARK": mark});
    let p = Project::new(&json!({"mcpServers": {"gone": gone, "changed": slow.clone()}}));
    let m = p.manager(ApprovalPolicy::AllowAll);
    m.reload(&p.config()).await;
    m.wait_settled(Duration::from_secs(10)).await;
    assert!(connected(&state_of(&m, "changed")));
    let mut changed = slow.clone();
    changed["env"] = json!({"CHANGED": "1"});
    std::fs::write(
        p.path().join(".mcp.json"),
        json!({"mcpServers": {"changed": changed}}).to_string(),
    )
    .unwrap();
    m.reload(&p.config()).await;
    assert!(
        !processes_with_mark(&mark).is_empty(),
        "the reload waited for the removed server's processes to end"
    );
    // The status says so at once: one server left, starting again; its old tools are gone.
    let s = m.snapshot();
    assert_eq!(s.servers.len(), 1);
    assert!(
        matches!(s.servers[0].state, ServerState::Starting { .. }),
        "{:?}",
        s.servers[0].state
    );
    assert!(m.registry().get("mcp__gone__echo").is_none());
    wait_until(&m, "changed connected again", |s| {
        connected(&s.servers[0].state)
    })
    .await;
    assert!(m.registry().get("mcp__changed__echo").is_some());
}

#[tokio::test]
async fn the_user_and_local_files_are_watched_and_need_no_approval() {
    let p = Project::new(&json!({"mcpServers": {"team": {"command": fixture_bin()}}}));
    let files = p.scope_files();
    let m = p.manager(ApprovalPolicy::Ask);
    m.reload(&harness9::config::McpConfig::load_files(&files))
        .await;
    m.wait_settled(Duration::from_secs(10)).await;
    assert_eq!(state_of(&m, "team"), ServerState::AwaitingApproval);
    let watcher = ConfigWatcher::start_files(m.clone(), files.clone()).unwrap();
    let mut changes = watcher.subscribe();

    // The user's folder may not exist before the watch; a file written there later counts.
    let user = json!({"mcpServers": {"mine": {"command": fixture_bin()}}});
    harness9::config::write_atomically(&files.user, user.to_string().as_bytes()).unwrap();
    tokio::time::timeout(Duration::from_secs(10), changes.changed())
        .await
        .expect("the watcher noticed the user's file")
        .unwrap();
    wait_until(&m, "mine connected", |s| {
        s.servers
            .iter()
            .any(|x| x.name == "mine" && connected(&x.state))
    })
    .await;

    // A local entry overrides the project's and starts without approval.
    let local =
        json!({"mcpServers": {"team": {"command": fixture_bin(), "args": ["--pages", "1"]}}});
    harness9::config::write_atomically(&files.local, local.to_string().as_bytes()).unwrap();
    wait_until(&m, "the local team connected", |s| {
        s.servers
            .iter()
            .any(|x| x.name == "team" && connected(&x.state))
    })
    .await;
    let scopes: Vec<(String, harness9::config::Scope)> = m
        .snapshot()
        .servers
        .iter()
        .map(|s| (s.name.clone(), s.scope))
        .collect();
    assert_eq!(
        scopes,
        vec![
            ("mine".to_string(), harness9::config::Scope::User),
            ("team".to_string(), harness9::config::Scope::Local)
        ]
    );
    drop(watcher);
    m.shutdown().await;
}
