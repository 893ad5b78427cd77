//! `harness9 mcp …` commands: each opens the project through the [`Harness`] façade, asks
//! for approval when needed, and prints a table or JSON. Exit codes: 0 success, 1 the
//! tool or server failed, 2 bad arguments or an unreadable `.mcp.json`.

/// `println!` through [`out::out_line`]: for every line of human output.
macro_rules! outln {
    () => {
        $crate::cli::out::out_line("")
    };
    ($($arg:tt)*) => {
        $crate::cli::out::out_line(&format!($($arg)*))
    };
}

/// `print!` through [`out::out_text`].
macro_rules! out {
    ($($arg:tt)*) => {
        $crate::cli::out::out_text(&format!($($arg)*))
    };
}

/// `eprintln!` through [`out::err_line`]: for every message on stderr.
macro_rules! errln {
    ($($arg:tt)*) => {
        $crate::cli::out::err_line(&format!($($arg)*))
    };
}

pub mod asks;
pub mod doctor;
pub mod exec;
pub mod install;
pub mod login;
pub mod out;
pub mod pins;
pub mod prompt;
pub mod sampling;
pub mod servers;
pub mod surface;
pub mod tasks;

use std::future::Future;
use std::io::{BufRead, IsTerminal, Write};
use std::time::Duration;

use harness9::manager::{ApprovalPolicy, ServerState, ServerStatus};
use harness9::term_text::{self, Line};
use harness9::tools::{CallContext, ToolSource};
use harness9::{Harness, HarnessOptions};
use serde_json::{json, Value};

use crate::ProjectArgs;

pub const EXIT_FAILED: i32 = 1;
pub const EXIT_USAGE: i32 = 2;

