//! One turn: the user's message, then model round-trips until the model answers without
//! tool calls, the user stops, the provider fails, or the round-trip bound is reached. An
//! answer without tool calls that stopped at the output token limit ends the turn as cut
//! off (and its message is marked so), not as completed.
//!
//! Invariants: every `tool_call_start` gets one `tool_call_end`; every tool call in the
//! conversation gets one result (real, error, denied or cancelled) before the next model
//! request or the end of the turn; `turn_end` is the last event. No lock is held across an
//! `.await`; events go out on an unbounded channel, so a slow front end never stalls the
//! loop.

use parking_lot::Mutex;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::StreamExt;
use serde_json::Value;
use tokio::sync::mpsc;

use super::builtin::BuiltinToolError;
use super::event::{CallStatus, CallView, Event, ToolView, TurnOutcome};
use super::message::{Block, Message, ResultPart, Role};
use super::permissions::{Decision, ToolPermission, Verdict};
use super::provider::{fallback_call_id, hit_token_limit, ChatRequest, StreamEvent, Usage};
use super::spill::READ_OUTPUT_TOOL;
use super::toolset::{Snapshot, TOOL_SEARCH_TOOL};
use super::{Inner, TurnControl, MAX_PARTIAL_INPUT_BYTES, PARTIAL_INPUT_EVERY};
use crate::config::DEFAULT_TOOL_TIMEOUT;
use crate::mcp::contain::contained_future;
use crate::mcp::{CallToolResult, ClientError, Content};
use crate::tools::tasks::{TaskContext, TaskOrigin};
use crate::tools::{CallContext, ToolError, ToolSource};

type Emitter = mpsc::UnboundedSender<Event>;

fn emit(tx: &Emitter, e: Event) {
    let _ = tx.send(e);
}

use super::resources::{
    self as res, ResourceRef, IMAGE_TYPES, LIST_RESOURCES_TOOL, READ_RESOURCE_TOOL,
};

/// Extra time given to a tool past its timeout before the engine gives up on it (the tool
/// should report its own timeout first).
const TIMEOUT_GRACE: Duration = Duration::from_secs(1);

/// Runs the turn; `idle` marks the engine free again just before `TurnEnd` goes out, so a
/// front end that saw `TurnEnd` can send the next message at once.
pub(super) async fn run(
    inner: Arc<Inner>,
    opening: Vec<Message>,
    attachments: Vec<ResourceRef>,
    tx: Emitter,
    control: TurnControl,
    idle: super::BusyGuard,
) {
    let started = Instant::now();
    if let Err(e) = inner.refresh().await {
        emit(
            &tx,
            Event::Notice {
                message: format!("the provider settings could not be used ({e}); this turn keeps the previous ones"),
            },
        );
    }
    let info = inner.client().info().clone();
    emit(
        &tx,
        Event::TurnStart {
            conversation_id: inner.conversation_id.clone(),
            provider: info.kind,
            model: info.model,
        },
    );
    let mut usage = Usage::default();
    let (outcome, round_trips) =
        turn(&inner, opening, attachments, &tx, &control, &mut usage).await;
    // The conversation is on disk before the turn is reported done, so a list of
    // conversations read after `TurnEnd` shows all of it.
    let flushed = {
        let inner = inner.clone();
        tokio::task::spawn_blocking(move || inner.file.as_ref().map_or(Ok(()), |f| f.flush())).await
    };
    if let Ok(Err(e)) = flushed {
        emit(
            &tx,
            Event::Notice {
                message: format!("{e}; this conversation will not reopen complete"),
            },
        );
    }
    drop(idle);
    emit(
        &tx,
        Event::TurnEnd {
            outcome,
            round_trips,
            duration_ms: started.elapsed().as_millis() as u64,
            usage,
        },
    );
}

