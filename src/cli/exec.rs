//! `harness9 exec PROMPT`: one agent turn without a UI. The final answer goes to stdout;
//! tool calls, their status and any text the model wrote between tool calls go to stderr.
//! With `--json`, stdout carries one engine event per line instead (see
//! `harness9::engine::Event`). Tools are denied unless `--allow-tools` (or a remembered
//! "always allow" of the project) allows them; the model is told about each denial.
//! Exit codes: 0 the turn completed, 1 it failed (provider error, round-trip bound, stop),
//! 2 bad arguments, no provider configured, or an unreadable `.mcp.json`.

use clap::Args;
use harness9::engine::{
    provider, CallStatus, ConversationChoice, EngineOptions, Event, PermissionOptions,
    ProviderOverrides, ProviderSettings, ToolPermission, TurnOutcome, DEFAULT_MAX_ROUND_TRIPS,
};

use super::{EXIT_FAILED, EXIT_USAGE};
use crate::ProjectArgs;

#[derive(Args)]
pub struct ExecArgs {
    /// What to ask the model.
    prompt: String,
    /// Model provider: openai (also for OpenAI-compatible servers) or anthropic
    /// (default: HARNESS9_PROVIDER, the settings file, or whichever API key is set).
    #[arg(long)]
    provider: Option<String>,
    /// Model name (default: HARNESS9_MODEL or the settings file).
    #[arg(long)]
    model: Option<String>,
    /// Allow tools whose name matches this glob (repeatable, or comma-separated), e.g.
    /// 'mcp__demo__*'. Other tools are denied and the model is told so.
    #[arg(long = "allow-tools", value_delimiter = ',')]
    allow_tools: Vec<String>,
    /// Also allow tools that their server marks read-only.
    #[arg(long)]
    allow_read_only: bool,
    /// Most model requests for this prompt.
    #[arg(long, default_value_t = DEFAULT_MAX_ROUND_TRIPS)]
    max_round_trips: usize,
    /// Continue the project's latest conversation instead of starting a new one.
    #[arg(long = "continue")]
    continue_latest: bool,
    /// Answers to the servers' questions (elicitation): a JSON object of field values.
    /// Without it, every question is declined.
    #[arg(long, value_name = "FILE")]
    elicitation: Option<std::path::PathBuf>,
    #[command(flatten)]
    project: ProjectArgs,
}

