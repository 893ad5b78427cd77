//! `harness9 bench mcp`: times the MCP client core against any stdio MCP server.
//!
//! Owns the scenarios and the output format of `bench-contract.md`: one JSON object per
//! line on stdout (a meta line, then exactly one line per requested scenario, `ok:false`
//! with the reason when a scenario fails), and a human-readable table on stderr. Every
//! scenario spawns its own servers through the library's stdio transport and talks to them
//! through the library's [`Client`], on a tokio current-thread runtime, so the figures are
//! those of the code the app runs. Every echo answer is checked for equality with what was
//! sent; a wrong answer fails the scenario. The protocol era is chosen by the caller
//! (legacy by default; the `handshake` of the modern era is `server/discover` instead of
//! `initialize`). Beside the client, by default, runs the [`floor`]: a minimal blocking
//! client with no MCP library, against the same server and payloads, interleaved run by run
//! (floor, ours, floor, ours, …), so that each line says what the machine allowed at the
//! same moments (`floor`, `ours_over_floor`). The same scenarios over HTTP are [`http`]'s;
//! the agent engine's own benchmark is [`engine`].

pub mod bundle;
pub mod engine;
mod error;
mod features;
mod floor;
pub mod http;
pub mod tasks;

use std::io::Write;
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::{StreamExt, TryStreamExt};
use serde_json::{json, Map, Value};

use crate::config::ProtocolEra;
use crate::mcp::client::ConnectOptions;
use crate::mcp::transport::stdio::{spawn, StdioSpec};
use crate::mcp::{Client, Content, RequestOptions, ServerLog};

pub use error::BenchError;

/// Schema tag of every output line.
pub const SCHEMA: &str = "mcp-bench/1";

/// Every scenario, in the order they run by default.
pub const SCENARIOS: [&str; 6] = [
    "handshake",
    "seq_latency",
    "throughput",
    "big_list",
    "big_result",
    "fanout_start",
];

/// Scenarios run only when named in `--scenarios` (outside the contract's default set).
pub const EXTRA_SCENARIOS: [&str; 1] = ["big_features"];

/// Fresh servers started (and timed) by `handshake`.
const HANDSHAKE_REPS: usize = 20;
/// Untimed calls before `seq_latency` starts timing.
const SEQ_WARMUP: usize = 200;
/// Timed sequential calls.
const SEQ_CALLS: usize = 2_000;
/// Untimed calls before `throughput` starts timing.
const THROUGHPUT_WARMUP: usize = 1_000;
/// Timed pipelined calls.
const THROUGHPUT_CALLS: usize = 20_000;
/// Most calls `throughput` keeps in flight.
const THROUGHPUT_IN_FLIGHT: usize = 64;
/// Size of the echo text of `seq_latency` and `throughput`.
pub(crate) const SMALL_TEXT_BYTES: usize = 64;
/// Tools the server is asked to list in `big_list`.
const BIG_LIST_TOOLS: usize = 10_000;
/// Timed `tools/list` calls of `big_list`.
const BIG_LIST_CALLS: usize = 5;
/// Size of the echo text of `big_result`.
const BIG_RESULT_BYTES: usize = 4 * 1024 * 1024;
/// Untimed and timed calls of `big_result`.
const BIG_RESULT_WARMUP: usize = 1;
const BIG_RESULT_CALLS: usize = 3;
/// Servers started at once by `fanout_start`, and the delay each puts before its answer.
const FANOUT_SERVERS: usize = 20;
const FANOUT_INIT_DELAY_MS: u64 = 300;
/// `--quick` divides call counts by this...
const QUICK_CALL_DIVISOR: usize = 10;
/// ...and handshake repetitions by this.
const QUICK_HANDSHAKE_DIVISOR: usize = 4;
/// A scenario still running after this long fails instead of hanging the benchmark.
const SCENARIO_TIMEOUT: Duration = Duration::from_secs(300);

