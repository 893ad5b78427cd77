//! The consent queue: what servers ask of the user (elicitation, sampling) waits here as
//! an [`Ask`] until a front end answers it.
//!
//! Invariants: a front end is whoever holds a receiver from [`AskQueue::subscribe`]. When
//! none does, an ask is never queued and gets its default at once (elicitation declined,
//! sampling refused); otherwise it waits for [`AskQueue::answer`] up to
//! [`DEFAULT_ASK_TIMEOUT`], then gets its default. The pending list goes out on a `watch`
//! channel, so a new ask wakes every subscriber at once (no polling) and a slow one can
//! never block a server. An ask whose request ends first (the server cancelled it, or
//! went away) leaves the queue at once.

use parking_lot::Mutex;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::Serialize;
use tokio::sync::{oneshot, watch};

use crate::mcp::contain;
use crate::mcp::elicit_form::{ElicitForm, FieldErrors, FieldValue};
use crate::mcp::requests::{
    missing_required, CreateMessageRequest, CreateMessageResult, ElicitAction, ElicitRequest,
    ElicitResult,
};

/// How long an ask waits for a front end's answer before it gets its default.
pub const DEFAULT_ASK_TIMEOUT: Duration = Duration::from_secs(10 * 60);

/// Something a server asks of the user.
#[derive(Debug, Clone, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Ask {
    pub id: u64,
    /// The server that asks (always shown to the user).
    pub server: String,
    #[serde(flatten)]
    pub kind: AskKind,
    /// For a URL elicitation: the URL's full domain, to show before the user agrees.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url_domain: Option<String>,
    /// When the request reached the client (for the latency figure; not sent to UIs).
    #[serde(skip)]
    pub arrived: Instant,
    /// The MCP task the server asks this for (a task's `input_required`), shown with it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub task: Option<String>,
}

/// What is asked.
#[derive(Debug, Clone, Serialize, PartialEq)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum AskKind {
    /// Fill in a form, or agree to open a URL.
    Elicitation { request: ElicitRequest },
    /// Let the host's model answer these messages (shown with the system prompt and the
    /// token limit before the user approves).
    Sampling { request: Box<CreateMessageRequest> },
    /// The model's answer to an approved sampling request, shown before it goes to the
    /// server because the user chose to review it (Send or Refuse).
    SamplingReview {
        request: Box<CreateMessageRequest>,
        result: Box<CreateMessageResult>,
    },
    /// A view of the server (MCP Apps) asks for something only the user may allow; the
    /// front end shows it as coming from that view (`viewId`).
    #[serde(rename_all = "camelCase")]
    View { view_id: String, request: ViewAsk },
}

/// What a view asks the user for. Answered with [`AskAnswer::Approve`] (yes; for a tool
/// call `always` remembers "allow" for the tool in this project) or [`AskAnswer::Refuse`].
#[derive(Debug, Clone, Serialize, PartialEq)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(
    tag = "what",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
pub enum ViewAsk {
    /// Call one of its server's tools (the same question as for a model's call).
    ToolCall {
        tool: String,
        arguments: serde_json::Value,
        /// The server marks the tool read-only (an untrusted hint).
        read_only: bool,
    },
    /// Use the device features it declared (`camera`, `microphone`, `geolocation`,
    /// `clipboard-write`).
    Permissions { permissions: Vec<String> },
    /// Open this link in the browser (the ask's domain is its host, to show first); the
    /// front end opens it when the user agrees ([`super::Resolved::OpenUrl`]).
    OpenLink { url: String },
}

/// How the user approved a sampling request.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SamplingChoice {
    /// "Always for this server": later requests of this server (as configured now) run
    /// without asking, until revoked.
    pub always: bool,
    /// Show the model's answer before it is returned to the server.
    pub review: bool,
}

