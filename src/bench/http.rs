//! The HTTP mode of `harness9 bench mcp`: the scenarios of `bench-contract.md` that apply to
//! a server reached by URL, over the library's Streamable HTTP transport (with its legacy
//! fallback) and [`Client`], on a tokio current-thread runtime like the stdio benchmark.
//!
//! | scenario | over HTTP |
//! |---|---|
//! | `handshake` | `initialize` → `notifications/initialized` → parsed `tools/list`, a new session each time (its `DELETE` not timed) |
//! | `seq_latency`, `throughput`, `big_result` | as on stdio, on one session (`echo {text}` must return the text unchanged) |
//! | `big_list`, `fanout_start` | not applicable: they need a server the benchmark starts itself (`ok:false` with the reason when asked for) |
//!
//! Output: the same JSON lines (`mcp-bench/1`) on stdout, a table on stderr; the meta line
//! also names the transport and the URL.

use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::{StreamExt, TryStreamExt};
use serde_json::json;

use super::{
    big_text, emit, figures as fields, round_to as num, small_text, table, BenchError, Stats,
};
pub use super::{outcome_line, Outcome};
use crate::mcp::transport::http::{self, HttpSpec};
use crate::mcp::{Client, Content, RequestOptions, ServerLog};

/// Schema tag of every output line (the stdio benchmark's).
pub const SCHEMA: &str = "mcp-bench/1";

/// The scenarios that run over HTTP by default, in order.
pub const HTTP_SCENARIOS: [&str; 4] = ["handshake", "seq_latency", "throughput", "big_result"];

const HANDSHAKE_REPS: usize = 20;
const SEQ_WARMUP: usize = 200;
const SEQ_CALLS: usize = 2_000;
const THROUGHPUT_WARMUP: usize = 1_000;
const THROUGHPUT_CALLS: usize = 20_000;
const THROUGHPUT_IN_FLIGHT: usize = 64;
const BIG_RESULT_BYTES: usize = 4 * 1024 * 1024;
const BIG_RESULT_WARMUP: usize = 1;
const BIG_RESULT_CALLS: usize = 3;
const QUICK_CALL_DIVISOR: usize = 10;
const QUICK_HANDSHAKE_DIVISOR: usize = 4;
const SCENARIO_TIMEOUT: Duration = Duration::from_secs(300);

/// What to run.
#[derive(Clone, Debug)]
pub struct HttpBenchOptions {
    pub url: String,
    /// Sent on every request (e.g. `Authorization`); values are never printed.
    pub headers: Vec<(String, String)>,
    /// Comma-separated scenario names; `None` = [`HTTP_SCENARIOS`].
    pub scenarios: Option<String>,
    pub quick: bool,
}

/// Runs the benchmark, printing the JSON lines to stdout and a table to stderr; returns the
/// exit code (0 when every requested scenario ran, even with `ok:false`; 2 for an unknown
/// scenario name).
pub fn run_http(opts: &HttpBenchOptions) -> i32 {
    let names = match parse_scenarios(opts.scenarios.as_deref()) {
        Ok(n) => n,
        Err(message) => {
            eprintln!("harness9 bench mcp: {message}");
            return 2;
        }
    };
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
    emit(&json!({
        "schema": SCHEMA,
        "client": "harness9",
        "scenario": "meta",
        "sdk": "harness9",
        "sdk_version": env!("CARGO_PKG_VERSION"),
        "runtime": "rust, tokio current_thread",
        "transport": "http",
        "url": opts.url,
    }));
    let mut rows = Vec::new();
    for name in names {
        eprintln!("bench: running {name} over HTTP...");
        let outcome = runtime.block_on(scenario(opts, name));
        emit(&outcome_line(name, &outcome));
        rows.push((name, outcome));
    }
    drop(runtime);
    eprint!("{}", table(&rows));
    0
}