/// Environment variable asking the server for N synthetic tools.
const ENV_TOOLS: &str = "REFSERVER_TOOLS";
/// Environment variable asking the server to delay its `initialize` answer.
const ENV_INIT_DELAY: &str = "REFSERVER_INIT_DELAY_MS";

/// Runs the benchmark and prints the JSON lines to stdout; returns the process exit code
/// (0 when every requested scenario ran, even if some failed with ok:false; 2 for bad
/// arguments such as an unknown scenario name).
///
/// `era` is the protocol era spoken to the server (`Legacy`, the contract's handshake, by
/// default; `Modern` or `Auto` to time the stateless 2026-07-28 protocol and its probe).
/// `runs` repeats each scenario (at least once); its line is then the run with the median
/// value, with `runs` and every run's value beside it. With `with_floor`, every run of a
/// scenario the [`floor`] covers is preceded by a run of the floor client (in the legacy
/// and modern eras), and the line adds the floor's median (`floor`) and `ours_over_floor`.
pub fn run(
    scenarios: Option<&str>,
    quick: bool,
    runs: usize,
    command: &[String],
    era: ProtocolEra,
    with_floor: bool,
) -> i32 {
    let runs = runs.max(1);
    let selected = match parse_scenarios(scenarios) {
        Ok(s) => s,
        Err(message) => {
            eprintln!("harness9 bench mcp: {message}");
            return 2;
        }
    };
    if command.is_empty() || command[0].is_empty() {
        eprintln!("harness9 bench mcp: give the server command after `--`, e.g. `harness9 bench mcp -- target/release/mcp-fixture` (built by `cargo build --release -p harness9-fixtures`)");
        return 2;
    }
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("harness9 bench mcp: cannot start the tokio runtime: {e}");
            return 1;
        }
    };
    let sizes = Sizes::new(quick);
    let floor = match with_floor {
        true => floor::Floor::new(command, era, &sizes).map(Arc::new),
        false => None,
    };
    if with_floor && floor.is_none() {
        eprintln!("bench: the floor speaks one era; give --era legacy or --era modern to run it");
    }
    let bench = Arc::new(Bench {
        command: command.to_vec(),
        sizes,
        era,
    });
    let mut meta = json!({
        "schema": SCHEMA,
        "client": "harness9",
        "scenario": "meta",
        "sdk": "harness9",
        "sdk_version": env!("CARGO_PKG_VERSION"),
        "runtime": "rust, tokio current_thread",
    });
    if era != ProtocolEra::Legacy {
        meta["era"] = json!(era_word(era));
    }
    if floor.is_some() {
        meta["floor"] = json!(FLOOR_RUNTIME);
    }
    emit(&meta);
    let mut rows = Vec::with_capacity(selected.len());
    for name in selected {
        eprintln!("bench: running {name}...");
        let floor = floor.as_ref().filter(|_| floor::covers(name));
        let mut outcomes = Vec::with_capacity(runs);
        let mut floor_runs = Vec::with_capacity(runs);
        for _ in 0..runs {
            // Interleaved run by run, so that both see the same moments of a noisy machine.
            if let Some(floor) = floor {
                floor_runs.push(floor.run(name));
            }
            let outcome = runtime.block_on(run_scenario(bench.clone(), name));
            let failed = outcome.is_err();
            outcomes.push(outcome);
            if failed {
                break;
            }
        }
        let mut outcome = median_run(outcomes);
        if let (Ok(figures), false) = (&mut outcome, floor_runs.is_empty()) {
            add_floor(figures, floor_runs);
        }
        emit(&outcome_line(name, &outcome));
        rows.push((name, outcome));
    }
    drop(runtime);
    eprint!("{}", table(&rows));
    0
}

