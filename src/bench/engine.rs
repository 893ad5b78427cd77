//! `harness9 bench engine`: times the agent engine itself, without a model or real tools.
//!
//! - `round_trip_overhead`: turns of [`ROUNDS_PER_TURN`] model round-trips over a
//!   registry of [`TOOL_COUNT`] tools. The "model" answers at once from canned Anthropic
//!   SSE bytes, but every request is encoded with the real Anthropic encoder and every
//!   answer goes through the real SSE parser and decoder; each tool answers at once. So
//!   the time per round-trip is the engine's own: building the request, encoding it,
//!   decoding the answer, permission checks, running and recording the call, appending to
//!   the conversation file, events. Value: median µs per round-trip (target < 1,000).
//! - `tool_search_10k`: BM25 queries over [`SEARCH_TOOLS`] tools shaped like the fixture
//!   server's synthetic ones. Value: median µs per query (target < 5,000); the index build
//!   time is reported too.
//!
//! Output: one JSON object per scenario on stdout
//! (`{"schema":"engine-bench/1","scenario":…,"ok":true,"unit":"us","value":…}`) and a
//! table on stderr.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::future::BoxFuture;
use futures::{FutureExt, StreamExt};
use serde_json::{json, Value};

use crate::engine::provider::anthropic::{encode_request, AnthropicDecoder};
use crate::engine::provider::{
    event_parser, feed, ChatRequest, Decoder, EventStream, LlmClient, ProviderInfo,
};
use crate::engine::search::SearchIndex;
use crate::engine::{
    ConversationChoice, Engine, EngineOptions, Event, PermissionOptions, ToolPermission,
    TurnOutcome,
};
use crate::mcp::{CallToolResult, Content};
use crate::tools::{CallContext, Tool, ToolError, ToolRegistry, ToolSource, ToolSpec};

/// Schema tag of every output line.
pub const SCHEMA: &str = "engine-bench/1";
/// Tools in the registry of `round_trip_overhead`.
pub const TOOL_COUNT: usize = 100;
/// Model round-trips per turn (all but the last call one tool).
pub const ROUNDS_PER_TURN: usize = 10;
/// Timed turns (after [`WARMUP_TURNS`]).
const TURNS: usize = 200;
const WARMUP_TURNS: usize = 20;
/// Tools indexed by `tool_search_10k`, and timed queries.
pub const SEARCH_TOOLS: usize = 10_000;
const SEARCH_QUERIES: usize = 2_000;
/// `--quick` divides the counts by this.
const QUICK_DIVISOR: usize = 10;

pub fn run(quick: bool) -> i32 {
    let div = if quick { QUICK_DIVISOR } else { 1 };
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("tokio runtime");
    let mut ok = true;
    let lines = [
        rt.block_on(round_trip_overhead(TURNS / div, WARMUP_TURNS / div)),
        tool_search(SEARCH_QUERIES / div),
    ];
    for line in lines {
        ok &= line["ok"] == json!(true);
        println!("{line}");
        let value = line["value"]
            .as_f64()
            .map_or("-".to_string(), |v| format!("{v:.1}"));
        eprintln!(
            "{:<22} {:>10} {:<3} {}",
            line["scenario"].as_str().unwrap_or(""),
            value,
            line["unit"].as_str().unwrap_or(""),
            line.get("error").and_then(Value::as_str).unwrap_or("")
        );
    }
    if ok {
        0
    } else {
        1
    }
}

fn stats(mut v: Vec<f64>) -> (f64, f64, f64) {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    let median = if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    };
    let p99 = v[((0.99 * n as f64).ceil() as usize).clamp(1, n) - 1];
    let mean = v.iter().sum::<f64>() / n as f64;
    (median, p99, mean)
}

/// A tool that answers at once.
struct InstantTool(ToolSpec);

impl Tool for InstantTool {
    fn spec(&self) -> &ToolSpec {
        &self.0
    }
    fn call(
        &self,
        arguments: Value,
        _ctx: CallContext,
    ) -> BoxFuture<'_, Result<CallToolResult, ToolError>> {
        async move {
            Ok(CallToolResult {
                content: vec![Content::Text {
                    text: format!("{} done: {arguments}", self.0.name),
                }],
                ..Default::default()
            })
        }
        .boxed()
    }
}

