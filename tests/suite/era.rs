//! The two protocol eras over stdio: era detection (the `server/discover` probe and its
//! fallback), the per-request `_meta` of the modern era, and multi round-trip requests,
//! against the Python SDK (dual-era, forced into each era and probed), server-everything
//! (legacy) and our fixture's misbehaviours; `mcp list` and the benchmark in either era.
//! The exact bytes are checked against an in-memory peer in `era_memory`.

use std::sync::Arc;
use std::time::Duration;

use harness9::config::ProtocolEra;
use harness9::mcp::client::ConnectOptions;
use harness9::mcp::era::Era;
use harness9::mcp::handler::ClientHandler;
use harness9::mcp::transport::stdio::{self};
use harness9::mcp::{Client, ClientError, ClientEvent, ServerLog};
use serde_json::{json, Map, Value};

use super::support::client::stdio_spec;
use super::support::era::{call, listen_checks, Answers};
use super::support::wait::{next_event, poll_until_async, wait_until, DEADLINE};
use super::support::{external, fixture_bin};

/// Starts `command` and connects in `era`; a server that exits on the probe is started
/// once more.
async fn open(
    command: &str,
    args: &[&str],
    era: ProtocolEra,
    handler: Option<Arc<Answers>>,
) -> Result<(Client, Arc<ServerLog>), ClientError> {
    open_env(command, args, &[], era, handler).await
}

/// [`open`] with variables for the server's environment.
async fn open_env(
    command: &str,
    args: &[&str],
    env: &[(&str, &str)],
    era: ProtocolEra,
    handler: Option<Arc<Answers>>,
) -> Result<(Client, Arc<ServerLog>), ClientError> {
    let log = Arc::new(ServerLog::default());
    let spec = stdio_spec(command, args, env);
    let conn = stdio::spawn(&spec, log.clone()).expect("spawn");
    let again = log.clone();
    let opts = ConnectOptions {
        handler: handler.map(|h| h as Arc<dyn ClientHandler>),
        era,
        reopen: Some(Box::new(move || {
            Box::pin(async move { stdio::spawn(&spec, again).map_err(|e| e.to_string()) })
        })),
        ..ConnectOptions::default()
    };
    let client = tokio::time::timeout(
        Duration::from_secs(20),
        Client::connect_opts(conn, "era", log.clone(), opts),
    )
    .await
    .expect("connects within 20 s")?;
    Ok((client, log))
}

async fn python(era: ProtocolEra, handler: Option<Arc<Answers>>) -> Option<Client> {
    Some(python_logged(era, handler).await?.0)
}

/// [`python`] with the server's log.
async fn python_logged(
    era: ProtocolEra,
    handler: Option<Arc<Answers>>,
) -> Option<(Client, Arc<ServerLog>)> {
    let py = external("H9_PYTHON")?;
    let script = external("H9_PY_SERVER")?;
    let args = [script.to_str().unwrap(), "stdio"];
    Some(
        open(py.to_str().unwrap(), &args, era, handler)
            .await
            .expect("python server connects"),
    )
}

