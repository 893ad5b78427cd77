//! Earlier conversations in the terminal UI: `/resume` lists the project's saved
//! conversations (newest first), `/resume N` (or an id) reopens one with its history,
//! `/new` starts a fresh one. The history is the core's (`engine::history`), drawn as chat
//! lines.

use std::time::{SystemTime, UNIX_EPOCH};

use harness9::engine::history::{history, ChatItem};
use harness9::engine::{
    CallStatus, ConversationChoice, ConversationSummary, Engine, EngineOptions,
};
use harness9::Harness;

use super::app::{App, ChatLine, ToolLineStatus};

/// A conversation command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConversationCmd {
    New,
    List,
    /// A number from the list, or an id.
    Resume(String),
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
        .map(|item| match item {
            ChatItem::User { text } => ChatLine::User(text),
            ChatItem::Assistant { text } => ChatLine::Assistant(text),
            ChatItem::Tool {
                call_id,
                name,
                arguments,
                output,
                is_error,
            } => ChatLine::Tool {
                call_id,
                name,
                arguments: arguments.to_string(),
                status: ToolLineStatus::Earlier {
                    status: if is_error {
                        CallStatus::Error
                    } else {
                        CallStatus::Ok
                    },
                    answered: output.is_some(),
                },
            },
            ChatItem::Notice { text } => ChatLine::System(text),
            ChatItem::Attachment { server, uri } => {
                ChatLine::System(format!("attached {uri} from {server}"))
            }
        })
        .collect()
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

/// Runs a conversation command: the engine is replaced when another conversation opens.
pub async fn run(
    harness: &Harness,
    engine: &mut Option<Engine>,
    app: &mut App,
    cmd: ConversationCmd,
) {
    if app.busy && cmd != ConversationCmd::List {
        app.chat.push(ChatLine::System(
            "a turn is running: stop it (Esc) before you switch conversations".into(),
        ));
        return;
    }
    // Read on the blocking pool: no runtime thread waits on the disk.
    let list = harness.list_conversations().await;
    let choice = match cmd {
        ConversationCmd::List => {
            let current = engine.as_ref().map(|e| e.conversation_id().to_string());
            app.chat
                .push(ChatLine::System(list_text(&list, current.as_deref())));
            return;
        }
        ConversationCmd::New => ConversationChoice::New,
        ConversationCmd::Resume(arg) => match resolve(&arg, &list) {
            Some(id) => ConversationChoice::Resume(id),
            None => {
                app.chat.push(ChatLine::System(format!(
                    "no saved conversation {arg}; /resume lists them"
                )));
                return;
            }
        },
    };
    let resumed = matches!(choice, ConversationChoice::Resume(_));
    match harness
        .open_engine(EngineOptions {
            conversation: choice,
            ..EngineOptions::default()
        })
        .await
    {
        Ok(e) => {
            app.chat = if resumed {
                lines(history(&e.messages()))
            } else {
                Vec::new()
            };
            app.chat.push(ChatLine::System(if resumed {
                "conversation reopened: the model sees it all".into()
            } else {
                "new conversation".into()
            }));
            app.scroll = 0;
            *engine = Some(e);
        }
        Err(e) => app.chat.push(ChatLine::System(e.to_string())),
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
