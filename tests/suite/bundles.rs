//! MCP bundles (`.mcpb`): real bundles packed by the official packer (`@anthropic-ai/mcpb`,
//! installed by the test command) from two servers of ours in `tests/servers/bundles` — a
//! Node.js one with no dependencies and a Python one on the official SDK (the venv's) —
//! install, start and list their tools; hostile archives and lying manifests, made here
//! with the zip crate, are refused with nothing written; the desktop's façade plans and
//! commits a bundle.

use std::io::Write;
use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use super::support::bins::{external, python_server, servers_dir};
use super::support::home::{texts, Home};

/// Packs `tests/servers/bundles/NAME` with the official packer into `out`.
fn pack(mcpb: &Path, name: &str, out: &Path) -> PathBuf {
    let src = servers_dir().join("bundles").join(name);
    let file = out.join(format!("{name}.mcpb"));
    let o = std::process::Command::new(mcpb)
        .arg("pack")
        .arg(&src)
        .arg(&file)
        .output()
        .unwrap();
    assert!(o.status.success(), "{:?}", texts(&o));
    file
}

/// PATH with the venv's python first (the Python bundle runs `python`), and no login
/// shell to take another PATH from.
fn env(path: &str) -> Vec<(&str, &str)> {
    vec![("PATH", path), ("SHELL", "/nonexistent/shell")]
}

fn venv_path() -> Option<String> {
    let (python, _) = python_server()?;
    let bin = python.parent().unwrap().display().to_string();
    Some(format!("{bin}:{}", std::env::var("PATH").unwrap()))
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let target = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &target);
        } else {
            std::fs::copy(e.path(), target).unwrap();
        }
    }
}

fn credentials(h: &Home) -> String {
    std::fs::read_to_string(h.home.join(".local/share/harness9/credentials.json"))
        .unwrap_or_default()
}

fn bundles_dir(h: &Home) -> PathBuf {
    h.home.join(".local/share/harness9/bundles")
}

