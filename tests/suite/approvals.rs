//! Approvals bound to everything that decides what runs, and secrets that never leave the
//! core: through the CLI on a real terminal, and at the manager for hot reload.

use std::time::Duration;

use harness9::manager::{ApprovalPolicy, ServerState};
use serde_json::{json, Value};

use super::support::http::Fixture;
use super::support::project::list_statuses;
use super::support::terminal::on_terminal;
use super::support::{fixture_bin, state_of, stderr, stdout, Project};

/// Passed to the servers only through `${H9_TEST_SECRET}` references.
const SECRET: &str = "h9-s3cr3t-7f3a91c0";

fn write_config(p: &Project, servers: Value) {
    std::fs::write(
        p.path().join(".mcp.json"),
        json!({ "mcpServers": servers }).to_string(),
    )
    .unwrap();
}

/// Runs `harness9 ARGS --project P` with the secret in its environment; stdout and stderr.
fn cli(p: &Project, args: &[&str]) -> String {
    let (out, err) = cli_split(p, args);
    format!("{out}{err}")
}

fn cli_split(p: &Project, args: &[&str]) -> (String, String) {
    let o = p
        .command(args)
        .env("H9_TEST_SECRET", SECRET)
        .output()
        .unwrap();
    (stdout(&o), stderr(&o))
}

/// `mcp list` on a real terminal, answering "always"; returns what it printed.
fn approve_on_terminal(p: &Project) -> String {
    let out = on_terminal(p, &["mcp", "list"], &[("H9_TEST_SECRET", SECRET)], b"a\n");
    String::from_utf8_lossy(&out).into_owned()
}

fn statuses(p: &Project) -> Vec<(String, String)> {
    let (out, err) = cli_split(p, &["mcp", "list", "--json"]);
    assert!(!out.is_empty(), "{err}");
    list_statuses(&out)
}

fn status(p: &Project, name: &str) -> String {
    statuses(p)
        .into_iter()
        .find(|(n, _)| n == name)
        .map(|(_, s)| s)
        .unwrap_or_default()
}

#[tokio::test]
async fn changed_env_cwd_or_headers_need_approval_again_in_the_cli() {
    let fx = fixture_bin();
    let http = Fixture::start().await;
    let url = http.url("/json");
    let p = Project::new(&json!({"mcpServers": {
        "fx": {"command": fx},
        "web": {"type": "http", "url": url}
    }}));
    std::fs::create_dir(p.path().join("server")).unwrap();
    let prompt = approve_on_terminal(&p);
    assert!(prompt.contains("wants to start 2 server(s)"), "{prompt}");
    assert_eq!(
        statuses(&p),
        vec![
            ("fx".to_string(), "connected".to_string()),
            ("web".to_string(), "connected".to_string())
        ]
    );

    let env = json!({"NODE_OPTIONS": "--require ./evil.js"});
    let env2 = json!({"NODE_OPTIONS": "--require ./evil.js", "LD_PRELOAD": "libnothing.so"});
    let env3 = json!({"NODE_OPTIONS": "--require ./evil.js", "LD_PRELOAD": "libnothing.so", "PATH": "/usr/bin:/bin"});
    let changes = [
        ("fx", json!({"command": fx, "env": env})),
        ("fx", json!({"command": fx, "env": env2})),
        ("fx", json!({"command": fx, "env": env3})),
        ("fx", json!({"command": fx, "env": env3, "cwd": "./server"})),
        (
            "web",
            json!({"type": "http", "url": url, "headers": {"X-Extra": "1"}}),
        ),
    ];
    let mut current = json!({"fx": {"command": fx}, "web": {"type": "http", "url": url}});
    for (name, entry) in changes {
        current[name] = entry.clone();
        write_config(&p, current.clone());
        assert_eq!(status(&p, name), "awaiting-approval", "after {entry}");
        let prompt = approve_on_terminal(&p);
        assert!(prompt.contains("wants to start 1 server(s)"), "{prompt}");
        assert!(prompt.contains(&format!("  {name} (")), "{prompt}");
        assert_eq!(status(&p, name), "connected", "approved {entry}");
    }
    // What the last prompts showed: names of variables and headers, the folder.
    write_config(
        &p,
        json!({"fx": {"command": fx, "env": env3, "cwd": "./server", "args": ["--pages", "2"]},
               "web": {"type": "http", "url": url, "headers": {"X-Extra": "2"}}}),
    );
    let prompt = approve_on_terminal(&p);
    assert!(
        prompt.contains(&format!("      command: {fx} --pages 2")),
        "{prompt}"
    );
    assert!(prompt.contains("      cwd: ./server"), "{prompt}");
    assert!(
        prompt.contains("      env: NODE_OPTIONS, LD_PRELOAD, PATH"),
        "{prompt}"
    );
    assert!(prompt.contains(&format!("      url: {url}")), "{prompt}");
    assert!(prompt.contains("      headers: X-Extra"), "{prompt}");
}

