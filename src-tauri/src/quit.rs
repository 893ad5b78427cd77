//! Quitting while MCP Apps views are live: each view hears its teardown request
//! (`ui/resource-teardown`) before the window goes, as it does when anything else takes it
//! away.
//!
//! A request to close the window (its close button) or to exit the app (File → Quit) is
//! held while the open project has live views: the window is told ([`events::QUITTING`]),
//! asks every view at once and waits for their answers (bounded, in the front end), then
//! says it is done (the `quit_ready` command); the app exits then, and its usual exit
//! (every server stopped) follows. A window that never answers does not keep the app: it
//! exits after [`QUIT_WAIT`] anyway. Without a live view nothing is held. A second request
//! while the first one waits starts no second wait: the app exits when the first ends.

use std::time::{Duration, Instant};

use parking_lot::Mutex;
use tauri::{AppHandle, CloseRequestApi, Emitter, ExitRequestApi, Manager};

use crate::bridge::events;
use crate::session::AppState;

/// The longest a close or exit waits for the window to tear its views down. The window's
/// own bound (`QUIT_TEARDOWN_MS` in ui/src/lib/views/live.ts, 2 s) fits in it with room to
/// answer.
pub const QUIT_WAIT: Duration = Duration::from_secs(3);

/// Where quitting stands.
#[derive(Debug, Default)]
pub struct Quit {
    phase: Mutex<Phase>,
}

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// Nothing asked to quit yet.
    #[default]
    Running,
    /// The window is tearing its views down; then the app exits with `code`.
    TearingDown { since: Instant, code: i32 },
    /// The views are gone (or had their time): every request goes through.
    Done,
}

/// What to do with one request to close or exit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Step {
    /// Let it go through.
    Go,
    /// Hold it; the views' teardown is under way already.
    Hold,
    /// Hold it and start tearing the views down.
    TearDown,
}

impl Quit {
    /// The state change for one request, `views_live` telling whether views are shown.
    fn request(&self, views_live: bool, code: i32) -> Step {
        let mut phase = self.phase.lock();
        match *phase {
            Phase::Done => Step::Go,
            Phase::TearingDown { .. } => Step::Hold,
            Phase::Running if !views_live => {
                *phase = Phase::Done;
                Step::Go
            }
            Phase::Running => {
                *phase = Phase::TearingDown {
                    since: Instant::now(),
                    code,
                };
                Step::TearDown
            }
        }
    }

    /// Ends the wait (the window answered, or its time ran out): the exit code and how
    /// long the wait took, once; `None` when no wait was under way.
    fn finish(&self) -> Option<(i32, Duration)> {
        let mut phase = self.phase.lock();
        match *phase {
            Phase::TearingDown { since, code } => {
                *phase = Phase::Done;
                Some((code, since.elapsed()))
            }
            Phase::Running | Phase::Done => None,
        }
    }
}

/// The window's close button: held while views are torn down.
pub fn close_requested(app: &AppHandle, api: &CloseRequestApi) {
    if hold(app, 0) {
        api.prevent_close();
    }
}

/// An exit asked for (File → Quit) with `code`: held while views are torn down.
pub fn exit_requested(app: &AppHandle, code: i32, api: &ExitRequestApi) {
    if hold(app, code) {
        api.prevent_exit();
    }
}

/// A request to close the window or exit with `code`: true when it must be held; the app
/// exits once the window's views are torn down.
fn hold(app: &AppHandle, code: i32) -> bool {
    let views_live = app.state::<AppState>().views_live();
    match app.state::<Quit>().request(views_live, code) {
        Step::Go => false,
        Step::Hold => true,
        Step::TearDown => {
            let _ = app.emit(events::QUITTING, ());
            let app = app.clone();
            tauri::async_runtime::spawn(async move {
                tokio::time::sleep(QUIT_WAIT).await;
                end(&app, true);
            });
            true
        }
    }
}

/// The window tore its views down: the held close or exit goes on.
pub fn ready(app: &AppHandle) {
    end(app, false);
}

/// Ends the wait, once: the window answered, or (`late`) its time ran out.
fn end(app: &AppHandle, late: bool) {
    let Some((code, took)) = app.state::<Quit>().finish() else {
        return;
    };
    if late {
        tracing::warn!(
            "the window did not tear its views down within {} s: quitting anyway",
            QUIT_WAIT.as_secs()
        );
    } else {
        tracing::info!("views torn down for quitting in {} ms", took.as_millis());
    }
    app.exit(code);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn without_views_a_request_goes_at_once() {
        let q = Quit::default();
        assert_eq!(q.request(false, 0), Step::Go);
        assert_eq!(q.request(true, 0), Step::Go, "once going, always going");
        assert_eq!(q.finish(), None);
    }

    #[test]
    fn with_views_the_first_request_tears_down_and_later_ones_wait_for_it() {
        let q = Quit::default();
        assert_eq!(q.request(true, 3), Step::TearDown);
        assert_eq!(q.request(true, 0), Step::Hold, "no second teardown");
        assert_eq!(q.request(false, 0), Step::Hold);
        let (code, _) = q.finish().expect("a wait under way");
        assert_eq!(code, 3, "the first request's exit code");
        assert_eq!(q.finish(), None, "finished once (the answer and the timer)");
        assert_eq!(q.request(true, 0), Step::Go, "the exit itself goes through");
    }
}
