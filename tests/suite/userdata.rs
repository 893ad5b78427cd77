//! The per-project user data shared by every harness9 process ([`harness9::userdata`]):
//! concurrent writers lose nothing, a change made by one process is honoured by another at
//! once, pins cover annotations, permission rules belong to one server, and a planted
//! symlink is never written through.

use std::sync::Arc;
use std::time::Duration;

use harness9::engine::sampling::SamplingSource;
use harness9::host::asks::{AskAnswer, AskKind, SamplingChoice};
use harness9::trust::sampling::SamplingGrants;
use serde_json::{json, Value};

use super::support::client::spawn_call;
use super::support::process::output_within;
use super::support::provider_stub::{Reply, Stub, Wire};
use super::support::turns::exec;
use super::support::wait::next_ask;
use super::support::{fixture_bin, Project};

/// Set in a child process of this test binary: `DIR|PREFIX`, where it makes its changes.
const WRITER_ENV: &str = "H9_USERDATA_WRITER";
const CHANGES_PER_PROCESS: usize = 1000;
const THREADS_PER_PROCESS: usize = 20;

/// Runs only as the child of [`two_processes_making_a_thousand_changes_each_lose_none`]:
/// makes its changes from several threads at once, as a busy front end does.
#[test]
#[ignore = "run by two_processes_making_a_thousand_changes_each_lose_none"]
fn userdata_writer_child() {
    let Ok(spec) = std::env::var(WRITER_ENV) else {
        return;
    };
    let (dir, prefix) = spec.split_once('|').unwrap();
    let grants = SamplingGrants::beside(&std::path::Path::new(dir).join("approvals.json"));
    let project = std::path::Path::new(dir).join("project");
    std::thread::scope(|s| {
        for t in 0..THREADS_PER_PROCESS {
            let (grants, project) = (grants.clone(), project.clone());
            s.spawn(move || {
                for i in (t..CHANGES_PER_PROCESS).step_by(THREADS_PER_PROCESS) {
                    grants
                        .grant(&project, &format!("{prefix}-{i}"), "fp")
                        .unwrap();
                }
            });
        }
    });
}

#[test]
fn two_processes_making_a_thousand_changes_each_lose_none() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("project")).unwrap();
    let children: Vec<_> = ["one", "two"]
        .iter()
        .map(|prefix| {
            std::process::Command::new(std::env::current_exe().unwrap())
                .args([
                    "--exact",
                    "suite::userdata::userdata_writer_child",
                    "--ignored",
                    "--test-threads=1",
                ])
                .env(WRITER_ENV, format!("{}|{prefix}", dir.path().display()))
                .stdout(std::process::Stdio::null())
                .spawn()
                .unwrap()
        })
        .collect();
    for c in children {
        // A minute at most: writers that starve each other fail rather than hang.
        assert!(output_within(c, Duration::from_secs(60)).status.success());
    }
    let grants = SamplingGrants::beside(&dir.path().join("approvals.json"));
    let granted = grants.granted(&dir.path().join("project"));
    assert_eq!(granted.len(), 2 * CHANGES_PER_PROCESS, "changes were lost");
}