/// A front end's answer to an [`Ask`].
#[derive(Debug, Clone, PartialEq)]
pub enum AskAnswer {
    /// The answer to an elicitation (an accepted form gets the schema's defaults for the
    /// fields left out).
    Elicit(ElicitResult),
    /// Yes to a sampling request (run it on the model), or "Send" to a review.
    Approve(SamplingChoice),
    /// The answer to a sampling request or a review, given by the front end itself
    /// (instead of the model's).
    Sample(CreateMessageResult),
    /// No: an elicitation is declined, a sampling request refused with this reason.
    Refuse(String),
}

/// Why an ask got its default instead of an answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unanswered {
    /// No front end listens (`harness9 exec`, `mcp call`, a test without one).
    NoFrontEnd,
    /// A front end listens but nobody answered in time.
    TimedOut(Duration),
    /// Taking the front end's answer failed inside harness9 (a panic, contained): the
    /// request ends with an error instead of waiting on.
    Failed,
}

impl Unanswered {
    /// Why, in words for a log line or an error to the server.
    pub fn reason(self) -> String {
        match self {
            Unanswered::NoFrontEnd => "no one can answer it here".into(),
            Unanswered::TimedOut(t) => format!(
                "the user did not answer within {}",
                crate::mcp::client::fmt_duration(t)
            ),
            Unanswered::Failed => "harness9 failed while taking the answer".into(),
        }
    }
}

/// Why an answer was not taken.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum AskError {
    #[error(
        "there is no pending request {0} (it was answered, cancelled by the server, or timed out)"
    )]
    Unknown(u64),
    #[error("request {id} is {kind}; answer it with {expected}")]
    WrongAnswer {
        id: u64,
        kind: &'static str,
        expected: &'static str,
    },
    /// An accepted form whose fields do not fit the server's schema: nothing was sent,
    /// the ask stays pending.
    #[error("the answer does not fit the form: {}", fields_text(.fields))]
    Invalid { id: u64, fields: FieldErrors },
    /// Taking the answer failed inside harness9 (a panic, contained): the request was
    /// ended with an error to the server, and the next one works.
    #[error(
        "harness9 failed while taking the answer to request {id} ({why}); the request was ended"
    )]
    Failed { id: u64, why: contain::Panicked },
}

impl AskError {
    /// A stable kebab-case code for front ends and `--json` output (never changes once
    /// released).
    pub fn code(&self) -> &'static str {
        match self {
            AskError::Unknown(_) => "unknown-request",
            AskError::WrongAnswer { .. } => "wrong-answer",
            AskError::Invalid { .. } => "invalid-answer",
            AskError::Failed { .. } => "internal-panic",
        }
    }
}

fn fields_text(fields: &FieldErrors) -> String {
    let parts: Vec<String> = fields.iter().map(|(k, v)| format!("{k}: {v}")).collect();
    parts.join("; ")
}

/// Checks an accepted form's content against the schema it answers: the form's checks
/// when a form can show the schema, else the required fields.
fn check_form(id: u64, ask: &Ask, answer: &AskAnswer) -> Result<(), AskError> {
    let (
        AskKind::Elicitation {
            request: ElicitRequest::Form {
                requested_schema, ..
            },
        },
        AskAnswer::Elicit(ElicitResult {
            action: ElicitAction::Accept,
            content,
        }),
    ) = (&ask.kind, answer)
    else {
        return Ok(());
    };
    let empty = serde_json::Map::new();
    let content = content.as_ref().unwrap_or(&empty);
    let fields = match ElicitForm::of(requested_schema) {
        Some(form) => form.check(content).err(),
        None => {
            let missing = missing_required(requested_schema, content);
            (!missing.is_empty()).then(|| {
                missing
                    .into_iter()
                    .map(|m| (m, "Required".into()))
                    .collect()
            })
        }
    };
    fields.map_or(Ok(()), |fields| Err(AskError::Invalid { id, fields }))
}

type Pending = BTreeMap<u64, (Ask, oneshot::Sender<AskAnswer>)>;

/// The queue of one project's servers.
pub struct AskQueue {
    next_id: AtomicU64,
    pending: Mutex<Pending>,
    published: watch::Sender<Arc<Vec<Ask>>>,
    timeout: Mutex<Duration>,
}