#[test]
fn node_and_python_bundles_install_start_and_go_with_their_entry() {
    let Some(mcpb) = external("H9_MCPB_BIN") else {
        return;
    };
    let Some(path) = venv_path() else { return };
    let e = env(&path);
    let h = Home::new();
    let packed = tempfile::tempdir().unwrap();
    let node = pack(&mcpb, "node-notes", packed.path());
    let node_arg = node.display().to_string();
    let dir = bundles_dir(&h).join("node-notes@1.2.0");
    let home = h.home.display().to_string();

    // The project scope is refused: the files live in this user's data folder.
    let (_, err) = h.expect(
        &["mcp", "install", &node_arg, "--scope", "project", "--yes"],
        &e,
        2,
    );
    assert_eq!(
        err,
        "harness9: a bundle's entry goes in the user or the local scope, not the project scope: its files live in your data folder, which others' checkouts do not have\n"
    );
    // Without its required secret, in a script: nothing is written or unpacked.
    let (_, err) = h.expect(&["mcp", "install", &node_arg, "--yes"], &e, 2);
    assert_eq!(
        err,
        "harness9: these values are required: token; give them with -e NAME=VALUE (or answer when asked)\n"
    );
    assert!(!bundles_dir(&h).exists());

    let (out, err) = h.expect(
        &[
            "mcp",
            "install",
            &node_arg,
            "--config",
            "token=tok-123",
            "--config",
            "folders=/srv/a",
            "--config",
            "folders=/srv/b c",
            "--yes",
        ],
        &e,
        0,
    );
    assert_eq!(err, "");
    let node_version = {
        let o = std::process::Command::new("node")
            .arg("--version")
            .output()
            .unwrap();
        String::from_utf8_lossy(&o.stdout)
            .trim()
            .trim_start_matches('v')
            .to_string()
    };
    let d = dir.display();
    assert_eq!(
        out,
        format!(
            "node-notes 1.2.0 by harness9 tests (bundle {node_arg}, not signed)\n  \
             A test bundle: a dependency-free Node.js MCP server that reports how it was started.\n  \
             Tools: how_started, add_note\n  Prompts: summarize\n  \
             Runs on: darwin, linux (linux here); node >=18.0.0 (found {node_version})\n  \
             Files: 2 (4 KB) into {d}\n\
             Adds server \"node-notes\" in the user scope ({user}):\n  \
             node {d}/server/index.js /srv/a '/srv/b c'\n  \
             env NOTES_TOKEN=${{input:token}}  (secret: kept in the credential store)\n  \
             env NOTES_LIMIT=10\n  env NOTES_HOME={home}\n  env NOTES_PLATFORM=linux\n\
             Values:\n  \
             token (required, secret) given: Token: A secret the server reads\n  \
             folders (required) = /srv/a, /srv/b c: Folders: Folders the server may read\n  \
             limit (optional) = 10: Limit: Most notes kept\n  \
             label (optional) left out: Label: A label for the notes\n\
             Note: the bundle is not signed\n\
             Added server \"node-notes\" in the user scope ({user})\n\
             Secrets kept in a file readable only by you: {creds}: token\n",
            user = h.user_file().display(),
            creds = h
                .home
                .join(".local/share/harness9/credentials.json")
                .display(),
        )
    );
    assert_eq!(
        h.json(&h.user_file())["mcpServers"]["node-notes"],
        json!({"type": "stdio", "command": "node",
               "args": [format!("{d}/server/index.js"), "/srv/a", "/srv/b c"],
               "env": {"NOTES_TOKEN": "${input:token}", "NOTES_LIMIT": "10",
                       "NOTES_HOME": home, "NOTES_PLATFORM": "linux"},
               "cwd": d.to_string()})
    );
    assert!(dir.join("server/index.js").is_file());
    assert!(credentials(&h).contains("tok-123"));
    assert!(!std::fs::read_to_string(h.user_file())
        .unwrap()
        .contains("tok-123"));

    // It starts, lists its tools, and gets the secret, the folders and its folder.
    let (out, _) = h.expect(&["mcp", "tools", "node-notes"], &e, 0);
    assert!(out.contains("mcp__node-notes__how_started"), "{out}");
    let (out, _) = h.expect(&["mcp", "call", "node-notes", "how_started"], &e, 0);
    let start = out.find('{').unwrap();
    let got: Value = serde_json::from_str(out[start..].trim()).unwrap();
    assert_eq!(got["args"], json!(["/srv/a", "/srv/b c"]));
    assert_eq!(got["cwd"], d.to_string());
    assert_eq!(got["env"]["NOTES_TOKEN"], "tok-123");

    // The Python bundle: the SDK's server, run by the python on the servers' PATH.
    let py = pack(&mcpb, "py-clock", packed.path());
    let py_arg = py.display().to_string();
    let (out, _) = h.expect(
        &["mcp", "install", &py_arg, "--scope", "local", "--yes"],
        &e,
        0,
    );
    assert!(out.contains("  Tools: now, zone\n"), "{out}");
    let (out, _) = h.expect(&["mcp", "tools", "py-clock"], &e, 0);
    assert!(out.contains("mcp__py-clock__now"), "{out}");
    let (out, _) = h.expect(&["mcp", "call", "py-clock", "zone"], &e, 0);
    assert!(out.contains("UTC"), "{out}");

    // A newer version replaces its own entry (an update) and its folder.
    let newer = packed.path().join("node-notes-1.3.0");
    copy_dir(&servers_dir().join("bundles/node-notes"), &newer);
    let m = newer.join("manifest.json");
    let manifest_text = std::fs::read_to_string(&m).unwrap();
    std::fs::write(&m, manifest_text.replace("\"1.2.0\"", "\"1.3.0\"")).unwrap();
    let o = std::process::Command::new(&mcpb)
        .arg("pack")
        .arg(&newer)
        .arg(packed.path().join("newer.mcpb"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{:?}", texts(&o));
    let newer_arg = packed.path().join("newer.mcpb").display().to_string();
    let (out, _) = h.expect(
        &[
            "mcp",
            "install",
            &newer_arg,
            "--config",
            "folders=/srv/a",
            "--yes",
        ],
        &e,
        0,
    );
    assert!(out.contains("Updated server \"node-notes\""), "{out}");
    assert!(out.contains("token (required, secret) kept"), "{out}");
    assert!(!dir.exists());
    let dir = bundles_dir(&h).join("node-notes@1.3.0");
    assert!(dir.join("server/index.js").is_file());

    // Removing the entry removes its files and its secret.
    h.expect(&["mcp", "remove", "node-notes"], &e, 0);
    assert!(!dir.exists());
    assert!(!credentials(&h).contains("tok-123"));
    assert!(bundles_dir(&h).join("py-clock@0.4.1").is_dir());
    h.expect(&["mcp", "remove", "py-clock"], &e, 0);
    assert_eq!(std::fs::read_dir(bundles_dir(&h)).unwrap().count(), 0);
}

/// A manifest that is valid for the packer and for us.
fn manifest() -> Value {
    json!({"manifest_version": "0.3", "name": "evil", "version": "1.0.0",
           "description": "d", "author": {"name": "E"},
           "server": {"type": "node", "entry_point": "server/index.js",
                      "mcp_config": {"command": "node", "args": ["${__dirname}/server/index.js"]}}})
}

enum Entry<'a> {
    File(&'a str, Vec<u8>),
    Link(&'a str, &'a str),
}

fn zip_file(dir: &Path, name: &str, entries: &[Entry<'_>]) -> String {
    use zip::write::SimpleFileOptions;
    let path = dir.join(name);
    let mut w = zip::ZipWriter::new(std::fs::File::create(&path).unwrap());
    let opts = SimpleFileOptions::default();
    for e in entries {
        match e {
            Entry::File(n, data) => {
                w.start_file(*n, opts).unwrap();
                w.write_all(data).unwrap();
            }
            Entry::Link(n, target) => w.add_symlink(*n, *target, opts).unwrap(),
        }
    }
    w.finish().unwrap();
    path.display().to_string()
}

#[test]
fn hostile_bundles_are_refused_and_nothing_is_written() {
    let h = Home::new();
    let dir = tempfile::tempdir().unwrap();
    let path = std::env::var("PATH").unwrap();
    let e = env(&path);
    let m = |patch: &dyn Fn(&mut Value)| {
        let mut v = manifest();
        patch(&mut v);
        Entry::File("manifest.json", v.to_string().into_bytes())
    };
    let server = || Entry::File("server/index.js", b"// server".to_vec());
    let cases: Vec<(&str, Vec<Entry<'_>>, String)> = vec![
        (
            "traversal.mcpb",
            vec![m(&|_| {}), server(), Entry::File("../../evil.txt", b"x".to_vec())],
            "the entry \"../../evil.txt\" would be written outside the bundle's folder".into(),
        ),
        (
            "absolute.mcpb",
            vec![m(&|_| {}), server(), Entry::File("/tmp/evil.txt", b"x".to_vec())],
            "the entry \"/tmp/evil.txt\" would be written outside the bundle's folder".into(),
        ),
        (
            "symlink.mcpb",
            vec![m(&|_| {}), server(), Entry::Link("server/lib", "/etc")],
            "the entry \"server/lib\" is a symbolic link".into(),
        ),
        (
            "bomb.mcpb",
            vec![m(&|_| {}), server(), Entry::File("zeros.bin", vec![0u8; 8 * 1024 * 1024])],
            "the entry \"zeros.bin\" unpacks to more than 200 times its size (a zip bomb?)".into(),
        ),
        (
            "no-entry-point.mcpb",
            vec![m(&|_| {})],
            "its entry point \"server/index.js\" is not in the bundle".into(),
        ),
        (
            "wrong-type.mcpb",
            vec![m(&|v| v["server"]["entry_point"] = json!(["a"])), server()],
            "its manifest.json is not a valid manifest (invalid type: sequence, expected a string at line 1 column 136)".into(),
        ),
        (
            "long-name.mcpb",
            vec![m(&|v| v["name"] = json!("n".repeat(100_000))), server()],
            "its name is longer than 128 bytes".into(),
        ),
        (
            "bad-config.mcpb",
            vec![
                m(&|v| v["user_config"] = json!({"n": {"type": "number", "default": true}})),
                server(),
            ],
            "its user_config \"n\" has a default that is not a number".into(),
        ),
        (
            "env-leak.mcpb",
            vec![
                m(&|v| v["server"]["mcp_config"]["env"] = json!({"X": "${AWS_SECRET_ACCESS_KEY}"})),
                server(),
            ],
            "it uses ${AWS_SECRET_ACCESS_KEY}, which bundles do not define".into(),
        ),
        (
            "not-a-zip.mcpb",
            vec![],
            String::new(),
        ),
    ];
    for (name, entries, reason) in &cases {
        let file = if entries.is_empty() {
            let p = dir.path().join(name);
            std::fs::write(&p, b"<html>not a bundle</html>").unwrap();
            p.display().to_string()
        } else {
            zip_file(dir.path(), name, entries)
        };
        let (_, err) = h.expect(&["mcp", "install", &file, "--yes"], &e, 1);
        if reason.is_empty() {
            assert!(
                err.starts_with(&format!(
                    "harness9: the bundle \"{file}\" cannot be installed: it is not a zip archive ("
                )),
                "{err}"
            );
        } else {
            assert_eq!(
                err,
                format!("harness9: the bundle \"{file}\" cannot be installed: {reason}\n"),
                "{name}"
            );
        }
    }
    assert!(!bundles_dir(&h).exists());
    assert!(!h.user_file().exists());
    assert!(!dir.path().join("evil.txt").exists());
    // A platform it does not run on.
    let file = zip_file(
        dir.path(),
        "mac-only.mcpb",
        &[
            m(&|v| v["compatibility"] = json!({"platforms": ["darwin", "win32"]})),
            server(),
        ],
    );
    let (_, err) = h.expect(&["mcp", "install", &file, "--yes"], &e, 1);
    assert_eq!(
        err,
        "harness9: \"evil\" does not run here: it runs on darwin, win32 only, and this is linux\n"
    );
}

/// What the desktop app calls: a path in, a plan out (what the bundle is), the commit that
/// registry installs use; the server starts.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_facade_plans_and_commits_a_bundle() {
    use super::support::project::Project;
    use super::support::wait::wait_until;
    use harness9::manager::ServerState;

    let Some(mcpb) = external("H9_MCPB_BIN") else {
        return;
    };
    let packed = tempfile::tempdir().unwrap();
    let file = pack(&mcpb, "node-notes", packed.path());
    let p = Project::new(&json!({"mcpServers": {}}));
    let h = harness9::Harness::open(
        p.path(),
        harness9::HarnessOptions {
            auth: Some(harness9::mcp::auth::AuthContext::memory()),
            ..p.harness_options()
        },
    );
    let err = h
        .plan_bundle_install(harness9::harness::BundleRequest {
            path: file.display().to_string(),
            scope: Some(harness9::config::Scope::Project),
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_eq!(err.code(), "bundle-scope");
    let plan = h
        .plan_bundle_install(harness9::harness::BundleRequest {
            path: file.display().to_string(),
            scope: Some(harness9::config::Scope::Local),
            ..Default::default()
        })
        .await
        .unwrap();
    let b = plan.bundle.clone().unwrap();
    assert_eq!(
        (b.author.as_str(), b.server_type.as_str(), b.signed, b.files),
        ("harness9 tests", "node", false, 2)
    );
    let tools: Vec<&str> = b.tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(tools, ["how_started", "add_note"]);
    assert!(b.compatibility.platform_ok && b.compatibility.runtimes[0].ok);
    let folders = plan.variables.iter().find(|v| v.name == "folders").unwrap();
    assert_eq!(
        (folders.format.as_deref(), folders.multiple),
        (Some("directory"), true)
    );
    let answers: std::collections::BTreeMap<String, String> = [
        ("token".to_string(), "tok-facade".to_string()),
        ("limit".to_string(), "500".to_string()),
    ]
    .into();
    assert_eq!(
        plan.fill(&answers).unwrap_err().to_string(),
        "the value of \"limit\" cannot be used: it must be between 1 and 100"
    );
    let answers: std::collections::BTreeMap<String, String> =
        [("token".to_string(), "tok-facade".to_string())].into();
    let shown = plan.fill(&answers).unwrap();
    let done = h
        .commit_install(plan, answers, shown.digest.clone())
        .await
        .unwrap();
    assert_eq!(done.secrets, vec!["token"]);
    assert!(Path::new(&b.dir).join("server/index.js").is_file());
    wait_until(h.manager(), "node-notes connects", |s| {
        s.servers
            .iter()
            .any(|x| x.name == "node-notes" && matches!(x.state, ServerState::Connected { .. }))
    })
    .await;
    h.shutdown().await;
}