#[tokio::test]
async fn a_secret_given_through_a_variable_appears_in_no_output() {
    let fx = fixture_bin();
    let http = Fixture::start().await;
    let p = Project::new(&json!({"mcpServers": {
        "env": {"command": fx, "env": {"API_TOKEN": "${H9_TEST_SECRET}", "PLAIN": "${H9_TEST_SECRET}"}},
        "arg": {"command": "sh", "args": ["-c", format!("exec {fx}"), "--token=${H9_TEST_SECRET}"]},
        "web": {"type": "http", "url": format!("{}?api_key=${{H9_TEST_SECRET}}", http.url("/json")),
                "headers": {"Authorization": "Bearer ${H9_TEST_SECRET}", "X-Plain": "${H9_TEST_SECRET}"}},
        "down": {"type": "http", "url": "http://127.0.0.1:9/mcp?token=${H9_TEST_SECRET}"}
    }}));
    let prompt = approve_on_terminal(&p);
    assert!(prompt.contains("wants to start 4 server(s)"), "{prompt}");
    assert!(prompt.contains("--token=${H9_TEST_SECRET}"), "{prompt}");
    let outputs = [
        ("approval prompt", prompt),
        ("mcp list", cli(&p, &["mcp", "list"])),
        ("mcp list --json", cli(&p, &["mcp", "list", "--json"])),
        ("mcp tools --json", cli(&p, &["mcp", "tools", "--json"])),
    ];
    for (what, out) in &outputs {
        assert!(!out.contains(SECRET), "{what} shows the secret:\n{out}");
    }
    // The servers did get it (they connected with it), and the list says so.
    let list = &outputs[2].1;
    for name in ["env", "arg", "web"] {
        assert_eq!(status(&p, name), "connected", "{name}: {list}");
    }
    let journal = http.journal().await;
    assert!(
        journal
            .iter()
            .any(|r| r["headers"]["authorization"] == format!("Bearer {SECRET}")),
        "{journal:#?}"
    );
}

