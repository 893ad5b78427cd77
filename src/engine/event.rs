//! What a running turn tells its front end. Plain data, serializable (the `exec --json`
//! lines and the desktop bridge are these values as JSON: `{"type": "text_delta", ...}`,
//! fields in camelCase).

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::provider::Usage;
use crate::mcp::CallToolResult;

/// What front ends tell the user when an answer stopped at the output token limit (the
/// saved conversation shows it too, see [`super::history`]).
pub const CUT_OFF_NOTICE: &str = "the answer was cut off at the output token limit (raise maxTokens in the provider section of settings.json, or ask the model to go on)";

/// One event of a turn, in order. Every `ToolCallStart` is followed by exactly one
/// `ToolCallEnd` with the same `callId` (also when the call is denied or stopped), and the
/// last event of a turn is always `TurnEnd`. `ToolInputPartial` events of a call come
/// before its `ToolCallStart` (a call whose answer failed while it was written never
/// starts).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(rename = "ChatEvent"))]
#[serde(
    tag = "type",
    rename_all = "snake_case",
    rename_all_fields = "camelCase"
)]
pub enum Event {
    TurnStart {
        conversation_id: String,
        provider: String,
        model: String,
    },
    /// A model request goes out (`roundTrip` counts from 1).
    ModelRequest {
        round_trip: usize,
        tools: usize,
    },
    /// The provider was busy or failing; the same request is sent again after `delayMs`.
    Retry {
        attempt: u32,
        delay_ms: u64,
        reason: String,
    },
    TextDelta {
        text: String,
    },
    /// The model is still writing the arguments of a call whose tool has an interactive
    /// view (MCP Apps): what it wrote so far, closed into a JSON object as well as it can
    /// be (an unfinished string is cut where it stops, unfinished keys, numbers and
    /// literals are left out). Sent at most every [`super::PARTIAL_INPUT_EVERY`], only
    /// when it changed, and only for providers that stream arguments.
    ToolInputPartial {
        call_id: String,
        name: String,
        arguments: Value,
        view: Box<ToolView>,
    },
    ToolCallStart {
        call_id: String,
        name: String,
        arguments: Value,
        /// Set when the tool has an interactive view (MCP Apps): a front end that renders
        /// views can open it now, while the call runs.
        #[serde(skip_serializing_if = "Option::is_none")]
        #[cfg_attr(feature = "ts", ts(optional))]
        view: Option<Box<ToolView>>,
    },
    /// The front end must answer with [`super::TurnControl::approve`].
    ApprovalRequest {
        call_id: String,
        name: String,
        arguments: Value,
        /// The server marks the tool read-only (an untrusted hint).
        read_only: bool,
    },
    ToolCallProgress {
        call_id: String,
        progress: f64,
        total: Option<f64>,
        message: Option<String>,
    },
    ToolCallEnd {
        call_id: String,
        name: String,
        arguments: Value,
        status: CallStatus,
        duration_ms: u64,
        /// Why the call failed (absent on success).
        error: Option<String>,
        /// The result as the model sees it (text; images as placeholders).
        output: String,
        /// The whole output was saved and only its first page shown to the model.
        spilled: Option<String>,
        /// Set when the tool has an interactive view (MCP Apps) and the call returned a
        /// result: what a front end that renders views needs to open it.
        #[serde(skip_serializing_if = "Option::is_none")]
        #[cfg_attr(feature = "ts", ts(optional))]
        view: Option<Box<CallView>>,
    },
    /// Something the user should know (tools disappeared, a settings problem).
    Notice {
        message: String,
    },
    TurnEnd {
        outcome: TurnOutcome,
        round_trips: usize,
        duration_ms: u64,
        usage: Usage,
    },
}

/// How one tool call ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum CallStatus {
    Ok,
    /// The tool ran and reported an error, or could not run.
    Error,
    TimedOut,
    Denied,
    Cancelled,
}

/// How a turn ended.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum TurnOutcome {
    /// The model gave its final answer.
    Completed { answer: String },
    /// The model's answer stopped at the output token limit (Anthropic `max_tokens`, OpenAI
    /// `length`); `answer` is what it wrote. Front ends say so ([`CUT_OFF_NOTICE`]) instead
    /// of showing it as a finished answer; `notice` is that text.
    CutOff { answer: String, notice: String },
    /// The user stopped the turn.
    Stopped,
    /// The provider failed or the round-trip bound was reached. `code` is stable and
    /// kebab-case (the provider error's code, or `round-trip-limit`).
    Failed { error: String, code: &'static str },
}

/// The interactive view (MCP Apps) a call of a tool will show: the server, the tool and
/// its `ui://` resource.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct ToolView {
    pub server: String,
    pub tool: String,
    pub resource_uri: String,
}

/// A tool call whose tool has an interactive view (MCP Apps): the server, the tool, its
/// `ui://` resource, the call's input and its whole result. The conversation keeps it
/// (never the view's HTML, which is read from the server each time the view opens).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct CallView {
    pub server: String,
    pub tool: String,
    pub resource_uri: String,
    #[cfg_attr(feature = "ts", ts(type = "JsonValue"))]
    pub arguments: Value,
    pub result: CallToolResult,
}