/// One run of a scenario, as a spawned task, as an application's work runs. (The future
/// given to `block_on` itself is polled outside the task queue, which costs an extra poll
/// of the I/O driver every time another task wakes it.)
async fn run_scenario(bench: Arc<Bench>, name: &'static str) -> Outcome {
    let task = tokio::spawn(async move {
        match tokio::time::timeout(SCENARIO_TIMEOUT, bench.scenario(name)).await {
            Ok(outcome) => outcome,
            Err(_) => Err(BenchError::Timeout(SCENARIO_TIMEOUT)),
        }
    });
    match task.await {
        Ok(outcome) => outcome,
        Err(e) => Err(BenchError::Crashed(format!("the scenario crashed: {e}"))),
    }
}

/// The outcome of several runs of one scenario: the first failure, or the run whose value
/// is the median (the lower middle one of an even count), with `runs` and `run_values`
/// added when there was more than one.
fn median_run(outcomes: Vec<Outcome>) -> Outcome {
    let count = outcomes.len();
    let mut runs = Vec::with_capacity(count);
    for outcome in outcomes {
        runs.push(outcome?);
    }
    let value = |f: &Figures| f.get("value").and_then(Value::as_f64).unwrap_or(f64::NAN);
    let values: Vec<Value> = runs.iter().map(|f| json!(value(f))).collect();
    runs.sort_by(|a, b| value(a).total_cmp(&value(b)));
    let mut chosen = runs.swap_remove((count - 1) / 2);
    if count > 1 {
        chosen.insert("runs".into(), json!(count));
        chosen.insert("run_values".into(), Value::Array(values));
    }
    Ok(chosen)
}

/// What the floor is, for the meta line.
const FLOOR_RUNTIME: &str = "rust, blocking std I/O, serde_json::Value, no MCP library";

/// Adds the floor's figures to the client's: its median `floor` (the lower middle run of
/// an even count, as for the client), `ours_over_floor` (the client's `value` over it:
/// below 1 is faster for times, slower for `calls/s`), every floor run's value when there
/// were several, or `floor_error` when a floor run failed.
fn add_floor(figures: &mut Figures, floor_runs: Vec<Result<f64, BenchError>>) {
    let count = floor_runs.len();
    let mut values = Vec::with_capacity(count);
    for run in floor_runs {
        match run {
            Ok(v) => values.push(v),
            Err(e) => {
                figures.insert("floor_error".into(), json!(e.to_string()));
                return;
            }
        }
    }
    let shown: Vec<Value> = values.iter().map(|v| num3(*v)).collect();
    values.sort_by(f64::total_cmp);
    let floor = values[(count - 1) / 2];
    let ours = figures
        .get("value")
        .and_then(Value::as_f64)
        .unwrap_or(f64::NAN);
    figures.insert("floor".into(), num3(floor));
    figures.insert("ours_over_floor".into(), num3(ours / floor));
    if count > 1 {
        figures.insert("floor_run_values".into(), Value::Array(shown));
    }
}

fn parse_scenarios(list: Option<&str>) -> Result<Vec<&'static str>, String> {
    let Some(list) = list else {
        return Ok(SCENARIOS.to_vec());
    };
    let mut selected = Vec::new();
    for item in list.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let Some(name) = SCENARIOS
            .iter()
            .chain(&EXTRA_SCENARIOS)
            .find(|s| **s == item)
        else {
            return Err(format!(
                "unknown scenario \"{item}\"; choose from {}, {}",
                SCENARIOS.join(", "),
                EXTRA_SCENARIOS.join(", ")
            ));
        };
        if !selected.contains(name) {
            selected.push(*name);
        }
    }
    if selected.is_empty() {
        return Err(format!(
            "--scenarios is empty; choose from {}",
            SCENARIOS.join(", ")
        ));
    }
    Ok(selected)
}

/// Repetitions and call counts, full or `--quick`.
struct Sizes {
    handshake: usize,
    seq_warmup: usize,
    seq_calls: usize,
    throughput_warmup: usize,
    throughput_calls: usize,
}

