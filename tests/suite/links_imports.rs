//! Links a server asks the user to open, and imports from files that came with a project:
//! a hostile server's `file:`, `javascript:` or option-shaped URL is refused with a message
//! (never opened, never printed as a link); a hostile repository's `.vscode/mcp.json` is
//! shown and asked about before anything is written, and the project's own `.mcp.json` is
//! never offered as an import source.

use serde_json::{json, Value};

use super::{fixture_bin, Project};

fn stderr(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn stdout(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// `mcp call` on a server that answers every call with "open this URL first" (-32042).
fn call_requiring(url: &str) -> String {
    let p = Project::new(&json!({"mcpServers": {
        "fx": {"command": fixture_bin(), "args": ["--require-url", url]}
    }}));
    let o = p.cli(&["mcp", "call", "fx", "echo", r#"{"text": "hi"}"#, "--yes"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    stderr(&o)
}

#[test]
fn url_elicitation_links_are_checked_before_they_are_shown() {
    let err = call_requiring("https://Login.Example.com:8443/start?x=1");
    assert!(
        err.ends_with("harness9: the server needs you to open login.example.com:8443 (https://login.example.com:8443/start?x=1) first (\"Open this page first\"); open it if you trust it, then run again\n"),
        "{err}"
    );
    for (url, why) in [
        ("file:///etc/passwd", "it is a file: link; only https: links (and http: to this machine) open"),
        ("javascript:alert(1)", "it is a javascript: link; only https: links (and http: to this machine) open"),
        ("smb://fileserver/share", "it is a smb: link; only https: links (and http: to this machine) open"),
        ("http://example.com/", "it is a plain http: link to example.com; only https: links (and http: to this machine) open"),
    ] {
        let err = call_requiring(url);
        assert!(
            err.ends_with(&format!("harness9: the server needs you to open {url:?} first (\"Open this page first\"); refused: {why}\n")),
            "{url}: {err}"
        );
    }
    let err = call_requiring("-oProxyCommand=touch /tmp/h9-pwned");
    assert!(
        err.contains("open \"-oProxyCommand=touch /tmp/h9-pwned\" first (\"Open this page first\"); refused: it is not a URL"),
        "{err}"
    );
}
