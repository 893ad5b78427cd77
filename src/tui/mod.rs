//! The terminal UI: chat with the engine, the MCP bar and the `/mcp` panel, on the same core
//! as the desktop app. This module only owns the terminal: the event loop reads keys, core
//! status, config changes and engine events, folds them into [`app::App`] and draws
//! [`view::render`]. The terminal is restored on every exit path, signals and panics
//! included, and the servers are shut down after it ([`terminal`]).

mod app;
mod ask;
mod ask_view;
mod attach;
mod auth;
mod conversations;
mod model;
mod safe;
mod scroll;
mod settings;
mod slash;
mod slash_run;
mod slash_view;
mod surface;
mod tasks;
mod terminal;
mod view;

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_ask;
#[cfg(test)]
mod tests_auth;
#[cfg(test)]
mod tests_layout;
#[cfg(test)]
mod tests_slash;
#[cfg(test)]
mod tests_snapshots;
#[cfg(test)]
mod tests_surface;

use std::io::IsTerminal;
use std::panic::AssertUnwindSafe;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
use futures::stream::FuturesUnordered;
use futures::{FutureExt, StreamExt};
use harness9::engine::{ConversationChoice, Decision, Event};
use harness9::manager::ApprovalPolicy;
use harness9::{Harness, HarnessOptions};
use ratatui::crossterm::event::{Event as TermEvent, EventStream, KeyEventKind};
use tokio::sync::mpsc;

use app::App;
use auth::AuthDone;
use model::{Action, ChatLine, ToolDecision};
use slash_run::SlashDone;

/// Runs the TUI on `project` until the user quits, a signal ends it or something panics.
/// The servers are shut down on every one of those paths. Returns the exit code.
pub async fn run(project: PathBuf, yes: bool) -> i32 {
    if !std::io::stdout().is_terminal() || !std::io::stdin().is_terminal() {
        eprintln!("harness9: the terminal UI needs a terminal; use `harness9 mcp …` or `harness9 exec` in scripts");
        return 2;
    }
    if !project.is_dir() {
        eprintln!(
            "harness9: project folder \"{}\" does not exist",
            project.display()
        );
        return 2;
    }
    // From here on SIGTERM, SIGHUP and SIGINT end the UI the way a quit does.
    let mut stops = match terminal::Stops::listen() {
        Ok(s) => s,
        Err(e) => {
            eprintln!("harness9: cannot catch signals: {e}");
            return 1;
        }
    };
    terminal::install_panic_hook();
    let harness = Harness::open(
        &project,
        HarnessOptions {
            policy: if yes {
                ApprovalPolicy::AllowAll
            } else {
                ApprovalPolicy::Ask
            },
            ..HarnessOptions::default()
        },
    );
    // Sampling is always announced: with no provider configured, a request is answered
    // with an error naming what to set, and the user sees it in the server's log.
    harness.enable_sampling(harness9::engine::sampling::SamplingSource::Settings(
        Default::default(),
    ));
    harness.start(None).await;
    // Tasks of HTTP servers started by an earlier run are followed again.
    harness.resume_tasks().await;
    let _watcher = harness.watch_config().ok();
    // The terminal UI starts a new conversation; /resume reopens an earlier one.
    let chat = harness.chat().state(ConversationChoice::New).await;
    let provider = match &chat {
        Ok(harness9::ChatState {
            provider: Some(p),
            model: Some(m),
            ..
        }) => format!("{p} · {m}"),
        _ => "no model provider".to_string(),
    };
    let mut app = App::new(provider);
    match &chat {
        Ok(harness9::ChatState { error: Some(e), .. }) => {
            app.chat.push(ChatLine::System(e.clone()))
        }
        Err(e) => app.chat.push(ChatLine::System(e.to_string())),
        Ok(_) => {}
    }
    let code = match terminal::enter() {
        Ok(mut term) => {
            terminal::arm_test_panic(harness.subscribe_status());
            let ui = AssertUnwindSafe(event_loop(&mut term, &harness, &mut app, &project))
                .catch_unwind();
            tokio::select! {
                done = ui => done.unwrap_or(terminal::PANIC_EXIT),
                stop = stops.next() => stop.exit_code(),
            }
        }
        Err(e) => {
            terminal::leave();
            eprintln!("harness9: cannot set up the terminal: {e}");
            1
        }
    };
    // A panic elsewhere may have ended the loop first; it still decides the outcome.
    let panicked = terminal::panicked();
    terminal::leave();
    // After a panic a lock may be poisoned: shutting down may panic in turn, and is
    // still tried.
    let _ = AssertUnwindSafe(harness.shutdown()).catch_unwind().await;
    if panicked {
        eprintln!("harness9: the terminal UI stopped after an internal error (the panic above); its servers were shut down. Please report it.");
        return terminal::PANIC_EXIT;
    }
    code
}

