//! The TUI's state and its key handling. Pure: keys change the state and may return an
//! [`Action`] for the runner to carry out on the core; nothing here touches the terminal,
//! the servers or the engine. The widgets (asks, the `@` picker, sign-in, slash commands,
//! settings, the panel's surface keys) work on the parts of the state handed to them and
//! know nothing of [`App`]; this module picks those parts and applies what comes back.

use std::sync::Arc;

use harness9::engine::event::{Event, TurnOutcome};
use harness9::host::asks::Ask;
use harness9::host::catalog::FeatureError;
use harness9::host::catalog::ServerDetails;
use harness9::inspect::ApprovalRequest;
use harness9::manager::{ServerStatus, StatusSnapshot};
use harness9::tools::ToolSpec;
use harness9::trust::pins::HeldTool;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::ask::AskView;
use super::attach::Picker;
use super::auth::{AuthDone, Notice};
use super::model::{Action, ChatLine, Modal, PanelRow, ToolDecision, ToolLineStatus, COMMANDS};
use super::scroll::Scroll;
use super::settings::HiddenKey;
use super::slash::{Entered, SlashState};
use super::{attach, auth, conversations, settings, slash, surface, tasks};

/// Everything the terminal UI shows, and what the keys have done to it so far.
pub struct App {
    pub status: Arc<StatusSnapshot>,
    /// Tools by server, in `status.servers` order.
    pub tools: Vec<Vec<ToolSpec>>,
    /// Held-back tools by server, in `status.servers` order.
    pub held: Vec<Vec<HeldTool>>,
    pub chat: Vec<ChatLine>,
    pub input: String,
    pub modal: Modal,
    pub busy: bool,
    /// Provider and model, or why there is none.
    pub provider: String,
    /// An API key being typed for the keychain (see [`settings`]).
    pub hidden_key: Option<HiddenKey>,
    /// Lines scrolled back from the end of the transcript.
    pub scroll: u16,
    /// Servers the user said no to; not asked again in this run.
    pub declined: Vec<String>,
    /// Servers with a sign-in under way (asked for here, not finished yet).
    pub signing_in: Vec<String>,
    /// The outcome of the last sign-in or sign-out, shown in the panel until the next key.
    pub notice: Option<Notice>,
    /// The oldest thing a server asks the user; its modal is over everything else.
    pub ask: Option<AskView>,
    /// The prompts of the connected servers: the slash commands of [`slash`].
    pub prompts: Vec<harness9::host::catalog::ServerPrompt>,
    /// The slash-command hint: what Tab found.
    pub slash: SlashState,
    /// Title, icons and logging of each connected server, in `status.servers` order.
    pub details: Vec<Option<ServerDetails>>,
    /// The recent log of the server whose details are open.
    pub log_tail: Vec<harness9::mcp::LogLine>,
    /// The connected servers' resources, for the `@` picker.
    pub resources: Vec<harness9::host::catalog::ServerResource>,
    /// The open `@` picker.
    pub picker: Option<Picker>,
    /// Resources attached to the next message.
    pub attachments: Vec<harness9::engine::resources::ResourceRef>,
    /// The servers that may use the model without asking ("always for this server").
    pub sampling_grants: Vec<String>,
    /// The turn's tool calls waiting for the user; the modal shows the oldest.
    pub approvals: harness9::engine::approvals::PendingApprovals,
    /// How far the arguments of the shown tool call are scrolled (back to the top for
    /// each new call).
    pub approval_scroll: Scroll,
    /// What each server's tool definitions take in the model's context.
    pub context: harness9::tools::ContextCost,
    /// Set when the MCP tools are large enough for tool search to take over.
    pub context_warning: Option<String>,
    /// The project's MCP tasks (the core's table), newest first.
    pub tasks: Vec<harness9::host::tasks::TaskRecord>,
}

