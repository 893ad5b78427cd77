//! Earlier conversations in the terminal UI: `/resume` lists the project's saved
//! conversations (newest first), `/resume N` (or an id) reopens one with its history,
//! `/new` starts a fresh one. The history is the core's (`engine::history`), drawn as chat
//! lines.

use std::time::{SystemTime, UNIX_EPOCH};

use harness9::engine::history::ChatItem;
use harness9::engine::{CallStatus, ConversationChoice, ConversationSummary};
use harness9::Harness;

use super::model::{ChatLine, ConversationCmd, ToolLineStatus};

/// What a conversation command leaves in the transcript.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// A note added to the transcript.
    Note(String),
    /// Another conversation is open: the transcript becomes these lines.
    Opened(Vec<ChatLine>),
}

/// Reads `/new`, `/resume` and `/resume ARG`.
pub fn parse(text: &str) -> Option<ConversationCmd> {
    match text.split_whitespace().collect::<Vec<_>>().as_slice() {
        ["/new"] => Some(ConversationCmd::New),
        ["/resume"] => Some(ConversationCmd::List),
        ["/resume", arg] => Some(ConversationCmd::Resume(arg.to_string())),
        _ => None,
    }
}

/// A saved conversation's items as chat lines.
pub fn lines(items: Vec<ChatItem>) -> Vec<ChatLine> {
    items
        .into_iter()
        .flat_map(|item| match item {
            ChatItem::User { text } => vec![ChatLine::User(text)],
            ChatItem::Assistant { text } => vec![ChatLine::Assistant(text)],
            ChatItem::Tool {
                call_id,
                name,
                arguments,
                output,
                is_error,
                view,
            } => {
                let mut lines = vec![ChatLine::Tool {
                    call_id,
                    name: name.clone(),
                    arguments: arguments.to_string(),
                    status: ToolLineStatus::Earlier {
                        status: if is_error {
                            CallStatus::Error
                        } else {
                            CallStatus::Ok
                        },
                        answered: output.is_some(),
                    },
                }];
                if view.is_some() {
                    lines.push(view_note(&name));
                }
                lines
            }
            ChatItem::Notice { text } => vec![ChatLine::System(text)],
            ChatItem::Attachment { server, uri } => {
                vec![ChatLine::System(format!("attached {uri} from {server}"))]
            }
        })
        .collect()
}

/// The line under a tool call whose tool has an interactive view (MCP Apps), which only
/// the desktop app shows.
pub fn view_note(tool: &str) -> ChatLine {
    ChatLine::System(format!(
        "{tool}: {}",
        harness9::host::apps::TERMINAL_VIEW_NOTE
    ))
}

fn age(created_ms: u64) -> String {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0);
    let mins = now.saturating_sub(created_ms) / 60_000;
    match mins {
        0 => "just now".into(),
        m if m < 60 => format!("{m} min ago"),
        m if m < 48 * 60 => format!("{} h ago", m / 60),
        m => format!("{} days ago", m / (24 * 60)),
    }
}

/// The list `/resume` prints.
pub fn list_text(list: &[ConversationSummary], current: Option<&str>) -> String {
    if list.is_empty() {
        return "no saved conversations for this project yet".into();
    }
    let mut out = vec!["saved conversations (/resume N reopens one, /new starts one):".to_string()];
    for (i, c) in list.iter().enumerate().take(20) {
        let mark = if current == Some(c.id.as_str()) {
            " (this one)"
        } else {
            ""
        };
        let title = if c.title.is_empty() {
            "(empty)"
        } else {
            &c.title
        };
        out.push(format!(
            "{:>3}. {title} · {} messages · {}{mark}",
            i + 1,
            c.messages,
            age(c.created_ms)
        ));
    }
    out.join("\n")
}

/// The id `/resume ARG` names: a number of the list, or an id (or its start).
fn resolve(arg: &str, list: &[ConversationSummary]) -> Option<String> {
    if let Some(c) = arg
        .parse::<usize>()
        .ok()
        .filter(|n| (1..=list.len().min(99)).contains(n))
        .and_then(|n| list.get(n - 1))
    {
        return Some(c.id.clone());
    }
    let found: Vec<&ConversationSummary> = list.iter().filter(|c| c.id.starts_with(arg)).collect();
    match found.as_slice() {
        [one] => Some(one.id.clone()),
        _ => None,
    }
}

/// Runs a conversation command: another conversation replaces the current one.
pub async fn run(harness: &Harness, cmd: ConversationCmd) -> Outcome {
    let chat = harness.chat();
    if chat.busy() && cmd != ConversationCmd::List {
        return Outcome::Note(
            "a turn is running: stop it (Esc) before you switch conversations".into(),
        );
    }
    let list = chat.conversations().await;
    let opened = match cmd {
        ConversationCmd::List => {
            let current = chat
                .state(ConversationChoice::New)
                .await
                .ok()
                .and_then(|s| s.conversation_id);
            return Outcome::Note(list_text(&list, current.as_deref()));
        }
        ConversationCmd::New => chat.new_conversation().await,
        ConversationCmd::Resume(arg) => match resolve(&arg, &list) {
            Some(id) => chat.resume(&id).await,
            None => {
                return Outcome::Note(format!("no saved conversation {arg}; /resume lists them"))
            }
        },
    };
    match opened {
        Ok(state) => {
            if let Some(e) = state.error {
                return Outcome::Note(e);
            }
            let resumed = !state.history.is_empty();
            let mut chat = lines(state.history);
            chat.push(ChatLine::System(if resumed {
                "conversation reopened: the model sees it all".into()
            } else {
                "new conversation".into()
            }));
            Outcome::Opened(chat)
        }
        Err(e) => Outcome::Note(e.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn summary(id: &str) -> ConversationSummary {
        ConversationSummary {
            id: id.into(),
            created_ms: 0,
            messages: 2,
            title: format!("about {id}"),
        }
    }

    #[test]
    fn commands_and_what_they_name() {
        assert_eq!(parse("/new"), Some(ConversationCmd::New));
        assert_eq!(parse("/resume"), Some(ConversationCmd::List));
        assert_eq!(
            parse("/resume 2"),
            Some(ConversationCmd::Resume("2".into()))
        );
        assert_eq!(parse("/resume a b"), None);
        let list = [summary("20261203-aa"), summary("20261202-bb")];
        assert_eq!(resolve("2", &list).as_deref(), Some("20261202-bb"));
        assert_eq!(resolve("20261203", &list).as_deref(), Some("20261203-aa"));
        assert_eq!(resolve("2026", &list), None);
        assert_eq!(resolve("3", &list), None);
        assert_eq!(resolve("0", &list), None);
        let text = list_text(&list, Some("20261202-bb"));
        assert!(
            text.contains("  1. about 20261203-aa · 2 messages"),
            "{text}"
        );
        assert!(text.contains("(this one)"), "{text}");
    }
}
