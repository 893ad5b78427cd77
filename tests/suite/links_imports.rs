//! Links a server asks the user to open, and imports from files that came with a project:
//! a hostile server's `file:`, `javascript:` or option-shaped URL is refused with a message
//! (never opened, never printed as a link); a hostile repository's `.vscode/mcp.json` is
//! shown and asked about before anything is written, and the project's own `.mcp.json` is
//! never offered as an import source.

use serde_json::{json, Value};

use super::support::home::Home;
use super::support::project::list_statuses;
use super::support::{fixture_bin, stderr, stdout, Project};

#[test]
fn url_elicitation_links_are_checked_before_they_are_shown() {
    let urls = [
        "https://Login.Example.com:8443/start?x=1",
        "file:///etc/passwd",
        "javascript:alert(1)",
        "smb://fileserver/share",
        "http://example.com/",
        "-oProxyCommand=touch /tmp/h9-pwned",
    ];
    let mut args = vec![];
    for u in urls {
        args.push("--require-url");
        args.push(u);
    }
    let p = Project::new(&json!({"mcpServers": {"fx": {"command": fixture_bin(), "args": args}}}));
    let o = p.cli(&["mcp", "call", "fx", "echo", r#"{"text": "hi"}"#, "--yes"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let err = stderr(&o);
    let lines: Vec<&str> = err
        .lines()
        .skip_while(|l| !l.contains("needs you to open"))
        .collect();
    let only = "only https: links (and http: to this machine) open";
    assert_eq!(
        lines,
        vec![
            "harness9: the server needs you to open login.example.com:8443 (https://login.example.com:8443/start?x=1) first (\"Open this page first\"); open it if you trust it, then run again".to_string(),
            format!("harness9: the server needs you to open \"file:///etc/passwd\" first (\"Open this page first\"); refused: it is a file: link; {only}"),
            format!("harness9: the server needs you to open \"javascript:alert(1)\" first (\"Open this page first\"); refused: it is a javascript: link; {only}"),
            format!("harness9: the server needs you to open \"smb://fileserver/share\" first (\"Open this page first\"); refused: it is a smb: link; {only}"),
            format!("harness9: the server needs you to open \"http://example.com/\" first (\"Open this page first\"); refused: it is a plain http: link to example.com; {only}"),
            "harness9: the server needs you to open \"-oProxyCommand=touch /tmp/h9-pwned\" first (\"Open this page first\"); refused: it is not a URL (it does not start with a scheme); only https: links open".to_string(),
        ],
        "{err}"
    );
}

/// `mcp list --json`: (name, status) of every server.
fn statuses(h: &Home) -> Vec<(String, String)> {
    list_statuses(&h.ok(&["mcp", "list", "--json"]))
}

#[test]
fn an_import_from_a_file_inside_the_project_is_shown_and_asked_first() {
    let h = Home::new();
    let fx = fixture_bin();
    // A repository that arrived with a VS Code config: a command and a remote server.
    h.write(
        &h.project.join(".vscode/mcp.json"),
        &json!({"servers": {
            "helper": {"type": "stdio", "command": fx, "args": ["--pages", "1"]},
            "remote": {"type": "http", "url": "https://127.0.0.1:9/mcp"}
        }})
        .to_string(),
    );
    let shown = format!(
        "  + helper  (from {v})\n      {fx} --pages 1\n  + remote  (from {v})\n      https://127.0.0.1:9/mcp\n",
        v = h.project.join(".vscode/mcp.json").display()
    );

    // --dry-run shows what would run.
    let out = h.ok(&[
        "mcp",
        "import",
        "--from",
        "vscode",
        "--scope",
        "project",
        "--dry-run",
    ]);
    assert!(out.contains(&shown), "{out}");
    assert!(!h.project_file().exists());

    // Without a terminal and without --yes: shown, refused, nothing written.
    let o = h.run(&["mcp", "import", "--from", "vscode", "--scope", "project"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stdout(&o).contains(&shown), "{}", stdout(&o));
    assert_eq!(
        stderr(&o),
        "harness9: these servers come from a file inside the project, which arrived with it; nothing was written. Check what they run (above), then run again with --yes to add them\n"
    );
    assert!(!h.project_file().exists());

    // --yes: written, and approved exactly as shown: it starts without asking.
    let out = h.ok(&[
        "mcp", "import", "--from", "vscode", "--scope", "project", "--yes",
    ]);
    assert!(out.contains(&shown), "{out}");
    let st = statuses(&h);
    assert!(
        st.contains(&("helper".into(), "connected".into())),
        "{st:?}"
    );

    // A later change to what it runs needs approval again.
    let mut doc: Value = h.json(&h.project_file());
    doc["mcpServers"]["helper"]["args"] = json!(["--pages", "2"]);
    h.write(&h.project_file(), &doc.to_string());
    let st = statuses(&h);
    assert!(
        st.contains(&("helper".into(), "awaiting-approval".into())),
        "{st:?}"
    );
}

#[test]
fn the_projects_own_mcp_json_is_never_an_import_source() {
    let h = Home::new();
    h.write(
        &h.project_file(),
        r#"{"mcpServers": {"team": {"command": "team-srv"}}}"#,
    );
    let o = h.run(&["mcp", "import", "--from", "claude-code", "--dry-run"]);
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    assert_eq!(
        stderr(&o),
        "harness9: no Claude Code MCP servers found on this machine\n"
    );
    // Nor under another name: a link to it from another tool's project file.
    std::fs::create_dir_all(h.project.join(".cursor")).unwrap();
    std::os::unix::fs::symlink(h.project_file(), h.project.join(".cursor/mcp.json")).unwrap();
    let o = h.run(&["mcp", "import", "--from", "cursor", "--dry-run"]);
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    assert_eq!(
        stderr(&o),
        "harness9: no Cursor MCP servers found on this machine\n"
    );
}
