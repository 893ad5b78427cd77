//! The manager: fail-soft concurrent start, status, approval, reload, restart, shutdown.

use std::sync::Arc;
use std::time::Duration;

use harness9::manager::{ApprovalPolicy, ServerState};
use serde_json::json;

use super::support::process::{processes_with_mark, state, unique_mark, wait_none_marked};
use super::support::wait::{connected, poll_until, DEADLINE};
use super::support::{fixture_bin, state_of, wait_until, Project};

#[tokio::test]
async fn one_failure_never_blocks_the_others() {
    let p = Project::new(&json!({"mcpServers": {
        "good": {"command": fixture_bin()},
        "mute": {"command": fixture_bin(), "args": ["--no-init"], "startupTimeoutSec": 1.5},
        "dies": {"command": fixture_bin(), "args": ["--exit-at-once", "missing API key: set FIXTURE_KEY"]},
        "nowhere": {"command": "h9-no-such-command-anywhere"},
        "broken": {"args": ["x"]},
        "off": {"command": fixture_bin(), "disabled": true},
        "unset": {"command": fixture_bin(), "env": {"K": "${H9_SURELY_UNSET_VAR}"}}
    }}));
    let m = p.manager(ApprovalPolicy::AllowAll);
    m.reload(&p.config()).await;
    // The good server connects while the mute one is still initializing.
    wait_until(&m, "good connected", |s| {
        s.servers
            .iter()
            .any(|x| x.name == "good" && connected(&x.state))
    })
    .await;
    assert_eq!(
        state_of(&m, "mute"),
        ServerState::Starting {
            phase: harness9::manager::StartPhase::Initializing
        }
    );
    m.wait_settled(Duration::from_secs(10)).await;
    let reason = |n: &str| match state_of(&m, n) {
        ServerState::Failed { reason, .. } => reason,
        other @ (ServerState::Starting { .. }
        | ServerState::Connected { .. }
        | ServerState::Disabled
        | ServerState::AwaitingApproval
        | ServerState::NeedsAuth { .. }
        | ServerState::Stopped) => panic!("{n}: {other:?}"),
    };
    assert_eq!(
        reason("mute"),
        "did not finish starting within 1.5 s (stuck initializing); raise \"startupTimeoutSec\" in .mcp.json if the server needs longer"
    );
    assert_eq!(
        reason("dies"),
        "the server exited with status 2; its last output on stderr:\nmissing API key: set FIXTURE_KEY"
    );
    assert!(
        reason("nowhere")
            .starts_with("command \"h9-no-such-command-anywhere\" not found (PATH searched: "),
        "{}",
        reason("nowhere")
    );
    assert_eq!(
        reason("broken"),
        "server \"broken\": has neither \"command\" (a local server) nor \"url\" (a remote server)"
    );
    assert_eq!(
        reason("unset"),
        "server \"unset\": env.K: environment variable ${H9_SURELY_UNSET_VAR} is not set; set it, or write ${H9_SURELY_UNSET_VAR:-default} in .mcp.json"
    );
    assert_eq!(state_of(&m, "off"), ServerState::Disabled);
    match state_of(&m, "good") {
        ServerState::Connected {
            tools,
            protocol_version,
            server_name,
            ..
        } => {
            assert_eq!(
                (tools, protocol_version.as_str(), server_name.as_str()),
                (10, "2025-11-25", "mcp-fixture")
            );
        }
        other @ (ServerState::Starting { .. }
        | ServerState::Failed { .. }
        | ServerState::Disabled
        | ServerState::AwaitingApproval
        | ServerState::NeedsAuth { .. }
        | ServerState::Stopped) => panic!("{other:?}"),
    }
    assert!(m.registry().get("mcp__good__echo").is_some());
    m.shutdown().await;
}

#[tokio::test]
async fn slow_subscribers_always_see_the_latest_state() {
    let p = Project::new(
        &json!({"mcpServers": {"a": {"command": fixture_bin()}, "b": {"command": fixture_bin()}}}),
    );
    let m = p.manager(ApprovalPolicy::AllowAll);
    let rx = m.subscribe();
    m.reload(&p.config()).await;
    // Never read until everything settled: the latest snapshot is there.
    m.wait_settled(Duration::from_secs(10)).await;
    let latest = rx.borrow().clone();
    assert!(
        latest.servers.iter().all(|s| connected(&s.state)),
        "{latest:?}"
    );
    m.shutdown().await;
}