impl Sizes {
    fn new(quick: bool) -> Sizes {
        let (calls, reps) = if quick {
            (QUICK_CALL_DIVISOR, QUICK_HANDSHAKE_DIVISOR)
        } else {
            (1, 1)
        };
        Sizes {
            handshake: HANDSHAKE_REPS / reps,
            seq_warmup: SEQ_WARMUP / calls,
            seq_calls: SEQ_CALLS / calls,
            throughput_warmup: THROUGHPUT_WARMUP / calls,
            throughput_calls: THROUGHPUT_CALLS / calls,
        }
    }
}

/// A scenario's figures: the fields after `"ok":true`, in output order.
pub(crate) type Figures = Map<String, Value>;

/// One scenario's figures, or why it failed.
pub type Outcome = Result<Map<String, Value>, BenchError>;

struct Bench {
    command: Vec<String>,
    sizes: Sizes,
    era: ProtocolEra,
}

fn era_word(era: ProtocolEra) -> &'static str {
    match era {
        ProtocolEra::Auto => "auto",
        ProtocolEra::Legacy => "legacy",
        ProtocolEra::Modern => "modern",
    }
}

impl Bench {
    async fn scenario(&self, name: &str) -> Outcome {
        match name {
            "handshake" => self.handshake().await,
            "seq_latency" => self.seq_latency().await,
            "throughput" => self.throughput().await,
            "big_list" => self.big_list().await,
            "big_result" => self.big_result().await,
            "fanout_start" => self.fanout_start().await,
            "big_features" => {
                use features as f;
                let env = [
                    (f::ENV_RESOURCES, f::BIG_RESOURCES.to_string()),
                    (f::ENV_PROMPTS, f::BIG_PROMPTS.to_string()),
                ];
                let client = self.connect(&env).await?;
                let result = f::big_features_on(&client).await;
                client.close().await;
                result
            }
            other => Err(BenchError::NotRun(format!("unknown scenario {other}"))),
        }
    }

    /// Spawns the server and runs the handshake.
    async fn connect(&self, env: &[(&str, String)]) -> Result<Client, BenchError> {
        let spec = StdioSpec {
            command: self.command[0].clone(),
            args: self.command[1..].to_vec(),
            env: env
                .iter()
                .map(|(k, v)| (k.to_string(), v.clone()))
                .collect(),
            cwd: None,
            path: None,
            max_message_bytes: crate::config::DEFAULT_MAX_MESSAGE_BYTES,
        };
        let log = Arc::new(ServerLog::default());
        let conn = spawn(&spec, log.clone())?;
        let opts = ConnectOptions {
            era: self.era,
            ..ConnectOptions::default()
        };
        Client::connect_opts(conn, "bench", log, opts)
            .await
            .map_err(|e| BenchError::Initialize(Box::new(e)))
    }

    async fn handshake(&self) -> Outcome {
        let mut times = Vec::with_capacity(self.sizes.handshake);
        for _ in 0..self.sizes.handshake {
            let start = Instant::now();
            let client = self.connect(&[]).await?;
            let listed = client.list_tools(None).await;
            let elapsed = start.elapsed();
            client.close().await;
            listed.map_err(|e| BenchError::request("tools/list", e))?;
            times.push(elapsed);
        }
        let ms = to_millis(&times);
        let stats = Stats::of(&ms);
        Ok(figures([
            ("unit", json!("ms")),
            ("value", num3(stats.median)),
            ("median", num3(stats.median)),
            ("p90", num3(stats.percentile(90))),
            ("n", json!(ms.len())),
        ]))
    }

    async fn seq_latency(&self) -> Outcome {
        let client = self.connect(&[]).await?;
        let result = self.seq_latency_on(&client).await;
        client.close().await;
        result
    }

