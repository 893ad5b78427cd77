//! Installing servers from MCP registries: search (paging, several registries, the cache,
//! offline), install → start → tools for an npm package, a PyPI package and a remote, an
//! OCI entry's command, secrets kept in the credential store and put in at start, updates,
//! hostile registries and records, and imports that translate other tools' variables.
//!
//! The registry is our fixture (`mcp-registry-fixture`), serving the read API over
//! loopback with real records of the MCP Registry's seed data (`data/seed.json` of the
//! registry's repository; its OpenAPI description gives the contract) and records the
//! tests add. Package runners are stand-ins (see [`Runners`]) that run the real packages
//! the test command installed, so nothing is fetched.

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::support::bins::{everything_bin, python_server};
use super::support::home::Home;
use super::support::http::Fixture;
use super::support::project::list_statuses;
use super::support::registry::{
    everything_package_json, mcp_sdk_version, npm_version, Registry, Runners,
};

/// The environment of one run: the registries and a PATH with the runners first, and no
/// login shell to take another PATH from.
fn env<'a>(registries: &'a str, path: &'a str) -> Vec<(&'a str, &'a str)> {
    vec![
        ("HARNESS9_REGISTRY", registries),
        ("PATH", path),
        ("SHELL", "/nonexistent/shell"),
    ]
}

fn credentials(h: &Home) -> String {
    std::fs::read_to_string(h.home.join(".local/share/harness9/credentials.json"))
        .unwrap_or_default()
}

#[test]
fn search_follows_pages_labels_registries_and_answers_from_the_cache() {
    let h = Home::new();
    let a = Registry::start(&[], 2, None);
    let b = Registry::start(
        &[
            json!({"name": "io.github.domdomegg/time-mcp-pypi", "description": "B's copy", "version": "9.9.9",
                   "packages": [{"registryType": "pypi", "identifier": "other", "version": "9.9.9"}]}),
            json!({"name": "com.example/only-in-b", "title": "Only B", "description": "A server B lists.", "version": "2.0.0",
                   "remotes": [{"type": "sse", "url": "https://b.example/sse"}]}),
        ],
        100,
        None,
    );
    let both = format!("{} {}", a.url, b.url);
    let path = std::env::var("PATH").unwrap();
    let (out, err) = h.expect(&["mcp", "search"], &env(&both, &path), 0);
    assert_eq!(err, "");
    let (au, bu) = (&a.url.clone(), &b.url.clone());
    assert_eq!(
        out,
        format!(
            "NAME                                     VERSION  RUNS                        REGISTRY{pad}  DESCRIPTION\n\
             io.github.domdomegg/airtable-mcp-server  1.7.3    npx docker mcpb             {au}  Read and write access to Airtable database schemas, tables, and records.\n\
             io.github.domdomegg/time-mcp-nuget       1.0.8    dnx                         {au}  Get the current UTC time in RFC 3339 format.\n\
             io.github.domdomegg/time-mcp-pypi        1.0.6    uvx                         {au}  Get the current UTC time in RFC 3339 format.\n\
             io.github.getcyphrex/cyphrex-mcp         0.1.0    https://mcp.cyphrex.io/mcp  {au}  Cyphrex: Blockchain SSN for AI agents. MCP-native identity, behavior enforcemen…\n\
             com.example/only-in-b                    2.0.0    https://b.example/sse       {bu}  Only B: A server B lists.\n",
            pad = " ".repeat(au.len().max(bu.len()) - 8)
        )
    );
    // Two pages of two (seed data: five records of four names; version=latest).
    assert_eq!(a.requests(), 2);

    // Search and limit, as JSON.
    let (out, _) = h.expect(
        &["mcp", "search", "time", "--limit", "1", "--json"],
        &env(&both, &path),
        0,
    );
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        v["hits"],
        json!([{"registry": a.url, "name": "io.github.domdomegg/time-mcp-nuget", "title": null,
                "description": "Get the current UTC time in RFC 3339 format.", "version": "1.0.8",
                "runs": ["dnx"], "status": "active"}])
    );

    // The same search again: from the cache, without asking.
    let before = a.requests();
    let started = Instant::now();
    h.expect(&["mcp", "search"], &env(&both, &path), 0);
    assert_eq!(a.requests(), before, "answered from the cache");
    eprintln!("warm search through the CLI: {:?}", started.elapsed());

    // Offline: the kept answer, with its age, once it is no longer fresh.
    let mut a = a;
    a.stop();
    let cache = h.home.join(".local/share/harness9/registry-cache");
    for f in std::fs::read_dir(&cache).unwrap() {
        let p = f.unwrap().path();
        let mut v: Value = serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
        v["fetchedAt"] = json!(v["fetchedAt"].as_u64().unwrap() - 3 * 3600);
        std::fs::write(&p, v.to_string()).unwrap();
    }
    let (out, err) = h.expect(&["mcp", "search"], &env(&both, &path), 0);
    assert_eq!(
        err,
        format!("harness9: registry unreachable ({au}); showing results from 3 h ago\n")
    );
    assert_eq!(out.lines().count(), 6);
    // A search never asked before: nothing to show.
    let (out, err) = h.expect(
        &["mcp", "search", "air", "--registry", au],
        &env(&both, &path),
        1,
    );
    assert_eq!(out, "");
    assert!(
        err.starts_with(&format!(
            "harness9: registry unreachable ({au}): cannot connect to 127.0.0.1:"
        )),
        "{err}"
    );
}