impl Default for AskQueue {
    fn default() -> Self {
        AskQueue {
            next_id: AtomicU64::new(1),
            pending: Mutex::default(),
            published: watch::channel(Arc::new(Vec::new())).0,
            timeout: Mutex::new(DEFAULT_ASK_TIMEOUT),
        }
    }
}

/// One ask in the queue, from the side of the request that made it.
pub(super) struct Waiting {
    queue: Arc<AskQueue>,
    id: u64,
    rx: Option<oneshot::Receiver<AskAnswer>>,
    timeout: Duration,
}

impl Waiting {
    /// The front end's answer, or why there is none (then the default applies).
    pub(super) async fn answer(mut self) -> Result<AskAnswer, Unanswered> {
        let rx = self.rx.take().ok_or(Unanswered::NoFrontEnd)?;
        match tokio::time::timeout(self.timeout, rx).await {
            Ok(Ok(answer)) => Ok(answer),
            // Only a failed answer drops the sender while we wait (see `AskQueue::fail`).
            Ok(Err(_)) => Err(Unanswered::Failed),
            Err(_) => Err(Unanswered::TimedOut(self.timeout)),
        }
    }
}

impl Drop for Waiting {
    fn drop(&mut self) {
        if self.rx.is_some() || self.queue.is_pending(self.id) {
            self.queue.withdraw(self.id);
        }
    }
}

impl AskQueue {
    /// Wakes on every change of the pending asks; holding one makes you a front end.
    pub fn subscribe(&self) -> watch::Receiver<Arc<Vec<Ask>>> {
        self.published.subscribe()
    }

    pub fn pending(&self) -> Arc<Vec<Ask>> {
        self.published.borrow().clone()
    }

    /// How long asks wait for an answer (tests shorten it).
    pub fn set_timeout(&self, timeout: Duration) {
        *self.timeout.lock() = timeout;
    }

    /// Queues an ask when a front end listens (else it is answered with its default).
    pub(super) fn ask(self: &Arc<Self>, server: &str, kind: AskKind) -> Waiting {
        self.ask_for(server, kind, None)
    }

    /// [`AskQueue::ask`] on behalf of an MCP task (`task`: its id), shown with it.
    pub(super) fn ask_for(
        self: &Arc<Self>,
        server: &str,
        kind: AskKind,
        task: Option<String>,
    ) -> Waiting {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let timeout = *self.timeout.lock();
        if self.published.receiver_count() == 0 {
            return Waiting {
                queue: self.clone(),
                id,
                rx: None,
                timeout,
            };
        }
        let (tx, rx) = oneshot::channel();
        let url_domain = match &kind {
            AskKind::Elicitation { request } => request
                .url()
                .and_then(|url| crate::links::check_link(url).ok())
                .map(|link| link.host()),
            AskKind::View {
                request: ViewAsk::OpenLink { url },
                ..
            } => crate::links::check_link(url).ok().map(|link| link.host()),
            AskKind::Sampling { .. }
            | AskKind::SamplingReview { .. }
            | AskKind::View {
                request: ViewAsk::ToolCall { .. } | ViewAsk::Permissions { .. },
                ..
            } => None,
        };
        let ask = Ask {
            id,
            server: server.to_string(),
            kind,
            url_domain,
            arrived: Instant::now(),
            task,
        };
        self.pending.lock().insert(id, (ask, tx));
        self.publish();
        Waiting {
            queue: self.clone(),
            id,
            rx: Some(rx),
            timeout,
        }
    }

    /// Answers a pending ask.
    pub fn answer(&self, id: u64, answer: AskAnswer) -> Result<(), AskError> {
        self.answer_checked(id, answer, check_form)
    }

