//! MCP tasks in the terminal UI: the task status on the line of the tool call that started
//! it, `/tasks` listing the project's tasks (numbered, newest first), and
//! `/tasks cancel N` (or a task id) cancelling one. The table is the core's
//! ([`harness9::Harness::tasks`]); this module only reads and words it.

use harness9::host::tasks::{CancelOutcome, TaskEvent, TaskRecord};
use harness9::Harness;

use super::model::{ChatLine, TasksCmd, UsageError};

const USAGE: &str =
    "usage: /tasks (list the tasks), /tasks cancel N (a number from the list, or a task id)";

/// Reads `/tasks` and `/tasks cancel ARG`; `None` for other commands.
pub fn parse(text: &str) -> Option<Result<TasksCmd, UsageError>> {
    let words: Vec<&str> = text.split_whitespace().collect();
    match words.as_slice() {
        ["/tasks"] => Some(Ok(TasksCmd::List)),
        ["/tasks", "cancel", arg] => Some(Ok(TasksCmd::Cancel(arg.to_string()))),
        ["/tasks", ..] => Some(Err(UsageError::Usage(USAGE))),
        _ => None,
    }
}

/// How long ago `ms` (since the epoch) was, shortly.
fn ago(now_ms: u64, ms: u64) -> String {
    let s = now_ms.saturating_sub(ms) / 1000;
    match s {
        0..=59 => format!("{s} s"),
        60..=3599 => format!("{} min", s / 60),
        _ => format!("{} h", s / 3600),
    }
}

/// The `/tasks` list as text.
pub fn list_text(tasks: &[TaskRecord], now_ms: u64) -> String {
    if tasks.is_empty() {
        return "no tasks in this project".to_string();
    }
    let mut out = String::from("tasks (newest first; /tasks cancel N cancels one):");
    for (i, t) in tasks.iter().enumerate() {
        let message = t
            .message
            .as_deref()
            .map(|m| format!(" — {m}"))
            .unwrap_or_default();
        let left = match t.ttl_left_ms(now_ms) {
            Some(ms) if !t.state.is_ended() => format!(", {} left", ago(ms, 0)),
            _ => String::new(),
        };
        out.push_str(&format!(
            "\n{}. {} {}/{} {}{message} ({} ago{left})",
            i + 1,
            t.task_id,
            t.server,
            t.tool,
            t.state.word(),
            ago(now_ms, t.created_ms),
        ));
        if let Some(e) = &t.error {
            out.push_str(&format!("\n   {e}"));
        }
    }
    out
}

/// The task a `/tasks cancel` argument names: a number of the list, or an id.
pub fn pick<'a>(tasks: &'a [TaskRecord], arg: &str) -> Option<&'a TaskRecord> {
    match arg.parse::<usize>() {
        Ok(n) if n >= 1 => tasks.get(n - 1),
        _ => tasks.iter().find(|t| t.task_id == arg),
    }
}

/// Runs one `/tasks` command; the text goes to the transcript.
pub async fn run(harness: &Harness, cmd: TasksCmd) -> String {
    let tasks = harness.tasks();
    match cmd {
        TasksCmd::List => list_text(&tasks, now_ms()),
        TasksCmd::Cancel(arg) => {
            let Some(t) = pick(&tasks, &arg) else {
                return format!("no task {arg}; /tasks lists them");
            };
            match harness.cancel_task(&t.server, &t.task_id).await {
                Ok(CancelOutcome::Cancelled) => format!("task {} cancelled", t.task_id),
                Ok(CancelOutcome::Requested) => format!(
                    "cancel of task {} requested; it stops when the server gets to it",
                    t.task_id
                ),
                Err(e) => format!("could not cancel task {}: {e}", t.task_id),
            }
        }
    }
}

fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

/// What the tool line of call `call_id` adds when the call runs as a task.
pub fn tool_line_note(tasks: &[TaskRecord], call_id: &str) -> Option<String> {
    let t = tasks
        .iter()
        .find(|t| t.origin.as_ref().is_some_and(|o| o.call_id == call_id))?;
    let message = match (&t.message, t.state.is_ended()) {
        (Some(m), false) => format!(" — {m}"),
        _ => String::new(),
    };
    Some(format!(" · task {} {}{message}", t.task_id, t.state.word()))
}

/// A line for the transcript when a task of this chat ended (its late result waits for
/// the next message).
pub fn ended_line(event: &TaskEvent, chat: &[ChatLine]) -> Option<ChatLine> {
    let TaskEvent::Ended { task, .. } = event else {
        return None;
    };
    let origin = task.origin.as_ref()?;
    let here = chat
        .iter()
        .any(|l| matches!(l, ChatLine::Tool { call_id, .. } if *call_id == origin.call_id));
    here.then(|| {
        ChatLine::System(format!(
            "task {} of {} ended ({}); its result goes to the model with your next message",
            task.task_id,
            origin.name,
            task.state.word()
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(id: &str, state: harness9::host::tasks::TaskState, call: Option<&str>) -> TaskRecord {
        TaskRecord {
            server: "srv".into(),
            tool: "slow".into(),
            arguments: serde_json::json!({}),
            task_id: id.into(),
            era: harness9::mcp::era::Era::Modern,
            created_ms: 1_000_000,
            ttl_ms: Some(300_000),
            state,
            message: Some("step 2 of 4".into()),
            updated_ms: 1_000_000,
            error: None,
            origin: call.map(|c| harness9::tools::tasks::TaskOrigin {
                conversation_id: "c".into(),
                call_id: c.into(),
                name: "mcp__srv__slow".into(),
                data_dir: Default::default(),
            }),
            local: false,
            owner_pid: None,
            can_cancel: true,
            delivered: false,
        }
    }

    #[test]
    fn the_list_and_the_tool_line_say_where_each_task_is() {
        use harness9::host::tasks::TaskState;
        let tasks = vec![
            record("t2", TaskState::Working, Some("call-2")),
            record("t1", TaskState::Completed, None),
        ];
        assert_eq!(
            list_text(&tasks, 1_065_000),
            "tasks (newest first; /tasks cancel N cancels one):\n\
             1. t2 srv/slow working — step 2 of 4 (1 min ago, 3 min left)\n\
             2. t1 srv/slow completed — step 2 of 4 (1 min ago)"
        );
        assert_eq!(list_text(&[], 0), "no tasks in this project");
        assert_eq!(
            tool_line_note(&tasks, "call-2").as_deref(),
            Some(" · task t2 working — step 2 of 4")
        );
        assert_eq!(tool_line_note(&tasks, "call-9"), None);
        assert_eq!(pick(&tasks, "2").map(|t| t.task_id.as_str()), Some("t1"));
        assert_eq!(pick(&tasks, "t2").map(|t| t.task_id.as_str()), Some("t2"));
        assert!(pick(&tasks, "3").is_none());
    }

    #[test]
    fn commands_parse() {
        assert_eq!(parse("/tasks"), Some(Ok(TasksCmd::List)));
        assert_eq!(
            parse("/tasks cancel 2"),
            Some(Ok(TasksCmd::Cancel("2".into())))
        );
        assert_eq!(parse("/tasks stop"), Some(Err(UsageError::Usage(USAGE))));
        assert_eq!(parse("/task"), None);
    }
}
