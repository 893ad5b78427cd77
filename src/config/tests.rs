use super::*;
use serde_json::json;

fn env(k: &str) -> Option<String> {
    match k {
        "HOME_DIR" => Some("/home/u".into()),
        "TOKEN" => Some("s3cret".into()),
        _ => None,
    }
}

fn parse(text: &str) -> McpConfig {
    McpConfig::parse(text, ".mcp.json", &env)
}

fn entry(cfg: &McpConfig, name: &str) -> Result<ServerConfig, EntryError> {
    cfg.servers[name].clone()
}

#[test]
fn stdio_entry_with_env_object_and_list() {
    let cfg = parse(
        r#"{"mcpServers": {
            "a": {"command": "node", "args": ["srv.js", "--root=${HOME_DIR}"], "env": {"K": "${TOKEN}"}, "cwd": "${HOME_DIR}/p"},
            "b": {"type": "stdio", "command": "x", "env": ["A=1", "B=two=2"]}
        }}"#,
    );
    assert_eq!(cfg.error, None);
    let a = entry(&cfg, "a").unwrap();
    assert_eq!(
        a.transport,
        TransportConfig::Stdio {
            command: "node".into(),
            args: vec!["srv.js".into(), "--root=/home/u".into()],
            env: vec![("K".into(), "s3cret".into())],
            cwd: Some("/home/u/p".into()),
        }
    );
    assert_eq!(a.startup_timeout, DEFAULT_STARTUP_TIMEOUT);
    assert_eq!(a.tool_timeout, DEFAULT_TOOL_TIMEOUT);
    let b = entry(&cfg, "b").unwrap();
    match b.transport {
        TransportConfig::Stdio { env, .. } => assert_eq!(
            env,
            vec![("A".into(), "1".into()), ("B".into(), "two=2".into())]
        ),
        other @ (TransportConfig::Http { .. } | TransportConfig::Sse { .. }) => panic!("{other:?}"),
    }
}

#[test]
fn http_types_and_inference() {
    let cfg = parse(
        r#"{"mcpServers": {
            "h": {"url": "https://x/mcp", "headers": {"Authorization": "Bearer ${TOKEN}"}},
            "s": {"type": "sse", "url": "http://127.0.0.1:1/sse"},
            "sh": {"type": "streamable-http", "url": "http://127.0.0.1:1/mcp", "toolTimeoutSec": 2.5, "startupTimeoutSec": 5}
        }}"#,
    );
    assert_eq!(
        entry(&cfg, "h").unwrap().transport,
        TransportConfig::Http {
            url: "https://x/mcp".into(),
            headers: vec![("Authorization".into(), "Bearer s3cret".into())]
        }
    );
    assert_eq!(entry(&cfg, "s").unwrap().transport.kind(), "sse");
    let sh = entry(&cfg, "sh").unwrap();
    assert_eq!(sh.transport.kind(), "http");
    assert_eq!(sh.tool_timeout, Duration::from_millis(2500));
    assert_eq!(sh.startup_timeout, Duration::from_secs(5));
}

#[test]
fn bad_entries_fail_alone_with_reasons() {
    let cfg = parse(
        r#"{"mcpServers": {
            "ok": {"command": "x"},
            "none": {"args": []},
            "both": {"command": "x", "url": "http://h"},
            "weird": {"type": "carrier-pigeon", "url": "http://h"},
            "argsbad": {"command": "x", "args": "one two"},
            "unset": {"command": "x", "env": {"K": "${NOPE}"}},
            "defaulted": {"command": "${NOPE:-fallback}"},
            "notobj": 7,
            "envbad": {"command": "x", "env": ["novalue"]},
            "dis": {"command": "x", "disabled": true},
            "timeout": {"command": "x", "toolTimeoutSec": "soon"}
        }}"#,
    );
    assert!(cfg.error.is_none());
    let msg = |n: &str| entry(&cfg, n).unwrap_err().message;
    assert!(entry(&cfg, "ok").is_ok());
    assert_eq!(
        msg("none"),
        "server \"none\": has neither \"command\" (a local server) nor \"url\" (a remote server)"
    );
    assert!(
        msg("both").contains("both \"command\" and \"url\""),
        "{}",
        msg("both")
    );
    assert_eq!(
        msg("weird"),
        "server \"weird\": unknown type \"carrier-pigeon\"; use \"stdio\", \"http\" or \"sse\""
    );
    assert_eq!(
        msg("argsbad"),
        "server \"argsbad\": \"args\" must be a list of strings, not a string"
    );
    assert_eq!(
        msg("unset"),
        "server \"unset\": env.K: environment variable ${NOPE} is not set; set it, or write ${NOPE:-default} in .mcp.json"
    );
    match entry(&cfg, "defaulted").unwrap().transport {
        TransportConfig::Stdio { command, .. } => assert_eq!(command, "fallback"),
        other @ (TransportConfig::Http { .. } | TransportConfig::Sse { .. }) => panic!("{other:?}"),
    }
    assert_eq!(
        msg("notobj"),
        "server \"notobj\": the entry must be a JSON object"
    );
    assert!(msg("envbad").contains("NAME=value"));
    assert!(entry(&cfg, "dis").unwrap().disabled);
    assert_eq!(
        msg("timeout"),
        "server \"timeout\": \"toolTimeoutSec\" must be a number of seconds, not a string"
    );
    assert_eq!(cfg.enabled().count(), 2);
}