#[test]
fn no_registry_configured_says_what_to_set() {
    let h = Home::new();
    let path = std::env::var("PATH").unwrap();
    let (_, err) = h.expect(&["mcp", "search", "x"], &[("PATH", &path)], 2);
    assert_eq!(
        err,
        format!(
            "harness9: no MCP registry is configured. Set HARNESS9_REGISTRY to a registry's URL (for the official MCP Registry, its URL as its documentation gives it; several are searched in order when separated by spaces), or add \"registries\": [\"URL\"] to {}, or pass --registry URL\n",
            h.config().join("harness9/settings.json").display()
        )
    );
    // The settings file lists them.
    let r = Registry::start(&[], 100, None);
    h.write(
        &h.config().join("harness9/settings.json"),
        &json!({"registries": [r.url]}).to_string(),
    );
    let (out, _) = h.expect(&["mcp", "search", "cyphrex"], &[("PATH", &path)], 0);
    assert!(out.contains("io.github.getcyphrex/cyphrex-mcp"), "{out}");
}

#[test]
fn hostile_registries_stop_with_a_clear_error() {
    let h = Home::new();
    let path = std::env::var("PATH").unwrap();
    for (mode, want) in [
        ("garbage", "sent an answer that is not the registry API's: not JSON (expected value at line 1 column 1)"),
        ("huge", "sent an answer larger than 4 MiB; it was not read"),
        ("endless", "sent the same page cursor twice (a loop); stopped after 2 pages"),
        ("many-pages", "kept sending pages: stopped after 100; narrow the search or use --limit"),
    ] {
        let r = Registry::start(&[], 100, Some(mode));
        let (out, err) = h.expect(&["mcp", "search", mode], &env(&r.url, &path), 1);
        assert_eq!(out, "");
        assert_eq!(err, format!("harness9: registry {} {want}\n", r.url), "{mode}");
    }
    // An install from a registry that answers garbage writes nothing.
    let r = Registry::start(&[], 100, Some("garbage"));
    let (_, err) = h.expect(
        &[
            "mcp",
            "install",
            "io.github.domdomegg/time-mcp-pypi",
            "--yes",
        ],
        &env(&r.url, &path),
        1,
    );
    assert!(err.contains("not JSON"), "{err}");
    assert!(!h.home.join(".local/share/harness9/projects").exists());
}

