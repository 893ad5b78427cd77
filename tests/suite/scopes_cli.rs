//! Config scopes and the `claude mcp` verbs end to end: the `harness9` binary runs with a
//! temporary HOME (and XDG folders), and other tools' config files are written there in
//! each tool's own format.

use std::path::Path;

use serde_json::{json, Value};

use super::support::fixture_bin;
use super::support::home::Home;

#[test]
fn add_get_remove_in_each_scope() {
    let h = Home::new();
    // An existing project file keeps its other keys.
    h.write(&h.project_file(), r#"{"$schema": "x", "mcpServers": {}}"#);
    let out = h.ok(&[
        "mcp",
        "add",
        "web",
        "https://mcp.example.com/mcp",
        "-H",
        "Authorization: Bearer ${WEB_TOKEN}",
        "--scope",
        "project",
    ]);
    assert_eq!(
        out,
        format!("Added http server \"web\" to the project scope (./.mcp.json)\nProject servers start after you approve them (run with --yes, or approve when asked).\n")
    );
    h.ok(&[
        "mcp",
        "add",
        "files",
        "-e",
        "API_KEY=hunter2",
        "-e",
        "MODE=ro",
        "--",
        "npx",
        "-y",
        "files-server",
        "--root",
        "/tmp",
    ]);
    h.ok(&[
        "mcp",
        "add-json",
        "events",
        r#"{"type": "sse", "url": "https://e.example.com/sse", "x-extra": 1}"#,
        "--scope",
        "user",
    ]);
    h.ok(&[
        "mcp",
        "add",
        "-s",
        "user",
        "-t",
        "sse",
        "feed",
        "https://f.example.com/sse",
    ]);

    assert_eq!(
        h.json(&h.project_file()),
        json!({"$schema": "x", "mcpServers": {"web": {"type": "http", "url": "https://mcp.example.com/mcp", "headers": {"Authorization": "Bearer ${WEB_TOKEN}"}}}})
    );
    // The default scope is local: in the data folder, never in the project.
    let local = h.local_file();
    assert!(local.starts_with(h.home.join(".local/share/harness9/projects")));
    assert_eq!(
        h.json(&local),
        json!({"mcpServers": {"files": {"type": "stdio", "command": "npx", "args": ["-y", "files-server", "--root", "/tmp"], "env": {"API_KEY": "hunter2", "MODE": "ro"}}}})
    );
    assert_eq!(
        h.json(&h.user_file()),
        json!({"mcpServers": {
            "events": {"type": "sse", "url": "https://e.example.com/sse", "x-extra": 1},
            "feed": {"type": "sse", "url": "https://f.example.com/sse"}}})
    );

    // get: the scope, the file, secrets masked.
    let out = h.ok(&["mcp", "get", "files"]);
    assert_eq!(
        out,
        format!(
            "files:\n  Scope: local ({})\n  Type: stdio\n  Command: npx\n  Args: -y files-server --root /tmp\n  Environment:\n    API_KEY: ••••••\n    MODE: ••••••\n",
            local.display()
        )
    );
    let got: Value = serde_json::from_str(&h.ok(&["mcp", "get", "web", "--json"])).unwrap();
    assert_eq!(got["scope"], "project");
    assert_eq!(
        got["headers"],
        json!([{"key": "Authorization", "value": "••••••"}])
    );
    let got: Value = serde_json::from_str(&h.ok(&["mcp", "get", "events", "--json"])).unwrap();
    assert_eq!(
        (got["scope"].clone(), got["transport"].clone()),
        (json!("user"), json!("sse"))
    );

    // remove: from the only scope that has it, or the one named.
    assert_eq!(
        h.ok(&["mcp", "remove", "events"]),
        format!(
            "Removed \"events\" from the user scope ({})\n",
            h.user_file().display()
        )
    );
    h.ok(&["mcp", "remove", "web", "--scope", "project"]);
    h.ok(&["mcp", "remove", "files", "-s", "local"]);
    assert_eq!(
        h.json(&h.project_file()),
        json!({"$schema": "x", "mcpServers": {}})
    );
    assert_eq!(h.json(&local), json!({"mcpServers": {}}));
    let err = h.usage_error(&["mcp", "get", "events"]);
    assert!(
        err.starts_with("harness9: no server named \"events\" in any scope ("),
        "{err}"
    );
}

#[test]
fn with_json_a_failure_is_also_a_json_error_with_its_code() {
    let h = Home::new();
    let o = h.run(&["mcp", "get", "events", "--json"]);
    assert_eq!(o.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(
        stderr.starts_with("harness9: no server named \"events\" in any scope ("),
        "{stderr}"
    );
    let out: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(out["error"]["code"], "unknown-server");
    assert_eq!(
        format!("harness9: {}\n", out["error"]["message"].as_str().unwrap()),
        stderr
    );
    let o = h.run(&["mcp", "add-json", "s", "[1]", "--json"]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        serde_json::from_slice::<Value>(&o.stdout).unwrap(),
        json!({"error": {"code": "invalid-entry", "message": "JSON must be an object like '{\"command\": \"npx\", \"args\": [\"-y\", \"server\"]}'"}})
    );
}

#[test]
fn clear_errors_and_nothing_written() {
    let h = Home::new();
    h.ok(&["mcp", "add", "s", "--scope", "user", "--", "srv"]);
    let before = std::fs::read_to_string(h.user_file()).unwrap();
    let cases: [(&[&str], &str); 8] = [
        (&["mcp", "add", "s", "--scope", "user", "--", "other"],
         &format!("harness9: a server named \"s\" already exists in the user scope ({}); remove it first with `harness9 mcp remove s --scope user`, or pick another name\n", h.user_file().display())),
        (&["mcp", "add", "u", "--scope", "user", "not-a-url"],
         "harness9: bad URL \"not-a-url\": relative URL without a base; write it like https://host/mcp\n"),
        (&["mcp", "add", "u", "--scope", "user", "ftp://x/y"],
         "harness9: bad URL \"ftp://x/y\": the scheme is \"ftp\"; use http:// or https://\n"),
        (&["mcp", "add", "u", "--scope", "user", "--"],
         "harness9: missing command: put the server's command after `--`, e.g. harness9 mcp add NAME -- npx -y some-server (or give a URL for a remote server)\n"),
        (&["mcp", "add", "u", "--scope", "user", "-e", "NOEQUALS", "--", "srv"],
         "harness9: --env \"NOEQUALS\" is not KEY=value (KEY: letters, digits and '_'), e.g. --env API_KEY=${API_KEY}\n"),
        (&["mcp", "add", "u", "--scope", "user", "-H", "Bearer x", "https://h/mcp"],
         "harness9: --header \"Bearer x\" is not 'Name: value', e.g. --header 'Authorization: Bearer ${TOKEN}'\n"),
        (&["mcp", "add-json", "u", "--scope", "user", "{\"command\": 1}"],
         "harness9: server \"u\": \"command\" must be a string, not a number\n"),
        (&["mcp", "add-json", "u", "--scope", "user", "{nope"],
         "harness9: invalid JSON: key must be a string at line 1 column 2\n"),
    ];
    for (args, want) in cases {
        assert_eq!(h.usage_error(args), want, "{args:?}");
    }
    assert_eq!(std::fs::read_to_string(h.user_file()).unwrap(), before);
    // The same name in two scopes: remove asks which.
    h.ok(&["mcp", "add", "s", "--", "local-srv"]);
    assert_eq!(
        h.usage_error(&["mcp", "remove", "s"]),
        "harness9: server \"s\" is in more than one scope (local, user); say which with --scope local|user\n"
    );
}

#[test]
fn merged_list_shows_scopes_and_only_project_servers_wait_for_approval() {
    let h = Home::new();
    let fx = fixture_bin();
    let dead = |msg: &str| json!({"command": fx, "args": ["--exit-at-once", msg]});
    h.write(
        &h.user_file(),
        &json!({"mcpServers": {"mine": {"command": fx}, "shared": dead("user entry")}}).to_string(),
    );
    h.write(
        &h.project_file(),
        &json!({"mcpServers": {"shared": dead("project entry"), "team": {"command": fx}, "over": dead("project over")}}).to_string(),
    );
    h.ok(&[
        "mcp",
        "add-json",
        "over",
        &json!({"command": fx}).to_string(),
    ]);
    let rows: Value = serde_json::from_str(&h.ok(&["mcp", "list", "--json"])).unwrap();
    let got: Vec<(String, String, String)> = rows
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["name"].as_str().unwrap().to_string(),
                r["scope"].as_str().unwrap().to_string(),
                r["status"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let row = |n: &str, s: &str, st: &str| (n.to_string(), s.to_string(), st.to_string());
    assert_eq!(
        got,
        vec![
            // Local beats project: the local entry connects without approval.
            row("mine", "user", "connected"),
            row("over", "local", "connected"),
            // Project beats user, and waits for approval like every project server.
            row("shared", "project", "awaiting-approval"),
            row("team", "project", "awaiting-approval"),
        ]
    );
    let table = h.ok(&["mcp", "list"]);
    let header = table.lines().next().unwrap();
    assert!(
        header.starts_with("NAME                 TRANSPORT SCOPE   STATUS"),
        "{table}"
    );
    assert!(
        table
            .lines()
            .any(|l| l.starts_with("over                 stdio     local   ● connected")),
        "{table}"
    );
    // With --yes the project's entry runs, and it is the project's, not the user's.
    let rows: Value = serde_json::from_str(&h.ok(&["mcp", "list", "--json", "--yes"])).unwrap();
    let shared = rows
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == "shared")
        .unwrap();
    assert!(
        shared["error"].as_str().unwrap().contains("project entry"),
        "{shared}"
    );
}

/// The files of every tool, in each tool's format, in the scratch HOME and project.
fn other_tools(h: &Home) {
    h.write(
        &h.config().join("Claude/claude_desktop_config.json"),
        r#"{
  "mcpServers": {
    "filesystem": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/home/me/Desktop"]},
    "github": {"command": "docker", "args": ["run", "-i", "--rm", "-e", "GITHUB_PERSONAL_ACCESS_TOKEN", "ghcr.io/github/github-mcp-server"], "env": {"GITHUB_PERSONAL_ACCESS_TOKEN": "ghp_desktopsecret"}}
  },
  "globalShortcut": ""
}"#,
    );
    h.write(
        &h.home.join(".claude.json"),
        &json!({
            "numStartups": 12,
            "mcpServers": {"sentry": {"type": "http", "url": "https://mcp.sentry.dev/mcp"}},
            "projects": {
                h.project.display().to_string(): {"allowedTools": [], "mcpServers": {"private-db": {"type": "stdio", "command": "db-mcp", "args": ["--readonly"], "env": {}}}},
                "/some/other/project": {"mcpServers": {"elsewhere": {"type": "stdio", "command": "x", "args": []}}}
            }
        })
        .to_string(),
    );
    h.write(
        &h.home.join(".cursor/mcp.json"),
        r#"{"mcpServers": {"linear": {"url": "https://mcp.linear.app/sse"}, "filesystem": {"command": "npx", "args": ["-y", "fs-other"]}}}"#,
    );
    h.write(
        &h.project.join(".cursor/mcp.json"),
        r#"{"mcpServers": {"proj-tool": {"command": "node", "args": ["${workspaceFolder}/tool.js"], "env": {"KEY": "${env:PROJ_KEY}"}}}}"#,
    );
    h.write(
        &h.project.join(".vscode/mcp.json"),
        r#"{
  // Workspace servers
  "inputs": [
    {"type": "promptString", "id": "perplexity-key", "description": "Perplexity API Key", "password": true}
  ],
  "servers": {
    "perplexity": {
      "type": "stdio",
      "command": "npx",
      "args": ["-y", "server-perplexity-ask"],
      "env": {"PERPLEXITY_API_KEY": "${input:perplexity-key}"},
    },
  },
}"#,
    );
    h.write(
        &h.config().join("Code/User/settings.json"),
        r#"{
    "editor.fontSize": 13,
    /* MCP servers for every workspace */
    "mcp": {
        "servers": {
            "fetch": {"command": "uvx", "args": ["mcp-server-fetch"]}, // the fetch server
        },
    },
}"#,
    );
    h.write(
        &h.home.join(".codex/config.toml"),
        r#"model = "gpt-5"

[mcp_servers.context7]
command = "npx"
args = ["-y", "@upstash/context7-mcp"]

[mcp_servers.context7.env]
LOG = "debug"

[mcp_servers.figma]
url = "https://mcp.figma.com/mcp"
bearer_token_env_var = "FIGMA_TOKEN"
"#,
    );
}

