//! Keeps a panic inside the one piece of work it happened in. A server's request to the
//! host (elicitation, sampling, roots) and a model's tool call are each run through
//! [`contained`]: if code of ours panics while building or answering it, that one request
//! ends with an error the caller can pass on, and the connection, the turn and the front
//! end go on. Locks are `parking_lot`'s, so an unwound holder poisons nothing.
//!
//! While such work runs on a thread, [`panic_is_contained`] is true there, so a panic
//! hook (the terminal UI's restores the screen and stops the UI) can tell a contained
//! panic from a fatal one. [`contained_panics`] counts them for one-shot commands, which
//! must not report success after one.

use std::any::Any;
use std::cell::Cell;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll};

use futures::future::BoxFuture;
use futures::FutureExt;

thread_local! {
    /// How many contained pieces of work are being run on this thread right now.
    static DEPTH: Cell<u32> = const { Cell::new(0) };
}

/// Panics contained so far in this process.
static CONTAINED: AtomicU64 = AtomicU64::new(0);

/// Whether a panic on this thread now would be contained (for panic hooks).
pub fn panic_is_contained() -> bool {
    DEPTH.with(Cell::get) > 0
}

/// How many panics [`contained`] and [`contained_sync`] turned into errors in this
/// process so far.
pub fn contained_panics() -> u64 {
    CONTAINED.load(Ordering::Relaxed)
}

/// Marks the thread as running contained work until dropped (also when unwinding).
struct Depth;

impl Depth {
    fn enter() -> Depth {
        DEPTH.with(|d| d.set(d.get() + 1));
        Depth
    }
}

impl Drop for Depth {
    fn drop(&mut self) {
        DEPTH.with(|d| d.set(d.get().saturating_sub(1)));
    }
}

/// Polls the inner future with the thread marked (see [`panic_is_contained`]).
struct Marked<F>(F);

impl<F: Future + Unpin> Future for Marked<F> {
    type Output = F::Output;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let _depth = Depth::enter();
        Pin::new(&mut self.0).poll(cx)
    }
}

/// What a panic said, for a log line.
pub fn panic_text(panic: &(dyn Any + Send)) -> String {
    if let Some(s) = panic.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = panic.downcast_ref::<String>() {
        s.clone()
    } else {
        "a panic without a message".to_string()
    }
}

/// A panic of ours that [`contained`] (or its siblings) turned into an error; it shows as
/// what the panic said. The caller says what failed around it ("answering the server's
/// request failed inside harness9 (…)").
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct Panicked(pub String);

impl Panicked {
    /// A stable kebab-case code for front ends and `--json` output (never changes once
    /// released).
    pub fn code(&self) -> &'static str {
        "internal-panic"
    }
}

fn note(panic: Box<dyn Any + Send>) -> Panicked {
    CONTAINED.fetch_add(1, Ordering::Relaxed);
    Panicked(panic_text(&*panic))
}

/// Runs `start` now and then the future it made; a panic in either comes back as `Err`
/// with what it said (the thread's panic hook has seen it too).
pub fn contained<F, T>(start: impl FnOnce() -> F) -> BoxFuture<'static, Result<T, Panicked>>
where
    F: Future<Output = T> + Send + 'static,
    T: Send + 'static,
{
    match contained_sync(start) {
        Ok(work) => contained_future(work).boxed(),
        Err(why) => futures::future::ready(Err(why)).boxed(),
    }
}

/// Awaits `work` (which may borrow); a panic while it runs comes back as `Err` with what
/// it said.
pub async fn contained_future<F: Future>(work: F) -> Result<F::Output, Panicked> {
    AssertUnwindSafe(Marked(Box::pin(work)))
        .catch_unwind()
        .await
        .map_err(note)
}

/// Runs `work`; a panic in it comes back as `Err` with what it said.
pub fn contained_sync<T>(work: impl FnOnce() -> T) -> Result<T, Panicked> {
    let _depth = Depth::enter();
    std::panic::catch_unwind(AssertUnwindSafe(work)).map_err(note)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_panic_becomes_an_error_and_the_next_call_works() {
        let before = contained_panics();
        let r: Result<u8, Panicked> =
            contained(|| -> futures::future::Ready<u8> { panic!("building failed") }).await;
        assert_eq!(r, Err(Panicked("building failed".into())));
        let r: Result<u8, Panicked> = contained(|| async {
            tokio::task::yield_now().await;
            assert!(panic_is_contained());
            panic!("answering failed: {}", 7)
        })
        .await;
        assert_eq!(r, Err(Panicked("answering failed: 7".into())));
        assert!(!panic_is_contained());
        assert_eq!(contained(|| async { 5 }).await, Ok(5));
        assert!(contained_panics() >= before + 2);
    }
}