/// `HARNESS9_LOG` sets the log filter (default: errors only), logs go to stderr.
pub fn init_tracing() {
    let filter = tracing_subscriber::EnvFilter::try_from_env("HARNESS9_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("error"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(|| harness9::config::mask::MaskingWriter::new(std::io::stderr()))
        .try_init();
}

pub fn run_async<F: Future<Output = i32>>(f: F) -> i32 {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("tokio runtime")
        .block_on(f)
}

/// The project's façade, approving its servers for this run with `--yes`.
fn harness_for(args: &ProjectArgs) -> Harness {
    Harness::open(
        &args.project,
        HarnessOptions {
            policy: if args.yes {
                ApprovalPolicy::AllowAll
            } else {
                ApprovalPolicy::Ask
            },
            ..HarnessOptions::default()
        },
    )
}

/// Opens the project and starts its servers (or only `only`); `None` when `.mcp.json`
/// cannot be read (the error is already printed).
async fn open(args: &ProjectArgs, only: Option<&[String]>) -> Result<Harness, i32> {
    if !args.project.is_dir() {
        let message = format!(
            "project folder \"{}\" does not exist",
            args.project.display()
        );
        out::failure(args.json, "no-project-folder", &message);
        return Err(EXIT_USAGE);
    }
    let harness = harness_for(args);
    // Announced so servers offer their sampling tools; with no one to approve a request
    // here, each is refused with a line on stderr (see `asks`).
    harness.set_sampling(true);
    let config = harness.start(only).await;
    if let Some(err) = &config.error {
        out::failure(args.json, err.code(), &err.to_string());
        return Err(EXIT_USAGE);
    }
    ask_approval(&harness).await;
    let longest = config
        .enabled()
        .map(|s| s.startup_timeout)
        .max()
        .unwrap_or_default();
    harness
        .manager()
        .wait_settled(longest + Duration::from_secs(5))
        .await;
    Ok(harness)
}

/// On a terminal, lists what unapproved servers would run and asks. Approves exactly the
/// entries shown: one changed meanwhile is refused by the core and reported.
async fn ask_approval(harness: &Harness) {
    let waiting = harness.pending_approvals();
    if waiting.is_empty() || !std::io::stdin().is_terminal() || !std::io::stderr().is_terminal() {
        return;
    }
    let mut err = std::io::stderr();
    let _ = write!(err, "{}", harness9::inspect::approval_prompt(&waiting));
    let _ = err.flush();
    let mut answer = String::new();
    let _ = std::io::stdin().lock().read_line(&mut answer);
    let picks: Vec<harness9::inspect::ApprovalPick> =
        waiting.iter().cloned().map(Into::into).collect();
    let result = match answer.trim().to_ascii_lowercase().as_str() {
        "y" | "yes" => harness.approve(&picks, false).await,
        "a" | "always" => harness.approve(&picks, true).await,
        _ => return,
    };
    match result {
        Ok(outcome) => {
            for name in outcome.stale {
                errln!("harness9: server \"{}\" changed in .mcp.json while you were asked; it was not started. Run again to review the new entry.", Line(&name));
            }
        }
        Err(e) => errln!("harness9: could not record the approval: {e}"),
    }
}

fn status_json(s: &ServerStatus) -> Value {
    let (tools, error, protocol, server_name, server_version, tail) = match &s.state {
        ServerState::Connected {
            tools,
            protocol_version,
            server_name,
            server_version,
            ..
        } => (
            *tools,
            None,
            Some(protocol_version.clone()),
            Some(server_name.clone()),
            Some(server_version.clone()),
            None,
        ),
        ServerState::Failed {
            reason,
            stderr_tail,
        } => (
            0,
            Some(reason.clone()),
            None,
            None,
            None,
            Some(stderr_tail.clone()),
        ),
        ServerState::NeedsAuth { reason } => (
            0,
            Some(format!(
                "{reason}; sign in with: harness9 mcp login {}",
                s.name
            )),
            None,
            None,
            None,
            None,
        ),
        ServerState::AwaitingApproval => (
            0,
            Some("awaiting approval: run with --yes, or approve when asked on a terminal".into()),
            None,
            None,
            None,
            None,
        ),
        ServerState::Starting { .. } | ServerState::Disabled | ServerState::Stopped => {
            (0, None, None, None, None, None)
        }
    };
    json!({
        "name": s.name,
        "transport": s.transport,
        "scope": s.scope,
        "target": s.target,
        "status": s.state.word(),
        "tools": tools,
        "error": error,
        "era": protocol.as_deref().map(|v| harness9::mcp::era::Era::of_version(v).word()),
        "protocolVersion": protocol,
        "serverName": server_name,
        "serverVersion": server_version,
        "stderrTail": tail,
        "signedIn": s.signed_in,
    })
}

/// A `mcp list --json` row with the context cost of the server's tools.
fn with_tokens(mut row: Value, tokens: u32) -> Value {
    row["contextTokens"] = json!(tokens);
    row
}

/// The TOKENS cell: `-` for a server whose tools are not in the registry.
fn tokens_cell(tokens: u32) -> String {
    if tokens == 0 {
        "-".into()
    } else {
        tokens.to_string()
    }
}

fn status_mark(state: &ServerState) -> &'static str {
    match state {
        ServerState::Connected { .. } => "●",
        ServerState::Starting { .. } => "○",
        ServerState::Failed { .. } => "✗",
        ServerState::Disabled => "-",
        ServerState::AwaitingApproval => "?",
        ServerState::NeedsAuth { .. } => "!",
        ServerState::Stopped => "■",
    }
}