fn refresh(app: &mut App, harness: &Harness) {
    let status = harness.status();
    let tools = status
        .servers
        .iter()
        .map(|s| harness.tools(Some(&s.name)))
        .collect();
    let held = status
        .servers
        .iter()
        .map(|s| harness.held_tools(Some(&s.name)))
        .collect();
    app.details = status
        .servers
        .iter()
        .map(|s| harness.server_details(&s.name).ok())
        .collect();
    app.context = harness.context_cost();
    app.context_warning = harness.context_warning(&app.context);
    app.set_status(status, tools);
    app.set_held(held);
    app.ask_server_approval(harness.pending_approvals());
}

async fn event_loop(
    term: &mut terminal::Term,
    harness: &Harness,
    app: &mut App,
    project: &Path,
) -> i32 {
    let mut keys = EventStream::new();
    let mut status = harness.subscribe_status();
    let mut tools = harness.subscribe_tools();
    // Grants and rules another process changed (`mcp sampling --revoke`) are redrawn.
    let mut user_data = harness.subscribe_user_data();
    app.resources = harness.resources_now().await;
    // Holding this makes the terminal UI a front end: asks wait for the user.
    let mut asks = harness.subscribe_asks();
    app.set_asks(&asks.borrow_and_update());
    // The chat's events come here from the core's forwarding (see `sink`).
    let (ev_tx, mut ev_rx) = mpsc::unbounded_channel::<Event>();
    let sink = || -> harness9::EventSink {
        let tx = ev_tx.clone();
        Box::new(move |e| tx.send(e).is_ok())
    };
    // Sign-ins and sign-outs under way; they wait for the browser, so they run beside the
    // loop instead of in it.
    let mut auth_jobs: FuturesUnordered<BoxFuture<'_, AuthDone>> = FuturesUnordered::new();
    // Prompt listings, completions and prompts being fetched for the slash commands. One
    // listing runs at a time; a change meanwhile lists again after it.
    let mut slash_jobs: FuturesUnordered<BoxFuture<'_, SlashDone>> = FuturesUnordered::new();
    let mut surface = harness.subscribe_surface();
    let mut surface_open = true;
    let mut task_events = harness.subscribe_tasks();
    let mut tasks_open = true;
    app.on_task_event(harness.tasks(), None);
    let (mut listing, mut relist) = (true, false);
    slash_jobs.push(Box::pin(slash_run::list(harness)));
    refresh(app, harness);
    app.sampling_grants = harness.sampling_grants().await.into_keys().collect();
    loop {
        app.log_tail = app
            .details_server()
            .and_then(|s| harness.server_log(&s, surface::DETAIL_LOG_LINES))
            .unwrap_or_default();
        match terminal::draw(term, |f| view::render(f, app)) {
            Ok(true) => {}
            // Restored after a panic elsewhere: the runner stops the loop.
            Ok(false) => std::future::pending::<()>().await,
            Err(_) => return 1,
        }
        tokio::select! {
            key = keys.next() => {
                let Some(Ok(key)) = key else { return 0 };
                let action = match key {
                    TermEvent::Key(k) if k.kind != KeyEventKind::Release => app.on_key(k),
                    _ => None,
                };
                let Some(action) = action else { continue };
                match action {
                    Action::Quit => return 0,
                    Action::Send(text) => {
                        app.chat.push(ChatLine::User(text.clone()));
                        app.scroll = 0;
                        let attachments = std::mem::take(&mut app.attachments);
                        match harness.chat().send(text, attachments, sink()).await {
                            Ok(()) => app.busy = true,
                            Err(e) => app.chat.push(ChatLine::System(e.to_string())),
                        }
                    }
                    Action::SendPrompt { server, name, arguments, text } => {
                        app.chat.push(ChatLine::User(text));
                        app.scroll = 0;
                        app.busy = true;
                        slash_jobs.push(Box::pin(slash_run::send(harness, server, name, arguments, sink())));
                    }
                    Action::Complete { server, prompt, argument, value, context, input } => {
                        slash_jobs.push(Box::pin(slash_run::complete(harness, server, prompt, argument, value, context, input)));
                    }
                    Action::StopTurn => harness.chat().stop(),
                    // Stopping a server can take seconds (its grace period): the core
                    // restarts it beside the loop, and the status shows the progress.
                    Action::Restart(name) => harness.restart_server_soon(&name),
                    Action::EditConfig => {
                        edit_config(term, project).await;
                        harness.reload().await;
                        refresh(app, harness);
                    }
                    Action::ApproveServers { servers, remember } => {
                        match harness.approve(&servers, remember).await {
                            Ok(outcome) => {
                                for name in outcome.stale {
                                    app.chat.push(ChatLine::System(format!("{name} changed in .mcp.json since it was shown; review it again")));
                                }
                            }
                            Err(e) => app.chat.push(ChatLine::System(format!("could not record the approval: {e}"))),
                        }
                        refresh(app, harness);
                    }
                    Action::DeclineServers => {}
                    Action::SignIn(server) => auth_jobs.push(Box::pin(async move {
                        let opener = Arc::new(harness9::mcp::auth::SystemOpener);
                        let result = harness.sign_in(&server, opener).await;
                        AuthDone::SignIn { server, result }
                    })),
                    Action::SignOut(server) => auth_jobs.push(Box::pin(async move {
                        let result = harness.sign_out(&server).await;
                        AuthDone::SignOut { server, result }
                    })),
                    Action::AnswerAsk { id, answer } => {
                        let always = matches!(&answer, harness9::host::asks::AskAnswer::Approve(c) if c.always);
                        if let Err(e) = harness.answer_ask(id, answer) {
                            app.chat.push(ChatLine::System(e.to_string()));
                        }
                        if always {
                            app.sampling_grants = harness.sampling_grants().await.into_keys().collect();
                        }
                    }
                    Action::RevokeSampling(server) => {
                        match harness.revoke_sampling(&server).await {
                            Ok(_) => app.chat.push(ChatLine::System(format!("{server} will ask before it uses your model"))),
                            Err(e) => app.chat.push(ChatLine::System(format!("could not change the sampling grants: {e}"))),
                        }
                        app.sampling_grants = harness.sampling_grants().await.into_keys().collect();
                    }
                    Action::OpenAsk { id, url } => {
                        use harness9::mcp::auth::Opener;
                        use harness9::host::asks::AskAnswer;
                        use harness9::mcp::requests::ElicitResult;
                        let answer = match harness9::mcp::auth::SystemOpener.open(&url).await {
                            Ok(()) => ElicitResult::accept_url(),
                            Err(e) => {
                                app.chat.push(ChatLine::System(format!("could not open {url}: {e}")));
                                ElicitResult::cancel()
                            }
                        };
                        if let Err(e) = harness.answer_ask(id, AskAnswer::Elicit(answer)) {
                            app.chat.push(ChatLine::System(e.to_string()));
                        }
                    }
                    Action::AcceptTool { server, tool } => {
                        if let Err(e) = harness.accept_tools(&server, &[tool]).await {
                            app.chat.push(ChatLine::System(format!("could not accept the tool: {e}")));
                        }
                        refresh(app, harness);
                    }
                    Action::SetLogLevel { server, level } => {
                        match harness.set_log_level(&server, level).await {
                            Ok(()) => app.chat.push(ChatLine::System(format!("{server}: logging level {}", level.as_str()))),
                            Err(e) => app.chat.push(ChatLine::System(format!("could not set the logging level: {e}"))),
                        }
                        refresh(app, harness);
                    }
                    Action::Conversation(cmd) => match conversations::run(harness, cmd).await {
                        conversations::Outcome::Note(text) => app.chat.push(ChatLine::System(text)),
                        conversations::Outcome::Opened(lines) => {
                            app.chat = lines;
                            app.scroll = 0;
                        }
                    },
                    Action::Settings(cmd) => {
                        slash_jobs.push(Box::pin(async move { SlashDone::Settings(settings::run(harness, cmd).await) }));
                    }
                    Action::Tasks(cmd) => {
                        let text = tasks::run(harness, cmd).await;
                        app.chat.push(ChatLine::System(text));
                        app.on_task_event(harness.tasks(), None);
                    }
                    Action::Roots(cmd) => {
                        let text = surface::run_roots(harness, cmd);
                        app.chat.push(ChatLine::System(text));
                    }
                    Action::AnswerTool { call_id, decision } => {
                        let chat = harness.chat();
                        chat.approve(&call_id, match decision {
                            ToolDecision::Once => Decision::AllowOnce,
                            ToolDecision::Always => Decision::AllowAlways,
                            ToolDecision::Deny => Decision::Deny,
                        });
                        app.show_approvals(chat.pending());
                    }
                }
            }
            changed = status.changed() => {
                if changed.is_err() { return 0 }
                refresh(app, harness);
                if listing { relist = true } else {
                    listing = true;
                    slash_jobs.push(Box::pin(slash_run::list(harness)));
                }
            }
            ev = surface.recv(), if surface_open => {
                use tokio::sync::broadcast::error::RecvError;
                use harness9::host::catalog::SurfaceEvent;
                match ev {
                    Ok(SurfaceEvent::ListingChanged { .. }) | Err(RecvError::Lagged(_)) => {
                        // The `@` picker's resources and the slash commands' prompts.
                        app.resources = harness.resources_now().await;
                        if listing { relist = true } else {
                            listing = true;
                            slash_jobs.push(Box::pin(slash_run::list(harness)));
                        }
                    }
                    Ok(SurfaceEvent::ResourceUpdated { .. } | SurfaceEvent::ElicitationComplete { .. }) => {}
                    Err(RecvError::Closed) => surface_open = false,
                }
            }
            ev = task_events.recv(), if tasks_open => {
                use tokio::sync::broadcast::error::RecvError;
                match ev {
                    Ok(event) => app.on_task_event(harness.tasks(), Some(event)),
                    Err(RecvError::Lagged(_)) => app.on_task_event(harness.tasks(), None),
                    Err(RecvError::Closed) => tasks_open = false,
                }
            }
            Some(done) = slash_jobs.next(), if !slash_jobs.is_empty() => match done {
                SlashDone::Prompts(list) => {
                    app.prompts = list;
                    listing = relist;
                    if relist {
                        relist = false;
                        slash_jobs.push(Box::pin(slash_run::list(harness)));
                    }
                }
                SlashDone::Completion { input, result } => app.completion_done(&input, result),
                SlashDone::Sent(Ok(opening)) => app.chat.extend(slash_run::opening_lines(&opening)),
                SlashDone::Settings(text) => {
                    app.chat.push(ChatLine::System(text));
                    app.scroll = 0;
                    // A provider configured here is used from the next message on.
                    if let Ok(harness9::ChatState { provider: Some(p), model: Some(m), .. }) =
                        harness.chat().state(ConversationChoice::New).await
                    {
                        app.provider = format!("{p} · {m}");
                    }
                }
                SlashDone::Sent(Err(e)) => {
                    app.busy = false;
                    app.chat.push(ChatLine::System(format!("{e}")));
                }
            },
            changed = tools.changed() => {
                if changed.is_err() { return 0 }
                refresh(app, harness);
            }
            changed = user_data.changed() => {
                if changed.is_err() { return 0 }
                app.sampling_grants = harness.sampling_grants().await.into_keys().collect();
                refresh(app, harness);
            }
            changed = asks.changed() => {
                if changed.is_err() { return 0 }
                let list = asks.borrow_and_update().clone();
                app.set_asks(&list);
            }
            Some(done) = auth_jobs.next(), if !auth_jobs.is_empty() => {
                app.auth_done(done);
                refresh(app, harness);
            }
            Some(event) = ev_rx.recv() => {
                app.on_event(event);
                app.show_approvals(harness.chat().pending());
            }
            _ = tokio::time::sleep(Duration::from_millis(500)) => {}
        }
    }
}

/// Suspends the TUI, opens `.mcp.json` in `$VISUAL`/`$EDITOR` (or the system opener), and
/// resumes. The caller reloads the configuration afterwards.
async fn edit_config(term: &mut terminal::Term, project: &Path) {
    let file = project.join(harness9::config::MCP_JSON);
    terminal::leave();
    let editor = std::env::var("VISUAL")
        .ok()
        .or_else(|| std::env::var("EDITOR").ok())
        .filter(|e| !e.trim().is_empty());
    let status = tokio::task::spawn_blocking(move || {
        let mut cmd = match editor {
            // The editor variable may hold arguments ("code -w"): let the shell split it.
            Some(e) => {
                let mut c = std::process::Command::new("sh");
                c.arg("-c").arg(format!("{e} \"$1\"")).arg("sh").arg(&file);
                c
            }
            None => {
                let mut c = std::process::Command::new("xdg-open");
                c.arg(&file);
                c
            }
        };
        cmd.status()
    })
    .await;
    if let Ok(Err(e)) = status {
        eprintln!("harness9: cannot open an editor: {e}; set EDITOR");
        tokio::time::sleep(Duration::from_secs(2)).await;
    }
    let _ = terminal::resume();
    let _ = term.clear();
}
