//! The terminal's raw mode and alternate screen, and every way out of them. [`enter`] (or
//! [`resume`]) and [`leave`] pair up; `leave` may run any number of times, from any thread.
//! Besides a normal quit, the UI ends on SIGTERM, SIGHUP or SIGINT and on a panic in any
//! thread (the UI loop or a spawned task): the panic hook restores the terminal before the
//! panic message is printed, and [`Stops::next`] tells the runner, which then shuts the
//! servers down as on a quit.
//!
//! Invariant: nothing is drawn once the terminal is restored. [`draw`] holds the stdout
//! lock while it checks that the terminal is still set up and draws; `leave` takes the same
//! lock, so a panic on another thread restores the terminal before or after a frame,
//! never in the middle of one (the lock is reentrant, so a panic inside a frame restores it
//! too).

use std::io::Stdout;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use harness9::manager::StatusSnapshot;
use ratatui::crossterm::cursor::Show;
use ratatui::crossterm::execute;
use ratatui::crossterm::terminal::{
    disable_raw_mode, enable_raw_mode, EnterAlternateScreen, LeaveAlternateScreen,
};
use ratatui::prelude::CrosstermBackend;
use ratatui::{Frame, Terminal};
use tokio::signal::unix::{signal, Signal, SignalKind};
use tokio::sync::{watch, Notify};

pub type Term = Terminal<CrosstermBackend<Stdout>>;

/// The exit status after a panic (the one Rust uses for a panic that ends a program).
pub const PANIC_EXIT: i32 = 101;

/// Debug builds only, for the tests of the panic path: with this variable set to
/// [`TEST_PANIC_VALUE`], a spawned task panics once the servers have settled after
/// start-up. Release builds never read it, and any other value does nothing.
pub const TEST_PANIC_ENV: &str = "HARNESS9_TEST_PANIC";
/// The one value of [`TEST_PANIC_ENV`] that fires it.
pub const TEST_PANIC_VALUE: &str = "spawned-task";

/// Raw mode and the alternate screen are on.
static ENTERED: AtomicBool = AtomicBool::new(false);
/// A panic happened somewhere since the hook was installed.
static PANICKED: AtomicBool = AtomicBool::new(false);
/// Wakes [`Stops::next`] after a panic (a permit waits if nobody listens yet).
static PANIC_SEEN: Notify = Notify::const_new();

/// Sets the terminal up for the UI.
pub fn enter() -> std::io::Result<Term> {
    resume()?;
    Terminal::new(CrosstermBackend::new(std::io::stdout()))
}

/// Raw mode and the alternate screen again, after [`leave`] (the editor of `.mcp.json`).
pub fn resume() -> std::io::Result<()> {
    let mut out = std::io::stdout().lock();
    enable_raw_mode()?;
    ENTERED.store(true, Ordering::SeqCst);
    execute!(out, EnterAlternateScreen)
}

/// Restores the terminal: raw mode off, the alternate screen left, the cursor shown. Does
/// nothing when the terminal is not set up; errors are ignored (the terminal may be gone).
pub fn leave() {
    let mut out = std::io::stdout().lock();
    if !ENTERED.swap(false, Ordering::SeqCst) {
        return;
    }
    let _ = disable_raw_mode();
    let _ = execute!(out, LeaveAlternateScreen, Show);
}

/// Draws one frame, unless the terminal was restored meanwhile (a panic elsewhere); then
/// `Ok(false)`.
pub fn draw(term: &mut Term, render: impl FnOnce(&mut Frame)) -> std::io::Result<bool> {
    let _out = std::io::stdout().lock();
    if !ENTERED.load(Ordering::SeqCst) {
        return Ok(false);
    }
    term.draw(render).map(|_| true)
}

/// Whether a panic happened since [`install_panic_hook`].
pub fn panicked() -> bool {
    PANICKED.load(Ordering::SeqCst)
}

/// Restores the terminal before the panic message is printed (so it lands on a usable
/// screen), then tells [`Stops::next`].
pub fn install_panic_hook() {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        // Contained to one request or tool call, which reports it: the UI goes on.
        if harness9::mcp::contain::panic_is_contained() {
            tracing::error!("contained: {info}");
            return;
        }
        PANICKED.store(true, Ordering::SeqCst);
        leave();
        previous(info);
        PANIC_SEEN.notify_one();
    }));
}

/// Why the UI must end other than by the user quitting.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    /// A signal asked the program to end (its number).
    Signal(i32),
    /// A panic in some thread; the terminal is already restored.
    Panic,
}

impl Stop {
    /// The exit status: 128 + the signal's number, as shells report a signal, or
    /// [`PANIC_EXIT`].
    pub fn exit_code(self) -> i32 {
        match self {
            Stop::Signal(n) => 128 + n,
            Stop::Panic => PANIC_EXIT,
        }
    }
}

/// The signals that end the UI, caught from [`Stops::listen`] on (they no longer kill the
/// process outright), and the panics.
pub struct Stops {
    term: Signal,
    hangup: Signal,
    interrupt: Signal,
}

impl Stops {
    /// Catches SIGTERM, SIGHUP and SIGINT from now on. Needs the tokio runtime.
    pub fn listen() -> std::io::Result<Stops> {
        Ok(Stops {
            term: signal(SignalKind::terminate())?,
            hangup: signal(SignalKind::hangup())?,
            interrupt: signal(SignalKind::interrupt())?,
        })
    }

    /// Waits for the next signal or panic.
    pub async fn next(&mut self) -> Stop {
        tokio::select! {
            _ = self.term.recv() => Stop::Signal(libc::SIGTERM),
            _ = self.hangup.recv() => Stop::Signal(libc::SIGHUP),
            _ = self.interrupt.recv() => Stop::Signal(libc::SIGINT),
            _ = PANIC_SEEN.notified() => Stop::Panic,
        }
    }
}

/// See [`TEST_PANIC_ENV`]: in a debug build with the variable set to [`TEST_PANIC_VALUE`],
/// spawns the task that panics once every server has settled (and the UI had time to
/// draw). Otherwise does nothing.
pub fn arm_test_panic(mut status: watch::Receiver<Arc<StatusSnapshot>>) {
    if !cfg!(debug_assertions) || std::env::var(TEST_PANIC_ENV).as_deref() != Ok(TEST_PANIC_VALUE) {
        return;
    }
    tokio::spawn(async move {
        let _ = status
            .wait_for(|s| s.servers.iter().all(|s| s.state.is_settled()))
            .await;
        tokio::time::sleep(Duration::from_millis(500)).await;
        panic!("{TEST_PANIC_ENV}={TEST_PANIC_VALUE} asked for this panic");
    });
}
