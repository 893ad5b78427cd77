use super::*;
use serde_json::json;

struct Machine {
    _tmp: tempfile::TempDir,
    root: PathBuf,
    at: Places,
    project: PathBuf,
}

fn machine() -> Machine {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().canonicalize().unwrap();
    let at = Places {
        home: root.join("home"),
        config: root.join("home/.config"),
        codex_home: root.join("home/.codex"),
    };
    let project = root.join("proj");
    std::fs::create_dir_all(&project).unwrap();
    Machine {
        _tmp: tmp,
        root,
        at,
        project,
    }
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn servers(m: &Machine, source: ImportSource) -> Vec<(String, Value)> {
    let (found, errors) = find(source, &m.project, &m.at);
    assert_eq!(errors, vec![]);
    found.into_iter().flat_map(|f| f.servers).collect()
}

#[test]
fn jsonc_comments_and_trailing_commas() {
    let text = "{\n // a comment, with \"quotes\"\n \"a\": \"http://x//y\", /* block */\n \"b\": [1, 2,],\n \"c\": {\"d\": \",}\",},\n}";
    assert_eq!(
        parse_jsonc(text).unwrap(),
        json!({"a": "http://x//y", "b": [1, 2], "c": {"d": ",}"}})
    );
}

#[test]
fn claude_code_user_and_this_projects_entries() {
    let m = machine();
    write(
        &m.at.home.join(".claude.json"),
        &json!({
            "numStartups": 3,
            "mcpServers": {"u": {"type": "stdio", "command": "u", "args": [], "env": {}}},
            "projects": {
                m.project.display().to_string(): {"mcpServers": {"l": {"type": "http", "url": "https://l/mcp"}}},
                "/elsewhere": {"mcpServers": {"other": {"command": "o"}}}
            }
        })
        .to_string(),
    );
    write(
        &m.project.join(".mcp.json"),
        r#"{"mcpServers": {"p": {"command": "p"}}}"#,
    );
    let names: Vec<String> = servers(&m, ImportSource::ClaudeCode)
        .into_iter()
        .map(|(n, _)| n)
        .collect();
    // The project's own `.mcp.json` is harness9's, never a source.
    assert_eq!(names, vec!["u", "l"]);
}

#[test]
fn vscode_inputs_become_questions_and_variables_are_translated() {
    let m = machine();
    write(
        &m.project.join(".vscode/mcp.json"),
        r#"{
  // VS Code's own format
  "inputs": [{"type": "promptString", "id": "github-token", "description": "GitHub PAT", "password": true},
             {"type": "pickString", "id": "region", "description": "Region", "options": ["eu", "us"], "default": "eu"}],
  "servers": {
    "github": {"type": "http", "url": "https://api.example.com/mcp", "headers": {"Authorization": "Bearer ${input:github-token}", "X-Region": "${input:region}"}},
    "fs": {"type": "stdio", "command": "npx", "args": ["-y", "fs-server", "${workspaceFolder}", "${userHome}${/}notes"], "env": {"HOME_DIR": "${env:HOME}"}},
    "editor": {"command": "x", "args": ["${file}"]},
  },
}"#,
    );
    let (mut found, _) = find(ImportSource::Vscode, &m.project, &m.at);
    assert_eq!(found.len(), 1);
    let home = m.at.home.display().to_string();
    assert_eq!(
        found[0].servers,
        vec![
            (
                "github".to_string(),
                json!({"type": "http", "url": "https://api.example.com/mcp", "headers": {"Authorization": "Bearer ${input:github-token}", "X-Region": "${input:region}"}})
            ),
            (
                "fs".to_string(),
                json!({"type": "stdio", "command": "npx", "args": ["-y", "fs-server", m.project.display().to_string(), format!("{home}/notes")], "env": {"HOME_DIR": "${HOME}"}})
            ),
        ]
    );
    let qs = questions(&found);
    assert_eq!(
        qs.iter()
            .map(|q| (
                q.name.as_str(),
                q.secret,
                q.choices.len(),
                q.default.as_deref()
            ))
            .collect::<Vec<_>>(),
        vec![
            ("github-token", true, 0, None),
            ("region", false, 2, Some("eu"))
        ]
    );
    // A plain answer goes into the entry; a secret stays a reference.
    let answers = [
        ("region".to_string(), "us".to_string()),
        ("github-token".to_string(), "s3cr3t".to_string()),
    ]
    .into_iter()
    .collect();
    answer(&mut found, &answers);
    assert_eq!(
        found[0].servers[0].1["headers"],
        json!({"Authorization": "Bearer ${input:github-token}", "X-Region": "us"})
    );
    let files = ScopeFiles::within(&m.project, &m.root.join("cfg"), &m.root.join("data"));
    let p = plan(&files, Scope::Local, &found, OnConflict::Skip).unwrap();
    assert_eq!(
        p.translated,
        vec![
            "github: ${input:region} → us".to_string(),
            format!("fs: ${{workspaceFolder}} → {}", m.project.display()),
            format!("fs: ${{userHome}} → {home}"),
            "fs: ${/} → /".to_string(),
            "fs: ${env:HOME} → ${HOME}".to_string(),
        ]
    );
    assert_eq!(p.inputs.len(), 1);
    assert_eq!(p.inputs[0].servers, vec!["github"]);
    assert_eq!(
        p.skipped
            .iter()
            .map(|s| (s.name.as_str(), s.reason.as_str()))
            .collect::<Vec<_>>(),
        vec![(
            "editor",
            "cannot be imported: it uses ${file}, which only VS Code can fill in"
        )]
    );
    assert!(
        !p.text.contains("s3cr3t"),
        "a secret never reaches the file"
    );
}

