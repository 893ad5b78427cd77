//! The TUI's state and its key handling. Pure: keys change the state and may return an
//! [`Action`] for the runner to carry out on the core; nothing here touches the terminal,
//! the servers or the engine.

use std::sync::Arc;

use harness9::engine::event::{CallStatus, Event, TurnOutcome};
use harness9::inspect::ApprovalRequest;
use harness9::manager::StatusSnapshot;
use harness9::tools::ToolSpec;
use harness9::trust::pins::HeldTool;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::auth::Notice;

/// Slash commands, for Tab completion.
pub const COMMANDS: &[&str] = &[
    "/mcp",
    "/roots",
    "/new",
    "/resume",
    "/model",
    "/permissions",
    "/quit",
];

/// What the runner must do after a key.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    Quit,
    Send(String),
    /// Start a turn with a server's prompt (see [`super::slash`]); `text` is the command
    /// as typed, for the transcript.
    SendPrompt {
        server: String,
        name: String,
        arguments: serde_json::Map<String, serde_json::Value>,
        text: String,
    },
    /// Ask the server for values of a prompt argument; the answer goes to
    /// [`super::slash::completion_done`] with `input`.
    Complete {
        server: String,
        prompt: String,
        argument: String,
        value: String,
        context: serde_json::Map<String, serde_json::Value>,
        input: String,
    },
    StopTurn,
    Restart(String),
    EditConfig,
    /// Approve exactly the servers the prompt showed.
    ApproveServers {
        servers: Vec<harness9::inspect::ApprovalPick>,
        remember: bool,
    },
    DeclineServers,
    AnswerTool {
        call_id: String,
        decision: ToolDecision,
    },
    /// Accept a tool held back because its definition changed since it was pinned.
    AcceptTool {
        server: String,
        tool: String,
    },
    /// Sign in to a remote server (in the background; the outcome comes back as
    /// [`super::auth::AuthDone`]).
    SignIn(String),
    /// Forget the sign-in of a remote server.
    SignOut(String),
    /// Answer what a server asked (see [`super::ask`]).
    AnswerAsk {
        id: u64,
        answer: harness9::host::asks::AskAnswer,
    },
    /// Open the page of a URL elicitation the user agreed to, then accept it.
    OpenAsk {
        id: u64,
        url: String,
    },
    /// Make a server ask again before it uses the model (withdraw its "always" grant).
    RevokeSampling(String),
    /// Set a server's logging level (`logging/setLevel`).
    SetLogLevel {
        server: String,
        level: harness9::mcp::features::LogLevel,
    },
    /// List, add or remove the project's extra roots.
    Roots(super::surface::RootsCommand),
    /// Start, list or reopen a conversation.
    Conversation(super::conversations::ConversationCmd),
    /// Show or change the model provider settings or the tool permission rules.
    Settings(super::settings::SettingsCmd),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolDecision {
    Once,
    Always,
    Deny,
}

/// One entry of the chat transcript.
#[derive(Debug, Clone, PartialEq)]
pub enum ChatLine {
    User(String),
    Assistant(String),
    Tool {
        call_id: String,
        name: String,
        arguments: String,
        status: ToolLineStatus,
    },
    /// A note from harness9 (errors, hints).
    System(String),
}

#[derive(Debug, Clone, PartialEq)]
pub enum ToolLineStatus {
    Running,
    /// A call of a reopened conversation (`answered`: its result is in the conversation).
    Earlier {
        status: CallStatus,
        answered: bool,
    },
    Done {
        status: CallStatus,
        duration_ms: u64,
        error: Option<String>,
    },
}

/// A modal on top of the chat.
#[derive(Debug, Clone, PartialEq)]
pub enum Modal {
    None,
    /// The `/mcp` panel; `selected` indexes [`App::panel_rows`].
    Mcp {
        selected: usize,
        details: bool,
    },
    /// Project servers waiting for approval, as shown (what would run, and the
    /// fingerprint that approves exactly that).
    ServerApproval(Vec<ApprovalRequest>),
    /// The oldest tool call waiting for the user (`App::approvals` holds them all).
    ToolApproval,
}

