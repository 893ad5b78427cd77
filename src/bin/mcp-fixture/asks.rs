//! The `ask` tool: sends the client a list of requests (`elicitation/create`,
//! `sampling/createMessage`, …) one after another, each once the previous one was
//! answered, and answers the call with what the client said to each, one line apiece
//! (`1: ok {…}` or `1: error CODE`). Params are given as JSON text and sent verbatim, so
//! a test can send what a serializer would not write (a lone surrogate escape).

use serde::Deserialize;
use serde_json::value::RawValue;

use super::{describe_answer, Message, Out};

/// One request to send: its method and its params as JSON text.
#[derive(Deserialize)]
pub struct Request {
    method: String,
    params: String,
}

/// An `ask` call waiting for the client's answers.
struct Pending {
    call: Box<RawValue>,
    serial: u64,
    requests: Vec<Request>,
    answers: Vec<String>,
}

#[derive(Default)]
pub struct Asks {
    pending: Vec<Pending>,
    serial: u64,
}

impl Asks {
    /// Starts an `ask` call: sends its first request.
    pub fn start(&mut self, out: &mut Out, call: &RawValue, requests: Vec<Request>) {
        self.serial += 1;
        let p = Pending {
            call: call.to_owned(),
            serial: self.serial,
            requests,
            answers: Vec::new(),
        };
        if p.requests.is_empty() {
            return out.text(call, "");
        }
        send(out, &p);
        self.pending.push(p);
    }

    /// Takes the client's answer to request `key`; `false` when it is none of ours.
    pub fn answered(&mut self, out: &mut Out, key: &str, answer: &Message) -> bool {
        let Some(at) = self
            .pending
            .iter()
            .position(|p| key == request_id(p.serial, p.answers.len()))
        else {
            return false;
        };
        let p = &mut self.pending[at];
        p.answers.push(describe_answer(answer, true));
        if p.answers.len() < p.requests.len() {
            send(out, p);
            return true;
        }
        let p = self.pending.remove(at);
        let lines: Vec<String> = p
            .answers
            .iter()
            .enumerate()
            .map(|(i, a)| format!("{}: {a}", i + 1))
            .collect();
        out.text(&p.call, &lines.join("\n"));
        true
    }
}

fn request_id(serial: u64, index: usize) -> String {
    format!("ask-{serial}-{}", index + 1)
}

/// Sends the next unanswered request of `p`.
fn send(out: &mut Out, p: &Pending) {
    let i = p.answers.len();
    let r = &p.requests[i];
    let id = serde_json::Value::from(request_id(p.serial, i)).to_string();
    let method = serde_json::Value::from(r.method.as_str()).to_string();
    out.send([
        r#"{"jsonrpc":"2.0","id":"#,
        id.as_str(),
        r#","method":"#,
        method.as_str(),
        r#","params":"#,
        r.params.as_str(),
        "}",
    ]);
}