    async fn seq_latency_on(&self, client: &Client) -> Outcome {
        let (warmup, calls) = (self.sizes.seq_warmup, self.sizes.seq_calls);
        let mut times = Vec::with_capacity(calls);
        for i in 0..warmup + calls {
            let text = small_text(i);
            let args = echo_args(&text);
            let start = Instant::now();
            checked_echo(client, args, &text).await?;
            let elapsed = start.elapsed();
            if i >= warmup {
                times.push(elapsed);
            }
        }
        let us: Vec<f64> = times.iter().map(|d| d.as_secs_f64() * 1e6).collect();
        let stats = Stats::of(&us);
        Ok(figures([
            ("unit", json!("us")),
            ("value", num3(stats.median)),
            ("median", num3(stats.median)),
            ("p99", num3(stats.percentile(99))),
            ("mean", num3(stats.mean)),
            ("n", json!(us.len())),
        ]))
    }

    async fn throughput(&self) -> Outcome {
        let client = self.connect(&[]).await?;
        let result = self.throughput_on(&client).await;
        client.close().await;
        result
    }

    async fn throughput_on(&self, client: &Client) -> Outcome {
        let (warmup, calls) = (self.sizes.throughput_warmup, self.sizes.throughput_calls);
        pipelined_echoes(client, 0..warmup).await?;
        let start = Instant::now();
        pipelined_echoes(client, warmup..warmup + calls).await?;
        let secs = start.elapsed().as_secs_f64();
        let rate = calls as f64 / secs;
        Ok(figures([
            ("unit", json!("calls/s")),
            ("value", num1(rate)),
            ("n", json!(calls)),
            ("in_flight", json!(THROUGHPUT_IN_FLIGHT)),
            ("elapsed_ms", num3(secs * 1e3)),
        ]))
    }

    async fn big_list(&self) -> Outcome {
        let client = self
            .connect(&[(ENV_TOOLS, BIG_LIST_TOOLS.to_string())])
            .await?;
        let result = big_list_on(&client).await;
        client.close().await;
        result
    }

    async fn big_result(&self) -> Outcome {
        let client = self.connect(&[]).await?;
        let result = big_result_on(&client).await;
        client.close().await;
        result
    }

    async fn fanout_start(&self) -> Outcome {
        let env = [(ENV_INIT_DELAY, FANOUT_INIT_DELAY_MS.to_string())];
        let start = Instant::now();
        let started = futures::future::join_all((0..FANOUT_SERVERS).map(|_| async {
            let client = self.connect(&env).await?;
            match client.list_tools(None).await {
                Ok(tools) => Ok((client, tools.len())),
                Err(e) => {
                    client.close().await;
                    Err(BenchError::request("tools/list", e))
                }
            }
        }))
        .await;
        let elapsed = start.elapsed();
        let mut clients = Vec::with_capacity(started.len());
        let mut first_error = None;
        for outcome in started {
            match outcome {
                Ok((client, _)) => clients.push(client),
                Err(e) => first_error = first_error.or(Some(e)),
            }
        }
        futures::future::join_all(clients.iter().map(Client::close)).await;
        if let Some(e) = first_error {
            return Err(e);
        }
        Ok(figures([
            ("unit", json!("ms")),
            ("value", num3(elapsed.as_secs_f64() * 1e3)),
            ("n", json!(FANOUT_SERVERS)),
            ("init_delay_ms", json!(FANOUT_INIT_DELAY_MS)),
        ]))
    }
}

async fn big_list_on(client: &Client) -> Outcome {
    let mut times = Vec::with_capacity(BIG_LIST_CALLS);
    let mut listed = 0;
    for _ in 0..BIG_LIST_CALLS {
        let start = Instant::now();
        let tools = client
            .list_tools(None)
            .await
            .map_err(|e| BenchError::request("tools/list", e))?;
        times.push(start.elapsed());
        listed = tools.len();
        if listed < BIG_LIST_TOOLS {
            return Err(too_few_tools(listed));
        }
        drop(tools);
    }
    let ms = to_millis(&times);
    let stats = Stats::of(&ms);
    Ok(figures([
        ("unit", json!("ms")),
        ("value", num3(stats.median)),
        ("median", num3(stats.median)),
        ("n", json!(ms.len())),
        ("tools", json!(listed)),
    ]))
}