#[tokio::test]
async fn python_sdk_gives_the_same_tools_and_results_in_both_eras() {
    let Some(legacy) = python(ProtocolEra::Legacy, Some(Arc::default())).await else {
        return;
    };
    let handler = Arc::new(Answers::default());
    let modern = python(ProtocolEra::Modern, Some(handler.clone()))
        .await
        .unwrap();
    assert_eq!(
        (legacy.era(), legacy.protocol_version()),
        (Era::Legacy, "2025-11-25")
    );
    assert_eq!(
        (modern.era(), modern.protocol_version()),
        (Era::Modern, "2026-07-28")
    );
    assert_eq!(modern.server_info().name, "h9-py-server");
    assert!(modern.has_capability("tools"));

    let tools = legacy.list_tools(None).await.unwrap();
    assert_eq!(modern.list_tools(None).await.unwrap(), tools);
    assert_eq!(tools.len(), 13);
    for (tool, args) in [
        ("echo", json!({"text": "π ≈ 3.14"})),
        ("add", json!({"a": 2, "b": 40})),
        ("weather", json!({"city": "Oslo"})),
        ("image", json!({})),
        ("boom", json!({"kind": "tool_error"})),
    ] {
        assert_eq!(
            call(&modern, tool, args.clone()).await,
            call(&legacy, tool, args).await,
            "{tool}"
        );
    }
    let readme = legacy.read_resource("h9://readme", None).await.unwrap();
    let modern_readme = modern.read_resource("h9://readme", None).await.unwrap();
    assert_eq!(modern_readme.contents, readme.contents);
    let mut args = Map::new();
    args.insert("code".into(), json!("x = 1"));
    let prompt = legacy
        .get_prompt("review", args.clone(), None)
        .await
        .unwrap();
    let modern_prompt = modern.get_prompt("review", args, None).await.unwrap();
    assert_eq!(modern_prompt.messages, prompt.messages);

    // Resolvers: server→client requests in the legacy era, an input_required round in
    // the modern one; the same handler, the same answer.
    let asked = call(&legacy, "resolve_ask", json!({})).await;
    assert_eq!(
        asked["content"][0]["text"],
        "answer=42; model=hi there; roots=['file:///srv/demo-project']"
    );
    assert_eq!(call(&modern, "resolve_ask", json!({})).await, asked);
    assert_eq!(
        handler.asked.lock().unwrap().clone(),
        vec!["elicit: What is the answer?", "sample", "roots"]
    );
    // Two rounds: the second question depends on the first answer.
    let twice = call(&legacy, "resolve_twice", json!({})).await;
    assert_eq!(twice["content"][0]["text"], "42 in celsius");
    assert_eq!(call(&modern, "resolve_twice", json!({})).await, twice);

    legacy.close().await;
    modern.close().await;
}

#[tokio::test]
async fn modern_change_notifications_ride_the_listen_stream() {
    let Some((modern, server_log)) = python_logged(ProtocolEra::Modern, None).await else {
        return;
    };
    listen_checks(&modern, &server_log).await;
    modern.close().await;
}

#[tokio::test]
async fn the_probe_finds_each_servers_era() {
    let Some(py) = python(ProtocolEra::Auto, None).await else {
        return;
    };
    assert_eq!(
        (py.era(), py.protocol_version()),
        (Era::Modern, "2026-07-28")
    );
    let tools = py.list_tools(None).await.unwrap();
    py.close().await;

    // A modern-only server on the official SDK (it refuses `initialize`): found by the
    // probe, the same tools; forcing the legacy era says what the server answered.
    let (Some(bin), Some(script)) = (external("H9_PYTHON"), external("H9_PY_SERVER")) else {
        return;
    };
    let (bin, args) = (bin.to_str().unwrap(), [script.to_str().unwrap(), "stdio"]);
    let only = [("H9_PY_MODERN_ONLY", "1")];
    let (modern, _) = open_env(bin, &args, &only, ProtocolEra::Auto, None)
        .await
        .unwrap();
    assert_eq!(modern.era(), Era::Modern);
    assert_eq!(modern.list_tools(None).await.unwrap(), tools);
    assert_eq!(
        call(&modern, "echo", json!({"text": "modern only"})).await["content"][0]["text"],
        "modern only"
    );
    modern.close().await;
    let err = open_env(bin, &args, &only, ProtocolEra::Legacy, None)
        .await
        .err()
        .expect("no legacy handshake");
    assert!(
        err.to_string()
            .contains("Method not found: this server speaks only 2026-07-28"),
        "{err}"
    );

    let Some(everything) = external("H9_EVERYTHING_BIN") else {
        return;
    };
    let bin = everything.to_str().unwrap();
    let (auto, log) = open(bin, &["stdio"], ProtocolEra::Auto, None)
        .await
        .unwrap();
    // server-everything answers the probe -32601 at once: legacy for that answer, without
    // waiting for the probe's timeout (the log would say so).
    assert_eq!(
        (auto.era(), auto.protocol_version()),
        (Era::Legacy, "2025-11-25")
    );
    assert!(log
        .tail(50)
        .iter()
        .any(|l| l.text == "speaking the legacy protocol (server/discover: error -32601)"));
    let (forced, _) = open(bin, &["stdio"], ProtocolEra::Legacy, None)
        .await
        .unwrap();
    let tools = forced.list_tools(None).await.unwrap();
    assert_eq!(auto.list_tools(None).await.unwrap(), tools);
    assert_eq!(
        call(&auto, "echo", json!({"message": "hi"})).await,
        call(&forced, "echo", json!({"message": "hi"})).await
    );
    auto.close().await;
    forced.close().await;
}

