//! `harness9 mcp resources|read|prompts|prompt`, the tool hints of `mcp tools`, and how
//! `mcp call` answers elicitation, end to end against `server-everything`.

use serde_json::{json, Value};

use super::support::{stderr, stdout, Project};

#[test]
fn resources_and_read_through_the_cli() {
    let Some(p) = Project::everything() else {
        return;
    };
    let o = p.cli(&["mcp", "resources", "--yes"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines[0],
        "SERVER  URI                                              NAME             MIME"
    );
    assert!(lines.contains(&"ev      demo://resource/static/document/features.md      features.md      text/markdown"), "{out}");
    assert!(out.contains("SERVER  URI TEMPLATE"), "{out}");
    assert!(
        out.contains("demo://resource/dynamic/blob/{resourceId}  Dynamic Blob Resource"),
        "{out}"
    );

    let o = p.cli(&["mcp", "resources", "ev", "--yes", "--json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
    let first = &v["resources"][0];
    assert_eq!(first["server"], "ev");
    assert!(first["uri"]
        .as_str()
        .unwrap()
        .starts_with("demo://resource/static/document/"));
    assert_eq!(
        v["resourceTemplates"][0]["uriTemplate"],
        "demo://resource/dynamic/text/{resourceId}"
    );

    let o = p.cli(&[
        "mcp",
        "read",
        "ev",
        "demo://resource/dynamic/text/7",
        "--yes",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stdout(&o).starts_with("Resource 7: This is a plaintext resource created at "),
        "{}",
        stdout(&o)
    );
    let o = p.cli(&[
        "mcp",
        "read",
        "ev",
        "demo://resource/dynamic/blob/7",
        "--yes",
    ]);
    let line = stdout(&o);
    assert!(
        line.starts_with("[binary demo://resource/dynamic/blob/7: text/plain, ")
            && line.ends_with(" bytes; save it with --output FILE]\n"),
        "{line}"
    );
    let file = p.path().join("blob.bin");
    let o = p.cli(&[
        "mcp",
        "read",
        "ev",
        "demo://resource/dynamic/blob/7",
        "--yes",
        "--output",
        file.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let saved = std::fs::read_to_string(&file).unwrap();
    assert!(
        saved.starts_with("Resource 7: This is a base64 blob created at "),
        "{saved}"
    );
    let o = p.cli(&[
        "mcp",
        "read",
        "ev",
        "demo://resource/dynamic/blob/7",
        "--yes",
        "--json",
    ]);
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["contents"][0]["uri"], "demo://resource/dynamic/blob/7");
    assert!(v["contents"][0]["blob"].is_string());

    // Exit codes: the server's error is 1, an unknown server 2.
    let o = p.cli(&["mcp", "read", "ev", "demo://nope", "--yes"]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        stderr(&o),
        "harness9: server \"ev\": the server answered resources/read with error -32602: MCP error -32602: Resource demo://nope not found\n"
    );
    let o = p.cli(&["mcp", "read", "nope", "demo://x", "--yes"]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        stderr(&o),
        "harness9: no server named \"nope\" in any config scope (servers: [\"ev\"])\n"
    );
}

#[test]
fn prompts_and_prompt_through_the_cli() {
    let Some(p) = Project::everything() else {
        return;
    };
    let o = p.cli(&["mcp", "prompts", "--yes"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(
        stdout(&o),
        "SERVER  NAME                ARGUMENTS                   DESCRIPTION
ev      simple-prompt                                   A prompt with no arguments
ev      args-prompt         city*, state                A prompt with two arguments, one required and one optional
ev      completable-prompt  department*, name*          First argument choice narrows values for second argument.
ev      resource-prompt     resourceType*, resourceId*  A prompt that includes an embedded resource reference
"
    );
    let o = p.cli(&["mcp", "prompts", "ev", "--yes", "--json"]);
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v[1]["name"], "args-prompt");
    assert_eq!(v[1]["server"], "ev");
    assert_eq!(
        v[1]["arguments"][0],
        json!({"name": "city", "description": "Name of the city", "required": true})
    );

    let o = p.cli(&[
        "mcp",
        "prompt",
        "ev",
        "args-prompt",
        r#"{"city": "Paris", "state": "Texas"}"#,
        "--yes",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stdout(&o), "user: What's weather in Paris, Texas?\n");
    let o = p.cli(&[
        "mcp",
        "prompt",
        "ev",
        "resource-prompt",
        r#"{"resourceType": "Text", "resourceId": 3}"#,
        "--yes",
        "--json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
    let kinds: Vec<&str> = v["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["content"]["type"].as_str().unwrap())
        .collect();
    assert!(kinds.contains(&"resource"), "{v}");

    let o = p.cli(&["mcp", "prompt", "ev", "args-prompt", "--yes"]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        stderr(&o),
        "harness9: prompt \"args-prompt\" needs the argument(s) city; pass them as ARGS_JSON, e.g. '{\"city\": \"...\"}'\n"
    );
    let o = p.cli(&["mcp", "prompt", "ev", "nope", "--yes"]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        stderr(&o),
        "harness9: server \"ev\" has no prompt \"nope\" (it has: simple-prompt, args-prompt, completable-prompt, resource-prompt)\n"
    );
    let o = p.cli(&["mcp", "prompt", "ev", "args-prompt", "[1]", "--yes"]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn tools_show_their_hints() {
    let Some(p) = Project::everything() else {
        return;
    };
    let o = p.cli(&["mcp", "tools", "ev", "--yes"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    let header = out.lines().next().unwrap();
    assert!(
        header.starts_with("NAME")
            && header.contains("  HINTS  ")
            && header.ends_with("DESCRIPTION"),
        "{header}"
    );
    let row = |tool: &str| {
        out.lines()
            .find(|l| l.starts_with(&format!("mcp__ev__{tool} ")))
            .unwrap_or_else(|| panic!("{tool}: {out}"))
            .split_whitespace()
            .nth(2)
            .unwrap()
            .to_string()
    };
    assert_eq!(row("get-sum"), "read-only,idempotent");
    // Elicitation and sampling are announced (so the server offers these tools; `mcp
    // call` declines and refuses them, saying so).
    assert!(
        out.contains("\nmcp__ev__trigger-elicitation-request "),
        "{out}"
    );
    assert!(
        out.contains("\nmcp__ev__trigger-sampling-request "),
        "{out}"
    );
}

#[test]
fn call_refuses_sampling_and_says_so() {
    let Some(p) = Project::everything() else {
        return;
    };
    let o = p.cli(&[
        "mcp",
        "call",
        "ev",
        "trigger-sampling-request",
        r#"{"prompt": "hi", "maxTokens": 5}"#,
        "--yes",
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("harness9: server \"ev\" asked to use your model (sampling); refused because no one can approve it here. Run it from the terminal UI (`harness9`) or the desktop app to approve it."),
        "{err}"
    );
    let out = format!("{}{err}", stdout(&o));
    assert!(
        out.contains(
            "harness9 cannot approve sampling requests in this command; the request was refused"
        ),
        "{out}"
    );
}

#[test]
fn call_declines_elicitation_unless_answers_are_given() {
    let Some(p) = Project::everything() else {
        return;
    };
    let o = p.cli(&["mcp", "call", "ev", "trigger-elicitation-request", "--yes"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stdout(&o).starts_with("❌ User declined to provide the requested information."),
        "{}",
        stdout(&o)
    );
    assert_eq!(
        stderr(&o),
        "harness9: server \"ev\" asked for input (\"Please provide inputs for the following fields:\"); declined because no one can answer here. Pass --elicitation FILE (a JSON object of answers) to accept.\n"
    );
    let answers = p.path().join("answers.json");
    std::fs::write(
        &answers,
        r#"{"name": "Ada", "check": true, "unrelated": 1}"#,
    )
    .unwrap();
    let o = p.cli(&[
        "mcp",
        "call",
        "ev",
        "trigger-elicitation-request",
        "--yes",
        "--elicitation",
        answers.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(
        out.contains(
            "- Name: Ada\n- Agreed to terms: true\n- Favorite Integer: 42\n- Favorite Number: 3.14"
        ),
        "{out}"
    );
    assert!(!out.contains("unrelated"), "{out}");
    assert_eq!(
        stderr(&o),
        "harness9: server \"ev\" asked for input (\"Please provide inputs for the following fields:\"); answered from the elicitation file\n"
    );
    // Answers without a required field: declined, and said why.
    std::fs::write(&answers, r#"{"check": true}"#).unwrap();
    let o = p.cli(&[
        "mcp",
        "call",
        "ev",
        "trigger-elicitation-request",
        "--yes",
        "--elicitation",
        answers.to_str().unwrap(),
    ]);
    assert!(
        stderr(&o).ends_with("declined because the elicitation answers lack name\n"),
        "{}",
        stderr(&o)
    );
    std::fs::write(&answers, "[]").unwrap();
    let o = p.cli(&[
        "mcp",
        "call",
        "ev",
        "echo",
        "--yes",
        "--elicitation",
        answers.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("must hold one JSON object of answers"),
        "{}",
        stderr(&o)
    );
    // -32042: the URLs to open are named.
    let o = p.cli(&[
        "mcp",
        "call",
        "ev",
        "trigger-url-elicitation",
        r#"{"url": "https://example.com/x", "errorPath": true}"#,
        "--yes",
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).ends_with("harness9: the server needs you to open modelcontextprotocol.io (https://modelcontextprotocol.io/) first (\"Open this link to satisfy the prerequisite, then retry the request.\"); open it if you trust it, then run again\n"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn python_sdk_server_resources_prompts_and_elicitation() {
    let Some(p) = Project::python_legacy() else {
        return;
    };
    let o = p.cli(&["mcp", "resources", "--yes"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(
        stdout(&o),
        "SERVER  URI             NAME     MIME
py      h9://readme     Read me  text/plain
py      h9://pixel.png  pixel    image/png

SERVER  URI TEMPLATE       NAME  MIME
py      h9://notes/{name}  note  text/plain
"
    );
    let png = p.path().join("pixel.png");
    let o = p.cli(&[
        "mcp",
        "read",
        "py",
        "h9://pixel.png",
        "--yes",
        "--output",
        png.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(std::fs::read(&png)
        .unwrap()
        .starts_with(b"\x89PNG\r\n\x1a\n"));
    let o = p.cli(&["mcp", "read", "py", "h9://notes/abc", "--yes"]);
    assert_eq!(stdout(&o), "note abc\n");
    let o = p.cli(&[
        "mcp",
        "prompt",
        "py",
        "review",
        r#"{"code": "x = 1", "focus": "speed"}"#,
        "--yes",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stdout(&o), "user: Review this code for speed:\nx = 1\n");

    // SEP-1034: an empty answers file accepts with every default filled in.
    let answers = p.path().join("answers.json");
    std::fs::write(&answers, "{}").unwrap();
    let o = p.cli(&[
        "mcp",
        "call",
        "py",
        "ask_client",
        r#"{"kind": "profile"}"#,
        "--yes",
        "--elicitation",
        answers.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(
        stdout(&o),
        "accept: {\"name\":\"Ann\",\"age\":30,\"subscribe\":true}\n"
    );
    let o = p.cli(&[
        "mcp",
        "call",
        "py",
        "ask_client",
        r#"{"kind": "profile"}"#,
        "--yes",
    ]);
    assert_eq!(stdout(&o), "decline\n");
    // Sampling is refused (no one to approve it here), with a line on stderr.
    let o = p.cli(&[
        "mcp",
        "call",
        "py",
        "ask_client",
        r#"{"kind": "sample"}"#,
        "--yes",
    ]);
    assert_eq!(
        stdout(&o),
        "error: harness9 cannot approve sampling requests in this command; the request was refused\n"
    );
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("asked to use your model (sampling); refused"),
        "{o:?}"
    );
}

/// `harness9 exec` with the model played by the stub, on the everything server.
async fn exec_elicitation(answers: Option<&str>) -> (i32, String, String) {
    use super::support::provider_stub::{Reply, Stub, Wire};
    use super::support::turns::{exec_async, strings};
    let p = Project::everything().expect("checked by the caller");
    let stub = Stub::start(
        Wire::OpenAi,
        vec![
            Reply::tool("mcp__ev__trigger-elicitation-request", json!({})),
            Reply::text("done"),
        ],
    )
    .await;
    let mut args = strings(&["--yes", "--allow-tools", "mcp__ev__*", "ask me"]);
    if let Some(a) = answers {
        let file = p.path().join("answers.json");
        std::fs::write(&file, a).unwrap();
        args.extend(["--elicitation".to_string(), file.display().to_string()]);
    }
    let o = exec_async(
        std::sync::Arc::new(p),
        Some(std::sync::Arc::new(stub)),
        args,
    )
    .await;
    (o.status.code().unwrap_or(-1), stdout(&o), stderr(&o))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exec_declines_elicitation_unless_answers_are_given() {
    if super::support::bins::everything_bin().is_none() {
        return;
    }
    let (code, out, err) = exec_elicitation(None).await;
    assert_eq!((code, out.as_str()), (0, "done\n"), "{err}");
    assert!(
        err.contains("harness9: server \"ev\" asked for input (\"Please provide inputs for the following fields:\"); declined because no one can answer here. Pass --elicitation FILE (a JSON object of answers) to accept.\n"),
        "{err}"
    );
    let (code, _, err) = exec_elicitation(Some(r#"{"name": "Ada"}"#)).await;
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("answered from the elicitation file"), "{err}");
}