async fn big_result_on(client: &Client) -> Outcome {
    let text = big_text(BIG_RESULT_BYTES);
    let mut times = Vec::with_capacity(BIG_RESULT_CALLS);
    for i in 0..BIG_RESULT_WARMUP + BIG_RESULT_CALLS {
        let args = echo_args(&text);
        let start = Instant::now();
        checked_echo(client, args, &text).await?;
        let elapsed = start.elapsed();
        if i >= BIG_RESULT_WARMUP {
            times.push(elapsed);
        }
    }
    let ms = to_millis(&times);
    let stats = Stats::of(&ms);
    Ok(figures([
        ("unit", json!("ms")),
        ("value", num3(stats.median)),
        ("median", num3(stats.median)),
        ("n", json!(ms.len())),
        ("bytes", json!(BIG_RESULT_BYTES)),
    ]))
}

/// Echo calls numbered `range`, at most [`THROUGHPUT_IN_FLIGHT`] at a time, all checked.
async fn pipelined_echoes(
    client: &Client,
    range: std::ops::Range<usize>,
) -> Result<(), BenchError> {
    futures::stream::iter(range)
        .map(|i| async move {
            let text = small_text(i);
            checked_echo(client, echo_args(&text), &text).await
        })
        .buffer_unordered(THROUGHPUT_IN_FLIGHT)
        .try_for_each(|()| futures::future::ready(Ok(())))
        .await
}

fn echo_args(text: &str) -> Value {
    json!({ "text": text })
}

/// One `tools/call echo`, failing unless the answer is exactly one text block equal to
/// `expected`.
async fn checked_echo(client: &Client, args: Value, expected: &str) -> Result<(), BenchError> {
    let result = client
        .call_tool("echo", Some(args), RequestOptions::default())
        .await
        .map_err(|e| BenchError::request("tools/call echo", e))?;
    if result.is_error {
        return Err(BenchError::WrongAnswer(format!(
            "tools/call echo returned a tool error: {}",
            preview(&result.to_text())
        )));
    }
    match result.content.as_slice() {
        [Content::Text { text }] if text == expected => Ok(()),
        [Content::Text { text }] => Err(BenchError::WrongAnswer(format!(
            "echo answered different text ({} bytes, expected {}): {}",
            text.len(),
            expected.len(),
            preview(text)
        ))),
        other => Err(BenchError::WrongAnswer(format!(
            "echo answered {} content blocks instead of one text block",
            other.len()
        ))),
    }
}

/// `big_list` got fewer tools than it asked for.
fn too_few_tools(listed: usize) -> BenchError {
    BenchError::WrongAnswer(format!(
        "the server listed {listed} tools, fewer than the {BIG_LIST_TOOLS} asked for with {ENV_TOOLS}"
    ))
}

fn preview(text: &str) -> String {
    crate::truncate::prefix(text, 80).to_string()
}

/// A [`SMALL_TEXT_BYTES`]-byte ASCII text that names call `i`, so a misrouted answer fails:
/// `echo NNNNNNNNNNNN ` (the last 12 digits of `i`), then letters and digits. Built without
/// formatting machinery, as the floor builds one per call too.
pub(crate) fn small_text(i: usize) -> String {
    const PATTERN: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789abcdefghijklmnopqrstuvwxyz";
    let mut text = [0u8; SMALL_TEXT_BYTES];
    text[..5].copy_from_slice(b"echo ");
    let mut n = i;
    for digit in text[5..17].iter_mut().rev() {
        *digit = b'0' + (n % 10) as u8;
        n /= 10;
    }
    text[17] = b' ';
    text[18..].copy_from_slice(&PATTERN[..SMALL_TEXT_BYTES - 18]);
    String::from_utf8(text.to_vec()).expect("ASCII")
}