impl App {
    pub fn new(provider: String) -> App {
        App {
            status: Arc::new(StatusSnapshot::default()),
            tools: Vec::new(),
            held: Vec::new(),
            chat: Vec::new(),
            input: String::new(),
            modal: Modal::None,
            busy: false,
            provider,
            hidden_key: None,
            scroll: 0,
            declined: Vec::new(),
            signing_in: Vec::new(),
            notice: None,
            ask: None,
            prompts: Vec::new(),
            slash: SlashState::default(),
            details: Vec::new(),
            log_tail: Vec::new(),
            resources: Vec::new(),
            picker: None,
            attachments: Vec::new(),
            approvals: Default::default(),
            approval_scroll: Default::default(),
            sampling_grants: Vec::new(),
            context: Default::default(),
            context_warning: None,
            tasks: Vec::new(),
        }
    }

    /// Takes the task table and one task event (a task of this chat that ended says so).
    pub fn on_task_event(
        &mut self,
        table: Vec<harness9::host::tasks::TaskRecord>,
        event: Option<harness9::host::tasks::TaskEvent>,
    ) {
        self.tasks = table;
        if let Some(line) = event.and_then(|e| tasks::ended_line(&e, &self.chat)) {
            self.chat.push(line);
        }
    }

    /// Takes a new status snapshot and the tools of every server.
    pub fn set_status(&mut self, status: Arc<StatusSnapshot>, tools: Vec<Vec<ToolSpec>>) {
        self.status = status;
        self.tools = tools;
        let n = self.panel_rows().len();
        if let Modal::Mcp { selected, .. } = &mut self.modal {
            if *selected >= n {
                *selected = n.saturating_sub(1);
            }
        }
    }

    /// Takes the held-back tools of every server (call after [`App::set_status`]).
    pub fn set_held(&mut self, held: Vec<Vec<HeldTool>>) {
        self.held = held;
    }

    /// Server rows, each followed by its tools and its held-back tools.
    pub fn panel_rows(&self) -> Vec<PanelRow> {
        let mut rows = Vec::new();
        for (i, _) in self.status.servers.iter().enumerate() {
            rows.push(PanelRow::Server(i));
            let n = self.tools.get(i).map(Vec::len).unwrap_or(0);
            rows.extend((0..n).map(|t| PanelRow::Tool { server: i, tool: t }));
            let h = self.held.get(i).map(Vec::len).unwrap_or(0);
            rows.extend((0..h).map(|k| PanelRow::Held { server: i, held: k }));
        }
        rows
    }

    fn selected_server(&self, selected: usize) -> Option<String> {
        self.row_server(selected).map(|s| s.name.clone())
    }

    /// The server a panel row belongs to.
    pub fn row_server(&self, selected: usize) -> Option<&ServerStatus> {
        let idx = self.panel_rows().get(selected)?.server();
        self.status.servers.get(idx)
    }

    /// The details of the server a panel row belongs to, when it is connected.
    pub fn row_details(&self, selected: usize) -> Option<&ServerDetails> {
        let idx = self.panel_rows().get(selected)?.server();
        self.details.get(idx)?.as_ref()
    }

    /// The server whose details are open (its recent log is kept fresh).
    pub fn details_server(&self) -> Option<String> {
        match &self.modal {
            Modal::Mcp {
                selected,
                details: true,
            } => match self.panel_rows().get(*selected)? {
                PanelRow::Server(i) => self.status.servers.get(*i).map(|s| s.name.clone()),
                PanelRow::Tool { .. } | PanelRow::Held { .. } => None,
            },
            Modal::None | Modal::Mcp { .. } | Modal::ServerApproval(_) | Modal::ToolApproval => {
                None
            }
        }
    }