async fn turn(
    inner: &Inner,
    opening: Vec<Message>,
    attachments: Vec<ResourceRef>,
    tx: &Emitter,
    control: &TurnControl,
    usage: &mut Usage,
) -> (TurnOutcome, usize) {
    let mut opening = opening;
    if !attachments.is_empty() {
        let attached = tokio::select! {
            a = attach(inner, &attachments) => a,
            _ = control.stopped() => return (TurnOutcome::Stopped, 0),
        };
        for message in attached.notes {
            emit(tx, Event::Notice { message });
        }
        // Attachments go with the opening's last user message.
        match opening.iter_mut().rev().find(|m| m.role == Role::User) {
            Some(m) => m.content.extend(attached.blocks),
            None => opening.push(Message {
                role: Role::User,
                content: attached.blocks,
                cut_off: false,
            }),
        }
    }
    let mut snapshot = inner.tools.current();
    // The note about vanished tools and the late results of tasks ride on the opening's
    // last user message.
    let noted = opening.iter().rposition(|m| m.role == Role::User);
    for (i, mut message) in opening.into_iter().enumerate() {
        if Some(i) == noted {
            missing_tools_note(inner, &snapshot, tx, &mut message.content);
            let late = std::mem::take(&mut inner.state.lock().late);
            for result in late {
                message.content.extend(result.blocks());
            }
        }
        push(inner, tx, message);
    }
    for round in 1..=inner.max_round_trips {
        if control.is_stopped() {
            return (TurnOutcome::Stopped, round - 1);
        }
        let request = build_request(inner, &snapshot);
        emit(
            tx,
            Event::ModelRequest {
                round_trip: round,
                tools: request.tools.len(),
            },
        );
        let answer = tokio::select! {
            a = stream_answer(inner, &snapshot, request, tx) => a,
            _ = control.stopped() => Err(Interrupted::Stopped),
        };
        let (text, mut calls, cut_off) = match answer {
            Ok(a) => {
                usage.add(a.usage);
                (a.text, a.calls, a.cut_off)
            }
            Err(Interrupted::Stopped) => return (TurnOutcome::Stopped, round),
            // What streamed before a failure was shown but is not kept.
            Err(Interrupted::Failed { error, code }) => {
                return (TurnOutcome::Failed { error, code }, round)
            }
        };
        unique_ids(inner, &mut calls);
        if cut_off {
            // The limit came while a call was written: its arguments are likely cut too.
            for c in &mut calls {
                if let Some(why) = &mut c.invalid {
                    why.push_str(
                        "; the answer reached the output token limit while this call was written",
                    );
                }
            }
        }
        let mut blocks = Vec::with_capacity(calls.len() + 1);
        if !text.is_empty() {
            blocks.push(Block::Text { text: text.clone() });
        }
        for c in &calls {
            blocks.push(Block::ToolUse {
                id: c.id.clone(),
                name: c.name.clone(),
                input: c.input.clone(),
            });
        }
        if !blocks.is_empty() {
            push(
                inner,
                tx,
                Message {
                    role: Role::Assistant,
                    content: blocks,
                    cut_off: cut_off && calls.is_empty(),
                },
            );
        }
        if calls.is_empty() {
            let outcome = if cut_off {
                TurnOutcome::CutOff {
                    answer: text,
                    notice: super::CUT_OFF_NOTICE.to_string(),
                }
            } else {
                TurnOutcome::Completed { answer: text }
            };
            return (outcome, round);
        }
        let (results, stopped) = run_calls(inner, &snapshot, &calls, tx, control).await;
        let mut content = results;
        snapshot = inner.tools.current();
        missing_tools_note(inner, &snapshot, tx, &mut content);
        push(
            inner,
            tx,
            Message {
                role: Role::User,
                content,
                cut_off: false,
            },
        );
        if stopped {
            return (TurnOutcome::Stopped, round);
        }
    }
    let max = inner.max_round_trips;
    (
        TurnOutcome::Failed {
            error: format!("the model used all {max} round-trips of this message without a final answer; the turn was ended. Send another message to let it go on, or raise the bound (--max-round-trips)"),
            code: "round-trip-limit",
        },
        max,
    )
}