/// `bytes` bytes of printable ASCII that needs no JSON escaping.
pub(crate) fn big_text(bytes: usize) -> String {
    let line = b"The quick brown fox jumps over the lazy dog 0123456789. ";
    let text: Vec<u8> = line.iter().copied().cycle().take(bytes).collect();
    String::from_utf8(text).expect("ASCII")
}

/// Median, mean and nearest-rank percentiles of one sample.
pub(crate) struct Stats {
    sorted: Vec<f64>,
    pub(crate) median: f64,
    pub(crate) mean: f64,
}

impl Stats {
    pub(crate) fn of(values: &[f64]) -> Stats {
        let mut sorted = values.to_vec();
        sorted.sort_by(f64::total_cmp);
        let n = sorted.len();
        let median = match n {
            0 => f64::NAN,
            _ if n % 2 == 1 => sorted[n / 2],
            _ => (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0,
        };
        let mean = sorted.iter().sum::<f64>() / n as f64;
        Stats {
            sorted,
            median,
            mean,
        }
    }

    /// Nearest rank: `sorted[ceil(q·n) − 1]`, with `q = percent / 100` computed exactly.
    pub(crate) fn percentile(&self, percent: usize) -> f64 {
        let n = self.sorted.len();
        if n == 0 {
            return f64::NAN;
        }
        let rank = (percent * n).div_ceil(100).max(1);
        self.sorted[rank.min(n) - 1]
    }
}

fn to_millis(times: &[Duration]) -> Vec<f64> {
    times.iter().map(|d| d.as_secs_f64() * 1e3).collect()
}

pub(crate) fn round_to(x: f64, places: i32) -> Value {
    let scale = 10f64.powi(places);
    json!((x * scale).round() / scale)
}

fn num3(x: f64) -> Value {
    round_to(x, 3)
}

fn num1(x: f64) -> Value {
    round_to(x, 1)
}

pub(crate) fn figures<const N: usize>(fields: [(&str, Value); N]) -> Figures {
    fields
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect()
}

/// The JSON line of one scenario.
pub fn outcome_line(name: &str, outcome: &Outcome) -> Value {
    let mut line = Map::new();
    line.insert("schema".into(), json!(SCHEMA));
    line.insert("client".into(), json!("harness9"));
    line.insert("scenario".into(), json!(name));
    match outcome {
        Ok(fields) => {
            line.insert("ok".into(), json!(true));
            for (k, v) in fields {
                line.insert(k.clone(), v.clone());
            }
        }
        Err(error) => {
            line.insert("ok".into(), json!(false));
            line.insert("error".into(), json!(error.to_string()));
        }
    }
    Value::Object(line)
}

/// Prints one line to stdout and flushes, so a reader sees each scenario as it ends.
pub(crate) fn emit(line: &Value) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{line}");
    let _ = out.flush();
}

