//! Secrets in a server's URL (userinfo, query values) never reach any output: the real
//! `harness9` binary (`mcp list`, `mcp list --json`, `mcp call`, `doctor --json`,
//! `mcp login`, with debug logging on) and the core's status and server logs (what the
//! front ends show), against servers that misbehave in every way an HTTP exchange can:
//! a 200 with garbage (JSON, an event stream, a web page), 4xx, 5xx, a redirect away, a
//! redirect loop, and a dropped connection; each over Streamable HTTP and legacy SSE.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::time::Duration;

use serde_json::{json, Value};

use super::support::process::output_within;
use super::support::{stderr, stdout, Project};

/// The secrets the URLs carry: in the userinfo and in query values.
const SECRETS: &[&str] = &["USECRET0", "PWSECRET1", "QSECRET2", "QSECRET3", "QSECRET4"];

/// How one hostile server answers every request.
#[derive(Clone, Copy, Debug)]
enum Misbehaviour {
    GarbageJson,
    GarbageStream,
    GarbagePage,
    NotFound,
    Forbidden,
    Failing,
    RedirectAway,
    RedirectLoop,
    Drop,
}

const ALL: &[Misbehaviour] = &[
    Misbehaviour::GarbageJson,
    Misbehaviour::GarbageStream,
    Misbehaviour::GarbagePage,
    Misbehaviour::NotFound,
    Misbehaviour::Forbidden,
    Misbehaviour::Failing,
    Misbehaviour::RedirectAway,
    Misbehaviour::RedirectLoop,
    Misbehaviour::Drop,
];

fn answer(how: Misbehaviour) -> Option<String> {
    let reply = |status: &str, ct: &str, extra: &str, body: &str| {
        format!(
            "HTTP/1.1 {status}\r\nContent-Type: {ct}\r\n{extra}Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        )
    };
    Some(match how {
        Misbehaviour::GarbageJson => reply("200 OK", "application/json", "", "{\"not\": rpc"),
        Misbehaviour::GarbageStream => {
            reply("200 OK", "text/event-stream", "", "data: {garbage\n\n")
        }
        Misbehaviour::GarbagePage => reply("200 OK", "text/html", "", "<p>hello</p>"),
        Misbehaviour::NotFound => reply("404 Not Found", "text/plain", "", "no"),
        Misbehaviour::Forbidden => reply("403 Forbidden", "text/plain", "", "no"),
        Misbehaviour::Failing => reply("500 Internal Server Error", "text/plain", "", "down"),
        Misbehaviour::RedirectAway => reply(
            "302 Found",
            "text/plain",
            "Location: http://127.0.0.1:9/away?sig=QSECRET2\r\n",
            "",
        ),
        Misbehaviour::RedirectLoop => reply(
            "307 Temporary Redirect",
            "text/plain",
            "Location: /loop?sig=QSECRET2&key=QSECRET3\r\n",
            "",
        ),
        Misbehaviour::Drop => return None,
    })
}

/// Reads one request (head and a `Content-Length` body), then answers it as `how` says.
fn serve(mut s: TcpStream, how: Misbehaviour) {
    let _ = s.set_read_timeout(Some(Duration::from_secs(5)));
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    let head_end = loop {
        match s.read(&mut chunk) {
            Ok(0) | Err(_) => return,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).to_ascii_lowercase();
    let len: usize = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0);
    while buf.len() < head_end + len {
        match s.read(&mut chunk) {
            Ok(0) | Err(_) => break,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    }
    if let Some(reply) = answer(how) {
        let _ = s.write_all(reply.as_bytes());
    }
}

/// A hostile server on its own port; lives as long as the test process.
fn hostile(how: Misbehaviour) -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for s in l.incoming().flatten() {
            std::thread::spawn(move || serve(s, how));
        }
    });
    port
}

fn secret_url(port: u16) -> String {
    format!("http://USECRET0:PWSECRET1@127.0.0.1:{port}/mcp?sig=QSECRET2&key=QSECRET3&v=QSECRET4")
}

