//! `harness9 --version`, `completions`, `man` and `doctor` end to end.

use serde_json::{json, Value};

use super::support::{fixture_bin, harness9_bin, Project};

fn run(args: &[&str]) -> (i32, String) {
    let o = std::process::Command::new(harness9_bin())
        .args(args)
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).into_owned(),
    )
}

#[test]
fn version_completions_and_man_page_come_from_the_cli_definition() {
    assert_eq!(
        run(&["--version"]),
        (0, format!("harness9 {}\n", env!("CARGO_PKG_VERSION")))
    );
    let (code, bash) = run(&["completions", "bash"]);
    assert_eq!(code, 0);
    assert!(bash.contains("_harness9()"), "{bash}");
    assert!(bash.contains("harness9,mcp)"), "{bash}");
    assert!(bash.contains("doctor"), "{bash}");
    let (code, zsh) = run(&["completions", "zsh"]);
    assert_eq!(code, 0);
    assert!(zsh.starts_with("#compdef harness9"), "{zsh}");
    let (code, fish) = run(&["completions", "fish"]);
    assert_eq!(code, 0);
    assert!(fish.contains("complete -c harness9"), "{fish}");
    assert!(fish.contains("mcp"), "{fish}");
    let (code, man) = run(&["man"]);
    assert_eq!(code, 0);
    assert!(man.contains(".TH harness9 1"), "{man}");
    assert!(man.contains("doctor"), "{man}");
    assert_eq!(run(&["completions", "tcsh"]).0, 2);
}

#[test]
fn doctor_reports_servers_runtimes_and_masks_secrets() {
    let p = Project::new(&json!({"mcpServers": {
        "fx": {"command": fixture_bin(), "env": {"API_TOKEN": "supersecret123", "HOME_DIR": "${HOME}"}},
        "demo": {"command": "harness9", "args": ["mcp", "serve", "--project", "."]},
        "gone": {"command": "no-such-command-h9", "args": ["--token=hunter2hunter2"]}
    }}));
    let o = p.cli(&["doctor", "--yes", "--json"]);
    assert_eq!(o.status.code(), Some(0));
    let text = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(
        !text.contains("supersecret123") && !text.contains("hunter2hunter2"),
        "{text}"
    );
    let r: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(r["version"], env!("CARGO_PKG_VERSION"));
    assert!(!r["os"].as_str().unwrap().is_empty());
    let runtimes: Vec<&str> = r["runtimes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["name"].as_str().unwrap())
        .collect();
    assert_eq!(runtimes, ["node", "npx", "uvx", "python3"]);
    let server = |n: &str| {
        r["project"]["servers"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["name"] == n)
            .unwrap()
            .clone()
    };
    let fx = server("fx");
    assert_eq!(fx["status"], "connected", "{fx}");
    assert_eq!(fx["resolved"], fixture_bin());
    assert_eq!(
        fx["env"],
        json!([
            format!("API_TOKEN={}", harness9::config::mask::MASK),
            "HOME_DIR=${HOME}"
        ])
    );
    let demo = server("demo");
    assert_eq!(demo["status"], "connected", "{demo}");
    assert_eq!(demo["resolved"], harness9_bin());
    assert!(demo["contextTokens"].as_u64().unwrap() > 50, "{demo}");
    let gone = server("gone");
    assert_eq!(gone["status"], "failed");
    assert_eq!(
        gone["resolved"],
        "no-such-command-h9: not found on the servers' PATH"
    );
    assert!(r["keychain"]["available"].is_boolean());
    assert!(r["places"]
        .as_array()
        .unwrap()
        .iter()
        .any(|p| p["what"] == "Approved project servers"));

    let o = p.cli(&["doctor", "--yes"]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.starts_with(&format!("harness9 {}\n", env!("CARGO_PKG_VERSION"))),
        "{out}"
    );
    for want in [
        "OS:",
        "WebKit:",
        "Login PATH:",
        "Runtimes:",
        "  node ",
        "Keychain:",
        "  fx [stdio] connected",
    ] {
        assert!(out.contains(want), "{want} missing in:\n{out}");
    }
    assert!(
        !out.contains("supersecret123") && !out.contains("hunter2hunter2"),
        "{out}"
    );
}

/// The warning comes at the engine's own threshold, with the configured context window.
#[test]
fn list_warns_when_tool_search_would_take_over() {
    let p = Project::new(&json!({"mcpServers": {
        "demo": {"command": "harness9", "args": ["mcp", "serve", "--project", "."]}
    }}));
    let config = tempfile::tempdir().unwrap();
    let list = |window: u32| {
        std::fs::write(
            config.path().join("settings.json"),
            json!({"provider": {"contextWindow": window}}).to_string(),
        )
        .unwrap();
        let o = std::process::Command::new(harness9_bin())
            .args(["mcp", "list", "--yes", "--project"])
            .arg(p.path())
            .env("HARNESS9_CONFIG_DIR", config.path())
            .env("HARNESS9_DATA_DIR", config.path())
            .env("HARNESS9_CREDENTIALS", "file")
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap();
        String::from_utf8_lossy(&o.stderr).into_owned()
    };
    // The demo's three tools take a few hundred tokens: over 10% of 1,000, under 10% of 200,000.
    let err = list(1_000);
    assert!(
        err.contains("more than 10% of the model's 1000-token context window (100 tokens): tool search takes over"),
        "{err}"
    );
    assert!(!list(200_000).contains("tool search"));
}
