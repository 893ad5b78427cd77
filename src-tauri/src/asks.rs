//! What servers ask the user, in the desktop app: the task that forwards the pending list
//! (the core's [`AskView`]s) to the window, and the answer the window sends back (the
//! core's [`AskReply`]).
//!
//! Holding the queue's receiver (the forwarding task) is what makes the app a front end:
//! while a project is open, asks wait for the user instead of getting their default. A URL
//! elicitation's page opens from Rust, from the URL the server sent (never one the window
//! supplies), and only when the user accepted. A sampling request is approved once or
//! "always for this server" (optionally asking to review the model's answer), or refused;
//! the core then runs it on the configured provider and, for a review, sends the answer
//! back as a second ask (Send / Refuse).

use tauri::AppHandle;
use tokio::task::AbortHandle;

use harness9::host::asks::{Ask, AskReply, AskView};
use harness9::mcp::elicit_form::FieldErrors;
use harness9::Harness;

use crate::bridge::{events, BridgeError, BridgeResult, ProjectEmitter};

/// Answers ask `id`; accepting a URL elicitation opens its URL first. A form whose fields
/// do not fit its schema is not sent: the answer is a message per field (empty when the
/// answer was taken), and the ask stays pending.
pub async fn answer(
    app: &AppHandle,
    harness: &Harness,
    id: u64,
    reply: AskReply,
) -> BridgeResult<FieldErrors> {
    let opener = crate::auth::opener(app);
    Ok(harness.reply_ask(id, reply, opener.as_ref()).await?)
}

/// The servers of the project that may use the model without asking.
pub async fn sampling_grants(harness: &Harness) -> Vec<String> {
    harness.sampling_grants().await.into_keys().collect()
}

/// Withdraws a server's "always" grant.
pub async fn revoke_sampling(harness: &Harness, server: &str) -> BridgeResult<bool> {
    harness
        .revoke_sampling(server)
        .await
        .map_err(BridgeError::grants)
}

/// Sends the pending list to the window on every change (and once at the start); holding
/// the receiver makes the app a front end for as long as the task runs.
pub fn forward(app: ProjectEmitter, harness: &Harness) -> AbortHandle {
    let mut rx = harness.subscribe_asks();
    tokio::spawn(async move {
        loop {
            let list: Vec<AskView> = rx.borrow_and_update().iter().map(Ask::view).collect();
            app.emit(events::ASKS, list);
            if rx.changed().await.is_err() {
                return;
            }
        }
    })
    .abort_handle()
}
