//! The floor: the benchmark's scenarios driven by the least a client can do, so that each
//! figure of the real client comes with what the same machine, server and payloads allow
//! in the same run.
//!
//! No MCP library and no async runtime: the server is spawned with `std::process`, and its
//! pipes are used with blocking std I/O from plain threads. Requests are the very bytes
//! the client of the same era writes (the legacy `initialize` handshake, or the modern
//! `server/discover` and the `_meta` every modern request carries), built by hand.
//! `seq_latency` writes one request line and reads one answer line, checked by looking for
//! the echoed text in it; `throughput` keeps [`THROUGHPUT_IN_FLIGHT`] requests in flight
//! from a writer thread while the reader counts (and checks) answer lines; `big_result`,
//! `big_list`, `handshake` and `fanout_start` parse answers into a generic
//! [`serde_json::Value`] and check the same text and counts as the client. Lines carrying
//! a `"method"` (the server's notifications and requests) are skipped. Each figure is in
//! the unit of the scenario's `value`.
//!
//! A run that hangs is abandoned after [`SCENARIO_TIMEOUT`] (its thread is left blocked;
//! its servers end when the benchmark exits and their stdin closes).

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::{mpsc, Arc, LazyLock};
use std::time::{Duration, Instant};

use memchr::memmem;
use serde_json::Value;

use super::{
    big_text, small_text, to_millis, too_few_tools, BenchError, Sizes, Stats, BIG_LIST_CALLS,
    BIG_LIST_TOOLS, BIG_RESULT_BYTES, BIG_RESULT_CALLS, BIG_RESULT_WARMUP, ENV_INIT_DELAY,
    ENV_TOOLS, FANOUT_INIT_DELAY_MS, FANOUT_SERVERS, SCENARIO_TIMEOUT, THROUGHPUT_IN_FLIGHT,
};
use crate::config::ProtocolEra;
use crate::mcp::era::MODERN_PROTOCOL_VERSION;
use crate::mcp::types::LATEST_PROTOCOL_VERSION;

/// Buffer for the server's stdout (the size of a default pipe).
const READ_BUFFER: usize = 64 * 1024;
/// How long a server may take to exit once its stdin is closed before it is killed.
const EXIT_GRACE: Duration = Duration::from_secs(2);
/// The id of the first echo call; call `i` has id `FIRST_CALL_ID + i`.
const FIRST_CALL_ID: u64 = 100;

/// The scenarios the floor runs (not `big_features`).
pub(super) fn covers(scenario: &str) -> bool {
    matches!(
        scenario,
        "handshake" | "seq_latency" | "throughput" | "big_list" | "big_result" | "fanout_start"
    )
}

/// The floor client of one benchmark invocation.
pub(super) struct Floor {
    command: Vec<String>,
    wire: Wire,
    handshakes: usize,
    seq: (usize, usize),
    throughput: (usize, usize),
}

impl Floor {
    /// `None` for [`ProtocolEra::Auto`]: the floor speaks one era, the one asked for.
    pub(super) fn new(command: &[String], era: ProtocolEra, sizes: &Sizes) -> Option<Floor> {
        let modern = match era {
            ProtocolEra::Legacy => false,
            ProtocolEra::Modern => true,
            ProtocolEra::Auto => return None,
        };
        Some(Floor {
            command: command.to_vec(),
            wire: Wire::new(modern),
            handshakes: sizes.handshake,
            seq: (sizes.seq_warmup, sizes.seq_calls),
            throughput: (sizes.throughput_warmup, sizes.throughput_calls),
        })
    }