#[test]
fn invalid_json_names_file_line_and_column() {
    let cfg = McpConfig::parse(
        "{\n  \"mcpServers\": {\n    \"a\": {,}\n}",
        "/p/.mcp.json",
        &env,
    );
    assert!(cfg.servers.is_empty());
    let err = cfg.error.unwrap();
    match &err {
        ConfigError::Syntax { line, column, .. } => assert_eq!((*line, *column), (3, 11)),
        other @ (ConfigError::Shape { .. } | ConfigError::Io { .. }) => panic!("{other:?}"),
    }
    assert!(
        err.to_string()
            .starts_with("/p/.mcp.json:3:11: invalid JSON: "),
        "{err}"
    );
}

#[test]
fn wrong_top_level_shape() {
    let cfg = parse(r#"{"mcpServers": []}"#);
    assert_eq!(
        cfg.error.unwrap().to_string(),
        ".mcp.json: \"mcpServers\" must be an object of servers by name, not a list. Fix the file; until then no MCP servers are started."
    );
    assert!(parse("[1]").error.is_some());
    assert!(parse("").error.is_none());
}

#[test]
fn missing_file_is_empty_config() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = McpConfig::load_project(dir.path());
    assert!(cfg.error.is_none());
    assert!(cfg.servers.is_empty());
}

#[test]
fn expansion_rules() {
    assert_eq!(expand("a${TOKEN}b$c", &env).unwrap(), "as3cretb$c");
    assert_eq!(expand("${NOPE:-}", &env).unwrap(), "");
    assert_eq!(
        expand("${OPEN", &env),
        Err(ExpandError::Unterminated("${OPEN".into()))
    );
    assert_eq!(expand("${}", &env), Err(ExpandError::Empty("${}".into())));
    // A default may hold references; none is handed on unexpanded.
    assert_eq!(expand("${NOPE:-${TOKEN}}x", &env).unwrap(), "s3cretx");
    assert_eq!(expand("${TOKEN:-${NOPE}}", &env).unwrap(), "s3cret");
    assert_eq!(expand("${NOPE:-a${NOPE:-b}c}", &env).unwrap(), "abc");
    assert_eq!(
        expand("${NOPE:-${NOPE2}}", &env),
        Err(ExpandError::Unset("NOPE2".into()))
    );
    let deep = format!("{}x{}", "${N:-".repeat(20), "}".repeat(20));
    assert_eq!(expand(&deep, &env), Err(ExpandError::TooDeep(deep.clone())));
}

#[test]
fn save_refuses_invalid_and_keeps_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(".mcp.json");
    std::fs::write(&path, "{\"mcpServers\": {}}\n").unwrap();
    let err = save_mcp_json(&path, "{\"mcpServers\": {").unwrap_err();
    assert!(err.to_string().starts_with("not saved: "), "{err}");
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        "{\"mcpServers\": {}}\n"
    );
    save_mcp_json(&path, "{\"mcpServers\": {\"a\": {\"command\": \"x\"}}}").unwrap();
    assert!(McpConfig::load_file(&path).servers.contains_key("a"));
    // no temp files left behind
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, vec![std::ffi::OsString::from(".mcp.json")]);
}

