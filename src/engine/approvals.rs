//! The tool calls of a turn that wait for the user's decision, oldest first. Parallel tool
//! calls can ask at once; each stays pending until it is answered (in any order) or its
//! call ends another way, and the turn's end empties the list (the engine denies whatever
//! was left unanswered when a turn stops). Front ends feed it the turn's events and show
//! the first; the decision itself goes to [`super::TurnControl::approve`].

use std::collections::VecDeque;

use serde_json::Value;

use super::event::Event;

/// A tool call waiting for the user.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct PendingApproval {
    pub call_id: String,
    pub name: String,
    pub arguments: Value,
    /// The server marks the tool read-only (an untrusted hint).
    pub read_only: bool,
}

/// Every tool call of the turn waiting for the user, oldest first.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PendingApprovals {
    items: VecDeque<PendingApproval>,
}

impl PendingApprovals {
    /// Follows one event of the turn; `true` when the list changed.
    pub fn observe(&mut self, event: &Event) -> bool {
        match event {
            Event::ApprovalRequest {
                call_id,
                name,
                arguments,
                read_only,
            } => {
                self.items.push_back(PendingApproval {
                    call_id: call_id.clone(),
                    name: name.clone(),
                    arguments: arguments.clone(),
                    read_only: *read_only,
                });
                true
            }
            Event::ToolCallEnd { call_id, .. } => self.take(call_id).is_some(),
            Event::TurnEnd { .. } => {
                let had = !self.items.is_empty();
                self.items.clear();
                had
            }
            Event::TurnStart { .. }
            | Event::ModelRequest { .. }
            | Event::Retry { .. }
            | Event::TextDelta { .. }
            | Event::ToolInputPartial { .. }
            | Event::ToolCallStart { .. }
            | Event::ToolCallProgress { .. }
            | Event::Notice { .. } => false,
        }
    }

    /// The oldest request, the one to show.
    pub fn first(&self) -> Option<&PendingApproval> {
        self.items.front()
    }

    /// Removes a request (it was answered, or its call ended).
    pub fn take(&mut self, call_id: &str) -> Option<PendingApproval> {
        let i = self.items.iter().position(|p| p.call_id == call_id)?;
        self.items.remove(i)
    }

    /// Every request, oldest first.
    pub fn iter(&self) -> impl Iterator<Item = &PendingApproval> {
        self.items.iter()
    }

    pub fn len(&self) -> usize {
        self.items.len()
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }
}

impl FromIterator<PendingApproval> for PendingApprovals {
    fn from_iter<I: IntoIterator<Item = PendingApproval>>(iter: I) -> Self {
        PendingApprovals {
            items: iter.into_iter().collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::event::{CallStatus, TurnOutcome};
    use serde_json::json;

    fn ask(id: &str) -> Event {
        Event::ApprovalRequest {
            call_id: id.into(),
            name: format!("tool_{id}"),
            arguments: json!({}),
            read_only: false,
        }
    }

    #[test]
    fn parallel_requests_wait_together_and_leave_in_any_order() {
        let mut p = PendingApprovals::default();
        for id in ["a", "b", "c"] {
            assert!(p.observe(&ask(id)));
        }
        assert_eq!(p.len(), 3);
        assert_eq!(p.take("b").unwrap().name, "tool_b");
        assert_eq!(p.first().unwrap().call_id, "a");
        // A call that ended another way leaves too.
        assert!(p.observe(&Event::ToolCallEnd {
            call_id: "a".into(),
            name: "tool_a".into(),
            arguments: json!({}),
            status: CallStatus::Denied,
            duration_ms: 0,
            error: None,
            output: String::new(),
            spilled: None,
            view: None,
        }));
        assert_eq!(p.first().unwrap().call_id, "c");
        assert!(p.observe(&Event::TurnEnd {
            outcome: TurnOutcome::Stopped,
            round_trips: 1,
            duration_ms: 5,
            usage: Default::default(),
        }));
        assert!(p.is_empty());
    }
}