/// A record of server-everything as the test command installed it (npm), with a secret and
/// an optional variable.
fn everything_record(bin: &Path) -> Value {
    let version = npm_version(&everything_package_json(bin));
    json!({
        "name": "io.github.modelcontextprotocol/server-everything",
        "title": "Everything",
        "description": "Exercises every MCP feature.",
        "version": version,
        "packages": [{
            "registryType": "npm", "identifier": "@modelcontextprotocol/server-everything",
            "version": version, "runtimeHint": "npx", "transport": {"type": "stdio"},
            "packageArguments": [{"type": "positional", "value": "stdio"}],
            "environmentVariables": [
                {"name": "EVERYTHING_TOKEN", "description": "A token", "isRequired": true, "isSecret": true},
                {"name": "EVERYTHING_MODE", "description": "A mode", "default": "plain"}
            ]
        }]
    })
}

#[test]
fn an_npm_package_installs_starts_and_gets_its_secret_at_start_only() {
    let Some(bin) = everything_bin() else { return };
    let h = Home::new();
    let r = Registry::start(&[everything_record(&bin)], 100, None);
    let runners = Runners::new(Some(&bin), None);
    let path = runners.path();
    let e = env(&r.url, &path);
    let version = npm_version(&everything_package_json(&bin));
    let name = "io.github.modelcontextprotocol/server-everything";

    // Without the required secret, in a script: nothing is written.
    let (_, err) = h.expect(&["mcp", "install", name, "--yes"], &e, 2);
    assert_eq!(
        err,
        "harness9: these values are required: EVERYTHING_TOKEN; give them with -e NAME=VALUE (or answer when asked)\n"
    );
    let (out, err) = h.expect(
        &[
            "mcp",
            "install",
            name,
            "-e",
            "EVERYTHING_TOKEN=tok-123",
            "--yes",
        ],
        &e,
        0,
    );
    assert_eq!(err, "");
    let local = h.local_file();
    let creds = h.home.join(".local/share/harness9/credentials.json");
    assert_eq!(
        out,
        format!(
            "{name} {version} from {url} (npm package)\n  Exercises every MCP feature.\n\
             Adds server \"server-everything\" in the local scope ({local}):\n  \
             npx -y @modelcontextprotocol/server-everything@{version} stdio\n  \
             env EVERYTHING_TOKEN=${{input:EVERYTHING_TOKEN}}  (secret: kept in the credential store)\n  \
             env EVERYTHING_MODE=plain\n\
             Values:\n  EVERYTHING_TOKEN (required, secret) given: A token\n  EVERYTHING_MODE (optional) = plain: A mode\n\
             Added server \"server-everything\" in the local scope ({local})\n\
             Secrets kept in a file readable only by you: {creds}: EVERYTHING_TOKEN\n",
            url = r.url,
            local = local.display(),
            creds = creds.display()
        )
    );
    assert_eq!(
        h.json(&local)["mcpServers"]["server-everything"],
        json!({"type": "stdio", "command": "npx",
               "args": ["-y", format!("@modelcontextprotocol/server-everything@{version}"), "stdio"],
               "env": {"EVERYTHING_TOKEN": "${input:EVERYTHING_TOKEN}", "EVERYTHING_MODE": "plain"}})
    );
    assert!(credentials(&h).contains("tok-123"));
    assert!(!std::fs::read_to_string(&local).unwrap().contains("tok-123"));

    // It starts (through npx), lists its tools, and its environment has the secret.
    let (out, _) = h.expect(&["mcp", "tools", "server-everything"], &e, 0);
    assert!(out.contains("mcp__server-everything__get-env"), "{out}");
    let (out, _) = h.expect(&["mcp", "call", "server-everything", "get-env"], &e, 0);
    assert!(out.contains("tok-123"), "{out}");
    let (out, _) = h.expect(&["mcp", "get", "server-everything"], &e, 0);
    assert!(
        out.ends_with(&format!(
            "  Secrets (a file readable only by you: {}):\n    EVERYTHING_TOKEN: set\n",
            creds.display()
        )),
        "{out}"
    );

    // Without its value, it does not start, and says how to set it.
    h.expect(
        &[
            "mcp",
            "secret",
            "remove",
            "server-everything",
            "EVERYTHING_TOKEN",
        ],
        &e,
        0,
    );
    assert!(!credentials(&h).contains("tok-123"));
    let (out, _) = h.expect(&["mcp", "list", "--json"], &e, 0);
    let rows: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        rows[0]["error"],
        "its input \"EVERYTHING_TOKEN\" has no value; set it with `harness9 mcp secret set server-everything EVERYTHING_TOKEN` (or in the server's settings)"
    );
}