#[tokio::test]
async fn list_changed_updates_the_registry_live() {
    let p = Project::new(&json!({"mcpServers": {"fx": {"command": fixture_bin()}}}));
    let m = p.manager(ApprovalPolicy::AllowAll);
    m.reload(&p.config()).await;
    m.wait_settled(Duration::from_secs(10)).await;
    let add = m.registry().get("mcp__fx__add_tool").unwrap();
    add.call(json!({"name": "fresh.tool"}), Default::default())
        .await
        .unwrap();
    // A tool added after the server was first seen is held back until accepted.
    wait_until(&m, "1 held tool", |s| s.servers[0].held_tools == 1).await;
    assert!(m.registry().get("mcp__fx__fresh_tool").is_none());
    let accepted = m.accept_tools("fx", &[]).await.unwrap();
    assert_eq!(accepted.len(), 1);
    wait_until(&m, "11 tools", |s| {
        matches!(s.servers[0].state, ServerState::Connected { tools: 11, .. })
    })
    .await;
    let fresh = m
        .registry()
        .get("mcp__fx__fresh_tool")
        .expect("new tool registered");
    let r = fresh.call(json!({}), Default::default()).await.unwrap();
    assert_eq!(r.to_text(), "called fresh.tool");
    m.shutdown().await;
}