/// Gives a call whose id the conversation already holds (a server that numbers the calls
/// of every answer from 0) a fresh one: results, approvals, saved outputs and front ends
/// find a call by its id, so every call of the conversation needs its own.
fn unique_ids(inner: &Inner, calls: &mut [Call]) {
    if calls.is_empty() {
        return;
    }
    let st = inner.state.lock();
    let mut seen: HashSet<&str> = st
        .messages
        .iter()
        .flat_map(|m| m.tool_uses().map(|(id, _, _)| id))
        .collect();
    let mut fresh = Vec::new();
    for (i, c) in calls.iter().enumerate() {
        if !seen.insert(&c.id) {
            fresh.push(i);
        }
    }
    drop(st);
    for i in fresh {
        calls[i].id = fallback_call_id();
    }
}

/// Reads the attached resources (a note for each when the engine cannot reach servers).
async fn attach(inner: &Inner, refs: &[ResourceRef]) -> res::Attached {
    match &inner.resources {
        Some(access) => res::read_attachments(access.as_ref(), refs).await,
        None => res::Attached {
            blocks: Vec::new(),
            notes: refs
                .iter()
                .map(|r| {
                    format!(
                        "the attached resource {} was left out: this chat cannot read resources",
                        r.uri
                    )
                })
                .collect(),
        },
    }
}

/// Appends a message to the conversation and to its file.
fn push(inner: &Inner, tx: &Emitter, message: Message) {
    if let Some(file) = &inner.file {
        if let Err(e) = file.append_message(&message) {
            emit(
                tx,
                Event::Notice {
                    message: format!("{e}; this conversation will not reopen complete"),
                },
            );
        }
    }
    let mut st = inner.state.lock();
    for (_, name, _) in message.tool_uses() {
        if !st.used.contains(name) {
            st.used.insert(name.to_string());
        }
    }
    st.messages.push(Arc::new(message));
}

/// Tells the model (once) about tools it used that are gone, e.g. after a reload of
/// `.mcp.json`.
fn missing_tools_note(inner: &Inner, snapshot: &Snapshot, tx: &Emitter, content: &mut Vec<Block>) {
    let missing: Vec<String> = {
        let mut st = inner.state.lock();
        let gone: Vec<String> = st
            .used
            .iter()
            .filter(|n| {
                !snapshot.contains(n)
                    && n.as_str() != TOOL_SEARCH_TOOL
                    && n.as_str() != READ_OUTPUT_TOOL
                    && n.as_str() != LIST_RESOURCES_TOOL
                    && n.as_str() != READ_RESOURCE_TOOL
                    && !st.announced_missing.contains(*n)
            })
            .cloned()
            .collect();
        st.announced_missing.extend(gone.iter().cloned());
        gone
    };
    if missing.is_empty() {
        return;
    }
    let list = missing.join(", ");
    emit(
        tx,
        Event::Notice {
            message: format!("tools the model used are no longer available: {list}"),
        },
    );
    content.push(Block::Text {
        text: format!("[harness9: these tools you used earlier are no longer available (the project's MCP servers changed): {list}. Do not call them.]"),
    });
}

fn build_request(inner: &Inner, snapshot: &Snapshot) -> ChatRequest {
    let with_read_output = inner.spill.has_outputs();
    let with_resources = inner.resources.as_ref().is_some_and(|r| r.has_resources());
    let st = inner.state.lock();
    ChatRequest {
        system: Some(inner.system.clone()),
        messages: st.messages.iter().cloned().collect(),
        tools: snapshot.request_tools(&st.loaded, with_read_output, with_resources),
        options: Default::default(),
    }
}

struct Call {
    id: String,
    name: String,
    input: Value,
    invalid: Option<String>,
}

struct Answer {
    text: String,
    calls: Vec<Call>,
    usage: Usage,
    /// The answer stopped at the output token limit.
    cut_off: bool,
}

enum Interrupted {
    Stopped,
    /// The error's text and stable code.
    Failed {
        error: String,
        code: &'static str,
    },
}

/// A call the model is still writing, whose tool has a view: its arguments so far go to
/// the view as they grow ([`Event::ToolInputPartial`]).
struct Writing {
    /// The id the call will have: the model's, or a fresh one when the conversation
    /// already holds that id (see [`unique_ids`]), so the partial input and the call match.
    call_id: String,
    name: String,
    /// `None`: the tool has no view, or the arguments grew past
    /// [`MAX_PARTIAL_INPUT_BYTES`].
    view: Option<Box<ToolView>>,
    json: String,
    sent_at: Option<Instant>,
    sent: Option<Value>,
}