    /// One run of `scenario` on a thread of its own: its `value`, or why it failed.
    pub(super) fn run(self: &Arc<Self>, scenario: &'static str) -> Result<f64, BenchError> {
        let (tx, rx) = mpsc::channel();
        let floor = self.clone();
        std::thread::Builder::new()
            .name("bench-floor".into())
            .spawn(move || {
                let _ = tx.send(floor.scenario(scenario));
            })
            .map_err(|e| BenchError::Crashed(format!("cannot start the floor's thread: {e}")))?;
        match rx.recv_timeout(SCENARIO_TIMEOUT) {
            Ok(outcome) => outcome,
            Err(mpsc::RecvTimeoutError::Timeout) => Err(BenchError::Timeout(SCENARIO_TIMEOUT)),
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                Err(BenchError::Crashed("the floor crashed".into()))
            }
        }
    }

    fn scenario(&self, name: &str) -> Result<f64, BenchError> {
        match name {
            "handshake" => self.handshake(),
            "seq_latency" => self.seq_latency(),
            "throughput" => self.throughput(),
            "big_list" => self.big_list(),
            "big_result" => self.big_result(),
            "fanout_start" => self.fanout_start(),
            other => Err(BenchError::NotRun(format!(
                "the floor has no scenario {other}"
            ))),
        }
    }

    fn spawn(&self, env: &[(&str, String)]) -> Result<Server, BenchError> {
        Server::spawn(&self.command, env)
    }

    /// Spawns the server and completes the handshake.
    fn connect(&self, env: &[(&str, String)]) -> Result<Server, BenchError> {
        let mut server = self.spawn(env)?;
        server.send(self.wire.opening.as_bytes())?;
        self.finish_opening(&mut server)?;
        Ok(server)
    }

    /// Reads the answer to the opening request and sends what follows it (`initialized`).
    fn finish_opening(&self, server: &mut Server) -> Result<(), BenchError> {
        let answer = result_of(server.read_value()?, self.wire.opening_method())?;
        if self.wire.modern {
            let speaks = answer
                .get("supportedVersions")
                .and_then(Value::as_array)
                .is_some_and(|v| v.iter().any(|v| v == MODERN_PROTOCOL_VERSION));
            if !speaks {
                return Err(BenchError::WrongAnswer(format!(
                    "server/discover does not offer {MODERN_PROTOCOL_VERSION}"
                )));
            }
            Ok(())
        } else {
            server.send(INITIALIZED.as_bytes())
        }
    }

    fn handshake(&self) -> Result<f64, BenchError> {
        let mut times = Vec::with_capacity(self.handshakes);
        for _ in 0..self.handshakes {
            let start = Instant::now();
            let mut server = self.connect(&[])?;
            self.list_tools(&mut server, 2)?;
            times.push(start.elapsed());
        }
        Ok(Stats::of(&to_millis(&times)).median)
    }

    fn seq_latency(&self) -> Result<f64, BenchError> {
        let mut server = self.connect(&[])?;
        let (warmup, calls) = self.seq;
        let mut times = Vec::with_capacity(calls);
        let mut out = Vec::with_capacity(512);
        for i in 0..warmup + calls {
            let text = small_text(i);
            let start = Instant::now();
            out.clear();
            self.wire.echo(&mut out, FIRST_CALL_ID + i as u64, &text);
            server.send(&out)?;
            loop {
                let line = server.read_line()?;
                if echoes(line, &text) {
                    break;
                }
                if !is_from_server(line) {
                    return Err(wrong_echo(line));
                }
            }
            if i >= warmup {
                times.push(start.elapsed());
            }
        }
        let us: Vec<f64> = times.iter().map(|d| d.as_secs_f64() * 1e6).collect();
        Ok(Stats::of(&us).median)
    }

    fn throughput(&self) -> Result<f64, BenchError> {
        let mut server = self.connect(&[])?;
        let (warmup, calls) = self.throughput;
        self.pipelined(&mut server, 0..warmup)?;
        let start = Instant::now();
        self.pipelined(&mut server, warmup..warmup + calls)?;
        Ok(calls as f64 / start.elapsed().as_secs_f64())
    }

    /// Echo calls numbered `range`: a writer thread keeps at most [`THROUGHPUT_IN_FLIGHT`]
    /// in flight (writing what it has whenever it must wait), this thread reads, checks
    /// and counts the answers, handing the writer credits once it has read all it holds.
    fn pipelined(
        &self,
        server: &mut Server,
        range: std::ops::Range<usize>,
    ) -> Result<(), BenchError> {
        let total = range.len();
        let (credit_tx, credits) = mpsc::channel::<usize>();
        let Server { stdin, stdout, .. } = server;
        let stdin = stdin.as_mut().ok_or_else(stdin_closed)?;
        std::thread::scope(|scope| {
            let writer = scope.spawn(move || -> Result<(), BenchError> {
                let mut out = Vec::with_capacity(THROUGHPUT_IN_FLIGHT * 160);
                let mut in_flight = 0;
                for i in range.clone() {
                    while let Ok(n) = credits.try_recv() {
                        in_flight -= n;
                    }
                    while in_flight >= THROUGHPUT_IN_FLIGHT {
                        write_all(stdin, &mut out)?;
                        // The reader has gone (it failed): it says why.
                        let Ok(n) = credits.recv() else { return Ok(()) };
                        in_flight -= n;
                    }
                    self.wire
                        .echo(&mut out, FIRST_CALL_ID + i as u64, &small_text(i));
                    in_flight += 1;
                }
                write_all(stdin, &mut out)
            });
            let read = read_echoes(stdout, total, &credit_tx);
            drop(credit_tx);
            let wrote = writer
                .join()
                .unwrap_or_else(|_| Err(BenchError::Crashed("the writer crashed".into())));
            read.and(wrote)
        })
    }

    /// `tools/list`, every page, parsed; the number of tools.
    fn list_tools(&self, server: &mut Server, first_id: u64) -> Result<usize, BenchError> {
        let mut out = Vec::with_capacity(256);
        self.wire.list_tools(&mut out, first_id, None);
        server.send(&out)?;
        self.read_tool_list(server, first_id)
    }

    /// Reads the answer to `tools/list` (sent with id `id`), asking for the next pages.
    fn read_tool_list(&self, server: &mut Server, mut id: u64) -> Result<usize, BenchError> {
        let mut count = 0;
        loop {
            let result = result_of(server.read_value()?, "tools/list")?;
            count += result
                .get("tools")
                .and_then(Value::as_array)
                .ok_or_else(|| {
                    BenchError::WrongAnswer("tools/list answered without a tools array".into())
                })?
                .len();
            let Some(cursor) = result.get("nextCursor").and_then(Value::as_str) else {
                return Ok(count);
            };
            id += 1;
            let mut out = Vec::with_capacity(256);
            self.wire.list_tools(&mut out, id, Some(cursor));
            server.send(&out)?;
        }
    }

    fn big_list(&self) -> Result<f64, BenchError> {
        let mut server = self.connect(&[(ENV_TOOLS, BIG_LIST_TOOLS.to_string())])?;
        let mut times = Vec::with_capacity(BIG_LIST_CALLS);
        for call in 0..BIG_LIST_CALLS as u64 {
            let start = Instant::now();
            let listed = self.list_tools(&mut server, FIRST_CALL_ID + call * 1000)?;
            times.push(start.elapsed());
            if listed < BIG_LIST_TOOLS {
                return Err(too_few_tools(listed));
            }
        }
        Ok(Stats::of(&to_millis(&times)).median)
    }

    fn big_result(&self) -> Result<f64, BenchError> {
        let mut server = self.connect(&[])?;
        let text = big_text(BIG_RESULT_BYTES);
        let mut times = Vec::with_capacity(BIG_RESULT_CALLS);
        let mut out = Vec::new();
        for i in 0..BIG_RESULT_WARMUP + BIG_RESULT_CALLS {
            let start = Instant::now();
            out.clear();
            self.wire.echo(&mut out, FIRST_CALL_ID + i as u64, &text);
            server.send(&out)?;
            let result = result_of(server.read_value()?, "tools/call echo")?;
            match result.pointer("/content/0/text").and_then(Value::as_str) {
                Some(echoed) if echoed == text => {}
                _ => {
                    return Err(BenchError::WrongAnswer(
                        "echo answered different text".into(),
                    ))
                }
            }
            drop(result);
            if i >= BIG_RESULT_WARMUP {
                times.push(start.elapsed());
            }
        }
        Ok(Stats::of(&to_millis(&times)).median)
    }

    /// Starts every server and sends each its opening request, then completes each
    /// handshake in turn (the servers wait in parallel) and asks for its tools, then reads
    /// every list.
    fn fanout_start(&self) -> Result<f64, BenchError> {
        let env = [(ENV_INIT_DELAY, FANOUT_INIT_DELAY_MS.to_string())];
        let start = Instant::now();
        let mut servers = Vec::with_capacity(FANOUT_SERVERS);
        for _ in 0..FANOUT_SERVERS {
            let mut server = self.spawn(&env)?;
            server.send(self.wire.opening.as_bytes())?;
            servers.push(server);
        }
        let mut out = Vec::with_capacity(256);
        for server in &mut servers {
            self.finish_opening(server)?;
            out.clear();
            self.wire.list_tools(&mut out, 2, None);
            server.send(&out)?;
        }
        for server in &mut servers {
            self.read_tool_list(server, 2)?;
        }
        Ok(start.elapsed().as_secs_f64() * 1e3)
    }
}