pub async fn list(args: ProjectArgs) -> i32 {
    let harness = match open(&args, None).await {
        Ok(h) => h,
        Err(code) => return code,
    };
    let snapshot = harness.manager().snapshot();
    let cost = harness.context_cost();
    let warning = harness.context_warning(&cost);
    if args.json {
        let rows: Vec<Value> = snapshot
            .servers
            .iter()
            .map(|s| with_tokens(status_json(s), cost.server(&s.name).tokens))
            .collect();
        crate::cli::out::json(&rows);
    } else if snapshot.servers.is_empty() {
        let files = harness9::config::ScopeFiles::of(&args.project);
        outln!(
            "No MCP servers configured in {}, {} or {}; add one with `harness9 mcp add`",
            files.project.display(),
            files.user.display(),
            files.local.display()
        );
    } else {
        outln!(
            "{:<20} {:<9} {:<7} {:<20} {:>5} {:>6}  {:<19}  ERROR",
            "NAME",
            "TRANSPORT",
            "SCOPE",
            "STATUS",
            "TOOLS",
            "TOKENS",
            "PROTOCOL"
        );
        for s in &snapshot.servers {
            let row = status_json(s);
            let error = row["error"].as_str().unwrap_or("");
            let first = error.lines().next().unwrap_or("");
            let protocol = match (row["protocolVersion"].as_str(), row["era"].as_str()) {
                (Some(v), Some(era)) => format!("{v} ({era})"),
                _ => String::new(),
            };
            outln!(
                "{:<20} {:<9} {:<7} {} {:<18} {:>5} {:>6}  {:<19}  {}",
                Line(&s.name),
                Line(&s.transport),
                s.scope.word(),
                status_mark(&s.state),
                s.state.word(),
                row["tools"],
                tokens_cell(cost.server(&s.name).tokens),
                Line(&protocol),
                Line(first)
            );
        }
        outln!(
            "Tool definitions take about {} tokens of the model's context (TOKENS: bytes of each definition / 4).",
            cost.total_tokens()
        );
    }
    if let Some(w) = warning {
        errln!("harness9: warning: {w}");
    }
    harness.shutdown().await;
    0
}