#[tokio::test]
async fn messy_names_are_cleaned_truncated_and_deduplicated() {
    let p = Project::new(
        &json!({"mcpServers": {"my server": {"command": fixture_bin(), "args": ["--messy-names"]}}}),
    );
    let m = p.manager(ApprovalPolicy::AllowAll);
    m.reload(&p.config()).await;
    m.wait_settled(Duration::from_secs(10)).await;
    let tools = m.registry().server_tools("my server");
    let name_of = |raw: &str| {
        tools
            .iter()
            .find(|t| matches!(&t.spec().source, harness9::tools::ToolSource::Mcp { tool, .. } if tool == raw))
            .map(|t| t.spec().name.clone())
            .unwrap()
    };
    assert_eq!(name_of("echo"), "mcp__my_server__echo");
    let a = name_of("get weather");
    let b = name_of("get.weather");
    assert_ne!(a, b);
    for n in [&a, &b] {
        assert!(
            n.starts_with("mcp__my_server__get_weather_") && n.len() == 36,
            "{n}"
        );
    }
    assert_eq!(name_of("ünïcode/tool"), "mcp__my_server___n_code_tool");
    let long = name_of(&"very_long_tool_name_".repeat(5));
    assert_eq!(long.len(), 64);
    // Every name is valid for model APIs and unique.
    let mut all: Vec<String> = tools.iter().map(|t| t.spec().name.clone()).collect();
    assert!(all.iter().all(|n| n.len() <= 64
        && n.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')));
    all.sort();
    all.dedup();
    assert_eq!(all.len(), tools.len());
    // Calls go to the raw name.
    let r = m
        .registry()
        .get(&b)
        .unwrap()
        .call(json!({}), Default::default())
        .await
        .unwrap();
    assert_eq!(r.to_text(), "called get.weather");
    m.shutdown().await;
}

#[tokio::test]
async fn approval_is_asked_remembered_and_asked_again_on_change() {
    let p = Project::new(&json!({"mcpServers": {"fx": {"command": fixture_bin()}}}));
    let m = p.manager(ApprovalPolicy::Ask);
    m.reload(&p.config()).await;
    assert_eq!(state_of(&m, "fx"), ServerState::AwaitingApproval);
    assert_eq!(m.awaiting_approval().len(), 1);
    let fingerprint = m.awaiting_approval()[0].fingerprint(p.path());
    m.approve(&[("fx".into(), fingerprint)], true)
        .await
        .unwrap();
    m.wait_settled(Duration::from_secs(10)).await;
    assert!(connected(&state_of(&m, "fx")));
    m.shutdown().await;

    // Remembered for the next run.
    let m2 = p.manager(ApprovalPolicy::Ask);
    m2.reload(&p.config()).await;
    m2.wait_settled(Duration::from_secs(10)).await;
    assert!(connected(&state_of(&m2, "fx")));
    m2.shutdown().await;

    // A changed command line needs approval again.
    std::fs::write(
        p.path().join(".mcp.json"),
        json!({"mcpServers": {"fx": {"command": fixture_bin(), "args": ["--pages", "2"]}}})
            .to_string(),
    )
    .unwrap();
    let m3 = p.manager(ApprovalPolicy::Ask);
    m3.reload(&p.config()).await;
    assert_eq!(state_of(&m3, "fx"), ServerState::AwaitingApproval);
}

#[tokio::test]
async fn reload_restarts_only_changed_servers() {
    let p = Project::new(&json!({"mcpServers": {
        "keep": {"command": fixture_bin()},
        "change": {"command": fixture_bin()},
        "drop": {"command": fixture_bin()}
    }}));
    let m = p.manager(ApprovalPolicy::AllowAll);
    m.reload(&p.config()).await;
    m.wait_settled(Duration::from_secs(10)).await;
    let keep = m.client("keep").unwrap();
    let change = m.client("change").unwrap();
    std::fs::write(
        p.path().join(".mcp.json"),
        json!({"mcpServers": {
            "keep": {"command": fixture_bin()},
            "change": {"command": fixture_bin(), "args": ["--pages", "2"]},
            "new": {"command": fixture_bin()}
        }})
        .to_string(),
    )
    .unwrap();
    m.reload(&p.config()).await;
    m.wait_settled(Duration::from_secs(10)).await;
    assert!(
        Arc::ptr_eq(&keep, &m.client("keep").unwrap()),
        "unchanged server kept running"
    );
    assert!(
        !Arc::ptr_eq(&change, &m.client("change").unwrap()),
        "changed server restarted"
    );
    assert!(
        change.closed_reason().is_some(),
        "the old process was stopped"
    );
    let names: Vec<String> = m
        .snapshot()
        .servers
        .iter()
        .map(|s| s.name.clone())
        .collect();
    assert_eq!(names, vec!["change", "keep", "new"]);
    assert!(m.registry().get("mcp__drop__echo").is_none());
    assert!(m.registry().get("mcp__new__echo").is_some());

    // A broken file keeps the running servers and shows the error.
    std::fs::write(p.path().join(".mcp.json"), "{\"mcpServers\": {").unwrap();
    m.reload(&p.config()).await;
    let snap = m.snapshot();
    assert!(
        snap.config_error
            .as_deref()
            .unwrap()
            .contains("invalid JSON"),
        "{snap:?}"
    );
    assert!(Arc::ptr_eq(&keep, &m.client("keep").unwrap()));
    m.shutdown().await;
}

#[tokio::test]
async fn restart_and_stop() {
    let p = Project::new(&json!({"mcpServers": {"fx": {"command": fixture_bin()}}}));
    let m = p.manager(ApprovalPolicy::AllowAll);
    m.reload(&p.config()).await;
    m.wait_settled(Duration::from_secs(10)).await;
    let first = m.client("fx").unwrap();
    m.restart("fx").await;
    m.wait_settled(Duration::from_secs(10)).await;
    assert!(connected(&state_of(&m, "fx")));
    assert!(!Arc::ptr_eq(&first, &m.client("fx").unwrap()));
    m.stop("fx").await;
    assert_eq!(state_of(&m, "fx"), ServerState::Stopped);
    assert!(m.registry().is_empty());
}

#[tokio::test]
async fn a_crashed_server_shows_failed_and_loses_its_tools() {
    let p = Project::new(&json!({"mcpServers": {"fx": {"command": fixture_bin()}}}));
    let m = p.manager(ApprovalPolicy::AllowAll);
    m.reload(&p.config()).await;
    m.wait_settled(Duration::from_secs(10)).await;
    let crash = m.registry().get("mcp__fx__crash").unwrap();
    assert!(crash.call(json!({}), Default::default()).await.is_err());
    wait_until(&m, "failed", |s| {
        matches!(s.servers[0].state, ServerState::Failed { .. })
    })
    .await;
    match state_of(&m, "fx") {
        ServerState::Failed {
            reason,
            stderr_tail,
        } => {
            assert!(
                reason.starts_with("the server exited with status 3"),
                "{reason}"
            );
            assert_eq!(stderr_tail, "fixture: crashing on purpose");
        }
        other @ (ServerState::Starting { .. }
        | ServerState::Connected { .. }
        | ServerState::Disabled
        | ServerState::AwaitingApproval
        | ServerState::NeedsAuth { .. }
        | ServerState::Stopped) => panic!("{other:?}"),
    }
    assert!(m.registry().is_empty());
}

#[tokio::test]
async fn shutdown_leaves_no_child_process() {
    let mark = unique_mark();
    let p = Project::new(&json!({"mcpServers": {
        "a": {"command": fixture_bin(), "env": {"H9_TEST_MARK": mark}},
        "b": {"command": fixture_bin(), "env": {"H9_TEST_MARK": mark}},
        // Stuck in a 10 s initialize delay, so closing stdin is not enough.
        "slow": {"command": fixture_bin(), "env": {"H9_TEST_MARK": mark, "REFSERVER_INIT_DELAY_MS": "10000"}},
        // A server that leaves a grandchild behind in its process group.
        "tree": {"command": "sh", "args": ["-c", format!("sleep 30 & exec {}", fixture_bin())], "env": {"H9_TEST_MARK": mark}}
    }}));
    let m = p.manager(ApprovalPolicy::AllowAll);
    m.reload(&p.config()).await;
    wait_until(&m, "a and b connected", |s| {
        s.servers.iter().filter(|x| connected(&x.state)).count() >= 2
    })
    .await;
    assert!(
        processes_with_mark(&mark).len() >= 4,
        "{:?}",
        processes_with_mark(&mark)
    );
    m.shutdown().await;
    let left = processes_with_mark(&mark);
    assert!(left.is_empty(), "processes left after shutdown: {left:?}");
}

#[tokio::test]
async fn servers_die_with_a_killed_harness9() {
    let mark = unique_mark();
    let p = Project::new(&json!({"mcpServers": {
        "slow": {"command": fixture_bin(), "env": {"H9_TEST_MARK": mark, "REFSERVER_INIT_DELAY_MS": "20000"}}
    }}));
    let mut child = p
        .command(&["mcp", "list", "--yes"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    poll_until("the server to start", DEADLINE, || {
        !processes_with_mark(&mark).is_empty()
    });
    child.kill().unwrap(); // SIGKILL: no chance to clean up
    child.wait().unwrap();
    wait_none_marked(&mark, DEADLINE);
}

#[tokio::test]
async fn manual_calls_are_numbered_and_cancelled_by_the_core() {
    let p = Project::new(&json!({"mcpServers": {"fx": {"command": fixture_bin()}}}));
    let h = p.started().await;
    // The server would answer in ten minutes: only the cancel ends the call.
    let slow = h.start_call("fx", "sleep", json!({"ms": 600_000}));
    let other = h.start_call("fx", "sleep", json!({"ms": 1}));
    assert_ne!(slow.id, other.id);
    assert!(other.outcome().await.is_ok());
    assert!(h.cancel_call(slow.id));
    assert!(!h.cancel_call(slow.id), "a call is cancelled once");
    let id = slow.id;
    let outcome = tokio::time::timeout(DEADLINE, slow.outcome())
        .await
        .expect("the cancelled call ends");
    assert!(matches!(
        outcome,
        Err(harness9::harness::CallError::Cancelled)
    ));
    assert!(!h.cancel_call(id));
    // A call that cannot start says why, with a number all the same.
    let missing = h.start_call("nope", "sleep", json!({}));
    assert!(missing.id > id);
    let e = missing.outcome().await.unwrap_err();
    assert!(e.to_string().starts_with("no server named \"nope\""), "{e}");
    // Shutting down ends the calls still running.
    let hanging = h.start_call("fx", "sleep", json!({"ms": 30_000}));
    h.shutdown().await;
    assert!(matches!(
        hanging.outcome().await,
        Err(harness9::harness::CallError::Cancelled)
    ));
}

#[tokio::test]
async fn restart_and_stop_soon_return_at_once_and_report_through_status() {
    // A server that lingers after the end of its input takes its time to stop.
    let mark = unique_mark();
    let p = Project::new(&json!({"mcpServers": {"slow": {
        "command": "sh", "args": ["-c", "\"$0\"; sleep 30", fixture_bin()],
        "env": {"H9_TEST_MARK": mark}
    }}}));
    let h = p.started().await;
    let mut status = h.subscribe_status();
    let old = processes_with_mark(&mark);
    assert!(!old.is_empty());
    h.restart_server_soon("slow");
    // It returned with the old server still there: it did not wait for it to stop.
    assert!(
        old.iter().any(|&pid| state(pid).is_some_and(|s| s != 'Z')),
        "the old server is gone: the restart waited for it"
    );
    // The status goes through starting and back to connected.
    let mut seen_starting = false;
    tokio::time::timeout(Duration::from_secs(20), async {
        loop {
            status.changed().await.unwrap();
            let st = status.borrow_and_update().clone();
            let word = st.servers[0].state.word();
            seen_starting |= word == "starting";
            if seen_starting && word == "connected" {
                return;
            }
        }
    })
    .await
    .expect("restarted");
    h.stop_server_soon("slow");
    h.manager().wait_settled(Duration::from_secs(20)).await;
    tokio::time::timeout(Duration::from_secs(20), async {
        while h.status().servers[0].state.word() != "stopped" {
            status.changed().await.unwrap();
        }
    })
    .await
    .expect("stopped");
    h.shutdown().await;
}