/// A row of the `/mcp` panel.
#[derive(Debug, Clone, PartialEq)]
pub enum PanelRow {
    Server(usize),
    Tool {
        server: usize,
        tool: usize,
    },
    /// A tool held back until the user accepts its change (index into [`App::held`]).
    Held {
        server: usize,
        held: usize,
    },
}

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
    /// An API key being typed for the keychain (see [`super::settings`]).
    pub hidden_key: Option<super::settings::HiddenKey>,
    /// Lines scrolled back from the end of the transcript.
    pub scroll: u16,
    /// Servers the user said no to; not asked again in this run.
    pub declined: Vec<String>,
    /// Servers with a sign-in under way (asked for here, not finished yet).
    pub signing_in: Vec<String>,
    /// The outcome of the last sign-in or sign-out, shown in the panel until the next key.
    pub notice: Option<Notice>,
    /// The oldest thing a server asks the user; its modal is over everything else.
    pub ask: Option<super::ask::AskView>,
    /// The prompts of the connected servers: the slash commands of [`super::slash`].
    pub prompts: Vec<harness9::host::catalog::ServerPrompt>,
    /// The slash-command hint: what Tab found.
    pub slash: super::slash::SlashState,
    /// Title, icons and logging of each connected server, in `status.servers` order.
    pub details: Vec<Option<harness9::host::catalog::ServerDetails>>,
    /// The recent log of the server whose details are open.
    pub log_tail: Vec<harness9::mcp::LogLine>,
    /// The connected servers' resources, for the `@` picker.
    pub resources: Vec<harness9::host::catalog::ServerResource>,
    /// The open `@` picker.
    pub picker: Option<super::attach::Picker>,
    /// Resources attached to the next message.
    pub attachments: Vec<harness9::engine::resources::ResourceRef>,
    /// The servers that may use the model without asking ("always for this server").
    pub sampling_grants: Vec<String>,
    /// The turn's tool calls waiting for the user; the modal shows the oldest.
    pub approvals: harness9::engine::approvals::PendingApprovals,
    /// How far the arguments of the shown tool call are scrolled (back to the top for
    /// each new call).
    pub approval_scroll: super::scroll::Scroll,
    /// What each server's tool definitions take in the model's context.
    pub context: harness9::tools::ContextCost,
    /// Set when the MCP tools are large enough for tool search to take over.
    pub context_warning: Option<String>,
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
            slash: super::slash::SlashState::default(),
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
        let idx = match self.panel_rows().get(selected)? {
            PanelRow::Server(i) => *i,
            PanelRow::Tool { server, .. } | PanelRow::Held { server, .. } => *server,
        };
        self.status.servers.get(idx).map(|s| s.name.clone())
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
            KeyCode::Char('l') => return self.log_level_key(selected),
            KeyCode::Char('s') => return self.revoke_sampling_key(selected),
            _ => {}
        }
        None
    }

    fn chat_key(&mut self, key: KeyEvent) -> Option<Action> {
        if let Some(done) = super::settings::hidden_key(self, key) {
            return done;
        }
        if let Some(done) = self.attach_key(key) {
            return done;
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
                    && super::surface::parse_roots(text).is_none()
                    && super::conversations::parse(text).is_none()
                    && super::settings::parse(text).is_none()
                {
                    if let Some(action) = super::slash::enter(self, text) {
                        return action;
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
                    t if super::conversations::parse(t).is_some() => {
                        return super::conversations::parse(t).map(Action::Conversation)
                    }
                    t if super::settings::parse(t).is_some() => match super::settings::parse(t)? {
                        Ok(Some(cmd)) => return Some(Action::Settings(cmd)),
                        Ok(None) => super::settings::start_hidden(self),
                        Err(usage) => self.chat.push(ChatLine::System(usage)),
                    },
                    t if super::surface::parse_roots(t).is_some() => {
                        match super::surface::parse_roots(t)? {
                            Ok(cmd) => return Some(Action::Roots(cmd)),
                            Err(usage) => self.chat.push(ChatLine::System(usage)),
                        }
                    }
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
            KeyCode::Tab if self.input.starts_with('/') => return super::slash::tab(self),
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
            } => self.chat.push(ChatLine::Tool {
                call_id,
                name,
                arguments: arguments.to_string(),
                status: ToolLineStatus::Running,
            }),
            Event::ToolCallEnd {
                call_id,
                status,
                duration_ms,
                error,
                ..
            } => {
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
                    TurnOutcome::Failed { error } => self.chat.push(ChatLine::System(error)),
                }
            }
            // The waiting calls come from the core's list (`show_approvals`).
            Event::ModelRequest { .. }
            | Event::ToolCallProgress { .. }
            | Event::ApprovalRequest { .. } => {}
        }
    }

    /// Whether any server is configured (the MCP bar shows only then).
    pub fn has_servers(&self) -> bool {
        !self.status.servers.is_empty() || self.status.config_error.is_some()
    }
}