#[test]
fn a_pypi_package_and_a_remote_install_and_start() {
    let h = Home::new();
    let rt = tokio::runtime::Runtime::new().unwrap();
    let http = rt.block_on(Fixture::start());
    let py = python_server();
    let mut records = vec![json!({
        "name": "io.github.example/remote-echo", "description": "The HTTP fixture.", "version": "1.0.0",
        "remotes": [{"type": "streamable-http", "url": format!("{}/bearer/json", http.base),
                     "headers": [{"name": "Authorization", "description": "Bearer token", "isRequired": true, "isSecret": true}]}]
    })];
    if let Some((python, script)) = &py {
        records.push(json!({
            "name": "io.github.example/py-sdk-server", "description": "The Python SDK's server.",
            "version": "1.0.0",
            "packages": [{
                "registryType": "pypi", "identifier": "mcp", "version": mcp_sdk_version(python),
                "runtimeHint": "uvx", "transport": {"type": "stdio"},
                "runtimeArguments": [{"type": "positional", "value": "--from"}],
                "packageArguments": [{"type": "positional", "value": "python"},
                                     {"type": "positional", "value": script.display().to_string()}]
            }]
        }));
    }
    let r = Registry::start(&records, 100, None);
    let runners = Runners::new(None, py.as_ref().map(|(p, _)| p.as_path()));
    let path = runners.path();
    let e = env(&r.url, &path);

    // The remote: its secret header reaches the server (which refuses requests without it).
    h.expect(
        &[
            "mcp",
            "install",
            "io.github.example/remote-echo",
            "-e",
            "Authorization=Bearer fixture-token",
            "--yes",
        ],
        &e,
        0,
    );
    assert_eq!(
        h.json(&h.local_file())["mcpServers"]["remote-echo"],
        json!({"type": "http", "url": format!("{}/bearer/json", http.base),
               "headers": {"Authorization": "${input:Authorization}"}})
    );
    let (out, _) = h.expect(&["mcp", "tools", "remote-echo"], &e, 0);
    assert!(out.contains("mcp__remote-echo__echo"), "{out}");

    if let Some((python, script)) = &py {
        let (out, _) = h.expect(
            &["mcp", "install", "io.github.example/py-sdk-server", "--yes"],
            &e,
            0,
        );
        let v = mcp_sdk_version(python);
        assert!(
            out.contains(&format!(
                "  uvx --from mcp=={v} python {}\n",
                script.display()
            )),
            "{out}"
        );
        assert!(
            out.contains("Warning: the record passes options to uvx itself: --from; check them\n"),
            "{out}"
        );
        let (out, _) = h.expect(&["mcp", "tools", "py-sdk-server"], &e, 0);
        assert!(out.contains("mcp__py-sdk-server__echo"), "{out}");
    }
    drop(http);
}