#[tokio::test]
async fn legacy_servers_that_misbehave_on_the_probe_still_connect() {
    // Answers with an error code other than -32601: still legacy.
    let (c, _) = open(
        fixture_bin(),
        &["--on-discover", "-32602"],
        ProtocolEra::Auto,
        None,
    )
    .await
    .unwrap();
    assert_eq!(c.era(), Era::Legacy);
    assert_eq!(c.list_tools(None).await.unwrap().len(), 10);
    c.close().await;

    // Never answers: legacy after the probe's timeout (the log says which).
    let (c, log) = open(
        fixture_bin(),
        &["--on-discover", "silent"],
        ProtocolEra::Auto,
        None,
    )
    .await
    .unwrap();
    assert_eq!(c.era(), Era::Legacy);
    assert!(log
        .tail(50)
        .iter()
        .any(|l| l.text
            == "speaking the legacy protocol (no answer to server/discover within 1.5 s)"));
    c.close().await;

    // Exits on it: started once more, for `initialize`.
    let (c, log) = open(
        fixture_bin(),
        &["--on-discover", "exit"],
        ProtocolEra::Auto,
        None,
    )
    .await
    .unwrap();
    assert_eq!(c.era(), Era::Legacy);
    assert_eq!(c.list_tools(None).await.unwrap().len(), 10);
    assert!(log
        .tail(50)
        .iter()
        .any(|l| l.text.contains("the server exited on server/discover")));
    c.close().await;

    // Exits on it, but only after the probe's wait (`initialize` was sent meanwhile).
    let (c, _) = open(
        fixture_bin(),
        &["--on-discover", "exit-late"],
        ProtocolEra::Auto,
        None,
    )
    .await
    .unwrap();
    assert_eq!(c.era(), Era::Legacy);
    assert_eq!(c.list_tools(None).await.unwrap().len(), 10);
    c.close().await;

    // Forced modern: no fallback, a clear error.
    let err = open(fixture_bin(), &[], ProtocolEra::Modern, None)
        .await
        .err()
        .expect("a legacy server cannot be spoken to in the modern era");
    assert_eq!(
        err.to_string(),
        "the server answered server/discover with error -32601: Method not found: server/discover"
    );
}

