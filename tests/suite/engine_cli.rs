//! The engine through the CLI: `harness9 exec` (the answer on stdout, tool calls on stderr,
//! JSON events, exit codes, the provider from variables or the settings file) and
//! `harness9 bench engine`.

use std::sync::Arc;

use harness9::engine::CUT_OFF_NOTICE;
use serde_json::{json, Value};

use super::support::provider_stub::{Reply, Stub, Wire, TEST_KEY};
use super::support::turns::*;
use super::support::Project;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exec_prints_the_answer_on_stdout_and_tool_calls_on_stderr() {
    let project = Arc::new(Project::fixture(json!({})));
    let stub = Arc::new(
        Stub::start(
            Wire::OpenAi,
            vec![
                Reply::Turn {
                    text: "Checking.".into(),
                    calls: vec![
                        ("mcp__fx__echo".into(), json!({"text": "hi"})),
                        ("mcp__fx__fail".into(), json!({})),
                    ],
                },
                Reply::text("The echo said hi."),
            ],
        )
        .await,
    );
    let out = exec_async(
        project.clone(),
        Some(stub.clone()),
        strings(&["--yes", "--allow-tools", "mcp__fx__echo", "say hi"]),
    )
    .await;
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "stderr: {stderr}");
    assert_eq!(stdout, "The echo said hi.\n");
    let lines: Vec<String> = stderr
        .lines()
        .map(|l| {
            // Durations vary: "(12 ms)" → "(N ms)".
            let mut s = l.to_string();
            if let (Some(a), Some(b)) = (s.rfind(" ("), s.find(" ms)")) {
                if a < b {
                    s.replace_range(a + 2..b, "N");
                }
            }
            s
        })
        .collect();
    assert_eq!(lines.len(), 5, "{lines:?}");
    let mut ends = lines[3..].to_vec();
    ends.sort();
    assert_eq!(
        ends,
        [
            "⊘ mcp__fx__fail denied (N ms): denied by the permission rules",
            "✓ mcp__fx__echo ok (N ms)",
        ]
    );
    assert_eq!(
        lines[..3],
        [
            "Checking.",
            "→ mcp__fx__echo {\"text\":\"hi\"}",
            "→ mcp__fx__fail {}"
        ]
    );
    assert!(!stderr.contains(TEST_KEY) && !stdout.contains(TEST_KEY));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exec_json_streams_one_event_per_line() {
    let project = Arc::new(Project::fixture(json!({})));
    let stub = Arc::new(
        Stub::start(
            Wire::Anthropic,
            vec![
                Reply::tool("mcp__fx__echo", json!({"text": "json"})),
                Reply::text("Done."),
            ],
        )
        .await,
    );
    let out = exec_async(
        project.clone(),
        Some(stub.clone()),
        strings(&["--yes", "--json", "--allow-tools", "mcp__fx__*", "go"]),
    )
    .await;
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let events: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("each line is JSON"))
        .collect();
    let types: Vec<&str> = events.iter().map(|e| e["type"].as_str().unwrap()).collect();
    assert_eq!(types.first(), Some(&"turn_start"));
    assert_eq!(types.last(), Some(&"turn_end"));
    let start = events
        .iter()
        .find(|e| e["type"] == "tool_call_start")
        .unwrap();
    assert_eq!(start["name"], "mcp__fx__echo");
    assert_eq!(start["arguments"], json!({"text": "json"}));
    let end = events
        .iter()
        .find(|e| e["type"] == "tool_call_end")
        .unwrap();
    assert_eq!(end["status"], "ok");
    assert_eq!(end["output"], "json");
    assert!(end["durationMs"].is_u64());
    assert_eq!(end["error"], Value::Null);
    assert_eq!(
        events.last().unwrap()["outcome"],
        json!({"status": "completed", "answer": "Done."})
    );
    assert!(types.contains(&"text_delta"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exec_fails_with_exit_1_on_provider_errors_and_2_without_a_provider() {
    let project = Arc::new(Project::new(&json!({"mcpServers": {}})));
    let stub = Arc::new(
        Stub::start(
            Wire::Anthropic,
            vec![Reply::status(401, None, "invalid x-api-key")],
        )
        .await,
    );
    let out = exec_async(project.clone(), Some(stub.clone()), strings(&["hi"])).await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        stderr.trim_end(),
        "harness9: the model provider rejected the request with 401 (invalid x-api-key); check that ANTHROPIC_API_KEY holds a valid API key"
    );
    assert!(out.stdout.is_empty());

    let out = exec_async(project.clone(), None, strings(&["hi"])).await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2));
    for var in [
        "HARNESS9_PROVIDER",
        "OPENAI_API_KEY",
        "ANTHROPIC_API_KEY",
        "HARNESS9_MODEL",
    ] {
        assert!(stderr.contains(var), "{var} not named in: {stderr}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exec_reaching_the_round_trip_bound_exits_1() {
    let project = Arc::new(Project::fixture(json!({})));
    let stub = Arc::new(
        Stub::start(
            Wire::OpenAi,
            vec![Reply::tool("mcp__fx__echo", json!({"text": "again"}))],
        )
        .await,
    );
    let out = exec_async(
        project.clone(),
        Some(stub.clone()),
        strings(&[
            "--yes",
            "--allow-tools",
            "*",
            "--max-round-trips",
            "1",
            "loop",
        ]),
    )
    .await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("the model used all 1 round-trips"),
        "{stderr}"
    );
    assert_eq!(stub.remaining(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exec_prints_a_cut_off_answer_says_so_and_exits_1() {
    let project = Arc::new(Project::new(&json!({"mcpServers": {}})));
    let stub = Arc::new(Stub::start(Wire::Anthropic, vec![Reply::cut_off("Half of it")]).await);
    let out = exec_async(project.clone(), Some(stub.clone()), strings(&["write"])).await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert_eq!(String::from_utf8_lossy(&out.stdout), "Half of it\n");
    assert_eq!(stderr.trim_end(), format!("harness9: {CUT_OFF_NOTICE}"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exec_talks_to_a_keyless_openai_compatible_server() {
    // Like Ollama or llama.cpp: only OPENAI_BASE_URL is set, no key, no provider name.
    let project = Arc::new(Project::new(&json!({"mcpServers": {}})));
    let stub = Arc::new(Stub::start(Wire::OpenAi, vec![Reply::text("local answer")]).await);
    let url = stub.base_url();
    let p = project.clone();
    let out = tokio::task::spawn_blocking(move || {
        exec_with_env(
            &p,
            None,
            &[
                ("OPENAI_BASE_URL", url),
                ("HARNESS9_MODEL", "llama3".into()),
            ],
            &["hi"],
        )
    })
    .await
    .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout), "local answer\n");
    let req = &stub.requests()[0];
    assert_eq!(req.header("authorization"), None);
    assert_eq!(req.body["model"], "llama3");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exec_takes_the_provider_from_the_settings_file() {
    let project = Arc::new(Project::new(&json!({"mcpServers": {}})));
    let stub = Arc::new(Stub::start(Wire::OpenAi, vec![Reply::text("from settings")]).await);
    let config = project.data.path().join("config");
    std::fs::create_dir_all(&config).unwrap();
    std::fs::write(
        config.join("settings.json"),
        json!({"theme": "dark", "provider": {"kind": "openai", "model": "file-model", "baseUrl": stub.base_url(), "apiKeyEnv": "MY_LOCAL_KEY"}}).to_string(),
    )
    .unwrap();
    let p = project.clone();
    let out = tokio::task::spawn_blocking(move || {
        exec_with_env(&p, None, &[("MY_LOCAL_KEY", TEST_KEY.into())], &["hi"])
    })
    .await
    .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout), "from settings\n");
    let req = &stub.requests()[0];
    assert_eq!(req.body["model"], "file-model");
    assert_eq!(
        req.header("authorization"),
        Some(format!("Bearer {TEST_KEY}").as_str())
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn settings_file_must_not_hold_keys() {
    let project = Arc::new(Project::new(&json!({"mcpServers": {}})));
    let config = project.data.path().join("config");
    std::fs::create_dir_all(&config).unwrap();
    std::fs::write(
        config.join("settings.json"),
        json!({"provider": {"kind": "openai", "apiKey": "sk-plain"}}).to_string(),
    )
    .unwrap();
    let out = exec_async(project.clone(), None, strings(&["hi"])).await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr.contains("must not hold an API key"), "{stderr}");
    assert!(!stderr.contains("sk-plain"));
}

#[test]
fn bench_engine_reports_both_scenarios() {
    let out = std::process::Command::new(super::support::harness9_bin())
        .args(["bench", "engine", "--quick"])
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lines: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let scenarios: Vec<(&str, bool, &str)> = lines
        .iter()
        .map(|l| {
            (
                l["scenario"].as_str().unwrap(),
                l["ok"].as_bool().unwrap(),
                l["unit"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        scenarios,
        [
            ("round_trip_overhead", true, "us"),
            ("tool_search_10k", true, "us")
        ]
    );
    assert!(lines.iter().all(|l| l["value"].as_f64().unwrap() > 0.0));
}