/// Reads `total` echo answers, checking each names its call, and hands the writer a
/// credit for each (in one message per batch read).
fn read_echoes(
    stdout: &mut BufReader<ChildStdout>,
    total: usize,
    credits: &mpsc::Sender<usize>,
) -> Result<(), BenchError> {
    let mut line = Vec::with_capacity(512);
    let mut unsent = 0;
    let mut answered = 0;
    while answered < total {
        line.clear();
        match stdout.read_until(b'\n', &mut line) {
            Ok(0) => return Err(closed()),
            Ok(_) => {}
            Err(e) => return Err(cannot_read(e)),
        }
        if is_from_server(&line) {
            continue;
        }
        let call = answer_id(&line)
            .and_then(|id| id.checked_sub(FIRST_CALL_ID))
            .and_then(|i| usize::try_from(i).ok());
        let Some(call) = call else {
            return Err(wrong_echo(&line));
        };
        if !echoes(&line, &small_text(call)) {
            return Err(wrong_echo(&line));
        }
        answered += 1;
        unsent += 1;
        if stdout.buffer().is_empty() {
            // The writer may be gone once it has written everything.
            let _ = credits.send(unsent);
            unsent = 0;
        }
    }
    Ok(())
}

/// Searchers for the keys the floor looks for, built once.
static ID_KEY: LazyLock<memmem::Finder<'static>> = LazyLock::new(|| memmem::Finder::new("\"id\":"));
static TEXT_KEY: LazyLock<memmem::Finder<'static>> =
    LazyLock::new(|| memmem::Finder::new("\"text\":\""));
