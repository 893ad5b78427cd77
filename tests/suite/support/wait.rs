//! Waiting for something to happen, always with a deadline that only a broken run reaches.
//! Where the core sends an event (status snapshots, registry changes, client events) the
//! wait follows it; state that sends none (a file, `/proc`, a screen, a journal) is polled,
//! here and nowhere else.

use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant};

use harness9::host::asks::Ask;
use harness9::manager::{Manager, ServerState, StatusSnapshot};
use harness9::mcp::{ClientEvent, LogLine, ServerLog};
use harness9::tools::ToolRegistry;

/// The hang guard of the suite's waits: far above what a passing run takes.
pub const DEADLINE: Duration = Duration::from_secs(20);

/// How often a poll looks again at state that sends no event.
const POLL_EVERY: Duration = Duration::from_millis(20);

/// Polls `ok` until it holds; fails naming `what` after `limit`.
pub fn poll_until(what: &str, limit: Duration, mut ok: impl FnMut() -> bool) {
    poll_for(
        what,
        limit,
        || if ok() { Ok(()) } else { Err(String::new()) },
    )
}

/// Polls `f` until it gives a value; fails after `limit` with what `f` last said.
pub fn poll_for<T>(what: &str, limit: Duration, f: impl FnMut() -> Result<T, String>) -> T {
    try_poll_for(limit, f).unwrap_or_else(|now| {
        panic!(
            "timed out after {limit:?} waiting for {what}{}{now}",
            if now.is_empty() { "" } else { "; now: " }
        )
    })
}

/// Polls `f` until it gives a value, or gives up after `limit` with what `f` last said.
pub fn try_poll_for<T>(
    limit: Duration,
    mut f: impl FnMut() -> Result<T, String>,
) -> Result<T, String> {
    let deadline = Instant::now() + limit;
    loop {
        match f() {
            Ok(v) => return Ok(v),
            Err(now) if Instant::now() >= deadline => return Err(now),
            Err(_) => std::thread::sleep(POLL_EVERY),
        }
    }
}

/// [`poll_until`] for async tests: the runtime goes on between looks.
pub async fn poll_until_async(what: &str, limit: Duration, mut ok: impl FnMut() -> bool) {
    poll_for_async(what, limit, || {
        let held = ok();
        async move {
            if held {
                Ok(())
            } else {
                Err(String::new())
            }
        }
    })
    .await
}

/// [`poll_for`] with an async look (a request, a tool call).
pub async fn poll_for_async<T, F>(what: &str, limit: Duration, mut f: impl FnMut() -> F) -> T
where
    F: Future<Output = Result<T, String>>,
{
    let deadline = Instant::now() + limit;
    loop {
        match f().await {
            Ok(v) => return v,
            Err(now) => assert!(
                Instant::now() < deadline,
                "timed out after {limit:?} waiting for {what}{}{now}",
                if now.is_empty() { "" } else { "; now: " }
            ),
        }
        tokio::time::sleep(POLL_EVERY).await;
    }
}

/// Checks that `ok` keeps holding for all of `window`: the one way to say that something
/// does not happen (no restart, no second reload), since no event marks an absence. The
/// window is the test's claim, above the delay of what must not happen.
pub async fn holds_for(what: &str, window: Duration, mut ok: impl FnMut() -> bool) {
    let end = Instant::now() + window;
    loop {
        assert!(ok(), "{what} stopped holding");
        if Instant::now() >= end {
            return;
        }
        tokio::time::sleep(POLL_EVERY).await;
    }
}

pub fn state_of(manager: &Manager, name: &str) -> ServerState {
    manager
        .snapshot()
        .servers
        .iter()
        .find(|s| s.name == name)
        .map(|s| s.state.clone())
        .unwrap_or_else(|| panic!("no server {name}"))
}

pub fn connected(state: &ServerState) -> bool {
    matches!(state, ServerState::Connected { .. })
}

/// Waits until a condition on the manager's snapshot holds.
pub async fn wait_until(manager: &Manager, what: &str, f: impl Fn(&StatusSnapshot) -> bool) {
    let mut rx = manager.subscribe();
    tokio::time::timeout(DEADLINE, rx.wait_for(|s| f(s)))
        .await
        .unwrap_or_else(|_| panic!("timed out waiting for {what}: {:?}", manager.snapshot()))
        .unwrap();
}

/// Waits until the registry holds `server`'s tool `tool` (a server may add tools after the
/// handshake, then say `tools/list_changed`).
pub async fn wait_for_tool(registry: &ToolRegistry, server: &str, tool: &str) {
    let mut changes = registry.subscribe();
    let present = async {
        // The registry is read between changes, never under the watch's lock.
        while registry.get_mcp(server, tool).is_none() {
            changes.changed().await.expect("the registry is alive");
        }
    };
    tokio::time::timeout(DEADLINE, present)
        .await
        .unwrap_or_else(|_| panic!("no tool {tool} of {server} after {DEADLINE:?}"));
}

/// The next client event `want` accepts (those it does not are passed over).
pub async fn next_event(
    events: &mut tokio::sync::broadcast::Receiver<ClientEvent>,
    want: impl Fn(&ClientEvent) -> bool,
) -> ClientEvent {
    let wait = async {
        loop {
            match events.recv().await {
                Ok(e) if want(&e) => return e,
                Ok(_) | Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {}
                Err(e) => panic!("events ended: {e}"),
            }
        }
    };
    tokio::time::timeout(DEADLINE, wait)
        .await
        .unwrap_or_else(|_| panic!("no such event within {DEADLINE:?}"))
}

/// Waits until a line of `log` (one already there, or one to come) satisfies `want`.
pub async fn wait_for_log(log: &ServerLog, what: &str, want: impl Fn(&LogLine) -> bool) {
    let mut follow = log.follow(usize::MAX);
    if follow.recent.iter().any(&want) {
        return;
    }
    let wait = async {
        loop {
            match follow.next().await {
                Some(line) if want(&line) => return,
                Some(_) => {}
                None => panic!("the log ended before {what}"),
            }
        }
    };
    tokio::time::timeout(DEADLINE, wait)
        .await
        .unwrap_or_else(|_| panic!("no {what} in the log: {:?}", log.tail(100)));
}

/// The first pending ask `want` accepts, once there is one.
pub async fn next_ask(
    asks: &mut tokio::sync::watch::Receiver<Arc<Vec<Ask>>>,
    want: impl Fn(&Ask) -> bool,
) -> Ask {
    let pending = tokio::time::timeout(DEADLINE, asks.wait_for(|a| a.iter().any(&want)))
        .await
        .unwrap_or_else(|_| panic!("no such ask within {DEADLINE:?}"))
        .expect("the asks are open");
    let ask = pending.iter().find(|a| want(a)).unwrap().clone();
    ask
}

/// Calls `server`'s `tool` until its text answer contains `needle` (a server that learns
/// something through a request of its own answers with it a little later).
pub async fn tool_answer_contains(
    h: &harness9::Harness,
    server: &str,
    tool: &str,
    needle: &str,
) -> String {
    poll_for_async(
        &format!("{server}'s {tool} to answer with {needle:?}"),
        DEADLINE,
        || async {
            let text = h
                .call_tool(server, tool, serde_json::json!({}), Default::default())
                .await
                .unwrap()
                .to_text();
            if text.contains(needle) {
                Ok(text)
            } else {
                Err(text)
            }
        },
    )
    .await
}