impl Writing {
    fn new(inner: &Inner, snapshot: &Snapshot, id: &str, name: &str, others: &[&str]) -> Writing {
        let view = snapshot
            .get(name)
            .and_then(|t| tool_view(t.spec()))
            .map(Box::new);
        let taken = view.is_some() && (others.contains(&id) || id_in_conversation(inner, id));
        Writing {
            call_id: if taken {
                fallback_call_id()
            } else {
                id.to_string()
            },
            name: name.to_string(),
            view,
            json: String::new(),
            sent_at: None,
            sent: None,
        }
    }

    /// Adds a piece of the arguments; tells the view when due and changed.
    fn take(&mut self, fragment: &str, tx: &Emitter) {
        let Some(view) = &self.view else {
            return;
        };
        if self.json.len() + fragment.len() > MAX_PARTIAL_INPUT_BYTES {
            self.view = None;
            self.json = String::new();
            return;
        }
        self.json.push_str(fragment);
        let now = Instant::now();
        if self
            .sent_at
            .is_some_and(|t| now.duration_since(t) < PARTIAL_INPUT_EVERY)
        {
            return;
        }
        let Some(arguments) = super::partial_json::close_object(&self.json) else {
            return;
        };
        let empty = arguments.as_object().is_some_and(|o| o.is_empty());
        if empty || self.sent.as_ref() == Some(&arguments) {
            return;
        }
        self.sent_at = Some(now);
        self.sent = Some(arguments.clone());
        emit(
            tx,
            Event::ToolInputPartial {
                call_id: self.call_id.clone(),
                name: self.name.clone(),
                arguments,
                view: view.clone(),
            },
        );
    }
}

/// Whether a call of the conversation already has id `id`.
fn id_in_conversation(inner: &Inner, id: &str) -> bool {
    inner
        .state
        .lock()
        .messages
        .iter()
        .any(|m| m.tool_uses().any(|(used, _, _)| used == id))
}

async fn stream_answer(
    inner: &Inner,
    snapshot: &Snapshot,
    request: ChatRequest,
    tx: &Emitter,
) -> Result<Answer, Interrupted> {
    let mut stream = inner.client().stream(request);
    let mut text = String::new();
    let mut calls = Vec::new();
    // Calls being written, by the model's id.
    let mut writing: HashMap<String, Writing> = HashMap::new();
    while let Some(ev) = stream.next().await {
        match ev {
            Ok(StreamEvent::TextDelta(t)) => {
                text.push_str(&t);
                emit(tx, Event::TextDelta { text: t });
            }
            Ok(StreamEvent::ToolInputDelta { id, name, fragment }) => {
                if !writing.contains_key(&id) {
                    let others: Vec<&str> = writing.values().map(|w| w.call_id.as_str()).collect();
                    let w = Writing::new(inner, snapshot, &id, &name, &others);
                    writing.insert(id.clone(), w);
                }
                if let Some(w) = writing.get_mut(&id) {
                    w.take(&fragment, tx);
                }
            }
            Ok(StreamEvent::ToolCall {
                id,
                name,
                input,
                invalid,
            }) => calls.push(Call {
                id: writing.get(&id).map_or(id, |w| w.call_id.clone()),
                name,
                input,
                invalid,
            }),
            Ok(StreamEvent::Retrying {
                attempt,
                delay,
                reason,
            }) => emit(
                tx,
                Event::Retry {
                    attempt,
                    delay_ms: delay.as_millis() as u64,
                    reason,
                },
            ),
            Ok(StreamEvent::Finished { stop_reason, usage }) => {
                return Ok(Answer {
                    text,
                    calls,
                    usage,
                    cut_off: hit_token_limit(stop_reason.as_deref()),
                });
            }
            Err(e) => {
                return Err(Interrupted::Failed {
                    error: e.to_string(),
                    code: e.code(),
                })
            }
        }
    }
    Err(Interrupted::Failed {
        error: "the model provider's stream ended without finishing the answer".into(),
        code: "stream-broken",
    })
}

/// One finished call: its result block for the model.
type Slot = Option<Block>;