static METHOD_KEY: LazyLock<memmem::Finder<'static>> =
    LazyLock::new(|| memmem::Finder::new("\"method\""));

/// Whether the line's (first) `"text"` is `text`, which needs no escaping.
fn echoes(line: &[u8], text: &str) -> bool {
    let Some(at) = TEXT_KEY.find(line) else {
        return false;
    };
    let rest = line.get(at + TEXT_KEY.needle().len()..).unwrap_or_default();
    rest.starts_with(text.as_bytes()) && rest.get(text.len()) == Some(&b'"')
}

/// The number after the line's `"id":`.
fn answer_id(line: &[u8]) -> Option<u64> {
    let at = ID_KEY.find(line)? + ID_KEY.needle().len();
    let digits = line.get(at..)?;
    let digits = digits.trim_ascii_start();
    let end = digits
        .iter()
        .position(|b| !b.is_ascii_digit())
        .unwrap_or(digits.len());
    std::str::from_utf8(digits.get(..end)?).ok()?.parse().ok()
}

/// Whether a line is the server's own notification or request, not an answer.
fn is_from_server(line: &[u8]) -> bool {
    METHOD_KEY.find(line).is_some() || line.trim_ascii().is_empty()
}

fn write_all(stdin: &mut ChildStdin, out: &mut Vec<u8>) -> Result<(), BenchError> {
    if out.is_empty() {
        return Ok(());
    }
    stdin.write_all(out).map_err(cannot_write)?;
    out.clear();
    Ok(())
}

/// The `result` of an answer, or its error as text.
fn result_of(mut answer: Value, method: &'static str) -> Result<Value, BenchError> {
    if let Some(result) = answer.get_mut("result") {
        return Ok(result.take());
    }
    match answer.get("error") {
        Some(error) => Err(BenchError::Request {
            method,
            error: error.to_string(),
        }),
        None => Err(BenchError::WrongAnswer(format!(
            "{method} answered neither a result nor an error"
        ))),
    }
}

fn closed() -> BenchError {
    BenchError::Server("the server closed its stdout".into())
}

fn stdin_closed() -> BenchError {
    BenchError::Server("the server's stdin is closed".into())
}

fn cannot_read(e: std::io::Error) -> BenchError {
    BenchError::Server(format!("cannot read from the server: {e}"))
}

fn cannot_write(e: std::io::Error) -> BenchError {
    BenchError::Server(format!("cannot write to the server: {e}"))
}

/// An answer line that is not the echo of the call it answers.
fn wrong_echo(line: &[u8]) -> BenchError {
    BenchError::WrongAnswer(format!("echo answered: {}", preview(line)))
}