/// Hot reload: an approved server whose env changed is stopped and waits for approval
/// instead of restarting; an approval of the entry as it was before is refused.
#[tokio::test]
async fn reload_of_an_approved_server_with_changed_env_waits_for_approval() {
    let fx = fixture_bin();
    let p = Project::new(&json!({"mcpServers": {
        "kept": {"command": fx, "args": ["--pages", "2"]},
        "fx": {"command": fx}
    }}));
    let m = p.manager(ApprovalPolicy::Ask);
    m.reload(&p.config()).await;
    let fingerprints: Vec<(String, String)> = m
        .awaiting_approval()
        .iter()
        .map(|c| (c.name.clone(), c.fingerprint(p.path())))
        .collect();
    let outcome = m.approve(&fingerprints, true).await.unwrap();
    assert_eq!(outcome.approved, vec!["fx", "kept"]);
    m.wait_settled(Duration::from_secs(10)).await;
    assert!(matches!(state_of(&m, "fx"), ServerState::Connected { .. }));
    let kept = m.client("kept").unwrap();
    let old = fingerprints
        .iter()
        .find(|(n, _)| n == "fx")
        .unwrap()
        .clone();

    write_config(
        &p,
        json!({"kept": {"command": fx, "args": ["--pages", "2"]},
               "fx": {"command": fx, "env": {"LD_PRELOAD": "libnothing.so"}}}),
    );
    m.reload(&p.config()).await;
    assert_eq!(state_of(&m, "fx"), ServerState::AwaitingApproval);
    assert!(m.client("fx").is_none(), "the old process was not stopped");
    assert!(std::sync::Arc::ptr_eq(&m.client("kept").unwrap(), &kept));

    // The dialog still shows the old entry: its approval is refused, nothing starts.
    let outcome = m.approve(&[old], true).await.unwrap();
    assert_eq!(outcome.stale, vec!["fx"]);
    assert!(outcome.approved.is_empty());
    assert_eq!(state_of(&m, "fx"), ServerState::AwaitingApproval);

    // The entry as it is now is approved and starts.
    let now = m.awaiting_approval()[0].fingerprint(p.path());
    let outcome = m.approve(&[("fx".into(), now)], false).await.unwrap();
    assert_eq!(outcome.approved, vec!["fx"]);
    m.wait_settled(Duration::from_secs(10)).await;
    assert!(matches!(state_of(&m, "fx"), ServerState::Connected { .. }));

    // An approval for this run only does not carry over a change either.
    write_config(
        &p,
        json!({"kept": {"command": fx, "args": ["--pages", "2"]},
               "fx": {"command": fx, "env": {"LD_PRELOAD": "libnothing.so"}, "cwd": "."}}),
    );
    m.reload(&p.config()).await;
    // `cwd: "."` resolves to the project folder, the default: the same run, no new question.
    assert!(!matches!(state_of(&m, "fx"), ServerState::AwaitingApproval));
    write_config(
        &p,
        json!({"kept": {"command": fx, "args": ["--pages", "2"]},
               "fx": {"command": fx, "env": {"LD_PRELOAD": "libnothing.so", "X": "1"}}}),
    );
    m.reload(&p.config()).await;
    assert_eq!(state_of(&m, "fx"), ServerState::AwaitingApproval);
    m.shutdown().await;
}

/// The server log (what `/mcp` and the desktop log view show) and the status never carry
/// an expanded secret, even for a server that fails to connect.
#[tokio::test]
async fn the_server_log_and_status_carry_no_secret() {
    let fx = fixture_bin();
    let p = Project::new(&json!({"mcpServers": {}}));
    let text = json!({"mcpServers": {
        "arg": {"command": "sh", "args": ["-c", format!("exec {fx}"), "--token=${H9_TEST_SECRET}"],
                "env": {"API_TOKEN": "${H9_TEST_SECRET}"}},
        "down": {"type": "http", "url": "http://127.0.0.1:9/mcp?token=${H9_TEST_SECRET}",
                 "headers": {"Authorization": "Bearer ${H9_TEST_SECRET}"}},
        "bad": {"type": "http", "url": "http://[::1/mcp?token=${H9_TEST_SECRET}"}
    }})
    .to_string();
    let config = harness9::config::McpConfig::parse(&text, ".mcp.json", &|k| {
        (k == "H9_TEST_SECRET").then(|| SECRET.to_string())
    });
    let m = p.manager(ApprovalPolicy::AllowAll);
    m.reload(&config).await;
    m.wait_settled(Duration::from_secs(10)).await;
    assert!(matches!(state_of(&m, "arg"), ServerState::Connected { .. }));
    assert!(matches!(state_of(&m, "down"), ServerState::Failed { .. }));
    let snapshot = serde_json::to_string(m.snapshot().as_ref()).unwrap();
    assert!(!snapshot.contains(SECRET), "{snapshot}");
    for name in ["arg", "down", "bad"] {
        let log: Vec<String> = m
            .log(name)
            .unwrap()
            .tail(1000)
            .into_iter()
            .map(|l| l.text)
            .collect();
        assert!(!log.iter().any(|l| l.contains(SECRET)), "{name}: {log:#?}");
    }
    m.shutdown().await;
}