    pub fn on_key(&mut self, key: KeyEvent) -> Option<Action> {
        if let Some(view) = self.ask.as_mut() {
            let action = view.on_key(key);
            if action.is_some() {
                self.ask = None;
            }
            return action;
        }
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        if ctrl && key.code == KeyCode::Char('c') {
            return Some(if self.busy {
                Action::StopTurn
            } else {
                Action::Quit
            });
        }
        match self.modal.clone() {
            Modal::ServerApproval(servers) => match key.code {
                KeyCode::Char('y') | KeyCode::Char('a') => {
                    self.modal = Modal::None;
                    Some(Action::ApproveServers {
                        servers: servers.into_iter().map(Into::into).collect(),
                        remember: key.code == KeyCode::Char('a'),
                    })
                }
                KeyCode::Char('n') | KeyCode::Esc => {
                    self.modal = Modal::None;
                    self.declined.extend(servers.into_iter().map(|r| r.name));
                    Some(Action::DeclineServers)
                }
                _ => None,
            },
            Modal::ToolApproval => {
                let scroll = &mut self.approval_scroll;
                let decision = match key.code {
                    KeyCode::Char('y') => ToolDecision::Once,
                    KeyCode::Char('a') => ToolDecision::Always,
                    KeyCode::Char('n') | KeyCode::Esc => ToolDecision::Deny,
                    // Long arguments scroll; the card's key hints stay put.
                    KeyCode::Up => {
                        scroll.up(1);
                        return None;
                    }
                    KeyCode::Down => {
                        scroll.down(1);
                        return None;
                    }
                    KeyCode::PageUp => {
                        scroll.up(scroll.page());
                        return None;
                    }
                    KeyCode::PageDown => {
                        scroll.down(scroll.page());
                        return None;
                    }
                    _ => return None,
                };
                let first = self.approvals.first().map(|p| p.call_id.clone())?;
                self.approvals.take(&first);
                self.approval_scroll.reset();
                // The next request waiting, if any, shows at once.
                if self.approvals.is_empty() {
                    self.modal = Modal::None;
                }
                Some(Action::AnswerTool {
                    call_id: first,
                    decision,
                })
            }
            Modal::Mcp { selected, details } => self.panel_key(key, selected, details),
            Modal::None => self.chat_key(key),
        }
    }

    fn panel_key(&mut self, key: KeyEvent, selected: usize, details: bool) -> Option<Action> {
        let n = self.panel_rows().len();
        self.notice = None;
        match key.code {
            KeyCode::Esc if details => {
                self.modal = Modal::Mcp {
                    selected,
                    details: false,
                };
            }
            KeyCode::Esc | KeyCode::Char('q') => self.modal = Modal::None,
            KeyCode::Down | KeyCode::Char('j') => {
                self.modal = Modal::Mcp {
                    selected: (selected + 1).min(n.saturating_sub(1)),
                    details: false,
                }
            }
            KeyCode::Up | KeyCode::Char('k') => {
                self.modal = Modal::Mcp {
                    selected: selected.saturating_sub(1),
                    details: false,
                }
            }
            KeyCode::Enter => {
                self.modal = Modal::Mcp {
                    selected,
                    details: !details,
                }
            }
            KeyCode::Char('r') => return self.selected_server(selected).map(Action::Restart),
            KeyCode::Char('e') => return Some(Action::EditConfig),
            KeyCode::Char('a') => {
                if let Some(PanelRow::Held { server, held }) = self.panel_rows().get(selected) {
                    let h = self.held.get(*server)?.get(*held)?;
                    return Some(Action::AcceptTool {
                        server: h.server.clone(),
                        tool: h.tool.clone(),
                    });
                }
                return self.auth_key(selected, true);
            }
            KeyCode::Char('o') => return self.auth_key(selected, false),
            KeyCode::Char('l') => return surface::log_level_key(self.row_details(selected)?),
            KeyCode::Char('s') => {
                let s = self.row_server(selected)?;
                return surface::revoke_sampling_key(&s.name, &self.sampling_grants);
            }
            _ => {}
        }
        None
    }