fn preview(line: &[u8]) -> String {
    let text = String::from_utf8_lossy(line);
    crate::truncate::prefix(text.trim_end(), 80).to_string()
}

/// `{"jsonrpc":"2.0","method":"notifications/initialized"}`, the legacy handshake's end.
const INITIALIZED: &str = "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n";

/// Writes the members of a request's params object.
type Members<'a> = dyn Fn(&mut Vec<u8>) + 'a;

/// The bytes the client of one era writes.
struct Wire {
    modern: bool,
    /// The opening request (id 1): `initialize`, or `server/discover`.
    opening: String,
    /// A modern request's `_meta` object (with the log level), empty for legacy.
    meta: String,
}

impl Wire {
    fn new(modern: bool) -> Wire {
        let info = format!(
            r#"{{"name":"harness9","version":"{}"}}"#,
            env!("CARGO_PKG_VERSION")
        );
        let members = format!(
            r#""io.modelcontextprotocol/protocolVersion":"{MODERN_PROTOCOL_VERSION}","io.modelcontextprotocol/clientCapabilities":{{}},"io.modelcontextprotocol/clientInfo":{info}"#
        );
        let (opening, meta) = if modern {
            (
                format!(
                    r#"{{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{{"_meta":{{{members}}}}}}}"#
                ),
                format!(r#"{{{members},"io.modelcontextprotocol/logLevel":"info"}}"#),
            )
        } else {
            (
                format!(
                    r#"{{"jsonrpc":"2.0","id":1,"method":"initialize","params":{{"protocolVersion":"{LATEST_PROTOCOL_VERSION}","capabilities":{{}},"clientInfo":{info}}}}}"#
                ),
                String::new(),
            )
        };
        Wire {
            modern,
            opening: opening + "\n",
            meta,
        }
    }

    fn opening_method(&self) -> &'static str {
        if self.modern {
            "server/discover"
        } else {
            "initialize"
        }
    }