/// Runs every call at once. Returns the result blocks in call order and whether the
/// user stopped the turn (then unfinished calls have "cancelled" results).
async fn run_calls(
    inner: &Inner,
    snapshot: &Snapshot,
    calls: &[Call],
    tx: &Emitter,
    control: &TurnControl,
) -> (Vec<Block>, bool) {
    // Every start goes out before any call runs, so each has a matching end.
    for c in calls {
        emit(
            tx,
            Event::ToolCallStart {
                call_id: c.id.clone(),
                name: c.name.clone(),
                arguments: c.input.clone(),
                view: snapshot
                    .get(&c.name)
                    .and_then(|t| tool_view(t.spec()))
                    .map(Box::new),
            },
        );
    }
    let slots: Mutex<Vec<Slot>> = Mutex::new(vec![None; calls.len()]);
    let started = Instant::now();
    let all = futures::future::join_all(
        calls
            .iter()
            .enumerate()
            .map(|(i, c)| run_call(inner, snapshot, c, i, tx, control, &slots)),
    );
    let stopped = tokio::select! {
        _ = all => false,
        _ = control.stopped() => true,
    };
    let slots = slots.into_inner();
    let mut blocks = Vec::with_capacity(calls.len());
    for (c, slot) in calls.iter().zip(slots) {
        match slot {
            Some(b) => blocks.push(b),
            None => {
                let text = "The user stopped this tool call before it finished.".to_string();
                emit(
                    tx,
                    Event::ToolCallEnd {
                        call_id: c.id.clone(),
                        name: c.name.clone(),
                        arguments: c.input.clone(),
                        status: CallStatus::Cancelled,
                        duration_ms: started.elapsed().as_millis() as u64,
                        error: Some("cancelled by the user".into()),
                        output: text.clone(),
                        spilled: None,
                        view: None,
                    },
                );
                blocks.push(error_block(&c.id, text));
            }
        }
    }
    (blocks, stopped)
}

fn error_block(id: &str, text: String) -> Block {
    Block::ToolResult {
        tool_use_id: id.to_string(),
        content: vec![ResultPart::Text { text }],
        is_error: true,
    }
}

/// How one call came out, before it is recorded.
struct Done {
    status: CallStatus,
    error: Option<String>,
    text: String,
    images: Vec<(String, String)>,
    is_error: bool,
    /// The call's view (MCP Apps), when its tool has one and it returned a result.
    view: Option<Box<CallView>>,
}

impl Done {
    fn failed(status: CallStatus, error: String, text: String) -> Done {
        Done {
            status,
            error: Some(error),
            text,
            images: Vec::new(),
            is_error: true,
            view: None,
        }
    }
}

async fn run_call(
    inner: &Inner,
    snapshot: &Snapshot,
    call: &Call,
    index: usize,
    tx: &Emitter,
    control: &TurnControl,
    slots: &Mutex<Vec<Slot>>,
) {
    let started = Instant::now();
    // A panic of ours while running one call is that call's error; the turn goes on.
    let done = match contained_future(execute(inner, snapshot, call, tx, control)).await {
        Ok(done) => done,
        Err(why) => {
            tracing::error!(tool = %call.name, "running a tool call failed inside harness9: {why}");
            let error = format!("harness9 failed while running this call ({why})");
            let text = format!("{error}; the call may or may not have taken effect.");
            Done::failed(CallStatus::Error, error, text)
        }
    };
    let mut text = done.text;
    let mut spilled = None;
    // A page of a saved output is one page long already.
    let cut = if call.name == READ_OUTPUT_TOOL {
        Ok(super::spill::Cut {
            text,
            spilled: None,
        })
    } else {
        inner.spill.cut_off_runtime(&call.id, text).await
    };
    match cut {
        Ok(cut) => {
            text = cut.text;
            spilled = cut.spilled;
        }
        Err(e) => {
            text = format!("harness9 could not save this long output ({e}); it is left out.");
        }
    }
    let mut parts = vec![ResultPart::Text { text: text.clone() }];
    let mut shown = text;
    for (media_type, data) in done.images {
        shown.push('\n');
        shown.push_str(&format!(
            "[image: {media_type}, {} bytes]",
            super::message::base64_decoded_len(&data)
        ));
        parts.push(ResultPart::Image { media_type, data });
    }
    if let Some(view) = &done.view {
        keep_view(inner, tx, &call.id, view);
    }
    emit(
        tx,
        Event::ToolCallEnd {
            call_id: call.id.clone(),
            name: call.name.clone(),
            arguments: call.input.clone(),
            status: done.status,
            duration_ms: started.elapsed().as_millis() as u64,
            error: done.error,
            output: shown,
            spilled,
            view: done.view,
        },
    );
    slots.lock()[index] = Some(Block::ToolResult {
        tool_use_id: call.id.clone(),
        content: parts,
        is_error: done.is_error,
    });
}