#[test]
fn vscode_user_settings_mcp_key() {
    let m = machine();
    write(
        &m.at.config.join("Code/User/settings.json"),
        "{\n  \"editor.fontSize\": 14, // big\n  \"mcp\": {\"servers\": {\"s\": {\"command\": \"s\",},},},\n}\n",
    );
    assert_eq!(
        servers(&m, ImportSource::Vscode),
        vec![("s".to_string(), json!({"command": "s"}))]
    );
}

#[test]
fn codex_toml_tables() {
    let m = machine();
    write(
        &m.at.codex_home.join("config.toml"),
        r#"model = "o3"

[mcp_servers.docs]
command = "npx"
args = ["-y", "docs-server"]
env = { "API_KEY" = "abc" }
env_vars = ["HOME_TOKEN"]
startup_timeout_sec = 20

[mcp_servers.remote]
url = "https://r.example.com/mcp"
bearer_token_env_var = "R_TOKEN"
enabled = false
"#,
    );
    assert_eq!(
        servers(&m, ImportSource::Codex),
        vec![
            (
                "docs".to_string(),
                json!({"command": "npx", "args": ["-y", "docs-server"], "env": {"API_KEY": "abc", "HOME_TOKEN": "${HOME_TOKEN}"}, "startupTimeoutSec": 20})
            ),
            (
                "remote".to_string(),
                json!({"type": "http", "url": "https://r.example.com/mcp", "headers": {"Authorization": "Bearer ${R_TOKEN}"}, "disabled": true})
            ),
        ]
    );
    // A trusted project's own file too.
    write(
        &m.project.join(".codex/config.toml"),
        "[mcp_servers.proj]\ncommand = \"p\"\n",
    );
    assert_eq!(servers(&m, ImportSource::Codex).len(), 3);
}

#[test]
fn broken_files_are_named_and_missing_ones_ignored() {
    let m = machine();
    assert_eq!(
        find(ImportSource::Cursor, &m.project, &m.at),
        (vec![], vec![])
    );
    write(&m.at.home.join(".cursor/mcp.json"), "{ nope");
    let (_, errors) = find(ImportSource::Cursor, &m.project, &m.at);
    assert_eq!(errors.len(), 1);
    assert!(errors[0].path.ends_with(".cursor/mcp.json"));
    assert!(
        errors[0].message.starts_with("invalid JSON"),
        "{}",
        errors[0].message
    );
}

#[test]
fn plan_adds_skips_and_renames() {
    let m = machine();
    let files = ScopeFiles::within(&m.project, &m.root.join("cfg"), &m.root.join("data"));
    write(
        &files.user,
        r#"{"keep": true, "mcpServers": {"same": {"command": "s"}, "clash": {"command": "mine"}, "clash-2": {"command": "taken"}}}"#,
    );
    let found = vec![FoundFile {
        source: ImportSource::Cursor,
        path: m.root.join("c.json"),
        part: "mcpServers".into(),
        servers: vec![
            ("new".into(), json!({"command": "n"})),
            ("same".into(), json!({"command": "s"})),
            ("clash".into(), json!({"command": "theirs"})),
            ("broken".into(), json!({"command": "x", "url": "y"})),
        ],
        notes: vec![],
        in_project: false,
        inputs: vec![],
        translated: vec![],
        refused: vec![],
    }];
    let skip = plan(&files, Scope::User, &found, OnConflict::Skip).unwrap();
    let names = |v: &[ImportedServer]| v.iter().map(|s| s.name.clone()).collect::<Vec<_>>();
    assert_eq!(names(&skip.added), vec!["new"]);
    assert_eq!(names(&skip.skipped), vec!["same", "clash", "broken"]);
    let rename = plan(&files, Scope::User, &found, OnConflict::Rename).unwrap();
    assert_eq!(names(&rename.added), vec!["new", "clash-3"]);
    write_plan_and_check(&rename, &files);
}

fn write_plan_and_check(p: &ImportPlan, files: &ScopeFiles) {
    super::write(p).unwrap();
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&files.user).unwrap()).unwrap();
    assert_eq!(
        doc,
        json!({"keep": true, "mcpServers": {
            "same": {"command": "s"}, "clash": {"command": "mine"}, "clash-2": {"command": "taken"},
            "new": {"command": "n"}, "clash-3": {"command": "theirs"}}})
    );
}

#[test]
fn discover_counts_servers_per_tool() {
    let m = machine();
    write(
        &m.at.config.join("Claude/claude_desktop_config.json"),
        r#"{"mcpServers": {"a": {"command": "a"}, "b": {"command": "b"}}}"#,
    );
    write(
        &m.project.join(".cursor/mcp.json"),
        r#"{"mcpServers": {"c": {"url": "https://c/mcp"}}}"#,
    );
    let found = discover(&m.project, &m.at);
    let summary: Vec<(ImportSource, u32)> = found.iter().map(|f| (f.source, f.servers)).collect();
    assert_eq!(
        summary,
        vec![(ImportSource::ClaudeDesktop, 2), (ImportSource::Cursor, 1)]
    );
}