#[cfg(unix)]
#[test]
fn a_symlink_planted_at_the_temp_path_is_not_followed() {
    let dir = tempfile::tempdir().unwrap();
    let victim = dir.path().join("victim.txt");
    std::fs::write(&victim, "precious").unwrap();
    // The temp name earlier versions wrote through, for this process.
    let planted = dir
        .path()
        .join(format!(".sampling.json.{}.tmp", std::process::id()));
    std::os::unix::fs::symlink(&victim, &planted).unwrap();
    let grants = SamplingGrants::beside(&dir.path().join("approvals.json"));
    grants.grant(dir.path(), "fx", "fp").unwrap();
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
    let file = dir.path().join("sampling.json");
    assert!(!std::fs::symlink_metadata(&file).unwrap().is_symlink());
    assert!(grants.is_granted(dir.path(), "fx", "fp"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_revoke_in_the_cli_is_honoured_by_a_running_session() {
    let p = Project::new(&json!({"mcpServers": {"fx": {"command": fixture_bin()}}}));
    let stub = Stub::start(
        Wire::Anthropic,
        vec![
            Reply::text("approved answer"),
            Reply::text("granted answer"),
        ],
    )
    .await;
    let h = p.harness();
    h.enable_sampling(SamplingSource::Client {
        client: stub.client(),
        models: Vec::new(),
    });
    h.start(None).await;
    h.manager().wait_settled(Duration::from_secs(30)).await;
    let _watch = h.watch_config().unwrap();
    // A front end watches the asks before any call: with nobody watching, an ask is
    // refused at once.
    let mut asks = h.subscribe_asks();
    let h = Arc::new(h);
    let call = |h: &Arc<harness9::Harness>| spawn_call(h, "fx", "server_request", json!({}));
    // "Always for this server", then a request that asks nobody.
    let caller = call(&h);
    let ask = next_ask(&mut asks, |_| true).await;
    h.answer_ask(
        ask.id,
        AskAnswer::Approve(SamplingChoice {
            always: true,
            review: false,
        }),
    )
    .unwrap();
    let out = caller.await.unwrap();
    assert!(out.contains("approved answer"), "{out}");
    let out = call(&h).await.unwrap();
    assert!(out.contains("granted answer"), "{out}");

    // The CLI, another process, revokes it; the running session follows at once.
    let mut changes = h.subscribe_user_data();
    let seen = *changes.borrow_and_update();
    let o = p.cli(&["mcp", "sampling", "--revoke", "fx"]);
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    let caller = call(&h);
    let ask = next_ask(&mut asks, |_| true).await;
    assert!(matches!(ask.kind, AskKind::Sampling { .. }), "{ask:?}");
    h.answer_ask(ask.id, AskAnswer::Refuse(String::new()))
        .unwrap();
    let out = caller.await.unwrap();
    assert!(out.contains("sampling: error -1"), "refused: {out}");
    assert!(h.sampling_grants().await.is_empty());
    // The front ends were told within a second or so.
    tokio::time::timeout(Duration::from_secs(5), changes.wait_for(|r| *r > seen))
        .await
        .expect("the change of the grants reached the front ends")
        .unwrap();
    h.shutdown().await;
}

/// Every pin in a `pins.json` without its title and annotations, as versions before them
/// wrote it.
fn strip_hints(pins: &std::path::Path) {
    let mut v: Value = serde_json::from_slice(&std::fs::read(pins).unwrap()).unwrap();
    let mut stripped = 0;
    for servers in v["projects"].as_object_mut().unwrap().values_mut() {
        for tools in servers.as_object_mut().unwrap().values_mut() {
            for pin in tools.as_object_mut().unwrap().values_mut() {
                stripped += usize::from(pin.as_object_mut().unwrap().remove("hints").is_some());
            }
        }
    }
    assert!(stripped > 0);
    std::fs::write(pins, serde_json::to_vec_pretty(&v).unwrap()).unwrap();
}

fn wipe(annotations: Value) -> String {
    json!([{"name": "wipe", "description": "Deletes the scratch folder.",
        "inputSchema": {"type": "object"}, "annotations": annotations}])
    .to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flipped_annotation_is_held_and_old_pins_take_the_current_ones_once() {
    let p = Project::new(&json!({"mcpServers": {
        "fx": {"command": fixture_bin(), "args": ["--tool-overrides", "tools.json"]}
    }}));
    let tools = p.path().join("tools.json");
    let pins = p.data.path().join("pins.json");
    std::fs::write(&tools, wipe(json!({"destructiveHint": true}))).unwrap();
    let h = p.started().await;
    h.shutdown().await;

    // A pin file from before annotations were pinned: nothing is held after the upgrade,
    // and the pins take the annotations the tools have now.
    strip_hints(&pins);
    let h = p.started().await;
    assert_eq!(h.held_tools(None), vec![]);
    h.shutdown().await;
    let text = std::fs::read_to_string(&pins).unwrap();
    assert!(text.contains("\"destructiveHint\": true"), "{text}");

    // The server now says the same tool is read-only: held back like any change.
    std::fs::write(&tools, wipe(json!({"readOnlyHint": true}))).unwrap();
    let h = p.started().await;
    let held = h.held_tools(None);
    assert_eq!(held.len(), 1, "{held:?}");
    assert_eq!(held[0].tool, "wipe");
    assert!(h
        .tools(Some("fx"))
        .iter()
        .all(|t| t.name != "mcp__fx__wipe"));
    h.shutdown().await;
    let o = p.cli(&["mcp", "tools", "--changed", "--yes"]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("fx/wipe: its annotations changed\n"), "{out}");
    assert!(out.contains("  - readOnlyHint: (none)\n"), "{out}");
    assert!(out.contains("  + readOnlyHint: true\n"), "{out}");
    assert!(out.contains("  - destructiveHint: true\n"), "{out}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_permission_rule_of_one_server_is_not_inherited_by_a_renamed_one() {
    let project = |name: &str| json!({"mcpServers": {name: {"command": fixture_bin()}}});
    let p = Project::new(&project("a.b"));
    // A rule as earlier versions stored it: by the model-facing name, which server `a.b`
    // and a server named `a_b` share.
    let key = std::fs::canonicalize(p.path())
        .unwrap()
        .display()
        .to_string();
    std::fs::write(
        p.data.path().join("tool-permissions.json"),
        json!({"projects": {key.clone(): {"mcp__a_b__echo": "allow"}}}).to_string(),
    )
    .unwrap();
    let stub = Arc::new(
        Stub::start(
            Wire::OpenAi,
            vec![
                Reply::tool("mcp__a_b__echo", json!({"text": "hi"})),
                Reply::text("done"),
                Reply::tool("mcp__a_b__echo", json!({"text": "hi"})),
                Reply::text("done"),
            ],
        )
        .await,
    );
    let p = Arc::new(p);
    let run = |p: &Arc<Project>| {
        let (p, stub) = (p.clone(), stub.clone());
        tokio::task::spawn_blocking(move || exec(&p, Some(&stub), &["--yes", "go"]))
    };
    // The existing rule keeps working for the server it was given to, and is tied to it.
    let o = run(&p).await.unwrap();
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(err.contains("✓ mcp__a_b__echo ok"), "{err}");
    let stored: Value = serde_json::from_slice(
        &std::fs::read(p.data.path().join("tool-permissions.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(
        stored["projects"][&key]["tools"],
        json!({"a.b": {"echo": "allow"}})
    );

    // Another server takes the look-alike name: its tool has the same model-facing name,
    // but not the rule.
    std::fs::write(
        p.path().join(".mcp.json"),
        serde_json::to_string(&project("a_b")).unwrap(),
    )
    .unwrap();
    let o = run(&p).await.unwrap();
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(err.contains("⊘ mcp__a_b__echo denied"), "{err}");
}