/// A "model" that answers from canned SSE bytes after encoding the request for real.
struct CannedModel {
    info: ProviderInfo,
    step: AtomicUsize,
}

fn sse(events: &[Value]) -> Vec<u8> {
    let mut out = String::new();
    for e in events {
        out.push_str(&format!(
            "event: {}\ndata: {e}\n\n",
            e["type"].as_str().unwrap_or("")
        ));
    }
    out.into_bytes()
}

fn canned_answer(step: usize) -> Vec<u8> {
    let start = json!({"type": "message_start", "message": {"id": "m", "type": "message", "role": "assistant", "content": [], "usage": {"input_tokens": 100, "output_tokens": 1}}});
    let stop = json!({"type": "message_stop"});
    if step + 1 == ROUNDS_PER_TURN {
        sse(&[
            start,
            json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "All "}}),
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "done."}}),
            json!({"type": "content_block_stop", "index": 0}),
            json!({"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 3}}),
            stop,
        ])
    } else {
        sse(&[
            start,
            json!({"type": "content_block_start", "index": 0, "content_block": {"type": "tool_use", "id": format!("toolu_{step}"), "name": format!("bench_tool_{:03}", step * 7 % TOOL_COUNT), "input": {}}}),
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": "{\"query\": \"benc"}}),
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": "hmark\", \"limit\": 3}"}}),
            json!({"type": "content_block_stop", "index": 0}),
            json!({"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 20}}),
            stop,
        ])
    }
}

impl LlmClient for CannedModel {
    fn info(&self) -> &ProviderInfo {
        &self.info
    }

    fn stream(&self, request: ChatRequest) -> EventStream {
        let body = encode_request(&request, "bench", 1024, true);
        std::hint::black_box(&body);
        let step = self.step.fetch_add(1, Ordering::Relaxed) % ROUNDS_PER_TURN;
        let bytes = canned_answer(step);
        let mut parser = event_parser();
        let mut decoder = AnthropicDecoder::default();
        let mut out = VecDeque::new();
        let mut result = Ok(());
        for ev in feed(&mut parser, &bytes) {
            match decoder.event(&ev, &mut out) {
                Ok(true) => break,
                Ok(false) => {}
                Err(e) => {
                    result = Err(e.into_error());
                    break;
                }
            }
        }
        let items: Vec<_> = match result {
            Ok(()) => out.into_iter().map(Ok).collect(),
            Err(e) => vec![Err(e)],
        };
        futures::stream::iter(items).boxed()
    }
}

fn bench_registry() -> Arc<ToolRegistry> {
    let registry = Arc::new(ToolRegistry::new());
    for i in 0..TOOL_COUNT {
        registry.register_builtin(Arc::new(InstantTool(ToolSpec {
            name: format!("bench_tool_{i:03}"),
            description: format!("Benchmark tool number {i}: takes a query and a limit and answers at once."),
            input_schema: crate::mcp::schema_text::SchemaText::from(json!({"type": "object", "properties": {"query": {"type": "string", "description": "What to look for."}, "limit": {"type": "integer", "description": "Most results."}}, "required": ["query"]})),
            read_only: false,
            source: ToolSource::Builtin,
            display: Default::default(),
        })));
    }
    registry
}