#[test]
fn import_from_each_tool() {
    let h = Home::new();
    other_tools(&h);
    let user = h.user_file();
    let user_s = user.display().to_string();

    // Dry run: the plan, nothing written.
    let out = h.ok(&[
        "mcp",
        "import",
        "--from",
        "claude-desktop",
        "--scope",
        "user",
        "--dry-run",
    ]);
    let desktop = h.config().join("Claude/claude_desktop_config.json");
    assert_eq!(
        out,
        format!(
            "Would add to {user_s}:\n  + filesystem  (from {d})\n      npx -y @modelcontextprotocol/server-filesystem /home/me/Desktop\n  + github  (from {d})\n      docker run -i --rm -e GITHUB_PERSONAL_ACCESS_TOKEN ghcr.io/github/github-mcp-server\nDry run: nothing was written.\n",
            d = desktop.display()
        )
    );
    assert!(!user.exists());

    h.ok(&[
        "mcp",
        "import",
        "--from",
        "claude-desktop",
        "--scope",
        "user",
    ]);
    let servers = |p: &Path| -> Vec<String> {
        h.json(p)["mcpServers"]
            .as_object()
            .unwrap()
            .keys()
            .cloned()
            .collect()
    };
    assert_eq!(servers(&user), vec!["filesystem", "github"]);
    assert_eq!(
        h.json(&user)["mcpServers"]["github"]["env"],
        json!({"GITHUB_PERSONAL_ACCESS_TOKEN": "ghp_desktopsecret"})
    );

    // Claude Code: its user entries and this project's private ones; never the project's
    // own `.mcp.json`.
    h.write(
        &h.project_file(),
        r#"{"mcpServers": {"team": {"command": "team-srv"}}}"#,
    );
    h.ok(&["mcp", "import", "--from", "claude-code", "--scope", "user"]);
    assert_eq!(
        servers(&user),
        vec!["filesystem", "github", "sentry", "private-db"]
    );

    // Cursor: "filesystem" clashes with a different entry: skipped, then renamed.
    let out = h.ok(&[
        "mcp", "import", "--from", "cursor", "--scope", "user", "--yes",
    ]);
    assert!(
        out.contains(&format!(
            "Skipped:\n  - filesystem  (from {}): a different server of this name exists; import with --on-conflict rename to keep both\n",
            h.home.join(".cursor/mcp.json").display()
        )),
        "{out}"
    );
    assert_eq!(
        h.json(&user)["mcpServers"]["linear"],
        json!({"url": "https://mcp.linear.app/sse"})
    );
    assert_eq!(
        h.json(&user)["mcpServers"]["proj-tool"],
        json!({"command": "node", "args": [format!("{}/tool.js", h.project.display())], "env": {"KEY": "${PROJ_KEY}"}})
    );
    let out = h.ok(&[
        "mcp",
        "import",
        "--from",
        "cursor",
        "--scope",
        "user",
        "--on-conflict",
        "rename",
        "--yes",
    ]);
    assert!(out.contains("  + filesystem-2  (from "), "{out}");
    assert!(
        out.contains("renamed: a different \"filesystem\" exists"),
        "{out}"
    );
    assert!(out.contains("  - linear  ("), "{out}");
    assert!(out.contains("already there, the same entry"), "{out}");
    assert_eq!(
        h.json(&user)["mcpServers"]["filesystem-2"]["args"],
        json!(["-y", "fs-other"])
    );

    // VS Code (into the local scope): a password input is answered (--input, as a script
    // does; a terminal asks) and kept in the credential store, never in the file; JSONC
    // settings.
    let out = h.ok(&[
        "mcp",
        "import",
        "--from",
        "vscode",
        "--input",
        "perplexity-key=pk-123",
        "--yes",
    ]);
    let credentials = h.home.join(".local/share/harness9/credentials.json");
    assert!(
        out.ends_with(&format!(
            "Note: the value of perplexity-key for \"perplexity\" is kept in a file readable only by you: {}\n",
            credentials.display()
        )),
        "{out}"
    );
    let local = h.local_file();
    assert_eq!(
        h.json(&local),
        json!({"mcpServers": {
            "fetch": {"command": "uvx", "args": ["mcp-server-fetch"]},
            "perplexity": {"type": "stdio", "command": "npx", "args": ["-y", "server-perplexity-ask"], "env": {"PERPLEXITY_API_KEY": "${input:perplexity-key}"}}
        }})
    );
    assert!(std::fs::read_to_string(&credentials)
        .unwrap()
        .contains("pk-123"));
    assert!(!std::fs::read_to_string(&local).unwrap().contains("pk-123"));
    let get = h.ok(&["mcp", "get", "perplexity"]);
    assert!(
        get.contains(&format!(
            "  Secrets (a file readable only by you: {}):\n    perplexity-key: set\n",
            credentials.display()
        )),
        "{get}"
    );

    // Codex TOML, into the project's own file.
    h.ok(&["mcp", "import", "--from", "codex", "--scope", "project"]);
    assert_eq!(
        h.json(&h.project_file()),
        json!({"mcpServers": {
            "team": {"command": "team-srv"},
            "context7": {"command": "npx", "args": ["-y", "@upstash/context7-mcp"], "env": {"LOG": "debug"}},
            "figma": {"type": "http", "url": "https://mcp.figma.com/mcp", "headers": {"Authorization": "Bearer ${FIGMA_TOKEN}"}}
        }})
    );

    // --json: the plan as data.
    let plan: Value = serde_json::from_str(&h.ok(&[
        "mcp",
        "import",
        "--from",
        "codex",
        "--scope",
        "project",
        "--dry-run",
        "--json",
    ]))
    .unwrap();
    assert_eq!(plan["added"], json!([]));
    assert_eq!(plan["skipped"].as_array().unwrap().len(), 2);
}