pub async fn tools(args: ProjectArgs, server: Option<String>) -> i32 {
    let only = server.clone().map(|s| vec![s]);
    let harness = match open(&args, only.as_deref()).await {
        Ok(h) => h,
        Err(code) => return code,
    };
    let snapshot = harness.manager().snapshot();
    if let Some(name) = &server {
        if !snapshot.servers.iter().any(|s| &s.name == name) {
            let cfg = harness.load_config();
            let known: Vec<&String> = cfg.servers.keys().collect();
            errln!("harness9: no server named \"{name}\" in any config scope (servers: {known:?})");
            harness.shutdown().await;
            return EXIT_USAGE;
        }
    }
    for s in &snapshot.servers {
        if let ServerState::Failed { reason, .. } = &s.state {
            errln!(
                "harness9: server \"{}\" failed: {reason}",
                harness9::term_text::Line(&s.name)
            );
        } else if let ServerState::NeedsAuth { reason } = &s.state {
            errln!(
                "harness9: server \"{}\" needs sign-in ({reason}); run `harness9 mcp login {}`",
                harness9::term_text::Line(&s.name),
                s.name
            );
        } else if s.state == ServerState::AwaitingApproval {
            errln!(
                "harness9: server \"{}\" is awaiting approval; run with --yes to start it",
                harness9::term_text::Line(&s.name)
            );
        }
    }
    let held = harness.held_tools(server.as_deref()).len();
    if held > 0 {
        errln!(
            "harness9: {held} tool(s) changed since they were pinned and are held back; review them with `harness9 mcp tools --changed`"
        );
    }
    let tools = harness.registry().list();
    let rows: Vec<(String, String, String, &harness9::tools::ToolSpec)> = tools
        .iter()
        .filter_map(|t| match &t.spec().source {
            ToolSource::Mcp { server, tool } => Some((
                t.spec().name.clone(),
                server.clone(),
                tool.clone(),
                t.spec(),
            )),
            ToolSource::Builtin => None,
        })
        .collect();
    let defs: std::collections::HashMap<(String, String), harness9::mcp::ToolDef> = harness
        .tool_defs(server.as_deref())
        .into_iter()
        .map(|(s, d)| ((s, d.name.clone()), d))
        .collect();
    let def_of = |server: &String, tool: &String| defs.get(&(server.clone(), tool.clone()));
    if args.json {
        let out: Vec<Value> = rows
            .iter()
            .map(|(name, server, tool, spec)| {
                let def = def_of(server, tool);
                let mut row = json!({"name": name, "server": server, "tool": tool, "description": spec.description, "inputSchema": spec.input_schema});
                let mut marks = def.map(|d| d.hints().marks()).unwrap_or_default();
                marks.extend(spec.display.apps_marks());
                if let Some(d) = def {
                    row["title"] = json!(d.title);
                    row["annotations"] = json!(d.annotations);
                }
                row["marks"] = json!(marks);
                // MCP Apps: the view's resource and who may see the tool.
                if let Some(ui) = &spec.display.ui {
                    row["ui"] = json!(ui);
                }
                row
            })
            .collect();
        crate::cli::out::json(&out);
    } else {
        let marks: Vec<String> = rows
            .iter()
            .map(|(_, server, tool, spec)| {
                let mut marks = def_of(server, tool).map_or(Vec::new(), |d| d.hints().marks());
                marks.extend(spec.display.apps_marks());
                marks.join(",")
            })
            .collect();
        let cells: Vec<(String, String, &str)> = rows
            .iter()
            .map(|(name, _, tool, spec)| {
                let first = spec.description.lines().next().unwrap_or("");
                (
                    term_text::line(name).into_owned(),
                    term_text::line(tool).into_owned(),
                    first,
                )
            })
            .collect();
        let chars = |s: &String| s.chars().count();
        let width = cells.iter().map(|c| chars(&c.0)).max().unwrap_or(4).max(4);
        let raw_width = cells.iter().map(|c| chars(&c.1)).max().unwrap_or(4).max(4);
        let marks_width = marks.iter().map(String::len).max().unwrap_or(5).max(5);
        outln!(
            "{:<width$}  {:<raw_width$}  {:<marks_width$}  DESCRIPTION",
            "NAME",
            "TOOL",
            "HINTS"
        );
        for ((name, tool, first), marks) in cells.iter().zip(&marks) {
            outln!(
                "{name:<width$}  {tool:<raw_width$}  {marks:<marks_width$}  {}",
                Line(first)
            );
        }
    }
    harness.shutdown().await;
    0
}

/// Prints a tool result (stdout, or stderr when it is an error) and gives its exit code.
pub fn print_result(json: bool, result: &harness9::mcp::CallToolResult) -> i32 {
    if json {
        crate::cli::out::json(result);
    } else if result.is_error {
        errln!("{}", result.to_text());
    } else {
        outln!("{}", result.to_text());
    }
    if result.is_error {
        EXIT_FAILED
    } else {
        0
    }
}