/// The human-readable summary for stderr; with the floor's columns when a row has them.
pub(crate) fn table(rows: &[(&str, Outcome)]) -> String {
    let with_floor = rows
        .iter()
        .any(|(_, o)| o.as_ref().is_ok_and(|f| f.contains_key("floor")));
    let mut text = format!("\n{:<14} {:>14} {:<8} ", "scenario", "value", "unit");
    if with_floor {
        text.push_str(&format!("{:>14} {:>10} ", "floor", "ours/floor"));
    }
    text.push_str("details\n");
    for (name, outcome) in rows {
        match outcome {
            Ok(fields) => {
                let number = |key: &str| fields.get(key).and_then(Value::as_f64);
                let value = number("value").unwrap_or(f64::NAN);
                let unit = fields.get("unit").and_then(Value::as_str).unwrap_or("");
                text.push_str(&format!("{name:<14} {value:>14.3} {unit:<8} "));
                if with_floor {
                    match (number("floor"), number("ours_over_floor")) {
                        (Some(floor), Some(ratio)) => {
                            text.push_str(&format!("{floor:>14.3} {ratio:>9.3}x "))
                        }
                        _ => text.push_str(&format!("{:>14} {:>10} ", "-", "-")),
                    }
                }
                let details: Vec<String> = fields
                    .iter()
                    .filter(|(k, _)| {
                        !matches!(k.as_str(), "unit" | "value" | "floor" | "ours_over_floor")
                    })
                    .map(|(k, v)| format!("{k}={v}"))
                    .collect();
                text.push_str(&details.join(" "));
                text.push('\n');
            }
            Err(error) => {
                let error = error.to_string();
                let first = error.lines().next().unwrap_or("");
                text.push_str(&format!("{name:<14} {:>14} {:<8} {first}\n", "FAILED", ""));
            }
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_and_nearest_rank() {
        let s = Stats::of(&[4.0, 1.0, 3.0, 2.0]);
        assert_eq!(s.median, 2.5);
        assert_eq!(s.percentile(90), 4.0);
        assert_eq!(s.percentile(50), 2.0);
        let values: Vec<f64> = (1..=2000).map(f64::from).collect();
        let s = Stats::of(&values);
        assert_eq!(s.percentile(99), 1980.0);
        assert_eq!(s.median, 1000.5);
        let s = Stats::of(&[7.0, 5.0, 6.0]);
        assert_eq!((s.median, s.percentile(90)), (6.0, 7.0));
    }

    #[test]
    fn scenario_list() {
        assert_eq!(parse_scenarios(None).unwrap(), SCENARIOS.to_vec());
        assert_eq!(
            parse_scenarios(Some("big_list, handshake,big_list")).unwrap(),
            vec!["big_list", "handshake"]
        );
        assert!(parse_scenarios(Some("handshake,nope")).is_err());
        assert!(parse_scenarios(Some(" , ")).is_err());
    }

    #[test]
    fn texts() {
        assert_eq!(small_text(7).len(), SMALL_TEXT_BYTES);
        assert_ne!(small_text(7), small_text(8));
        assert_eq!(
            small_text(1234),
            "echo 000000001234 abcdefghijklmnopqrstuvwxyz0123456789abcdefghij"
        );
        let big = big_text(BIG_RESULT_BYTES);
        assert_eq!(big.len(), BIG_RESULT_BYTES);
        assert!(big.bytes().all(|b| b.is_ascii_graphic() || b == b' '));
    }

    #[test]
    fn floor_figures() {
        let mut f = figures([("unit", json!("us")), ("value", json!(12.0))]);
        add_floor(&mut f, vec![Ok(8.0), Ok(6.0), Ok(30.0)]);
        assert_eq!(
            Value::Object(f.clone()),
            json!({"unit": "us", "value": 12.0, "floor": 8.0, "ours_over_floor": 1.5,
                   "floor_run_values": [8.0, 6.0, 30.0]})
        );
        let boom = BenchError::Crashed("boom".into());
        let text = table(&[("seq_latency", Ok(f)), ("big_features", Err(boom))]);
        assert!(text.contains("ours/floor"), "{text}");
        assert!(text.contains("1.500x"), "{text}");
        let mut f = figures([("value", json!(3.0))]);
        add_floor(
            &mut f,
            vec![Ok(1.0), Err(BenchError::Server("no server".into()))],
        );
        assert_eq!(
            Value::Object(f),
            json!({"value": 3.0, "floor_error": "no server"})
        );
    }

    #[test]
    fn failure_line() {
        let line = outcome_line("big_result", &Err(BenchError::Crashed("boom".into())));
        assert_eq!(
            line.to_string(),
            r#"{"schema":"mcp-bench/1","client":"harness9","scenario":"big_result","ok":false,"error":"boom"}"#
        );
    }
}