#[test]
fn document_edits_keep_unknown_keys_and_order() {
    let text = r#"{"$schema": "x", "mcpServers": {"b": {"command": "b", "note": "mine"}, "a": {"url": "http://a"}}, "extra": [1]}"#;
    let mut doc = McpDocument::parse(text, ".mcp.json").unwrap();
    assert!(doc.set_disabled("b", true));
    doc.set_server("c", json!({"command": "c"}));
    assert!(doc.remove_server("a"));
    let out: Value = serde_json::from_str(&doc.to_text()).unwrap();
    assert_eq!(
        out,
        json!({"$schema": "x", "mcpServers": {"b": {"command": "b", "note": "mine", "disabled": true}, "c": {"command": "c"}}, "extra": [1]})
    );
    let keys: Vec<_> = out.as_object().unwrap().keys().cloned().collect();
    assert_eq!(keys, vec!["$schema", "mcpServers", "extra"]);
}

#[test]
fn target_quotes_args_and_hides_env() {
    let cfg = parse(
        r#"{"mcpServers": {"a": {"command": "npx", "args": ["-y", "pkg name"], "env": {"SECRET": "x"}}}}"#,
    );
    assert_eq!(
        entry(&cfg, "a").unwrap().display_target(),
        "npx -y 'pkg name'"
    );
}

#[test]
fn target_masks_secrets_and_keeps_references_as_written() {
    let env = |k: &str| (k == "TOKEN").then(|| "s3cr3t-value".to_string());
    let cfg = McpConfig::parse(
        r#"{"mcpServers": {
            "a": {"command": "srv", "args": ["--token=${TOKEN}", "--api-key", "plain-secret", "x"]},
            "h": {"url": "https://u:pw@h.example/mcp?token=abc&q=1"}}}"#,
        "t",
        &env,
    );
    assert_eq!(
        entry(&cfg, "a").unwrap().display_target(),
        "srv '--token=${TOKEN}' --api-key •••••• x"
    );
    assert_eq!(
        entry(&cfg, "h").unwrap().display_target(),
        "https://••••••@h.example/mcp?token=••••••&q=••••••"
    );
}