/// Runs one scenario (bounded by a 300 s timeout). Needs a tokio runtime.
pub async fn scenario(opts: &HttpBenchOptions, name: &str) -> Outcome {
    let bench = Bench {
        opts,
        sizes: Sizes::new(opts.quick),
    };
    let run = async {
        match name {
            "handshake" => bench.handshake().await,
            "seq_latency" => bench.seq_latency().await,
            "throughput" => bench.throughput().await,
            "big_result" => bench.big_result().await,
            "big_list" | "fanout_start" => Err(BenchError::NotRun(format!(
                "{name} does not apply over HTTP: it needs a server the benchmark starts itself (use the stdio mode)"
            ))),
            other => Err(BenchError::NotRun(format!("unknown scenario {other}"))),
        }
    };
    match tokio::time::timeout(SCENARIO_TIMEOUT, run).await {
        Ok(o) => o,
        Err(_) => Err(BenchError::Timeout(SCENARIO_TIMEOUT)),
    }
}

fn parse_scenarios(list: Option<&str>) -> Result<Vec<&'static str>, String> {
    const ALL: [&str; 6] = [
        "handshake",
        "seq_latency",
        "throughput",
        "big_list",
        "big_result",
        "fanout_start",
    ];
    let Some(list) = list else {
        return Ok(HTTP_SCENARIOS.to_vec());
    };
    list.split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| {
            ALL.iter()
                .find(|a| **a == s)
                .copied()
                .ok_or_else(|| format!("unknown scenario \"{s}\" (known: {})", ALL.join(", ")))
        })
        .collect()
}

struct Sizes {
    handshake: usize,
    seq_warmup: usize,
    seq_calls: usize,
    throughput_warmup: usize,
    throughput_calls: usize,
    big_result_calls: usize,
}

impl Sizes {
    fn new(quick: bool) -> Sizes {
        let d = if quick { QUICK_CALL_DIVISOR } else { 1 };
        Sizes {
            handshake: if quick {
                HANDSHAKE_REPS / QUICK_HANDSHAKE_DIVISOR
            } else {
                HANDSHAKE_REPS
            },
            seq_warmup: SEQ_WARMUP / d,
            seq_calls: SEQ_CALLS / d,
            throughput_warmup: THROUGHPUT_WARMUP / d,
            throughput_calls: THROUGHPUT_CALLS / d,
            big_result_calls: BIG_RESULT_CALLS,
        }
    }
}

struct Bench<'a> {
    opts: &'a HttpBenchOptions,
    sizes: Sizes,
}