    /// One request line: `params` writes the members of the params object (or nothing:
    /// a legacy request then has no params).
    fn request(&self, out: &mut Vec<u8>, id: u64, method: &str, params: Option<&Members<'_>>) {
        out.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
        let _ = write!(out, "{id}");
        out.extend_from_slice(br#","method":""#);
        out.extend_from_slice(method.as_bytes());
        out.push(b'"');
        if params.is_some() || self.modern {
            out.extend_from_slice(br#","params":{"#);
            if let Some(members) = params {
                members(out);
                if self.modern {
                    out.push(b',');
                }
            }
            if self.modern {
                out.extend_from_slice(br#""_meta":"#);
                out.extend_from_slice(self.meta.as_bytes());
            }
            out.push(b'}');
        }
        out.extend_from_slice(b"}\n");
    }

    fn echo(&self, out: &mut Vec<u8>, id: u64, text: &str) {
        self.request(
            out,
            id,
            "tools/call",
            Some(&|out: &mut Vec<u8>| {
                out.extend_from_slice(br#""name":"echo","arguments":{"text":"#);
                let _ = serde_json::to_writer(&mut *out, text);
                out.push(b'}');
            }),
        );
    }

    fn list_tools(&self, out: &mut Vec<u8>, id: u64, cursor: Option<&str>) {
        match cursor {
            None => self.request(out, id, "tools/list", None),
            Some(cursor) => self.request(
                out,
                id,
                "tools/list",
                Some(&|out: &mut Vec<u8>| {
                    out.extend_from_slice(br#""cursor":"#);
                    let _ = serde_json::to_writer(&mut *out, cursor);
                }),
            ),
        }
    }
}

/// One spawned server and its pipes.
struct Server {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
    line: Vec<u8>,
}

impl Server {
    fn spawn(command: &[String], env: &[(&str, String)]) -> Result<Server, BenchError> {
        let (program, args) = command
            .split_first()
            .ok_or_else(|| BenchError::Server("no server command".into()))?;
        let mut child = Command::new(program)
            .args(args)
            .envs(env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| BenchError::Server(format!("cannot start \"{program}\": {e}")))?;
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            let _ = child.kill();
            let _ = child.wait();
            return Err(BenchError::Server("the server's pipes are missing".into()));
        };
        Ok(Server {
            child,
            stdin: Some(stdin),
            stdout: BufReader::with_capacity(READ_BUFFER, stdout),
            line: Vec::new(),
        })
    }

    fn send(&mut self, bytes: &[u8]) -> Result<(), BenchError> {
        self.stdin
            .as_mut()
            .ok_or_else(stdin_closed)?
            .write_all(bytes)
            .map_err(cannot_write)
    }

    fn read_line(&mut self) -> Result<&[u8], BenchError> {
        self.line.clear();
        match self.stdout.read_until(b'\n', &mut self.line) {
            Ok(0) => Err(closed()),
            Ok(_) => Ok(&self.line),
            Err(e) => Err(cannot_read(e)),
        }
    }

    /// The next answer, parsed (the server's own messages skipped).
    fn read_value(&mut self) -> Result<Value, BenchError> {
        loop {
            let line = self.read_line()?;
            if line.trim_ascii().is_empty() {
                continue;
            }
            let value: Value = serde_json::from_slice(line).map_err(|e| {
                BenchError::WrongAnswer(format!(
                    "the server wrote invalid JSON ({e}): {}",
                    preview(line)
                ))
            })?;
            if value.get("method").is_none() {
                return Ok(value);
            }
        }
    }
}

impl Drop for Server {
    /// Closes stdin and waits for the exit; kills the server if it lingers.
    fn drop(&mut self) {
        drop(self.stdin.take());
        let deadline = Instant::now() + EXIT_GRACE;
        while Instant::now() < deadline {
            match self.child.try_wait() {
                Ok(Some(_)) | Err(_) => return,
                Ok(None) => std::thread::sleep(Duration::from_millis(1)),
            }
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(wire: &Wire, write: impl FnOnce(&Wire, &mut Vec<u8>)) -> Value {
        let mut out = Vec::new();
        write(wire, &mut out);
        assert_eq!(out.last(), Some(&b'\n'));
        serde_json::from_slice(&out).expect("one JSON line")
    }

    #[test]
    fn requests_of_either_era() {
        let legacy = Wire::new(false);
        assert_eq!(
            line(&legacy, |w, out| w.echo(out, 7, "hi \"you\"")),
            serde_json::json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
                "params": {"name": "echo", "arguments": {"text": "hi \"you\""}}})
        );
        assert_eq!(
            line(&legacy, |w, out| w.list_tools(out, 2, None)).to_string(),
            r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#
        );
        let modern = Wire::new(true);
        let meta = serde_json::json!({
            "io.modelcontextprotocol/protocolVersion": MODERN_PROTOCOL_VERSION,
            "io.modelcontextprotocol/clientCapabilities": {},
            "io.modelcontextprotocol/clientInfo": {"name": "harness9", "version": env!("CARGO_PKG_VERSION")},
            "io.modelcontextprotocol/logLevel": "info",
        });
        assert_eq!(
            line(&modern, |w, out| w.list_tools(out, 3, Some("p2"))),
            serde_json::json!({"jsonrpc": "2.0", "id": 3, "method": "tools/list",
                "params": {"cursor": "p2", "_meta": meta}})
        );
        assert_eq!(
            line(&modern, |w, out| w.list_tools(out, 2, None)),
            serde_json::json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list",
                "params": {"_meta": meta}})
        );
        let opening: Value = serde_json::from_str(&modern.opening).unwrap();
        assert_eq!(opening["method"], "server/discover");
        assert!(opening["params"]["_meta"]
            .get("io.modelcontextprotocol/logLevel")
            .is_none());
    }

    #[test]
    fn answer_ids() {
        assert_eq!(
            answer_id(br#"{"jsonrpc":"2.0","id":123,"result":{}}"#),
            Some(123)
        );
        assert_eq!(answer_id(br#"{"result":{},"id": 5}"#), Some(5));
        assert_eq!(answer_id(br#"{"id":"x"}"#), None);
        assert!(is_from_server(
            br#"{"jsonrpc":"2.0","method":"notifications/message"}"#
        ));
        assert!(!is_from_server(br#"{"jsonrpc":"2.0","id":1,"result":{}}"#));
        let answer = br#"{"id":3,"result":{"content":[{"type":"text","text":"echo 3"}]}}"#;
        assert!(echoes(answer, "echo 3"));
        assert!(!echoes(answer, "echo "));
        assert!(!echoes(answer, "echo 30"));
    }
}