    /// [`AskQueue::answer`] with the form check given; a panic in it fails the ask.
    fn answer_checked(
        &self,
        id: u64,
        answer: AskAnswer,
        check: fn(u64, &Ask, &AskAnswer) -> Result<(), AskError>,
    ) -> Result<(), AskError> {
        let taken = {
            let mut pending = self.pending.lock();
            let Some((ask, _)) = pending.get(&id) else {
                return Err(AskError::Unknown(id));
            };
            let fits = match (&ask.kind, &answer) {
                (_, AskAnswer::Refuse(_)) => Ok(()),
                (AskKind::Elicitation { .. }, AskAnswer::Elicit(_)) => Ok(()),
                (
                    AskKind::Sampling { .. } | AskKind::SamplingReview { .. },
                    AskAnswer::Sample(_) | AskAnswer::Approve(_),
                ) => Ok(()),
                (AskKind::Elicitation { .. }, AskAnswer::Sample(_) | AskAnswer::Approve(_)) => {
                    Err((
                        "an elicitation",
                        "an elicitation answer (accept, decline or cancel)",
                    ))
                }
                (AskKind::Sampling { .. }, AskAnswer::Elicit(_)) => {
                    Err(("a sampling request", "an approval or a refusal"))
                }
                (AskKind::SamplingReview { .. }, AskAnswer::Elicit(_)) => {
                    Err(("the review of a sampled message", "send or refuse"))
                }
                (AskKind::View { .. }, AskAnswer::Approve(_)) => Ok(()),
                (AskKind::View { .. }, AskAnswer::Elicit(_) | AskAnswer::Sample(_)) => {
                    Err(("a view's request", "an approval or a refusal"))
                }
            };
            if let Err((kind, expected)) = fits {
                return Err(AskError::WrongAnswer { id, kind, expected });
            }
            match contain::contained_sync(|| check(id, ask, &answer)) {
                Ok(checked) => checked?,
                Err(why) => {
                    drop(pending);
                    return Err(self.fail(id, why));
                }
            }
            pending.remove(&id)
        };
        self.publish();
        if let Some((_, tx)) = taken {
            let _ = tx.send(answer);
        }
        Ok(())
    }

    /// Accepts form ask `id` with what the user typed in its form ([`ElicitForm::of`] its
    /// schema): the content is built and checked here, fields left out get the schema's
    /// defaults; fields that do not fit come back as [`AskError::Invalid`] and the ask stays
    /// pending.
    pub fn answer_form(
        &self,
        id: u64,
        values: &BTreeMap<String, FieldValue>,
    ) -> Result<(), AskError> {
        let schema = {
            let pending = self.pending.lock();
            match pending.get(&id) {
                None => return Err(AskError::Unknown(id)),
                Some((ask, _)) => match &ask.kind {
                    AskKind::Elicitation {
                        request:
                            ElicitRequest::Form {
                                requested_schema, ..
                            },
                    } => requested_schema.clone(),
                    AskKind::Elicitation {
                        request: ElicitRequest::Url { .. },
                    }
                    | AskKind::Sampling { .. }
                    | AskKind::SamplingReview { .. }
                    | AskKind::View { .. } => {
                        return Err(AskError::WrongAnswer {
                            id,
                            kind: "not a form",
                            expected: "the answer its kind takes",
                        })
                    }
                },
            }
        };
        let built = contain::contained_sync(|| {
            let Some(form) = ElicitForm::of(&schema) else {
                return Err(AskError::WrongAnswer {
                    id,
                    kind: "a form that can only be answered as JSON",
                    expected: "a JSON object of fields",
                });
            };
            let content = form
                .content(values)
                .map_err(|fields| AskError::Invalid { id, fields })?;
            Ok(ElicitResult::accept_form(&schema, content))
        });
        match built {
            Ok(result) => self.answer(id, AskAnswer::Elicit(result?)),
            Err(why) => Err(self.fail(id, why)),
        }
    }

    /// Taking the answer to `id` panicked (contained): the ask leaves the queue, and
    /// dropping its sender ends the request at once with an error to the server.
    fn fail(&self, id: u64, why: contain::Panicked) -> AskError {
        let removed = self.pending.lock().remove(&id);
        if let Some((ask, _sender)) = removed {
            tracing::error!(server = %ask.server, "taking the answer to request {id} failed inside harness9: {why}");
            self.publish();
        }
        AskError::Failed { id, why }
    }

    fn is_pending(&self, id: u64) -> bool {
        self.pending.lock().contains_key(&id)
    }