pub async fn call(
    args: ProjectArgs,
    server: String,
    tool: String,
    arguments: Option<String>,
    elicitation: Option<std::path::PathBuf>,
    detach: bool,
) -> i32 {
    let answers = match elicitation.as_deref().map(asks::read_answers).transpose() {
        Ok(a) => a,
        Err(e) => {
            out::failure(args.json, e.code(), &e.to_string());
            return EXIT_USAGE;
        }
    };
    let arguments = match arguments.as_deref().map(serde_json::from_str::<Value>) {
        None => json!({}),
        Some(Ok(v @ Value::Object(_))) => v,
        Some(Ok(_)) | Some(Err(_)) => {
            let message = "ARGS_JSON must be a JSON object, e.g. '{\"path\": \"README.md\"}'";
            out::failure(args.json, "invalid-arguments", message);
            return EXIT_USAGE;
        }
    };
    let cfg = harness9::config::McpConfig::load_scoped(&args.project);
    if cfg.error.is_none() && !cfg.servers.contains_key(&server) {
        let known: Vec<&String> = cfg.servers.keys().collect();
        let message =
            format!("no server named \"{server}\" in any config scope (servers: {known:?})");
        out::failure(args.json, "unknown-server", &message);
        return EXIT_USAGE;
    }
    if detach {
        if let Some(Ok(entry)) = cfg.servers.get(&server) {
            if matches!(
                entry.transport,
                harness9::config::TransportConfig::Stdio { .. }
            ) {
                let message = format!(
                    "--detach needs a server whose tasks outlive this command; \"{}\" runs over stdio, so its tasks end with the process harness9 starts for it. Call it without --detach",
                    Line(&server)
                );
                out::failure(args.json, "detach-stdio", &message);
                return EXIT_USAGE;
            }
        }
    }
    let only = [server.clone()];
    let harness = match open(&args, Some(&only)).await {
        Ok(h) => h,
        Err(code) => return code,
    };
    let statuses = tasks::print_statuses(&harness, &server);
    let (tx, mut rx) = harness9::mcp::client::progress_channel();
    let printer = tokio::spawn(async move {
        while let Some(p) = rx.recv().await {
            let total = p.total.map(|t| format!("/{t}")).unwrap_or_default();
            let msg = p
                .message
                .map(|m| format!(" {}", Line(&m)))
                .unwrap_or_default();
            errln!("progress {}{total}{msg}", p.progress);
        }
    });
    let wait = if detach {
        Duration::ZERO
    } else {
        tasks::CALL_WAIT
    };
    let ctx = CallContext {
        timeout: None,
        progress: Some(tx),
        task: Some(harness.task_context(wait, None)),
    };
    let contained_before = harness9::mcp::contain::contained_panics();
    let answerer = asks::answer_unattended(&harness, answers);
    let outcome = harness.call_tool(&server, &tool, arguments, ctx).await;
    answerer.abort();
    statuses.abort();
    let _ = printer.await;
    // Whatever the server made of it, a request of its that failed inside harness9 means
    // the call did not go as asked.
    let failed_inside = harness9::mcp::contain::contained_panics() > contained_before;
    let code = match outcome {
        Ok(result) if detach && running_task(&result).is_some() => {
            let task_id = running_task(&result).unwrap_or_default();
            if args.json {
                crate::cli::out::json(&json!({"server": server, "taskId": task_id}));
            } else {
                outln!("{task_id}");
                errln!(
                    "task {} runs on \"{}\"; see it with `harness9 mcp task get {} {}`, its result with `harness9 mcp task result {} {}`",
                    Line(&task_id),
                    Line(&server),
                    Line(&server),
                    Line(&task_id),
                    Line(&server),
                    Line(&task_id)
                );
            }
            0
        }
        Ok(result) => {
            let code = print_result(args.json, &result);
            if code != 0 {
                code
            } else if failed_inside {
                errln!("harness9: answering a request of server \"{server}\" failed inside harness9 during this call (see above); the call counts as failed");
                EXIT_FAILED
            } else {
                0
            }
        }
        Err(e @ harness9::harness::CallError::UnknownTool { .. }) => {
            out::failure(args.json, e.code(), &e.to_string());
            EXIT_USAGE
        }
        Err(e) => {
            out::failure(args.json, e.code(), &e.to_string());
            asks::explain_required_elicitations(&e);
            EXIT_FAILED
        }
    };
    harness.shutdown().await;
    code
}

/// The task id of a result that says its call still runs as a task.
fn running_task(result: &harness9::mcp::CallToolResult) -> Option<String> {
    result
        .meta
        .as_ref()?
        .get(harness9::tools::tasks::META_RUNNING_TASK)?
        .get("taskId")?
        .as_str()
        .map(str::to_string)
}

pub async fn serve(args: ProjectArgs) -> i32 {
    match harness9::serve::serve(
        args.project.clone(),
        tokio::io::stdin(),
        tokio::io::stdout(),
    )
    .await
    {
        Ok(()) => 0,
        Err(e) => {
            errln!("harness9: {e}");
            EXIT_FAILED
        }
    }
}