#[test]
fn mcp_list_shows_each_servers_era() {
    let (Some(py), Some(script), Some(everything)) = (
        external("H9_PYTHON"),
        external("H9_PY_SERVER"),
        external("H9_EVERYTHING_BIN"),
    ) else {
        return;
    };
    let p = super::support::Project::new(&json!({"mcpServers": {
        "py": {"command": py, "args": [script]},
        "py-legacy": {"command": py, "args": [script], "protocolEra": "legacy"},
        "everything": {"command": everything, "args": ["stdio"]},
        "forced": {"command": fixture_bin(), "protocolEra": "modern"},
        "odd": {"command": fixture_bin(), "protocolEra": "newest"}
    }}));
    let o = p.cli(&["mcp", "list", "--yes", "--json"]);
    assert_eq!(o.status.code(), Some(0));
    let rows: Value = serde_json::from_slice(&o.stdout).unwrap();
    let row = |n: &str| {
        let r = rows
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["name"] == n)
            .unwrap();
        (
            r["status"].as_str().unwrap().to_string(),
            r["era"].clone(),
            r["protocolVersion"].clone(),
        )
    };
    let connected = |era: &str, v: &str| ("connected".to_string(), json!(era), json!(v));
    assert_eq!(row("py"), connected("modern", "2026-07-28"));
    assert_eq!(row("py-legacy"), connected("legacy", "2025-11-25"));
    assert_eq!(row("everything"), connected("legacy", "2025-11-25"));
    assert_eq!(
        row("forced"),
        ("failed".to_string(), Value::Null, Value::Null)
    );
    let error = |n: &str| {
        rows.as_array()
            .unwrap()
            .iter()
            .find(|r| r["name"] == n)
            .unwrap()["error"]
            .as_str()
            .unwrap()
            .to_string()
    };
    assert_eq!(
        error("forced"),
        "the server answered server/discover with error -32601: Method not found: server/discover"
    );
    assert_eq!(
        error("odd"),
        "server \"odd\": \"protocolEra\" must be \"auto\", \"legacy\" or \"modern\""
    );

    // The table shows each era too.
    let o = p.cli(&["mcp", "list", "--yes"]);
    let table = String::from_utf8_lossy(&o.stdout);
    let line = |n: &str| {
        table
            .lines()
            .find(|l| l.split_whitespace().next() == Some(n))
            .unwrap_or_else(|| panic!("no row {n} in {table}"))
            .to_string()
    };
    assert!(
        table.lines().next().unwrap().contains("PROTOCOL"),
        "{table}"
    );
    assert!(line("py").contains("2026-07-28 (modern)"), "{table}");
    assert!(
        line("everything").contains("2025-11-25 (legacy)"),
        "{table}"
    );
}

#[test]
fn the_benchmark_speaks_either_era_beside_its_floor() {
    for era in ["legacy", "modern"] {
        let mut command = std::process::Command::new(super::support::harness9_bin());
        command
            .args(["bench", "mcp", "--quick", "--era", era])
            .args(["--scenarios", "handshake,seq_latency,throughput", "--"])
            .arg(fixture_bin());
        if era == "modern" {
            command.arg("--modern");
        }
        let o = command.output().unwrap();
        assert_eq!(o.status.code(), Some(0));
        let lines: Vec<Value> = String::from_utf8_lossy(&o.stdout)
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        if era == "modern" {
            assert_eq!(lines[0]["era"], "modern");
        }
        assert!(lines[0]["floor"].is_string(), "{}", lines[0]);
        for line in &lines[1..] {
            assert_eq!(line["ok"], true, "{line}");
            // The floor ran against the same server, and the line compares the two.
            let (value, floor) = (line["value"].as_f64(), line["floor"].as_f64());
            let ratio = line["ours_over_floor"].as_f64();
            assert!(floor.is_some_and(|f| f > 0.0), "{line}");
            assert!(ratio.is_some_and(|r| r > 0.0), "{line}");
            let expected = value.unwrap() / floor.unwrap();
            assert!((ratio.unwrap() - expected).abs() < 0.01, "{line}");
        }
        assert_eq!(lines.len(), 4);
        let table = String::from_utf8_lossy(&o.stderr);
        assert!(table.contains("ours/floor"), "{table}");
    }
}

