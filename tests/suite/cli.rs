//! The `harness9` binary end to end: output shapes and exit codes.

use serde_json::{json, Value};

use super::support::terminal::on_terminal;
use super::support::{fixture_bin, stderr, stdout, Project};

fn demo() -> Project {
    let p = Project::new(&json!({"mcpServers": {
        "demo": {"command": "harness9", "args": ["mcp", "serve", "--project", "."]},
        "fx": {"command": fixture_bin()},
        "dead": {"command": fixture_bin(), "args": ["--exit-at-once", "no token"]}
    }}));
    std::fs::write(p.path().join("hello.txt"), "first line\nsecond line\n").unwrap();
    p
}

#[test]
fn list_json_shape_and_exit_code() {
    let p = demo();
    let o = p.cli(&["mcp", "list", "--yes", "--json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let rows: Value = serde_json::from_str(&stdout(&o)).unwrap();
    let row = |n: &str| {
        rows.as_array()
            .unwrap()
            .iter()
            .find(|r| r["name"] == n)
            .unwrap()
            .clone()
    };
    let demo = row("demo");
    assert_eq!(demo["status"], "connected");
    assert_eq!(demo["transport"], "stdio");
    assert_eq!(demo["tools"], 3);
    assert_eq!(demo["error"], Value::Null);
    assert_eq!(demo["protocolVersion"], "2025-11-25");
    assert_eq!(demo["era"], "legacy");
    assert_eq!(demo["serverName"], "harness9");
    let dead = row("dead");
    assert_eq!(dead["status"], "failed");
    assert_eq!(dead["tools"], 0);
    assert!(
        dead["error"].as_str().unwrap().contains("no token"),
        "{dead}"
    );
}

/// TOKENS is each server's tool definitions as the model gets them (name, description,
/// input schema as compact JSON), in bytes / 4 rounded up per tool.
#[test]
fn list_shows_the_context_cost_of_each_server() {
    let p = demo();
    let o = p.cli(&["mcp", "tools", "--yes", "--json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let tools: Value = serde_json::from_str(&stdout(&o)).unwrap();
    let expected = |server: &str| -> u64 {
        tools
            .as_array()
            .unwrap()
            .iter()
            .filter(|t| t["server"] == server)
            .map(|t| {
                let def = json!({"name": t["name"], "description": t["description"], "input_schema": t["inputSchema"]});
                (serde_json::to_string(&def).unwrap().len() as u64).div_ceil(4)
            })
            .sum()
    };
    let want = expected("demo");
    assert!(want > 50 && expected("fx") > 50, "{want}");

    let o = p.cli(&["mcp", "list", "--yes", "--json"]);
    let rows: Value = serde_json::from_str(&stdout(&o)).unwrap();
    let tokens = |n: &str| {
        rows.as_array()
            .unwrap()
            .iter()
            .find(|r| r["name"] == n)
            .unwrap()["contextTokens"]
            .clone()
    };
    assert_eq!(
        (tokens("demo"), tokens("fx"), tokens("dead")),
        (json!(want), json!(expected("fx")), json!(0))
    );

    let o = p.cli(&["mcp", "list", "--yes"]);
    let out = stdout(&o);
    let header = out.lines().next().unwrap();
    assert!(header.contains(" TOOLS TOKENS  PROTOCOL"), "{header}");
    let demo = out.lines().find(|l| l.starts_with("demo")).unwrap();
    let cols: Vec<&str> = demo.split_whitespace().collect();
    // name, transport, scope, mark, status, then the counts.
    assert_eq!(cols[5..7], ["3", want.to_string().as_str()], "{demo}");
    let dead = out.lines().find(|l| l.starts_with("dead")).unwrap();
    assert_eq!(dead.split_whitespace().nth(6), Some("-"), "{dead}");
    assert!(out.contains("Tool definitions take about "), "{out}");
    assert!(
        !stderr(&o).contains("tool search takes over"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn list_table_and_awaiting_approval_without_a_terminal() {
    let p = demo();
    let o = p.cli(&["mcp", "list"]);
    assert_eq!(o.status.code(), Some(0));
    let out = stdout(&o);
    assert!(out.starts_with("NAME"), "{out}");
    for name in ["demo", "fx", "dead"] {
        let line = out.lines().find(|l| l.starts_with(name)).unwrap();
        assert!(line.contains("awaiting-approval"), "{line}");
    }
    let o = p.cli(&["mcp", "list", "--json"]);
    let rows: Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert!(rows
        .as_array()
        .unwrap()
        .iter()
        .all(|r| r["status"] == "awaiting-approval"));
}

#[test]
fn invalid_json_exits_2_with_position() {
    let p = Project::new(&json!({}));
    std::fs::write(
        p.path().join(".mcp.json"),
        "{\n  \"mcpServers\": {\n    \"a\": {\"command\": \"x\",}\n  }\n}\n",
    )
    .unwrap();
    let o = p.cli(&["mcp", "list", "--yes"]);
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(
        err.contains(".mcp.json:3:26: invalid JSON: trailing comma"),
        "{err}"
    );
}

#[test]
fn no_config_file_means_no_servers() {
    let dir = tempfile::tempdir().unwrap();
    let o = std::process::Command::new(super::support::harness9_bin())
        .args(["mcp", "list", "--json", "--project"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(
        serde_json::from_str::<Value>(&stdout(&o)).unwrap(),
        json!([])
    );
}

#[test]
fn tools_json_shape() {
    let p = demo();
    let o = p.cli(&["mcp", "tools", "demo", "--yes", "--json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let tools: Value = serde_json::from_str(&stdout(&o)).unwrap();
    let names: Vec<&str> = tools
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        vec![
            "mcp__demo__read_file",
            "mcp__demo__list_dir",
            "mcp__demo__search_text"
        ]
    );
    let first = &tools[0];
    assert_eq!(first["server"], "demo");
    assert_eq!(first["tool"], "read_file");
    assert!(first["description"].as_str().unwrap().len() > 10);
    assert_eq!(first["inputSchema"]["type"], "object");
    // Table form: qualified name, raw name, first line of the description.
    let o = p.cli(&["mcp", "tools", "--yes"]);
    let out = stdout(&o);
    assert!(
        out.lines()
            .any(|l| l.starts_with("mcp__fx__echo") && l.contains(" echo ")),
        "{out}"
    );
    assert!(
        stderr(&o).contains("server \"dead\" failed"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn call_prints_text_and_json() {
    let p = demo();
    let o = p.cli(&[
        "mcp",
        "call",
        "demo",
        "read_file",
        r#"{"path": "hello.txt"}"#,
        "--yes",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stdout(&o).contains("first line"), "{}", stdout(&o));
    let o = p.cli(&[
        "mcp",
        "call",
        "fx",
        "echo",
        r#"{"text": "hi"}"#,
        "--yes",
        "--json",
    ]);
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(
        serde_json::from_str::<Value>(&stdout(&o)).unwrap(),
        json!({"content": [{"type": "text", "text": "hi"}]})
    );
}

#[test]
fn call_exit_codes() {
    let p = demo();
    // The tool reports an error: 1, message on stderr.
    let o = p.cli(&["mcp", "call", "fx", "fail", "--yes"]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(stderr(&o).trim(), "this tool failed");
    // Escaping the project folder is refused by the built-in server.
    let o = p.cli(&[
        "mcp",
        "call",
        "demo",
        "read_file",
        r#"{"path": "../../etc/passwd"}"#,
        "--yes",
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("outside the project folder"),
        "{}",
        stderr(&o)
    );
    // The server failed: 1.
    let o = p.cli(&["mcp", "call", "dead", "echo", "--yes"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("server \"dead\" is not connected: the server exited with status 2"),
        "{}",
        stderr(&o)
    );
    // Bad arguments: 2.
    let o = p.cli(&["mcp", "call", "fx", "echo", "[1, 2]", "--yes"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("ARGS_JSON must be a JSON object"));
    let o = p.cli(&["mcp", "call", "nope", "echo", "--yes"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("no server named \"nope\""),
        "{}",
        stderr(&o)
    );
    let o = p.cli(&["mcp", "call", "fx", "nope", "--yes"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("server \"fx\" has no tool \"nope\" (it has: echo, "),
        "{}",
        stderr(&o)
    );
    // Not approved: 1 with a hint.
    let o = p.cli(&["mcp", "call", "fx", "echo"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("awaiting your approval"),
        "{}",
        stderr(&o)
    );
    // Unknown subcommand: clap's usage error, 2.
    assert_eq!(p.cli(&["mcp", "frobnicate"]).status.code(), Some(2));
}

#[test]
fn call_shows_progress_on_stderr() {
    let p = demo();
    let o = p.cli(&["mcp", "call", "fx", "progress", r#"{"steps": 2}"#, "--yes"]);
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(stdout(&o).trim(), "done");
    assert!(
        stderr(&o).contains("progress 1/2 step 1 of 2"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn bundled_demo_project_connects() {
    let demo = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/demo");
    let data = tempfile::tempdir().unwrap();
    let o = std::process::Command::new(super::support::harness9_bin())
        .args(["mcp", "list", "--yes", "--json", "--project"])
        .arg(&demo)
        .env("HARNESS9_DATA_DIR", data.path())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0));
    let rows: Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(rows[0]["name"], "demo");
    assert_eq!(rows[0]["status"], "connected", "{rows}");
    assert_eq!(rows[0]["tools"], 3);
}

#[test]
fn outside_a_terminal_servers_get_the_login_shells_path() {
    let tools = tempfile::tempdir().unwrap();
    let bin = tools.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    let only_there = bin.join("h9-only-on-login-path");
    std::fs::write(
        &only_there,
        format!("#!/bin/sh\nexec {} \"$@\"\n", fixture_bin()),
    )
    .unwrap();
    // A "login shell" that adds that folder to PATH, as a user's profile would.
    let shell = tools.path().join("fake-login-shell");
    std::fs::write(
        &shell,
        format!(
            "#!/bin/sh\nfor last; do :; done\nPATH=\"{}:$PATH\" exec /bin/sh -c \"$last\"\n",
            bin.display()
        ),
    )
    .unwrap();
    for f in [&only_there, &shell] {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(f, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let p = Project::new(&json!({"mcpServers": {"fx": {"command": "h9-only-on-login-path"}}}));
    let run = |shell: &std::path::Path| {
        let o = std::process::Command::new(super::support::harness9_bin())
            .args(["mcp", "list", "--yes", "--json", "--project"])
            .arg(p.path())
            .env("HARNESS9_DATA_DIR", p.data.path())
            .env("SHELL", shell)
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap();
        serde_json::from_str::<Value>(&stdout(&o)).unwrap()[0].clone()
    };
    assert_eq!(run(&shell)["status"], "connected");
    let without = run(std::path::Path::new("/bin/sh"));
    assert_eq!(without["status"], "failed");
    assert!(
        without["error"]
            .as_str()
            .unwrap()
            .starts_with("command \"h9-only-on-login-path\" not found (PATH searched: "),
        "{without}"
    );
}

#[test]
fn on_a_terminal_the_cli_asks_and_remembers() {
    let p = Project::new(
        &json!({"mcpServers": {"fx": {"command": fixture_bin(), "args": ["--pages", "2"]}}}),
    );
    // On a real terminal, "a" answers "always".
    let out = on_terminal(&p, &["mcp", "list"], &[], b"a\n");
    let out = String::from_utf8_lossy(&out);
    assert!(
        out.contains("wants to start 1 server(s) that you have not approved"),
        "{out}"
    );
    assert!(
        out.contains(&format!("      command: {} --pages 2", fixture_bin())),
        "{out}"
    );
    assert!(out.contains("  fx (stdio)"), "{out}");
    assert!(
        out.contains(&format!("      cwd: {}", p.path().display())),
        "{out}"
    );
    assert!(
        out.lines()
            .any(|l| l.starts_with("fx") && l.contains("connected")),
        "{out}"
    );
    // Remembered: the next run needs neither a terminal nor --yes.
    let o = p.cli(&["mcp", "list", "--json"]);
    assert_eq!(
        serde_json::from_str::<Value>(&stdout(&o)).unwrap()[0]["status"],
        "connected"
    );
}
