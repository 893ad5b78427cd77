//! `harness9 bench tasks`: what following many MCP tasks costs while they wait.
//!
//! Starts [`SERVERS`] tasks fixtures over HTTP (`mcp-tasks-fixture --http --poll-ms 1000`:
//! every task asks to be polled each second), opens a project with them through the
//! façade, starts [`TASKS`] tasks spread over them (calls that hand their task to the
//! tasks service and return at once), lets the pollers settle for [`WARMUP`], then
//! measures for [`MEASURE`]: this process's CPU time (user + system) as a share of one
//! core, its resident memory (and how much the tasks added to it), and how many polls the
//! servers answered per second. Targets: under 2 % of a core, under 20 MB. The fixtures'
//! own CPU and memory are not counted ([`MEASURED`], in the output line).
//!
//! Output: one JSON line on stdout
//! (`{"schema":"tasks-bench/1","scenario":"wait_1000_tasks","ok":true,…}`) and a summary
//! on stderr.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::config::ProtocolEra;
use crate::manager::ApprovalPolicy;
use crate::tools::CallContext;
use crate::{Harness, HarnessOptions};

/// Schema tag of the output line.
pub const SCHEMA: &str = "tasks-bench/1";
/// Tasks started.
pub const TASKS: usize = 1_000;
/// HTTP servers they are spread over.
pub const SERVERS: usize = 10;
/// The poll interval the servers ask for.
pub const POLL_MS: u64 = 1_000;
/// Time for the pollers to settle before measuring.
pub const WARMUP: Duration = Duration::from_secs(3);
/// Time measured.
pub const MEASURE: Duration = Duration::from_secs(20);
/// `--quick` divides the measured time by this.
const QUICK_DIVISOR: u32 = 4;

/// What the CPU and memory figures cover, said in the output line: this process alone
/// (`getrusage(RUSAGE_SELF)`, `/proc/self/statm`); the fixture servers are processes of
/// their own, neither counted nor waited for.
pub const MEASURED: &str = "harness9 process only (user + system CPU time, resident memory); the fixture servers are not counted";

/// The CPU time this process used so far (user + system).
fn cpu_time() -> Duration {
    // SAFETY: getrusage writes into the struct we own.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: as above; RUSAGE_SELF is always valid.
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) } != 0 {
        return Duration::ZERO;
    }
    let tv = |t: libc::timeval| {
        Duration::from_secs(t.tv_sec.max(0) as u64) + Duration::from_micros(t.tv_usec.max(0) as u64)
    };
    tv(usage.ru_utime) + tv(usage.ru_stime)
}

/// This process's resident memory in bytes (Linux; 0 elsewhere).
fn rss_bytes() -> u64 {
    let Ok(text) = std::fs::read_to_string("/proc/self/statm") else {
        return 0;
    };
    let pages: u64 = text
        .split_whitespace()
        .nth(1)
        .and_then(|p| p.parse().ok())
        .unwrap_or(0);
    // SAFETY: sysconf has no preconditions.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    pages * u64::try_from(page).unwrap_or(4096)
}

/// The fixture beside this executable, else on PATH.
fn default_fixture() -> PathBuf {
    let name = format!("mcp-tasks-fixture{}", std::env::consts::EXE_SUFFIX);
    std::env::current_exe()
        .ok()
        .and_then(|e| e.parent().map(|d| d.join(&name)))
        .filter(|p| p.is_file())
        .unwrap_or_else(|| PathBuf::from(name))
}

/// One fixture server; killed when dropped.
struct Server {
    child: Child,
    url: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start_server(fixture: &Path) -> Result<Server, String> {
    let mut child = Command::new(fixture)
        .args(["--http", "--poll-ms", &POLL_MS.to_string()])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| {
            format!(
                "cannot start {}: {e} (build it: cargo build -p harness9-fixtures)",
                fixture.display()
            )
        })?;
    let mut line = String::new();
    let out = child.stdout.take().ok_or("no stdout")?;
    BufReader::new(out)
        .read_line(&mut line)
        .map_err(|e| e.to_string())?;
    let url = line.trim().to_string();
    if !url.starts_with("http://") {
        let _ = child.kill();
        return Err(format!("the fixture printed {url:?} instead of its URL"));
    }
    Ok(Server { child, url })
}

/// `tasks/get` answered by every server so far.
async fn polls(servers: &[Server]) -> u64 {
    let client = reqwest::Client::new();
    let mut total = 0;
    for s in servers {
        let stats = s.url.replace("/mcp", "/stats");
        if let Ok(r) = client.get(&stats).send().await {
            if let Ok(v) = r.json::<Value>().await {
                total += v["tasks/get"].as_u64().unwrap_or(0);
            }
        }
    }
    total
}