    fn withdraw(&self, id: u64) {
        let removed = self.pending.lock().remove(&id);
        if removed.is_some() {
            self.publish();
        }
    }

    fn publish(&self) {
        let list: Vec<Ask> = {
            let pending = self.pending.lock();
            pending.values().map(|(a, _)| a.clone()).collect()
        };
        self.published.send_replace(Arc::new(list));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn form() -> AskKind {
        AskKind::Elicitation {
            request: ElicitRequest::Form {
                message: "Name?".into(),
                requested_schema: json!({"type": "object"}),
            },
        }
    }

    #[tokio::test]
    async fn without_a_front_end_the_default_comes_at_once() {
        let queue = Arc::new(AskQueue::default());
        let waiting = queue.ask("s", form());
        assert_eq!(waiting.answer().await, Err(Unanswered::NoFrontEnd));
        assert!(queue.pending().is_empty());
    }

    #[tokio::test]
    async fn a_front_end_sees_the_ask_and_answers_it() {
        let queue = Arc::new(AskQueue::default());
        let mut rx = queue.subscribe();
        let waiting = queue.ask("s", form());
        rx.changed().await.unwrap();
        let ask = rx.borrow_and_update()[0].clone();
        assert_eq!(
            serde_json::to_value(&ask).unwrap(),
            json!({"id": ask.id, "server": "s", "kind": "elicitation", "request": {
                "mode": "form", "message": "Name?", "requestedSchema": {"type": "object"}
            }})
        );
        let wrong = AskAnswer::Sample(CreateMessageResult {
            role: "assistant".into(),
            content: json!({"type": "text", "text": "x"}),
            model: "m".into(),
            stop_reason: None,
        });
        assert_eq!(
            queue.answer(ask.id, wrong).unwrap_err().to_string(),
            format!("request {} is an elicitation; answer it with an elicitation answer (accept, decline or cancel)", ask.id)
        );
        queue
            .answer(ask.id, AskAnswer::Elicit(ElicitResult::cancel()))
            .unwrap();
        assert_eq!(
            waiting.answer().await,
            Ok(AskAnswer::Elicit(ElicitResult::cancel()))
        );
        assert!(queue.pending().is_empty());
        assert_eq!(
            queue.answer(ask.id, AskAnswer::Refuse(String::new())),
            Err(AskError::Unknown(ask.id))
        );
    }

    #[tokio::test]
    async fn an_abandoned_ask_leaves_the_queue() {
        let queue = Arc::new(AskQueue::default());
        let _rx = queue.subscribe();
        let waiting = queue.ask("s", form());
        assert_eq!(queue.pending().len(), 1);
        drop(waiting);
        assert!(queue.pending().is_empty());
        queue.set_timeout(Duration::from_millis(10));
        let waiting = queue.ask("s", form());
        assert_eq!(
            waiting.answer().await,
            Err(Unanswered::TimedOut(Duration::from_millis(10)))
        );
        assert!(queue.pending().is_empty());
    }

    #[tokio::test]
    async fn a_panic_while_taking_an_answer_ends_that_ask_and_the_next_one_works() {
        let queue = Arc::new(AskQueue::default());
        let _rx = queue.subscribe();
        let waiting = queue.ask("s", form());
        let id = queue.pending()[0].id;
        let accept = AskAnswer::Elicit(ElicitResult::accept_url());
        let panics = |_: u64, _: &Ask, _: &AskAnswer| -> Result<(), AskError> {
            panic!("a form check that panics on purpose")
        };
        let err = queue
            .answer_checked(id, accept.clone(), panics)
            .unwrap_err();
        assert!(
            matches!(&err, AskError::Failed { why, .. } if why.0.contains("on purpose")),
            "{err}"
        );
        // The request ends at once (an error to the server), not after the timeout.
        assert_eq!(waiting.answer().await, Err(Unanswered::Failed));
        assert!(queue.pending().is_empty());
        let next = queue.ask("s", form());
        let id = queue.pending()[0].id;
        queue.answer(id, accept.clone()).unwrap();
        assert_eq!(next.answer().await, Ok(accept));
    }
}