#[test]
fn oci_commands_hostile_records_and_bundles() {
    let h = Home::new();
    let r = Registry::start(
        &[
            json!({"name": "io.github.evil/option", "version": "1.0.0",
                   "packages": [{"registryType": "npm", "identifier": "--package=evil", "version": "1.0.0"}]}),
            json!({"name": "io.github.evil/ansi", "version": "1.0.0",
                   "description": format!("\u{1b}]8;;https://x.invalid\u{7}click\u{1b}[2J{}", "x".repeat(100_000))}),
            json!({"name": "io.github.evil/shell", "version": "1.0.0",
                   "packages": [{"registryType": "npm", "identifier": "ok", "version": "1.0.0",
                                 "packageArguments": [{"type": "positional", "value": "$(touch /tmp/x); `id`"}]}]}),
        ],
        100,
        None,
    );
    let path = std::env::var("PATH").unwrap();
    let e = env(&r.url, &path);
    // Control characters are shown escaped, absurd lengths cut.
    let (out, _) = h.expect(&["mcp", "search", "evil/ansi"], &e, 0);
    let row = out.lines().nth(1).unwrap();
    // 80 characters of the description as sent (the last one `…`), each control escaped.
    assert!(
        row.ends_with(&format!(
            "  \\x1b]8;;https://x.invalid\\x07click\\x1b[2J{}…",
            "x".repeat(47)
        )),
        "{row}"
    );
    let (out, _) = h.expect(&["mcp", "search", "evil/ansi", "--json"], &e, 0);
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["hits"][0]["description"].as_str().unwrap().len(), 1024);
    // OCI: docker run, the variables passed by name, the image pinned.
    let (out, _) = h.expect(
        &[
            "mcp",
            "install",
            "io.github.domdomegg/airtable-mcp-server",
            "--package",
            "oci",
            "-e",
            "AIRTABLE_API_KEY=pat1",
            "--dry-run",
            "--json",
        ],
        &e,
        0,
    );
    let plan: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        plan["plan"]["entry"],
        json!({"type": "stdio", "command": "docker",
               "args": ["run", "-i", "--rm", "-e", "AIRTABLE_API_KEY", "docker.io/domdomegg/airtable-mcp-server:1.7.3"],
               "env": {"AIRTABLE_API_KEY": "${input:AIRTABLE_API_KEY}"}})
    );
    assert_eq!(
        plan["plan"]["target"],
        "docker run -i --rm -e AIRTABLE_API_KEY docker.io/domdomegg/airtable-mcp-server:1.7.3"
    );
    assert!(!credentials(&h).contains("pat1"), "a dry run keeps nothing");

    let (_, err) = h.expect(
        &[
            "mcp",
            "install",
            "io.github.evil/option",
            "--yes",
            "--package",
            "npm",
        ],
        &e,
        1,
    );
    assert_eq!(
        err,
        "harness9: \"io.github.evil/option\" cannot be installed safely: its npm package name \"--package=evil\" is not a valid npm name\n"
    );
    // Shell metacharacters are one argument, shown quoted as it runs (no shell).
    let (out, _) = h.expect(
        &[
            "mcp",
            "install",
            "io.github.evil/shell",
            "--package",
            "npm",
            "--dry-run",
        ],
        &e,
        0,
    );
    assert!(
        out.contains("  npx -y ok@1.0.0 '$(touch /tmp/x); `id`'\n"),
        "{out}"
    );
    assert!(!h.home.join(".local/share/harness9/projects").exists());

    // A registry's bundles: not yet (a bundle file installs).
    let (_, err) = h.expect(
        &[
            "mcp",
            "install",
            "io.github.domdomegg/airtable-mcp-server",
            "--package",
            "mcpb",
        ],
        &e,
        1,
    );
    assert!(
        err.starts_with("harness9: bundles from a registry: not yet — download"),
        "{err}"
    );
}