async fn round_trip_overhead(turns: usize, warmup: usize) -> Value {
    let fail = |e: String| json!({"schema": SCHEMA, "scenario": "round_trip_overhead", "ok": false, "error": e});
    let data = match tempfile_dir() {
        Ok(d) => d,
        Err(e) => return fail(format!("could not make a temporary folder: {e}")),
    };
    let registry = bench_registry();
    let model: Arc<dyn LlmClient> = Arc::new(CannedModel {
        info: ProviderInfo {
            kind: "canned".into(),
            model: "bench".into(),
            base_url: String::new(),
        },
        step: AtomicUsize::new(0),
    });
    let mut per_round = Vec::with_capacity(turns);
    for i in 0..turns + warmup {
        let engine = match Engine::new(
            &data.0,
            registry.clone(),
            EngineOptions {
                provider: Some(model.clone()),
                data_dir: data.0.clone(),
                conversation: ConversationChoice::New,
                permissions: PermissionOptions {
                    default: ToolPermission::Allow,
                    // An explicit rule: destructive tools are asked about under a default.
                    allow: vec!["*".into()],
                    ..PermissionOptions::default()
                },
                ..EngineOptions::default()
            },
        ) {
            Ok(e) => e,
            Err(e) => return fail(e.to_string()),
        };
        let started = Instant::now();
        let turn = match engine.send("run the benchmark") {
            Ok(t) => t,
            Err(e) => return fail(e.to_string()),
        };
        let events = turn.collect().await;
        let elapsed = started.elapsed();
        match events.last() {
            Some(Event::TurnEnd {
                outcome: TurnOutcome::Completed { .. },
                round_trips,
                ..
            }) if *round_trips == ROUNDS_PER_TURN => {}
            other => return fail(format!("the turn did not complete as scripted: {other:?}")),
        }
        if i >= warmup {
            per_round.push(elapsed.as_secs_f64() * 1e6 / ROUNDS_PER_TURN as f64);
        }
    }
    let n = per_round.len();
    let (median, p99, mean) = stats(per_round);
    json!({"schema": SCHEMA, "scenario": "round_trip_overhead", "ok": true, "unit": "us",
           "value": round1(median), "median": round1(median), "p99": round1(p99), "mean": round1(mean),
           "n": n * ROUNDS_PER_TURN, "tools": TOOL_COUNT, "target": 1000})
}

fn round1(v: f64) -> f64 {
    (v * 10.0).round() / 10.0
}

/// A temporary folder removed on drop (no test-only crates in the binary).
struct TempDir(std::path::PathBuf);

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn tempfile_dir() -> std::io::Result<TempDir> {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or(Duration::ZERO)
        .as_nanos();
    let dir = std::env::temp_dir().join(format!("harness9-bench-{}-{nanos}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    Ok(TempDir(dir))
}

fn tool_search(queries: usize) -> Value {
    let names: Vec<String> = (0..SEARCH_TOOLS)
        .map(|i| format!("mcp__fx__tool_{i:05}"))
        .collect();
    let descriptions: Vec<String> = (0..SEARCH_TOOLS)
        .map(|i| format!("Synthetic tool {i:05} generated for load testing; it takes a search query and a result limit as input."))
        .collect();
    let started = Instant::now();
    let index = SearchIndex::build(
        names
            .iter()
            .map(String::as_str)
            .zip(descriptions.iter().map(String::as_str)),
    );
    let build_ms = started.elapsed().as_secs_f64() * 1e3;
    let words = [
        "search query",
        "load testing tool",
        "limit",
        "result input",
        "weather forecast",
        "synthetic",
    ];
    let mut times = Vec::with_capacity(queries);
    for q in 0..queries {
        let query = if q % 2 == 0 {
            format!("tool_{:05}", (q * 7919) % SEARCH_TOOLS)
        } else {
            words[q % words.len()].to_string()
        };
        let t = Instant::now();
        let hits = index.search(&query, 5);
        times.push(t.elapsed().as_secs_f64() * 1e6);
        if q % 2 == 0
            && hits.first().map(|h| index.name(h.doc)) != Some(format!("mcp__fx__{query}").as_str())
        {
            return json!({"schema": SCHEMA, "scenario": "tool_search_10k", "ok": false,
                          "error": format!("query {query} did not rank its tool first")});
        }
    }
    let (median, p99, mean) = stats(times);
    json!({"schema": SCHEMA, "scenario": "tool_search_10k", "ok": true, "unit": "us",
           "value": round1(median), "median": round1(median), "p99": round1(p99), "mean": round1(mean),
           "n": queries, "tools": SEARCH_TOOLS, "build_ms": round1(build_ms), "target": 5000})
}