async fn execute(
    inner: &Inner,
    snapshot: &Snapshot,
    call: &Call,
    tx: &Emitter,
    control: &TurnControl,
) -> Done {
    if let Some(why) = &call.invalid {
        let text = format!("harness9 could not run this call: {why}. Send the arguments as one JSON object that follows the tool's input schema.");
        return Done::failed(CallStatus::Error, why.clone(), text);
    }
    match call.name.as_str() {
        TOOL_SEARCH_TOOL => {
            return match snapshot.search(&call.input) {
                Ok((text, names)) => {
                    load_tools(inner, tx, &names);
                    ok_text(text)
                }
                Err(e) => Done::failed(CallStatus::Error, e.to_string(), e.to_string()),
            }
        }
        READ_OUTPUT_TOOL => {
            return match inner.spill.read_page_off_runtime(&call.input).await {
                Ok(text) => ok_text(text),
                Err(e) => Done::failed(CallStatus::Error, e.to_string(), e.to_string()),
            }
        }
        LIST_RESOURCES_TOOL | READ_RESOURCE_TOOL => {
            let Some(access) = &inner.resources else {
                let e = BuiltinToolError::NoResources.to_string();
                return Done::failed(CallStatus::Error, e.clone(), e);
            };
            let result = match call.name.as_str() {
                LIST_RESOURCES_TOOL => res::run_list(access.as_ref(), &call.input)
                    .await
                    .map(|t| (t, Vec::new())),
                _ => res::run_read(access.as_ref(), &call.input).await,
            };
            return match result {
                Ok((text, images)) => Done {
                    images,
                    ..ok_text(text)
                },
                Err(e) => Done::failed(CallStatus::Error, e.to_string(), format!("Error: {e}")),
            };
        }
        _ => {}
    }
    let Some(tool) = snapshot.get(&call.name).cloned() else {
        let e = format!("there is no tool named {}", call.name);
        let hint = if snapshot.deferred {
            format!("{e}. Use {TOOL_SEARCH_TOOL} to find the tool you need.")
        } else {
            format!("{e} (it may have been removed). Use one of the tools you were given.")
        };
        return Done::failed(CallStatus::Error, e, hint);
    };
    // The stored rules as they are now: a rule another process changed holds at once.
    let stored = inner
        .permission_store
        .rules_for(&inner.project, tool.spec());
    let verdict = {
        let mut permissions = inner.permissions.lock();
        permissions.set_remembered(stored);
        permissions.check(tool.spec())
    };
    match verdict {
        Verdict::Allow => {}
        Verdict::Deny(text) => {
            return Done::failed(
                CallStatus::Denied,
                "denied by the permission rules".into(),
                text,
            )
        }
        Verdict::Ask => {
            let answer = control.wait_for_approval(&call.id);
            emit(
                tx,
                Event::ApprovalRequest {
                    call_id: call.id.clone(),
                    name: call.name.clone(),
                    arguments: call.input.clone(),
                    read_only: tool.spec().read_only,
                },
            );
            let decision = tokio::select! {
                d = answer => d.unwrap_or(Decision::Deny),
                _ = tx.closed() => Decision::Deny,
            };
            match decision {
                Decision::AllowOnce => {}
                Decision::AllowAlways => remember_allow(inner, tx, tool.spec()),
                Decision::Deny => {
                    return Done::failed(
                        CallStatus::Denied,
                        "denied by the user".into(),
                        "The user denied this tool call. Do not retry it unless the user asks."
                            .into(),
                    )
                }
            }
        }
    }
    let is_mcp = matches!(tool.spec().source, ToolSource::Mcp { .. });
    let task = match (&inner.tasks, is_mcp) {
        (Some(host), true) => Some(TaskContext {
            host: host.clone(),
            wait: inner.task_wait,
            optional_as_task: inner.optional_as_task,
            origin: inner.file.as_ref().map(|f| TaskOrigin {
                conversation_id: f.id().to_string(),
                call_id: call.id.clone(),
                name: call.name.clone(),
                data_dir: inner.data_dir.clone(),
            }),
        }),
        _ => None,
    };
    let outer = match (inner.tool_timeout, is_mcp) {
        // A call that runs as a task waits for it up to its own bound.
        (Some(t), true) if task.is_some() => Some(t.max(inner.task_wait) + TIMEOUT_GRACE),
        (Some(t), _) => Some(t + TIMEOUT_GRACE),
        (None, true) => None, // the server's own timeout applies
        (None, false) => Some(DEFAULT_TOOL_TIMEOUT),
    };
    let (ptx, mut prx) = crate::mcp::client::progress_channel();
    let ctx = CallContext {
        timeout: inner.tool_timeout,
        progress: Some(ptx),
        task,
    };
    let fut = tool.call(call.input.clone(), ctx);
    let fut = async move {
        match outer {
            Some(t) => tokio::time::timeout(t, fut).await.map_err(|_| t),
            None => Ok(fut.await),
        }
    };
    tokio::pin!(fut);
    let progress = |p: crate::mcp::Progress| {
        emit(
            tx,
            Event::ToolCallProgress {
                call_id: call.id.clone(),
                progress: p.progress,
                total: p.total,
                message: p.message,
            },
        )
    };
    let result = loop {
        tokio::select! {
            // Progress first: it was sent before the result.
            biased;
            Some(p) = prx.recv() => progress(p),
            r = &mut fut => break r,
        }
    };
    while let Ok(p) = prx.try_recv() {
        progress(p);
    }
    match result {
        Ok(Ok(r)) => match running_task(&r) {
            // The view gets its result only when the task ends (the late result).
            Some((server, task_id)) => {
                if let Some(file) = &inner.file {
                    if let Err(e) = file.append_task(&call.id, &server, &task_id) {
                        emit(
                            tx,
                            Event::Notice {
                                message: e.to_string(),
                            },
                        );
                    }
                }
                from_result(&r)
            }
            None => Done {
                view: view_of(tool.spec(), &call.input, &r),
                ..from_result(&r)
            },
        },
        Ok(Err(e)) => {
            let status = match &e {
                ToolError::Client(ClientError::Timeout { .. }) => CallStatus::TimedOut,
                ToolError::Client(_) | ToolError::Task(_) | ToolError::Other(_) => {
                    CallStatus::Error
                }
            };
            let msg = e.to_string();
            Done::failed(status, msg.clone(), format!("Error: {msg}"))
        }
        Err(t) => {
            let msg = format!(
                "the tool did not finish within {} s; it was cancelled",
                t.as_secs_f64()
            );
            Done::failed(CallStatus::TimedOut, msg.clone(), format!("Error: {msg}"))
        }
    }
}