#[tokio::test]
async fn list_results_are_reused_for_as_long_as_the_server_says() {
    let (Some(py), Some(script)) = (external("H9_PYTHON"), external("H9_PY_SERVER")) else {
        return;
    };
    let args = [script.to_str().unwrap(), "stdio"];
    let env = [("H9_PY_CACHE_TTL_MS", "60000")];
    let (c, _) = open_env(py.to_str().unwrap(), &args, &env, ProtocolEra::Modern, None)
        .await
        .unwrap();
    let names = |tools: Vec<harness9::mcp::ToolDef>| -> Vec<String> {
        tools.into_iter().map(|t| t.name).collect()
    };
    let before = names(c.list_tools(None).await.unwrap());
    // Not listening: the server's change goes unheard, and the list stays the one
    // received, fresh for a minute.
    call(&c, "grow", json!({})).await;
    assert_eq!(names(c.list_tools(None).await.unwrap()), before);
    // Listening: the change notification forgets the cached list.
    c.listen(&[], None).await.unwrap();
    let mut events = c.events();
    call(&c, "grow", json!({})).await;
    next_event(&mut events, |e| *e == ClientEvent::ToolsChanged).await;
    let after = names(c.list_tools(None).await.unwrap());
    assert!(after.contains(&"grown".to_string()), "{after:?}");
    c.close().await;

    // Without the hint (the Python SDK says `ttlMs: 0`), every listing asks the server.
    let (c, _) = open(py.to_str().unwrap(), &args, ProtocolEra::Modern, None)
        .await
        .unwrap();
    c.list_tools(None).await.unwrap();
    call(&c, "grow", json!({})).await;
    assert!(names(c.list_tools(None).await.unwrap()).contains(&"grown".to_string()));
    c.close().await;
}

#[tokio::test]
async fn a_modern_servers_changes_reach_the_registry_and_follows_survive_a_restart() {
    let (Some(py), Some(script)) = (external("H9_PYTHON"), external("H9_PY_SERVER")) else {
        return;
    };
    let project = super::support::Project::new(&json!({"mcpServers": {"py": {
        "command": py, "args": [script, "stdio"], "protocolEra": "modern"
    }}}));
    let h = project.started().await;
    let ctx = harness9::tools::CallContext::default;
    // The new tool is listed again at once, and held back until the user accepts it
    // (tool pinning).
    h.call_tool("py", "grow", json!({}), ctx()).await.unwrap();
    wait_until(h.manager(), "a tool of py held back", |s| {
        s.servers.iter().any(|x| x.name == "py" && x.held_tools > 0)
    })
    .await;
    let held = h.held_tools(Some("py"));
    assert!(held.iter().any(|t| t.tool == "grown"), "{held:?}");

    // A resource followed before a restart is followed after it.
    h.subscribe_resource("py", "h9://readme").await.unwrap();
    h.restart_server("py").await;
    h.manager().wait_settled(Duration::from_secs(30)).await;
    // The new connection follows it once the server acknowledges the new stream.
    poll_until_async(
        "the restarted connection to follow h9://readme",
        DEADLINE,
        || {
            h.manager()
                .client("py")
                .and_then(|c| c.listening_for())
                .is_some_and(|v| v["resourceSubscriptions"] == json!(["h9://readme"]))
        },
    )
    .await;
    let mut surface = h.subscribe_surface();
    h.call_tool("py", "touch", json!({"uri": "h9://readme"}), ctx())
        .await
        .unwrap();
    let updated = async {
        loop {
            match surface.recv().await {
                Ok(harness9::host::catalog::SurfaceEvent::ResourceUpdated { server, uri }) => {
                    return (server, uri)
                }
                Ok(_) | Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {}
                Err(e) => panic!("surface events ended: {e}"),
            }
        }
    };
    let got = tokio::time::timeout(DEADLINE, updated)
        .await
        .expect("updates of the followed resource after the restart");
    assert_eq!(got, ("py".to_string(), "h9://readme".to_string()));
    h.shutdown().await;
}