    fn chat_key(&mut self, key: KeyEvent) -> Option<Action> {
        if let Some(done) = settings::hidden_key(&mut self.hidden_key, &mut self.input, key) {
            return done;
        }
        if attach::on_key(
            &mut self.picker,
            &mut self.attachments,
            &self.resources,
            &self.input,
            key,
        ) {
            return None;
        }
        if key.code != KeyCode::Tab {
            self.slash.clear();
        }
        match key.code {
            KeyCode::Esc if self.busy => return Some(Action::StopTurn),
            KeyCode::Enter => {
                let text = std::mem::take(&mut self.input);
                let text = text.trim();
                if text.starts_with('/')
                    && !COMMANDS.contains(&text)
                    && surface::parse_roots(text).is_none()
                    && conversations::parse(text).is_none()
                    && settings::parse(text).is_none()
                    && tasks::parse(text).is_none()
                {
                    match slash::enter(&self.prompts, text, self.busy) {
                        Some(Entered::Send(action)) => return Some(action),
                        Some(Entered::Keep) => {
                            self.input = text.to_string();
                            return None;
                        }
                        Some(Entered::Wrong(note)) => {
                            self.input = text.to_string();
                            self.chat.push(ChatLine::System(note));
                            return None;
                        }
                        None => {}
                    }
                }
                match text {
                    "" => {}
                    "/mcp" => {
                        self.modal = Modal::Mcp {
                            selected: 0,
                            details: false,
                        }
                    }
                    "/quit" => return Some(Action::Quit),
                    t if conversations::parse(t).is_some() => {
                        return conversations::parse(t).map(Action::Conversation)
                    }
                    t if settings::parse(t).is_some() => match settings::parse(t)? {
                        Ok(Some(cmd)) => return Some(Action::Settings(cmd)),
                        Ok(None) => settings::start_hidden(&mut self.hidden_key, &mut self.input),
                        Err(usage) => self.chat.push(ChatLine::System(usage.to_string())),
                    },
                    t if tasks::parse(t).is_some() => match tasks::parse(t)? {
                        Ok(cmd) => return Some(Action::Tasks(cmd)),
                        Err(usage) => self.chat.push(ChatLine::System(usage.to_string())),
                    },
                    t if surface::parse_roots(t).is_some() => match surface::parse_roots(t)? {
                        Ok(cmd) => return Some(Action::Roots(cmd)),
                        Err(usage) => self.chat.push(ChatLine::System(usage.to_string())),
                    },
                    t if t.starts_with('/') => self.chat.push(ChatLine::System(format!(
                        "unknown command {t}; commands: {}",
                        COMMANDS.join(" ")
                    ))),
                    t if self.busy => {
                        self.input = t.to_string();
                    }
                    t => return Some(Action::Send(t.to_string())),
                }
            }
            KeyCode::Tab if self.input.starts_with('/') => {
                return slash::tab(&mut self.input, &mut self.slash, &self.prompts)
            }
            KeyCode::Backspace => {
                self.input.pop();
            }
            KeyCode::PageUp => self.scroll = self.scroll.saturating_add(5),
            KeyCode::PageDown => self.scroll = self.scroll.saturating_sub(5),
            KeyCode::Char(c) if !key.modifiers.contains(KeyModifiers::CONTROL) => {
                self.input.push(c)
            }
            _ => {}
        }
        None
    }

    /// Shows the server-approval prompt when servers wait for it (over the `/mcp` panel,
    /// not over another question). A prompt already open is left as it is: the servers it
    /// shows are the ones a yes approves; later ones are asked about after it.
    pub fn ask_server_approval(&mut self, waiting: Vec<ApprovalRequest>) {
        let waiting: Vec<_> = waiting
            .into_iter()
            .filter(|r| !self.declined.contains(&r.name))
            .collect();
        if !waiting.is_empty() && matches!(self.modal, Modal::None | Modal::Mcp { .. }) {
            self.modal = Modal::ServerApproval(waiting);
        }
    }

    /// Shows the tool calls waiting for the user: the core's list
    /// ([`harness9::Chat::pending`]), oldest first; the card shows the first.
    pub fn show_approvals(&mut self, list: Vec<harness9::engine::approvals::PendingApproval>) {
        let shown = self.approvals.first().map(|p| p.call_id.clone());
        self.approvals = list.into_iter().collect();
        if self.approvals.first().map(|p| &p.call_id) != shown.as_ref() {
            self.approval_scroll.reset();
        }
        if !self.approvals.is_empty() {
            self.modal = Modal::ToolApproval;
        } else if self.modal == Modal::ToolApproval {
            self.modal = Modal::None;
        }
    }