/// Runs the binary on `p` with debug logging (60 s at most).
fn run(p: &Project, args: &[&str]) -> (String, String) {
    let child = p
        .command(args)
        .env("HARNESS9_LOG", "debug")
        .env("BROWSER", "true")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let o = output_within(child, Duration::from_secs(60));
    (stdout(&o), stderr(&o))
}

fn leaks(what: &str, text: &str) -> Vec<String> {
    SECRETS
        .iter()
        .filter(|s| text.contains(*s))
        .map(|s| format!("{what} shows {s}:\n{text}"))
        .collect()
}

/// Every file under `dir` (logs, conversations, credentials, approvals), as text.
fn files_under(dir: &Path, out: &mut Vec<(String, String)>) {
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = e.path();
        if path.is_dir() {
            files_under(&path, out);
        } else if let Ok(bytes) = std::fs::read(&path) {
            out.push((
                path.display().to_string(),
                String::from_utf8_lossy(&bytes).into_owned(),
            ));
        }
    }
}

#[test]
fn secrets_in_server_urls_never_reach_any_output() {
    let mut servers = serde_json::Map::new();
    for how in ALL {
        let port = hostile(*how);
        for kind in ["http", "sse"] {
            servers.insert(
                format!("{how:?}-{kind}").to_ascii_lowercase(),
                json!({"type": kind, "url": secret_url(port)}),
            );
        }
    }
    let names: Vec<String> = servers.keys().cloned().collect();
    let p = Project::new(&json!({ "mcpServers": Value::Object(servers) }));

    let mut runs: Vec<Vec<String>> = vec![
        vec!["mcp".into(), "list".into(), "--yes".into()],
        vec!["mcp".into(), "list".into(), "--yes".into(), "--json".into()],
        vec!["doctor".into(), "--yes".into(), "--json".into()],
    ];
    for n in &names {
        runs.push(vec![
            "mcp".into(),
            "call".into(),
            n.clone(),
            "echo".into(),
            "{}".into(),
            "--yes".into(),
        ]);
        runs.push(vec![
            "mcp".into(),
            "login".into(),
            n.clone(),
            "--yes".into(),
        ]);
    }
    let mut found = Vec::new();
    let outputs: Vec<(String, String, String)> = std::thread::scope(|scope| {
        let handles: Vec<_> = runs
            .iter()
            .map(|args| {
                let p = &p;
                scope.spawn(move || {
                    let a: Vec<&str> = args.iter().map(String::as_str).collect();
                    let (o, e) = run(p, &a);
                    (args.join(" "), o, e)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    for (cmd, stdout, stderr) in &outputs {
        found.extend(leaks(&format!("`{cmd}` stdout"), stdout));
        found.extend(leaks(&format!("`{cmd}` stderr"), stderr));
    }
    // The runs did reach the servers and say what went wrong.
    let (_, list, _) = &outputs[1];
    let rows: Value = serde_json::from_str(list).expect("mcp list --json prints JSON");
    assert_eq!(rows.as_array().map(Vec::len), Some(names.len()), "{list}");
    for r in rows.as_array().unwrap() {
        assert_eq!(r["status"], "failed", "{r}");
    }

    // What the front ends show: the status and each server's log, from the core.
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let h = p.started().await;
        let snap = serde_json::to_string(&*h.manager().snapshot()).unwrap();
        found.extend(leaks("the status snapshot", &snap));
        for n in &names {
            if let Some(log) = h.manager().log(n) {
                let lines = format!("{:?}", log.tail(1000));
                found.extend(leaks(&format!("the log of {n}"), &lines));
            }
        }
        h.shutdown().await;
    });

    let mut files = Vec::new();
    files_under(p.data.path(), &mut files);
    for (path, text) in &files {
        found.extend(leaks(&format!("the file {path}"), text));
    }
    assert!(found.is_empty(), "{}", found.join("\n\n"));
}
