//! The words the terminal UI's state and its widgets share: what a key asks the runner to
//! do ([`Action`] and the commands it carries), the transcript's lines, the modal on top,
//! and the rows of the `/mcp` panel. Plain data: this module sits below the state (`app`)
//! and every widget, and imports none of them, so the widgets can return actions without
//! knowing the state they are part of.

use std::path::PathBuf;

use harness9::engine::event::CallStatus;
use harness9::engine::permissions::ToolPermission;
use harness9::engine::provider::settings::{ApiKey, ProviderKind};
use harness9::inspect::ApprovalRequest;

/// Slash commands, for Tab completion.
pub const COMMANDS: &[&str] = &[
    "/mcp",
    "/roots",
    "/new",
    "/resume",
    "/model",
    "/permissions",
    "/tasks",
    "/quit",
];

/// What the runner must do after a key.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    Quit,
    Send(String),
    /// Start a turn with a server's prompt (the slash commands); `text` is the command as
    /// typed, for the transcript.
    SendPrompt {
        server: String,
        name: String,
        arguments: serde_json::Map<String, serde_json::Value>,
        text: String,
    },
    /// Ask the server for values of a prompt argument; the answer goes back to the slash
    /// commands' `completion_done` with `input`.
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
    /// Sign in to a remote server (in the background; the outcome comes back as an
    /// `AuthDone`).
    SignIn(String),
    /// Forget the sign-in of a remote server.
    SignOut(String),
    /// Answer what a server asked (the ask modal).
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
    Roots(RootsCommand),
    /// Start, list or reopen a conversation.
    Conversation(ConversationCmd),
    /// Show or change the model provider settings or the tool permission rules.
    Settings(SettingsCmd),
    /// List the MCP tasks or cancel one.
    Tasks(TasksCmd),
}

/// A `/tasks` command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TasksCmd {
    List,
    /// A number from the list, or a task id.
    Cancel(String),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolDecision {
    Once,
    Always,
    Deny,
}

/// What `/roots` asks for.
/// Why a slash command line was not taken; the text says how to use the command.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UsageError {
    /// The command's usage line.
    #[error("{0}")]
    Usage(&'static str),
    #[error(
        "unknown provider \"{0}\": use anthropic or openai (also for OpenAI-compatible servers)"
    )]
    UnknownProvider(String),
}

#[derive(Debug, Clone, PartialEq)]
pub enum RootsCommand {
    List,
    Add(PathBuf),
    Remove(PathBuf),
}

/// A conversation command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConversationCmd {
    New,
    List,
    /// A number from the list, or an id.
    Resume(String),
}

/// One `/model` or `/permissions` command.
#[derive(Debug, Clone, PartialEq)]
pub enum SettingsCmd {
    ShowModel,
    Provider(ProviderKind),
    /// Empty: the provider's default.
    Model(String),
    /// Empty: the provider's default.
    Url(String),
    KeyEnv(String),
    /// Keep this key in the keychain and read it from there.
    KeychainKey(ApiKey),
    ForgetKey,
    Test,
    ListRules,
    SetRule(String, Option<ToolPermission>),
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
    /// The `/mcp` panel; `selected` indexes the panel's rows (a [`PanelRow`] each).
    Mcp {
        selected: usize,
        details: bool,
    },
    /// Project servers waiting for approval, as shown (what would run, and the
    /// fingerprint that approves exactly that).
    ServerApproval(Vec<ApprovalRequest>),
    /// The oldest tool call waiting for the user (the state holds them all).
    ToolApproval,
}

/// A row of the `/mcp` panel; indexes are in the order of the status snapshot's servers.
#[derive(Debug, Clone, PartialEq)]
pub enum PanelRow {
    Server(usize),
    Tool {
        server: usize,
        tool: usize,
    },
    /// A tool held back until the user accepts its change (index into that server's
    /// held-back tools).
    Held {
        server: usize,
        held: usize,
    },
}

impl PanelRow {
    /// The index of the server the row belongs to.
    pub fn server(&self) -> usize {
        match self {
            PanelRow::Server(i) => *i,
            PanelRow::Tool { server, .. } | PanelRow::Held { server, .. } => *server,
        }
    }
}