    /// Folds one engine event into the transcript.
    pub fn on_event(&mut self, event: Event) {
        match event {
            Event::TurnStart { .. } => self.busy = true,
            Event::TextDelta { text } => match self.chat.last_mut() {
                Some(ChatLine::Assistant(s)) => s.push_str(&text),
                _ => self.chat.push(ChatLine::Assistant(text)),
            },
            Event::ToolCallStart {
                call_id,
                name,
                arguments,
                ..
            } => self.chat.push(ChatLine::Tool {
                call_id,
                name,
                arguments: arguments.to_string(),
                status: ToolLineStatus::Running,
            }),
            Event::ToolCallEnd {
                call_id,
                name,
                status,
                duration_ms,
                error,
                view,
                ..
            } => {
                if view.is_some() {
                    self.chat.push(super::conversations::view_note(&name));
                }
                for line in self.chat.iter_mut().rev() {
                    if let ChatLine::Tool {
                        call_id: id,
                        status: s,
                        ..
                    } = line
                    {
                        if *id == call_id {
                            *s = ToolLineStatus::Done {
                                status,
                                duration_ms,
                                error,
                            };
                            break;
                        }
                    }
                }
            }
            Event::Retry { reason, .. } => self
                .chat
                .push(ChatLine::System(format!("retrying: {reason}"))),
            Event::Notice { message } => self.chat.push(ChatLine::System(message)),
            Event::TurnEnd { outcome, .. } => {
                self.busy = false;
                self.approvals = Default::default();
                if self.modal == Modal::ToolApproval {
                    self.modal = Modal::None;
                }
                match outcome {
                    TurnOutcome::Completed { .. } => {}
                    // The text streamed already; say that it is incomplete.
                    TurnOutcome::CutOff { notice, .. } => self.chat.push(ChatLine::System(notice)),
                    TurnOutcome::Stopped => self.chat.push(ChatLine::System("stopped".into())),
                    TurnOutcome::Failed { error, .. } => self.chat.push(ChatLine::System(error)),
                }
            }
            // The waiting calls come from the core's list (`show_approvals`).
            Event::ModelRequest { .. }
            | Event::ToolInputPartial { .. }
            | Event::ToolCallProgress { .. }
            | Event::ApprovalRequest { .. } => {}
        }
    }

    /// Whether any server is configured (the MCP bar shows only then).
    pub fn has_servers(&self) -> bool {
        !self.status.servers.is_empty() || self.status.config_error.is_some()
    }

    /// `a` (sign in) or `o` (sign out) on the selected row of the panel.
    fn auth_key(&mut self, selected: usize, sign_in: bool) -> Option<Action> {
        let idx = self.panel_rows().get(selected)?.server();
        let s = self.status.servers.get(idx)?;
        match auth::key(s, &mut self.signing_in, sign_in) {
            Ok(action) => Some(action),
            Err(notice) => {
                self.notice = Some(notice);
                None
            }
        }
    }

    /// Takes the outcome of a sign-in or sign-out: a notice in the panel, and a line in
    /// the chat so it is still seen after the panel is closed.
    pub fn auth_done(&mut self, done: AuthDone) {
        let notice = auth::done(done, &mut self.signing_in);
        self.chat.push(ChatLine::System(notice.text.clone()));
        self.notice = Some(notice);
    }

    /// Takes the pending asks: the modal shows the oldest (keeping what the user typed
    /// while it stays the oldest).
    pub fn set_asks(&mut self, asks: &[Ask]) {
        let more = asks.len().saturating_sub(1);
        match (asks.first(), self.ask.as_mut()) {
            (None, _) => self.ask = None,
            (Some(first), Some(view)) if view.ask.id == first.id => view.more = more,
            (Some(first), _) => self.ask = Some(AskView::new(first, more)),
        }
    }

    /// The server's answer to an [`Action::Complete`] asked for the input `input`.
    pub fn completion_done(&mut self, input: &str, result: Result<Vec<String>, FeatureError>) {
        slash::completion_done(&mut self.input, &mut self.slash, input, result);
    }

    /// The tags of the attached resources, for the input's lower border.
    pub fn attachment_tags(&self) -> String {
        attach::tags(&self.attachments, &self.resources)
    }
}