/// The server and task id of a result that says its call still runs as a task.
fn running_task(r: &CallToolResult) -> Option<(String, String)> {
    let mark = r
        .meta
        .as_ref()?
        .get(crate::tools::tasks::META_RUNNING_TASK)?;
    Some((
        mark.get("server")?.as_str()?.to_string(),
        mark.get("taskId")?.as_str()?.to_string(),
    ))
}

fn ok_text(text: String) -> Done {
    Done {
        status: CallStatus::Ok,
        error: None,
        text,
        images: Vec::new(),
        is_error: false,
        view: None,
    }
}

/// The view a call of this tool shows (MCP Apps), when it has one.
fn tool_view(spec: &crate::tools::ToolSpec) -> Option<ToolView> {
    let ToolSource::Mcp { server, tool } = &spec.source else {
        return None;
    };
    let uri = spec.display.ui.as_ref()?.resource_uri.clone()?;
    Some(ToolView {
        server: server.clone(),
        tool: tool.clone(),
        resource_uri: uri,
    })
}

/// The view of a call whose tool has one (MCP Apps).
fn view_of(
    spec: &crate::tools::ToolSpec,
    arguments: &serde_json::Value,
    result: &CallToolResult,
) -> Option<Box<CallView>> {
    let v = tool_view(spec)?;
    Some(Box::new(CallView {
        server: v.server,
        tool: v.tool,
        resource_uri: v.resource_uri,
        arguments: arguments.clone(),
        result: result.clone(),
    }))
}