#[test]
fn import_with_nothing_found_or_a_broken_file() {
    let h = Home::new();
    let o = h.run(&["mcp", "import", "--from", "codex"]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&o.stderr),
        "harness9: no Codex MCP servers found on this machine\n"
    );
    h.write(&h.home.join(".codex/config.toml"), "[mcp_servers.x\n");
    let o = h.run(&["mcp", "import", "--from", "codex"]);
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.starts_with(&format!(
            "harness9: skipped {}: invalid TOML",
            h.home.join(".codex/config.toml").display()
        )),
        "{err}"
    );
}

/// The façade: one merged list, and edits land in the file the entry comes from.
#[tokio::test]
async fn the_facade_disables_a_server_in_its_own_scope_file() {
    let p =
        super::support::Project::new(&json!({"mcpServers": {"team": {"command": fixture_bin()}}}));
    let files = p.scope_files();
    std::fs::create_dir_all(files.user.parent().unwrap()).unwrap();
    std::fs::write(
        &files.user,
        json!({"keep": 1, "mcpServers": {"mine": {"command": fixture_bin()}}}).to_string(),
    )
    .unwrap();
    let h = p.started().await;
    let scopes: Vec<(String, harness9::config::Scope)> = h
        .status()
        .servers
        .iter()
        .map(|s| (s.name.clone(), s.scope))
        .collect();
    assert_eq!(
        scopes,
        vec![
            ("mine".to_string(), harness9::config::Scope::User),
            ("team".to_string(), harness9::config::Scope::Project)
        ]
    );
    h.set_server_disabled("mine", true).await.unwrap();
    let user: Value = serde_json::from_str(&std::fs::read_to_string(&files.user).unwrap()).unwrap();
    assert_eq!(
        user,
        json!({"keep": 1, "mcpServers": {"mine": {"command": fixture_bin(), "disabled": true}}})
    );
    let project: Value =
        serde_json::from_str(&std::fs::read_to_string(p.path().join(".mcp.json")).unwrap())
            .unwrap();
    assert_eq!(
        project,
        json!({"mcpServers": {"team": {"command": fixture_bin()}}})
    );
    assert_eq!(
        h.server_entry("mine").map(|e| (e.scope, e.disabled)),
        Some((harness9::config::Scope::User, true))
    );
    h.shutdown().await;
}