pub async fn exec(args: ExecArgs) -> i32 {
    let overrides = ProviderOverrides {
        provider: args.provider.clone(),
        model: args.model.clone(),
        ..ProviderOverrides::default()
    };
    let json = args.project.json;
    let settings = match ProviderSettings::resolve(&overrides) {
        Ok(s) => s,
        Err(e) => {
            crate::cli::out::failure(json, e.code(), &e.to_string());
            return EXIT_USAGE;
        }
    };
    let answers = match args
        .elicitation
        .as_deref()
        .map(super::asks::read_answers)
        .transpose()
    {
        Ok(a) => a,
        Err(e) => {
            crate::cli::out::failure(json, e.code(), &e.to_string());
            return EXIT_USAGE;
        }
    };
    let harness = match super::open(&args.project, None).await {
        Ok(h) => h,
        Err(code) => return code,
    };
    for s in harness.manager().snapshot().servers.iter() {
        if let harness9::manager::ServerState::Failed { reason, .. } = &s.state {
            errln!(
                "harness9: server \"{}\" failed: {reason}",
                harness9::term_text::Line(&s.name)
            );
        } else if s.state == harness9::manager::ServerState::AwaitingApproval {
            errln!(
                "harness9: server \"{}\" is awaiting approval; run with --yes to start it",
                harness9::term_text::Line(&s.name)
            );
        }
    }
    let opts = EngineOptions {
        provider: Some(provider::connect(&settings)),
        context_window: Some(settings.context_window),
        max_round_trips: args.max_round_trips,
        permissions: PermissionOptions {
            default: ToolPermission::Deny,
            allow: args.allow_tools.clone(),
            deny: Vec::new(),
            auto_allow_read_only: args.allow_read_only,
        },
        conversation: if args.continue_latest {
            ConversationChoice::Latest
        } else {
            ConversationChoice::New
        },
        ..EngineOptions::default()
    };
    let engine = match harness.engine(opts) {
        Ok(e) => e,
        Err(e) => {
            crate::cli::out::failure(json, e.code(), &e.to_string());
            harness.shutdown().await;
            return EXIT_FAILED;
        }
    };
    let mut turn = match engine.send(args.prompt.clone()) {
        Ok(t) => t,
        Err(e) => {
            crate::cli::out::failure(json, e.code(), &e.to_string());
            harness.shutdown().await;
            return EXIT_FAILED;
        }
    };
    let answerer = super::asks::answer_unattended(&harness, answers);
    let control = turn.control();
    let ctrl_c = tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            control.stop();
        }
    });
    let mut round_text = String::new();
    let mut code = EXIT_FAILED;
    while let Some(event) = turn.next_event().await {
        if json {
            if let Ok(line) = serde_json::to_string(&event) {
                crate::cli::out::out_json(&line);
            }
        }
        match &event {
            Event::ModelRequest { .. } => round_text.clear(),
            Event::TextDelta { text } => round_text.push_str(text),
            Event::ToolCallStart {
                name, arguments, ..
            } if !json => {
                if !round_text.trim().is_empty() {
                    errln!("{}", round_text.trim_end());
                    round_text.clear();
                }
                errln!("→ {name} {arguments}");
            }
            Event::ToolCallEnd {
                name,
                status,
                duration_ms,
                error,
                ..
            } if !json => {
                let mark = match status {
                    CallStatus::Ok => "✓",
                    CallStatus::Error | CallStatus::TimedOut => "✗",
                    CallStatus::Denied => "⊘",
                    CallStatus::Cancelled => "■",
                };
                let why = error
                    .as_deref()
                    .map(|e| format!(": {e}"))
                    .unwrap_or_default();
                errln!(
                    "{mark} {name} {} ({duration_ms} ms){why}",
                    status_word(*status)
                );
            }
            Event::Retry {
                delay_ms, reason, ..
            } if !json => errln!("harness9: {reason}; retrying in {delay_ms} ms"),
            Event::Notice { message } if !json => errln!("harness9: note: {message}"),
            Event::TurnEnd { outcome, .. } => {
                code = match outcome {
                    TurnOutcome::Completed { answer } => {
                        if !json {
                            outln!("{}", answer.trim_end());
                        }
                        0
                    }
                    TurnOutcome::CutOff { answer, notice } => {
                        if !json {
                            outln!("{}", answer.trim_end());
                            errln!("harness9: {notice}");
                        }
                        EXIT_FAILED
                    }
                    TurnOutcome::Stopped => {
                        if !json {
                            errln!("harness9: the turn was stopped");
                        }
                        EXIT_FAILED
                    }
                    TurnOutcome::Failed { error, .. } => {
                        if !json {
                            errln!("harness9: {error}");
                        }
                        EXIT_FAILED
                    }
                };
            }
            Event::TurnStart { .. }
            | Event::Retry { .. }
            | Event::ToolInputPartial { .. }
            | Event::ToolCallStart { .. }
            | Event::ApprovalRequest { .. }
            | Event::ToolCallProgress { .. }
            | Event::ToolCallEnd { .. }
            | Event::Notice { .. } => {}
        }
    }
    ctrl_c.abort();
    answerer.abort();
    harness.shutdown().await;
    code
}

fn status_word(s: CallStatus) -> &'static str {
    match s {
        CallStatus::Ok => "ok",
        CallStatus::Error => "failed",
        CallStatus::TimedOut => "timed out",
        CallStatus::Denied => "denied",
        CallStatus::Cancelled => "cancelled",
    }
}