#[tokio::test]
async fn schema_references_are_resolved_locally_in_both_eras() {
    let (Some(py), Some(script)) = (external("H9_PYTHON"), external("H9_PY_SERVER")) else {
        return;
    };
    let server = |era: &str| json!({"command": py, "args": [script, "stdio"], "protocolEra": era});
    let project = super::support::Project::new(&json!({"mcpServers": {
        "old": server("legacy"), "new": server("modern")
    }}));
    let h = project.started().await;
    let mut schemas = Vec::new();
    for name in ["old", "new"] {
        // The server's own schema points into `$defs` (Pydantic's nested models).
        let defs = h.tool_defs(Some(name));
        let raw = &defs
            .iter()
            .find(|(_, d)| d.name == "plan")
            .unwrap()
            .1
            .input_schema;
        assert!(raw.to_string().contains("\"$ref\""), "{raw}");
        let spec = h
            .tools(Some(name))
            .into_iter()
            .find(|t| t.name == format!("mcp__{name}__plan"))
            .unwrap();
        let text = spec.input_schema.to_string();
        assert!(!text.contains("$ref") && !text.contains("$defs"), "{text}");
        let schema = spec.input_schema.value();
        let origin = &schema["properties"]["origin"];
        assert_eq!(origin["properties"]["name"]["type"], "string", "{text}");
        assert_eq!(origin["required"], json!(["name"]), "{text}");
        let args = json!({"origin": {"name": "Oslo"}, "destination": {"name": "Bergen"}});
        let r = h
            .call_tool(name, "plan", args, harness9::tools::CallContext::default())
            .await
            .unwrap();
        assert_eq!(r.to_text(), "Oslo (NO) to Bergen (NO)");
        schemas.push(spec.input_schema);
    }
    assert_eq!(schemas[0], schemas[1]);
    h.shutdown().await;
}

/// The modern fixture is the benchmark's fast server: it must still refuse a request whose
/// `_meta` lacks the protocol version or the client's capabilities, or names a version it
/// does not speak, however the params are laid out.
#[test]
fn the_modern_fixture_checks_every_requests_meta() {
    use std::io::{BufRead, BufReader, Write};
    let mut child = std::process::Command::new(fixture_bin())
        .arg("--modern")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("fixture starts");
    let caps = r#""io.modelcontextprotocol/clientCapabilities":{}"#;
    let version = r#""io.modelcontextprotocol/protocolVersion":"2026-07-28""#;
    let call = |id: u32, meta: &str| {
        format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"echo","arguments":{{"text":"x","_meta":{{}}}},"_meta":{{{meta}}}}}}}"#
        )
    };
    let lines = [
        call(1, &format!("{version},{caps}")),
        call(2, caps),
        call(3, version),
        call(
            4,
            &format!(r#""io.modelcontextprotocol/protocolVersion":"2025-11-25",{caps}"#),
        ),
        // Another order, spaces, and params before the id: parsed whole, same verdicts.
        format!(
            r#"{{"jsonrpc":"2.0","method":"tools/call","params":{{ "_meta" : {{{caps}, {version}}}, "name":"echo","arguments":{{"text":"y"}} }},"id":5}}"#
        ),
        call(6, &format!(r#"{caps},{version}"#)),
        // The well-formed `_meta` again (the server has seen it), then the bad ones again.
        call(7, &format!("{version},{caps}")),
        call(8, caps),
        call(
            9,
            &format!(r#""io.modelcontextprotocol/protocolVersion":"2025-11-25",{caps}"#),
        ),
    ];
    let mut stdin = child.stdin.take().expect("stdin");
    for line in &lines {
        writeln!(stdin, "{line}").expect("write");
    }
    drop(stdin);
    let answers: Vec<Value> = BufReader::new(child.stdout.take().expect("stdout"))
        .lines()
        .map(|l| serde_json::from_str(&l.expect("line")).expect("JSON"))
        .collect();
    let _ = child.wait();
    let by_id = |id: u64| {
        answers
            .iter()
            .find(|a| a["id"] == json!(id))
            .unwrap_or_else(|| panic!("no answer to {id}: {answers:?}"))
    };
    assert_eq!(by_id(1)["result"]["content"][0]["text"], json!("x"));
    assert_eq!(by_id(2)["error"]["code"], json!(-32602));
    assert_eq!(by_id(3)["error"]["code"], json!(-32602));
    assert_eq!(by_id(4)["error"]["code"], json!(-32022));
    assert_eq!(by_id(5)["result"]["content"][0]["text"], json!("y"));
    assert_eq!(by_id(6)["result"]["content"][0]["text"], json!("x"));
    assert_eq!(by_id(7)["result"]["content"][0]["text"], json!("x"));
    assert_eq!(by_id(8)["error"]["code"], json!(-32602));
    assert_eq!(by_id(9)["error"]["code"], json!(-32022));
}