#[test]
fn fingerprint_covers_everything_that_decides_what_runs() {
    let project = std::path::Path::new("/p");
    let fp = |entry: &str| {
        let env = |k: &str| match k {
            "TOKEN" => Some("one".to_string()),
            "OTHER" => Some("two".to_string()),
            _ => None,
        };
        let cfg = McpConfig::parse(&format!(r#"{{"mcpServers": {{"s": {entry}}}}}"#), "t", &env);
        entry_of(&cfg).fingerprint(project)
    };
    fn entry_of(cfg: &McpConfig) -> ServerConfig {
        cfg.servers["s"].clone().unwrap()
    }
    let base = fp(r#"{"command": "srv", "args": ["a"]}"#);
    let variants = [
        r#"{"command": "srv2", "args": ["a"]}"#,
        r#"{"command": "srv", "args": ["b"]}"#,
        r#"{"command": "srv", "args": ["a"], "env": {"NODE_OPTIONS": "--require x"}}"#,
        r#"{"command": "srv", "args": ["a"], "env": {"LD_PRELOAD": "x.so"}}"#,
        r#"{"command": "srv", "args": ["a"], "env": {"PATH": "/evil"}}"#,
        r#"{"command": "srv", "args": ["a"], "cwd": "./server"}"#,
        r#"{"command": "srv", "args": ["${TOKEN}"]}"#,
        r#"{"type": "http", "url": "https://h/mcp"}"#,
    ];
    for v in variants {
        assert_ne!(fp(v), base, "{v}");
    }
    // cwd is compared as it will be used: the project itself is the default.
    assert_eq!(
        fp(r#"{"command": "srv", "args": ["a"], "cwd": "/p"}"#),
        base
    );
    // the expanded arg counts: a different variable with the same value is the same run.
    assert_eq!(
        fp(r#"{"command": "srv", "args": ["${TOKEN}"]}"#),
        fp(r#"{"command": "srv", "args": ["one"]}"#)
    );
    let h = fp(r#"{"type": "http", "url": "https://h/mcp"}"#);
    assert_ne!(
        fp(r#"{"type": "http", "url": "https://h/mcp", "headers": {"X-A": "1"}}"#),
        h
    );
    assert_ne!(
        fp(r#"{"type": "http", "url": "https://h/mcp", "headers": {"X-A": "${OTHER}"}}"#),
        fp(r#"{"type": "http", "url": "https://h/mcp", "headers": {"X-A": "two"}}"#)
    );
    // timeouts and `disabled` do not decide what runs.
    assert_eq!(
        fp(r#"{"command": "srv", "args": ["a"], "toolTimeoutSec": 5}"#),
        base
    );
}

#[test]
fn oauth_settings_are_read_and_expanded() {
    let cfg = parse(
        r#"{"mcpServers": {
            "h": {"url": "https://h/mcp", "oauth": {"clientId": "app-1", "clientSecret": "${TOKEN}", "scopes": ["read", "write"], "callbackPort": 8765}},
            "s": {"type": "sse", "url": "https://h/sse", "oauth": {"scopes": "a b"}},
            "n": {"url": "https://h/mcp"}
        }}"#,
    );
    assert_eq!(
        entry(&cfg, "h").unwrap().oauth,
        Some(harness9_mcp::auth::OAuthConfig {
            client_id: Some("app-1".into()),
            client_secret: Some("s3cret".into()),
            scopes: Some(vec!["read".into(), "write".into()]),
            callback_port: Some(8765),
        })
    );
    assert_eq!(
        entry(&cfg, "s").unwrap().oauth.unwrap().scopes,
        Some(vec!["a".to_string(), "b".to_string()])
    );
    assert_eq!(entry(&cfg, "n").unwrap().oauth, None);
}

#[test]
fn bad_oauth_settings_say_what_to_fix() {
    let cfg = parse(
        r#"{"mcpServers": {
            "stdio": {"command": "x", "oauth": {"clientId": "a"}},
            "shape": {"url": "https://h/mcp", "oauth": "app-1"},
            "typo": {"url": "https://h/mcp", "oauth": {"clientID": "a"}},
            "port": {"url": "https://h/mcp", "oauth": {"callbackPort": 70000}},
            "unset": {"url": "https://h/mcp", "oauth": {"clientId": "a", "clientSecret": "${NOPE}"}},
            "alone": {"url": "https://h/mcp", "oauth": {"clientSecret": "x"}}
        }}"#,
    );
    let msg = |n: &str| entry(&cfg, n).unwrap_err().message;
    assert_eq!(msg("stdio"), "server \"stdio\": \"oauth\" only applies to remote (http or sse) servers; give a local server its credentials through \"env\"");
    assert_eq!(msg("shape"), "server \"shape\": \"oauth\" must be an object {\"clientId\": …, \"clientSecret\": …, \"scopes\": […], \"callbackPort\": …}, not a string");
    assert_eq!(msg("typo"), "server \"typo\": \"oauth.clientID\" is not a known setting; use clientId, clientSecret, scopes, callbackPort");
    assert_eq!(
        msg("port"),
        "server \"port\": \"oauth.callbackPort\" must be a port number from 1 to 65535"
    );
    assert_eq!(msg("unset"), "server \"unset\": oauth.clientSecret: environment variable ${NOPE} is not set; set it, or write ${NOPE:-default} in .mcp.json");
    assert_eq!(msg("alone"), "server \"alone\": \"oauth.clientSecret\" is set without \"oauth.clientId\"; add the client ID it belongs to");
}

#[test]
fn fingerprint_covers_oauth_only_when_present() {
    let project = std::path::Path::new("/p");
    let fp = |e: &str| {
        entry(&parse(&format!(r#"{{"mcpServers": {{"s": {e}}}}}"#)), "s")
            .unwrap()
            .fingerprint(project)
    };
    // The value main computed before `oauth` existed: approvals given then still hold.
    assert_eq!(
        fp(r#"{"type": "http", "url": "https://h/mcp"}"#),
        "47fa41d3ad81067badf6b0cbc47351db"
    );
    let with = fp(r#"{"type": "http", "url": "https://h/mcp", "oauth": {"clientId": "a"}}"#);
    assert_ne!(with, "47fa41d3ad81067badf6b0cbc47351db");
    assert_ne!(
        with,
        fp(r#"{"type": "http", "url": "https://h/mcp", "oauth": {"clientId": "b"}}"#)
    );
}

#[test]
fn the_client_secret_is_never_shown() {
    let cfg = parse(
        r#"{"mcpServers": {
            "h": {"url": "https://h/mcp", "oauth": {"clientId": "app-1", "clientSecret": "plain-secret", "scopes": ["read"]}},
            "r": {"url": "https://h/mcp", "oauth": {"clientId": "app-1", "clientSecret": "${TOKEN}"}}
        }}"#,
    );
    assert_eq!(
        oauth::shown(&entry(&cfg, "h").unwrap().raw).unwrap(),
        "client ID app-1, client secret ••••••, scopes read"
    );
    assert_eq!(
        oauth::shown(&entry(&cfg, "r").unwrap().raw).unwrap(),
        "client ID app-1, client secret ${TOKEN}"
    );
    let shown = format!("{:?}", entry(&cfg, "h").unwrap().oauth.unwrap());
    assert!(!shown.contains("plain-secret"), "{shown}");
}