#[test]
fn outdated_and_update_show_the_change_and_project_entries_are_approved_as_shown() {
    let h = Home::new();
    let r = Registry::start(&[], 100, None);
    // No runner at all: nothing is fetched when the entry starts.
    let runners = Runners::new(None, None);
    let path = runners.dir.path().display().to_string();
    let e = env(&r.url, &path);
    let name = "io.github.domdomegg/airtable-mcp-server";
    h.expect(
        &[
            "mcp",
            "install",
            &format!("{name}@1.7.2"),
            "--package",
            "npm",
            "--scope",
            "project",
            "-e",
            "AIRTABLE_API_KEY=pat1",
            "--yes",
        ],
        &e,
        0,
    );
    let (out, _) = h.expect(&["mcp", "outdated"], &e, 0);
    assert_eq!(
        out,
        format!(
            "NAME                 SCOPE    INSTALLED     LATEST        FROM\n\
             airtable-mcp-server  project  1.7.2         1.7.3         {name} ({})\n\
             Update one with `harness9 mcp update NAME` (it shows the new command and asks first).\n",
            r.url
        )
    );
    // Approved as shown: it does not wait for approval (it fails: npx cannot fetch offline
    // here, or is missing).
    let (out, _) = h.expect(&["mcp", "list", "--json"], &e, 0);
    assert_ne!(list_statuses(&out)[0].1, "awaiting-approval");

    // An update shows the old and new command and needs confirming.
    let (out, err) = h.expect(&["mcp", "update", "airtable-mcp-server"], &e, 1);
    assert!(
        out.contains(
            "  - npx -y airtable-mcp-server@1.7.2\n  + npx -y airtable-mcp-server@1.7.3\n"
        ),
        "{out}"
    );
    assert!(
        out.contains("  AIRTABLE_API_KEY (required, secret) kept: "),
        "{out}"
    );
    assert_eq!(
        err,
        "harness9: nothing was written: check the entry above, then run again with --yes to write it\n"
    );
    h.expect(&["mcp", "update", "airtable-mcp-server", "--yes"], &e, 0);
    assert_eq!(
        h.json(&h.project_file())["mcpServers"]["airtable-mcp-server"]["args"],
        json!(["-y", "airtable-mcp-server@1.7.3"])
    );
    let (out, _) = h.expect(&["mcp", "outdated"], &e, 0);
    assert_eq!(
        out,
        "All 1 server(s) installed from a registry are up to date.\n"
    );
    let (out, _) = h.expect(&["mcp", "list", "--json"], &e, 0);
    assert_ne!(list_statuses(&out)[0].1, "awaiting-approval");
    // A name the scope has, not from this registry server: refused.
    h.ok(&["mcp", "add", "time-mcp-pypi", "--", "other"]);
    let (_, err) = h.expect(
        &[
            "mcp",
            "install",
            "io.github.domdomegg/time-mcp-pypi",
            "--package",
            "pypi",
            "--yes",
        ],
        &e,
        2,
    );
    assert!(
        err.starts_with(
            "harness9: a server named \"time-mcp-pypi\" already exists in the local scope"
        ),
        "{err}"
    );
}

#[test]
fn an_import_translates_the_tools_variables_and_says_so() {
    let h = Home::new();
    h.write(
        &h.home.join(".cursor/mcp.json"),
        &json!({"mcpServers": {
            "notes": {"command": "${userHome}${/}bin${/}notes", "args": ["--root", "${workspaceFolder}", "--name", "${workspaceFolderBasename}"]},
            "editor": {"command": "x", "args": ["${selectedText}"]}
        }})
        .to_string(),
    );
    let out = h.ok(&["mcp", "import", "--from", "cursor", "--yes"]);
    let (home, proj) = (h.home.display(), h.project.display());
    let cursor = h.home.join(".cursor/mcp.json");
    assert_eq!(
        out,
        format!(
            "Added to {local}:\n  + notes  (from {c})\n      {home}/bin/notes --root {proj} --name proj\n\
             Skipped:\n  - editor  (from {c}): cannot be imported: it uses ${{selectedText}}, which only Cursor can fill in\n\
             Translated:\n  notes: ${{userHome}} → {home}\n  notes: ${{/}} → /\n  notes: ${{workspaceFolder}} → {proj}\n  notes: ${{workspaceFolderBasename}} → proj\n",
            local = h.local_file().display(),
            c = cursor.display()
        )
    );
}