/// Keeps a call's view with the conversation (in memory and in its file).
fn keep_view(inner: &Inner, tx: &Emitter, call_id: &str, view: &CallView) {
    inner
        .state
        .lock()
        .views
        .insert(call_id.to_string(), view.clone());
    if let Some(file) = &inner.file {
        if let Err(e) = file.append_view(call_id, view) {
            emit(
                tx,
                Event::Notice {
                    message: e.to_string(),
                },
            );
        }
    }
}

fn load_tools(inner: &Inner, tx: &Emitter, names: &[String]) {
    let new: Vec<String> = {
        let mut st = inner.state.lock();
        names
            .iter()
            .filter(|n| st.loaded.insert((*n).clone()))
            .cloned()
            .collect()
    };
    if new.is_empty() {
        return;
    }
    if let Some(file) = &inner.file {
        if let Err(e) = file.append_tools_loaded(&new) {
            emit(
                tx,
                Event::Notice {
                    message: e.to_string(),
                },
            );
        }
    }
}

fn remember_allow(inner: &Inner, tx: &Emitter, spec: &crate::tools::ToolSpec) {
    inner
        .permissions
        .lock()
        .remember(spec, ToolPermission::Allow);
    let saved = match &spec.source {
        crate::tools::ToolSource::Mcp { server, tool } => inner.permission_store.set_tool(
            &inner.project,
            server,
            tool,
            Some(ToolPermission::Allow),
        ),
        crate::tools::ToolSource::Builtin => {
            inner
                .permission_store
                .set(&inner.project, &spec.name, Some(ToolPermission::Allow))
        }
    };
    if let Err(e) = saved {
        emit(
            tx,
            Event::Notice {
                message: format!("could not remember the permission for {}: {e}", spec.name),
            },
        );
    }
}

/// A tool result as text plus images, for the model.
fn from_result(r: &CallToolResult) -> Done {
    let (text, images) = result_parts(r);
    let error = r.is_error.then(|| {
        let first: String = text.chars().take(300).collect();
        if first.is_empty() {
            "the tool reported an error".to_string()
        } else {
            first
        }
    });
    Done {
        status: if r.is_error {
            CallStatus::Error
        } else {
            CallStatus::Ok
        },
        error,
        text,
        images,
        is_error: r.is_error,
        view: None,
    }
}

/// A tool result's text and its images (media type, base64 data), as the model reads it.
pub(super) fn result_parts(r: &CallToolResult) -> (String, Vec<(String, String)>) {
    let mut parts: Vec<String> = Vec::with_capacity(r.content.len());
    let mut images = Vec::new();
    for c in &r.content {
        match c {
            Content::Image { data, mime_type } if IMAGE_TYPES.contains(&mime_type.as_str()) => {
                images.push((mime_type.clone(), data.clone()));
            }
            Content::Text { text } => parts.push(text.clone()),
            other @ (Content::Image { .. }
            | Content::Audio { .. }
            | Content::ResourceLink { .. }
            | Content::Resource { .. }
            | Content::Unknown(_)) => {
                // Everything else as the MCP layer describes it for a text-only reader.
                let one = CallToolResult {
                    content: vec![other.clone()],
                    ..Default::default()
                };
                parts.push(one.to_text());
            }
        }
    }
    let has_text = r.content.iter().any(|c| matches!(c, Content::Text { .. }));
    if let (false, Some(s)) = (has_text, &r.structured_content) {
        parts.push(s.to_string());
    }
    (parts.join("\n"), images)
}