/// Runs the benchmark; prints its line. Returns the exit code.
pub async fn run(quick: bool, fixture: Option<PathBuf>, tasks: usize, servers: usize) -> i32 {
    let fixture = fixture.unwrap_or_else(default_fixture);
    let measure = if quick {
        MEASURE / QUICK_DIVISOR
    } else {
        MEASURE
    };
    match measure_tasks(&fixture, tasks.max(1), servers.max(1), measure).await {
        Ok(line) => {
            eprintln!(
                "{} tasks on {} servers, polled every {} ms: {:.2} % of one core, {:.1} MB resident ({:+.1} MB for the tasks), {:.0} polls/s (harness9 alone: the fixtures are not counted)",
                line["tasks"], line["servers"], POLL_MS,
                line["cpu_percent"].as_f64().unwrap_or(0.0),
                line["rss_mb"].as_f64().unwrap_or(0.0),
                line["rss_delta_mb"].as_f64().unwrap_or(0.0),
                line["polls_per_s"].as_f64().unwrap_or(0.0),
            );
            println!("{line}");
            0
        }
        Err(reason) => {
            eprintln!("harness9 bench tasks: {reason}");
            println!(
                "{}",
                json!({"schema": SCHEMA, "scenario": scenario(tasks), "ok": false, "error": reason})
            );
            1
        }
    }
}

fn scenario(tasks: usize) -> String {
    format!("wait_{tasks}_tasks")
}

async fn measure_tasks(
    fixture: &Path,
    tasks: usize,
    servers: usize,
    measure: Duration,
) -> Result<Value, String> {
    let dir = tempfile_dir()?;
    let mut running = Vec::with_capacity(servers);
    let mut config = serde_json::Map::new();
    for i in 0..servers {
        let s = start_server(fixture)?;
        config.insert(
            format!("t{i}"),
            json!({"type": "http", "url": s.url, "protocolEra": era_word(ProtocolEra::Modern)}),
        );
        running.push(s);
    }
    let project = dir.join("project");
    std::fs::create_dir_all(&project).map_err(|e| e.to_string())?;
    std::fs::write(
        project.join(".mcp.json"),
        json!({ "mcpServers": config }).to_string(),
    )
    .map_err(|e| e.to_string())?;
    let data = dir.join("data");
    let h = Harness::open(
        &project,
        HarnessOptions {
            policy: ApprovalPolicy::AllowAll,
            login_shell_path: false,
            approvals: crate::trust::ApprovalStore::at(data.join("approvals.json")),
            auth: Some(crate::mcp::auth::AuthContext::memory()),
            scope_files: Some(crate::config::ScopeFiles::within(
                &project,
                &data.join("config"),
                &data,
            )),
            ..HarnessOptions::default()
        },
    );
    h.start(None).await;
    h.manager().wait_settled(Duration::from_secs(30)).await;
    let rss_before = rss_bytes();
    let ctx = CallContext {
        task: Some(h.task_context(Duration::ZERO, None)),
        ..CallContext::default()
    };
    for i in 0..tasks {
        let server = format!("t{}", i % servers);
        let args = json!({"ms": 3_600_000u64, "text": "never seen"});
        h.call_tool(&server, "slow", args, ctx.clone())
            .await
            .map_err(|e| format!("starting task {i} on {server}: {e}"))?;
    }
    let started = h.tasks().iter().filter(|t| !t.state.is_ended()).count();
    if started != tasks {
        return Err(format!("{started} of {tasks} tasks are running"));
    }
    tokio::time::sleep(WARMUP).await;
    let (polls_before, cpu_before, wall) = (polls(&running).await, cpu_time(), Instant::now());
    tokio::time::sleep(measure).await;
    let (cpu, elapsed) = (cpu_time() - cpu_before, wall.elapsed());
    let polls_after = polls(&running).await;
    let rss = rss_bytes();
    let still = h.tasks().iter().filter(|t| !t.state.is_ended()).count();
    h.shutdown().await;
    drop(running);
    let _ = std::fs::remove_dir_all(&dir);
    if still != tasks {
        return Err(format!(
            "only {still} of {tasks} tasks were still followed at the end"
        ));
    }
    let mb = |b: u64| b as f64 / (1024.0 * 1024.0);
    let cpu_percent = cpu.as_secs_f64() / elapsed.as_secs_f64() * 100.0;
    Ok(json!({
        "schema": SCHEMA,
        "scenario": scenario(tasks),
        "ok": true,
        "tasks": tasks,
        "servers": servers,
        "poll_ms": POLL_MS,
        "seconds": (elapsed.as_secs_f64() * 10.0).round() / 10.0,
        "cpu_percent": (cpu_percent * 100.0).round() / 100.0,
        "rss_mb": (mb(rss) * 10.0).round() / 10.0,
        "rss_delta_mb": (mb(rss.saturating_sub(rss_before)) * 10.0).round() / 10.0,
        "polls_per_s": ((polls_after - polls_before) as f64 / elapsed.as_secs_f64()).round(),
        "measured": MEASURED,
        "targets": {"cpu_percent": 2.0, "rss_mb": 20.0},
    }))
}

fn era_word(era: ProtocolEra) -> &'static str {
    match era {
        ProtocolEra::Modern => "modern",
        ProtocolEra::Legacy => "legacy",
        ProtocolEra::Auto => "auto",
    }
}

/// A fresh scratch folder for the project and its data.
fn tempfile_dir() -> Result<PathBuf, String> {
    let dir = std::env::temp_dir().join(format!(
        "harness9-bench-tasks-{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0)
    ));
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    Ok(dir)
}