/// The speed of a search at the core level, against loopback: cold (nothing kept) under
/// 1 s, warm (answered from the cache) under 300 ms.
#[test]
fn search_is_fast_cold_and_warm() {
    let r = Registry::start(&[], 100, None);
    let data = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let installer = harness9::install::Installer::new(
        project.path(),
        harness9::config::ScopeFiles::within(project.path(), data.path(), data.path()),
        harness9::trust::ApprovalStore::at(data.path().join("approvals.json")),
        std::sync::Arc::new(harness9::mcp::auth::CredentialStore::memory()),
    )
    .with_data_dir(data.path());
    let rt = tokio::runtime::Runtime::new().unwrap();
    let registries = vec![r.url.clone()];
    let t = Instant::now();
    let cold = rt.block_on(installer.search(&registries, "", None));
    let cold_took = t.elapsed();
    let t = Instant::now();
    let warm = rt.block_on(installer.search(&registries, "", None));
    let warm_took = t.elapsed();
    eprintln!("search: cold {cold_took:?}, warm {warm_took:?}");
    assert_eq!(cold.hits.len(), 4);
    assert_eq!(warm, cold);
    assert!(cold_took < Duration::from_secs(1), "cold: {cold_took:?}");
    assert!(
        warm_took < Duration::from_millis(300),
        "warm: {warm_took:?}"
    );
}

/// What the desktop app will call: plan, fill, commit (the server starts with its secret
/// put in), the secrets' states, and a changed secret that restarts the server.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_facade_plans_commits_and_starts_with_the_secret() {
    use super::support::project::Project;
    use super::support::wait::wait_until;
    use harness9::install::{Choice, VariableKind};
    use harness9::manager::ServerState;

    let http = Fixture::start().await;
    let r = Registry::start(
        &[json!({
            "name": "io.github.example/remote-echo", "description": "The HTTP fixture.", "version": "1.0.0",
            "remotes": [{"type": "streamable-http", "url": format!("{}/bearer/json", http.base),
                         "headers": [{"name": "Authorization", "isRequired": true, "isSecret": true}]}]
        })],
        100,
        None,
    );
    let p = Project::new(&json!({"mcpServers": {}}));
    let h = harness9::Harness::open(
        p.path(),
        harness9::HarnessOptions {
            auth: Some(harness9::mcp::auth::AuthContext::memory()),
            ..p.harness_options()
        },
    );
    let plan = h
        .plan_install(harness9::harness::InstallRequest {
            name: "io.github.example/remote-echo".into(),
            registry: Some(r.url.clone()),
            choice: Choice::Auto,
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(plan.variables.len(), 1);
    assert_eq!(plan.variables[0].kind, VariableKind::Header);
    assert!(plan.variables[0].secret && plan.variables[0].required);
    let answers: std::collections::BTreeMap<String, String> = [(
        "Authorization".to_string(),
        "Bearer fixture-token".to_string(),
    )]
    .into();
    let shown = plan.fill(&answers).unwrap();
    assert_eq!(
        shown.entry,
        json!({"type": "http", "url": format!("{}/bearer/json", http.base),
               "headers": {"Authorization": "${input:Authorization}"}})
    );
    let done = h
        .commit_install(plan, answers, shown.digest.clone())
        .await
        .unwrap();
    assert_eq!(done.secrets, vec!["Authorization"]);
    wait_until(h.manager(), "remote-echo connects", |s| {
        s.servers
            .iter()
            .any(|x| x.name == "remote-echo" && matches!(x.state, ServerState::Connected { .. }))
    })
    .await;
    let (scope, states) = h.server_secrets("remote-echo").await.unwrap();
    assert_eq!(scope, harness9::config::Scope::Local);
    assert_eq!(states[0].set, Some(true));
    // A wrong value: the server restarts with it and is refused.
    h.set_server_secret("remote-echo", "Authorization", "Bearer wrong".into())
        .await
        .unwrap();
    wait_until(h.manager(), "remote-echo is refused", |s| {
        s.servers.iter().any(|x| {
            x.name == "remote-echo"
                && matches!(
                    x.state,
                    ServerState::Failed { .. } | ServerState::NeedsAuth { .. }
                )
        })
    })
    .await;
    h.shutdown().await;
}
