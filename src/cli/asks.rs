//! Answers what servers ask when there is no one to ask (`harness9 exec`, `mcp call`):
//! an elicitation is declined unless `--elicitation FILE` gave answers, a sampling request
//! is refused, and each is reported on stderr with what to do instead.

use std::path::Path;

use harness9::host::asks::{Ask, AskAnswer, AskError, AskKind};
use harness9::mcp::contain::contained_sync;
use harness9::mcp::elicit_form::ElicitForm;
use harness9::mcp::requests::{missing_required, ElicitAction, ElicitRequest, ElicitResult};
use harness9::Harness;
use serde_json::{Map, Value};
use tokio::task::JoinHandle;

/// Why an `--elicitation` file cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum AnswersError {
    #[error("cannot read the elicitation answers {path}: {source}")]
    Unreadable {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error(
        "{path} must hold one JSON object of answers, e.g. {{\"name\": \"Ada\", \"agree\": true}}"
    )]
    NotAnObject { path: String },
}

impl AnswersError {
    /// A stable kebab-case code for `--json` output (never changes once released).
    pub fn code(&self) -> &'static str {
        match self {
            AnswersError::Unreadable { .. } => "answers-unreadable",
            AnswersError::NotAnObject { .. } => "invalid-answers",
        }
    }
}

/// Reads an `--elicitation` file: one JSON object of field answers.
pub fn read_answers(path: &Path) -> Result<Map<String, Value>, AnswersError> {
    let text = std::fs::read_to_string(path).map_err(|source| AnswersError::Unreadable {
        path: path.display().to_string(),
        source,
    })?;
    match serde_json::from_str::<Value>(&text) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(_) | Err(_) => Err(AnswersError::NotAnObject {
            path: path.display().to_string(),
        }),
    }
}

/// Answers every ask of the harness until the returned task is aborted.
pub fn answer_unattended(harness: &Harness, answers: Option<Map<String, Value>>) -> JoinHandle<()> {
    let mut asks = harness.subscribe_asks();
    let answerer = harness.asks().clone();
    tokio::spawn(async move {
        loop {
            let pending: Vec<Ask> = asks.borrow_and_update().as_ref().clone();
            for ask in pending {
                // A panic in deciding or in taking the answer is contained: the request
                // is ended, and `mcp call` fails (see `contained_panics`).
                let taken =
                    contained_sync(|| answerer.answer(ask.id, decide(&ask, answers.as_ref())));
                let refused = match taken {
                    Ok(Ok(())) | Ok(Err(AskError::Unknown(_))) => continue,
                    Ok(Err(e @ AskError::Failed { .. })) => {
                        errln!("harness9: {e}");
                        continue;
                    }
                    Ok(Err(e @ (AskError::Invalid { .. } | AskError::WrongAnswer { .. }))) => {
                        format!("{e}")
                    }
                    Err(why) => format!("answering it failed inside harness9 ({why})"),
                };
                // Never left pending: the server would wait until the ask times out.
                errln!("harness9: server \"{}\" asked for something that was not answered: {refused}; declined", ask.server);
                let _ = answerer.answer(ask.id, AskAnswer::Refuse(refused));
            }
            if asks.changed().await.is_err() {
                return;
            }
        }
    })
}

/// What to answer, with a line on stderr saying what happened.
fn decide(ask: &Ask, answers: Option<&Map<String, Value>>) -> AskAnswer {
    let server = &ask.server;
    match &ask.kind {
        AskKind::Elicitation {
            request:
                ElicitRequest::Form {
                    message,
                    requested_schema,
                },
        } => {
            let Some(answers) = answers else {
                errln!("harness9: server \"{server}\" asked for input ({message:?}); declined because no one can answer here. Pass --elicitation FILE (a JSON object of answers) to accept.");
                return AskAnswer::Elicit(ElicitResult::decline());
            };
            let fields = requested_schema
                .get("properties")
                .and_then(Value::as_object);
            let given: Map<String, Value> = answers
                .iter()
                .filter(|(k, _)| fields.is_none_or(|f| f.contains_key(*k)))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            let result = ElicitResult::accept_form(requested_schema, given);
            let content = result.content.clone().unwrap_or_default();
            let missing = missing_required(requested_schema, &content);
            if !missing.is_empty() {
                errln!("harness9: server \"{server}\" asked for input ({message:?}); declined because the elicitation answers lack {}", missing.join(", "));
                return AskAnswer::Elicit(ElicitResult::decline());
            }
            // Defaults come from the server: they are checked with the answers, and a
            // form that does not fit is declined with the reasons (the core would refuse
            // it, and the server would wait for an answer that never comes).
            if let Some(Err(fields)) = ElicitForm::of(requested_schema).map(|f| f.check(&content)) {
                let why: Vec<String> = fields.iter().map(|(k, v)| format!("{k:?}: {v}")).collect();
                errln!("harness9: server \"{server}\" asked for input ({message:?}); declined because the answers do not fit the form ({})", why.join("; "));
                return AskAnswer::Elicit(ElicitResult::decline());
            }
            errln!("harness9: server \"{server}\" asked for input ({message:?}); answered from the elicitation file");
            AskAnswer::Elicit(ElicitResult {
                action: ElicitAction::Accept,
                content: Some(content),
            })
        }
        AskKind::Elicitation {
            request: ElicitRequest::Url { message, url, .. },
        } => {
            match harness9::links::check_link(url) {
                Ok(link) => errln!("harness9: server \"{server}\" asked you to open {} ({message:?}); declined because no one can answer here. Open it yourself if you trust it, then run again.", harness9::term_text::Line(&link.host_first())),
                Err(refused) => errln!("harness9: server \"{server}\" asked you to open \"{}\" ({message:?}); refused: {refused}", harness9::term_text::Line(url)),
            }
            AskAnswer::Elicit(ElicitResult::decline())
        }
        // Only the desktop app shows views; none runs here.
        AskKind::View { .. } => {
            AskAnswer::Refuse("harness9 cannot show views in this command".into())
        }
        AskKind::Sampling { .. } | AskKind::SamplingReview { .. } => {
            errln!("harness9: server \"{server}\" asked to use your model (sampling); refused because no one can approve it here. Run it from the terminal UI (`harness9`) or the desktop app to approve it.");
            AskAnswer::Refuse(
                "harness9 cannot approve sampling requests in this command; the request was refused"
                    .into(),
            )
        }
    }
}

/// After a `-32042` error: the URLs the server wants the user to open first.
pub fn explain_required_elicitations(error: &harness9::harness::CallError) {
    use harness9::harness::CallError;
    use harness9::mcp::ClientError;
    use harness9::tools::ToolError;
    let CallError::Tool(ToolError::Client(ClientError::Rpc { error, .. })) = error else {
        return;
    };
    for e in harness9::mcp::requests::required_elicitations(error) {
        if let ElicitRequest::Url { message, url, .. } = e {
            match harness9::links::check_link(&url) {
                Ok(link) => errln!("harness9: the server needs you to open {} first ({message:?}); open it if you trust it, then run again", harness9::term_text::Line(&link.host_first())),
                Err(refused) => errln!("harness9: the server needs you to open \"{}\" first ({message:?}); refused: {refused}", harness9::term_text::Line(&url)),
            }
        }
    }
}