impl Bench<'_> {
    async fn connect(&self) -> Result<Client, BenchError> {
        let log = Arc::new(ServerLog::default());
        let spec = HttpSpec {
            url: self.opts.url.clone(),
            headers: self.opts.headers.clone(),
            max_message_bytes: crate::config::DEFAULT_MAX_MESSAGE_BYTES,
            auth: None,
        };
        let (conn, _) = http::connect(&spec, log.clone()).map_err(BenchError::Server)?;
        Client::connect(conn, "bench", log)
            .await
            .map_err(|e| BenchError::Initialize(Box::new(e)))
    }

    async fn handshake(&self) -> Outcome {
        let mut ms = Vec::with_capacity(self.sizes.handshake);
        for _ in 0..self.sizes.handshake {
            let start = Instant::now();
            let client = self.connect().await?;
            let listed = client.list_tools(None).await;
            let elapsed = start.elapsed();
            client.close().await;
            listed.map_err(|e| BenchError::request("tools/list", e))?;
            ms.push(elapsed.as_secs_f64() * 1e3);
        }
        let s = Stats::of(&ms);
        Ok(fields([
            ("unit", json!("ms")),
            ("value", num(s.median, 3)),
            ("median", num(s.median, 3)),
            ("p90", num(s.percentile(90), 3)),
            ("n", json!(ms.len())),
        ]))
    }

    async fn seq_latency(&self) -> Outcome {
        let client = self.connect().await?;
        let result = async {
            let (warmup, calls) = (self.sizes.seq_warmup, self.sizes.seq_calls);
            let mut us = Vec::with_capacity(calls);
            for i in 0..warmup + calls {
                let text = small_text(i);
                let start = Instant::now();
                checked_echo(&client, &text).await?;
                if i >= warmup {
                    us.push(start.elapsed().as_secs_f64() * 1e6);
                }
            }
            let s = Stats::of(&us);
            Ok(fields([
                ("unit", json!("us")),
                ("value", num(s.median, 3)),
                ("median", num(s.median, 3)),
                ("p99", num(s.percentile(99), 3)),
                ("mean", num(s.mean, 3)),
                ("n", json!(us.len())),
            ]))
        }
        .await;
        client.close().await;
        result
    }

    async fn throughput(&self) -> Outcome {
        let client = self.connect().await?;
        let result = async {
            let (warmup, calls) = (self.sizes.throughput_warmup, self.sizes.throughput_calls);
            pipelined(&client, 0..warmup).await?;
            let start = Instant::now();
            pipelined(&client, warmup..warmup + calls).await?;
            let secs = start.elapsed().as_secs_f64();
            Ok(fields([
                ("unit", json!("calls/s")),
                ("value", num(calls as f64 / secs, 1)),
                ("n", json!(calls)),
                ("in_flight", json!(THROUGHPUT_IN_FLIGHT)),
                ("elapsed_ms", num(secs * 1e3, 3)),
            ]))
        }
        .await;
        client.close().await;
        result
    }

    async fn big_result(&self) -> Outcome {
        let client = self.connect().await?;
        let result = async {
            let text = big_text(BIG_RESULT_BYTES);
            let mut ms = Vec::new();
            for i in 0..BIG_RESULT_WARMUP + self.sizes.big_result_calls {
                let start = Instant::now();
                checked_echo(&client, &text).await?;
                if i >= BIG_RESULT_WARMUP {
                    ms.push(start.elapsed().as_secs_f64() * 1e3);
                }
            }
            let s = Stats::of(&ms);
            Ok(fields([
                ("unit", json!("ms")),
                ("value", num(s.median, 3)),
                ("median", num(s.median, 3)),
                ("bytes", json!(BIG_RESULT_BYTES)),
                ("n", json!(ms.len())),
            ]))
        }
        .await;
        client.close().await;
        result
    }
}

async fn pipelined(client: &Client, range: std::ops::Range<usize>) -> Result<(), BenchError> {
    futures::stream::iter(range)
        .map(|i| async move { checked_echo(client, &small_text(i)).await })
        .buffer_unordered(THROUGHPUT_IN_FLIGHT)
        .try_for_each(|()| futures::future::ready(Ok(())))
        .await
}

/// One `tools/call echo {text}`, failing unless the answer is exactly that text.
async fn checked_echo(client: &Client, text: &str) -> Result<(), BenchError> {
    let r = client
        .call_tool(
            "echo",
            Some(json!({ "text": text })),
            RequestOptions::default(),
        )
        .await
        .map_err(|e| BenchError::request("tools/call echo", e))?;
    if r.is_error {
        return Err(BenchError::WrongAnswer(format!(
            "tools/call echo returned a tool error: {}",
            r.to_text()
        )));
    }
    match r.content.as_slice() {
        [Content::Text { text: got }] if got == text => Ok(()),
        [Content::Text { text: got }] => Err(BenchError::WrongAnswer(format!(
            "echo answered different text ({} bytes, expected {})",
            got.len(),
            text.len()
        ))),
        other => Err(BenchError::WrongAnswer(format!(
            "echo answered {} content blocks instead of one text block",
            other.len()
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::SMALL_TEXT_BYTES;

    #[test]
    fn scenario_lists() {
        assert_eq!(parse_scenarios(None).unwrap(), HTTP_SCENARIOS.to_vec());
        assert_eq!(
            parse_scenarios(Some("throughput, big_list")).unwrap(),
            vec!["throughput", "big_list"]
        );
        assert!(parse_scenarios(Some("nope")).is_err());
        assert_eq!(small_text(7).len(), SMALL_TEXT_BYTES);
    }

    #[test]
    fn failure_line() {
        let l = outcome_line(
            "big_list",
            &Err(BenchError::NotRun("does not apply".into())),
        );
        assert_eq!(l["ok"], false);
        assert_eq!(l["error"], "does not apply");
    }
}
