//! The polls of every task followed on one connection, made by one poller: a task of its
//! own that sends each `tasks/get` when it is due and wakes a follower only when the
//! answer says something ([`follow`](super::follow)). A thousand tasks polled every second
//! then cost a thousand requests, not also two thousand wake-ups of their followers and a
//! thousand timers: the poller sleeps until the next poll is due on the grid
//! ([`POLL_GRID`]), and the polls due on one tick go out together (the HTTP transport
//! writes them back to back on one connection).
//!
//! Invariants:
//! - one poller per connection, running while some task is followed; it holds the
//!   connection's insides (not a [`Client`], which closes the connection when it goes)
//!   and ends once the last follower has gone;
//! - at most [`MAX_POLLS_IN_FLIGHT`] polls under way at once, one per task;
//! - a task's next poll is due one interval (the server's, clamped) after the one before
//!   was due, never before its answer came, on the grid;
//! - the follower hears every failed poll, the first answer after a failure, and every
//!   answer that differs from what it knows (another task, another status or status
//!   message, input requests, a finished task); the others are dropped, and the follower
//!   sleeps through them. At most [`QUEUE`] answers wait for a busy follower; newer ones
//!   are dropped (a later poll says the same).

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use futures::task::{ArcWake, AtomicWaker};
use parking_lot::Mutex;
use tokio::sync::Notify;
use tokio::time::Instant;

use super::tasks::TaskError;
use super::{Client, Inner};
use crate::protocol::tasks::{Task, TaskSnapshot, TaskStatus};

/// Polls of followed tasks one connection has under way at once; the others wait their
/// turn (many tasks due together would otherwise open as many HTTP connections). As many
/// as the HTTP transport writes back to back on one connection, so that the polls due on
/// one tick of the grid go in one write.
pub const MAX_POLLS_IN_FLIGHT: usize = 16;
/// Polls are due on this grid of the runtime's clock (a due time is rounded up to it), so
/// the polls of many tasks go out together instead of one by one.
pub const POLL_GRID: Duration = Duration::from_millis(100);
/// How long one poll (`tasks/get`) may take.
pub const POLL_TIMEOUT: Duration = Duration::from_secs(30);
/// Answers of polls waiting for one follower.
pub const QUEUE: usize = 4;

/// What one poll came to.
pub type Polled = Result<TaskSnapshot, TaskError>;

/// The first instant on [`POLL_GRID`] at or after `after`.
fn on_grid(after: Instant) -> Instant {
    let base = *GRID_BASE.get_or_init(Instant::now);
    let since = after.saturating_duration_since(base);
    let grid = POLL_GRID.as_nanos();
    let steps = since.as_nanos().div_ceil(grid);
    let nanos = u64::try_from(steps.saturating_mul(grid)).unwrap_or(u64::MAX);
    base + Duration::from_nanos(nanos)
}

/// The origin of the poll grid (the first poll of the process).
static GRID_BASE: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();

/// The polls of one connection's followed tasks.
#[derive(Default)]
pub(super) struct Polls {
    state: Mutex<State>,
    /// Something changed for the poller: a task came or went, or is due at once.
    wake: Notify,
}

#[derive(Default)]
struct State {
    tasks: HashMap<String, Entry>,
    /// Due time (and a tie-breaker) → task id; an entry counts only while it is the task's
    /// `slot`.
    schedule: BTreeMap<(Instant, u64), String>,
    next_slot: u64,
    /// The poller is running.
    running: bool,
}

struct Entry {
    /// Where the task's next poll is in the schedule; `None` while one is under way.
    slot: Option<(Instant, u64)>,
    /// When the poll after the one under way is due.
    after: Instant,
    /// Poll again as soon as the one under way is answered.
    soon: bool,
    interval: Duration,
    /// What the follower knows of the task.
    status: TaskStatus,
    message: Option<String>,
    /// The next answer goes to the follower whatever it says (the last poll failed, or
    /// the follower asked for one at once).
    tell_next: bool,
    answers: Arc<Answers>,
}

/// The answers waiting for one follower (at most [`QUEUE`]; allocated only when one is
/// waiting, so a thousand followed tasks cost little).
#[derive(Default)]
pub(super) struct Answers {
    queue: Mutex<VecDeque<Polled>>,
    ready: Notify,
}

impl Answers {
    /// Hands `answer` on, unless [`QUEUE`] are waiting already.
    fn push(&self, answer: Polled) {
        {
            let mut q = self.queue.lock();
            if q.len() >= QUEUE {
                return;
            }
            q.push_back(answer);
        }
        self.ready.notify_one();
    }

    /// The next answer, when one comes.
    pub async fn next(&self) -> Polled {
        loop {
            if let Some(a) = self.queue.lock().pop_front() {
                return a;
            }
            self.ready.notified().await;
        }
    }
}

impl State {
    fn schedule(&mut self, id: &str, at: Instant) {
        let slot = (at, self.next_slot);
        self.next_slot += 1;
        let Some(entry) = self.tasks.get_mut(id) else {
            return;
        };
        if let Some(old) = entry.slot.replace(slot) {
            self.schedule.remove(&old);
        }
        self.schedule.insert(slot, id.to_string());
    }
}

#[cfg(test)]
impl Polls {
    /// No task is polled and the poller has ended.
    pub(super) fn idle(&self) -> bool {
        let st = self.state.lock();
        st.tasks.is_empty() && !st.running
    }
}

/// A followed task's place among the polls; it leaves them when dropped.
pub(super) struct Polling {
    polls: Arc<Polls>,
    id: String,
    /// The answers that say something.
    pub answers: Arc<Answers>,
}

impl Client {
    /// Puts `task` among the polls, its first poll due one interval from now on the grid,
    /// or `at_once`.
    pub(super) fn start_polling(&self, task: &Task, at_once: bool) -> Polling {
        let first = if at_once {
            Instant::now()
        } else {
            on_grid(Instant::now() + task.poll_interval())
        };
        let polls = self.inner.polls.clone();
        let answers = Arc::new(Answers::default());
        let start = {
            let mut st = polls.state.lock();
            st.tasks.insert(
                task.task_id.clone(),
                Entry {
                    slot: None,
                    after: first,
                    soon: false,
                    interval: task.poll_interval(),
                    status: task.status,
                    message: task.status_message.clone(),
                    tell_next: false,
                    answers: answers.clone(),
                },
            );
            st.schedule(&task.task_id, first);
            !std::mem::replace(&mut st.running, true)
        };
        if start {
            tokio::spawn(run(self.inner.clone(), polls.clone()));
        } else {
            polls.wake.notify_one();
        }
        Polling {
            polls,
            id: task.task_id.clone(),
            answers,
        }
    }
}

impl Polling {
    /// The follower learnt of the task otherwise (a status notice): answers are compared
    /// with this from now on.
    pub fn know(&self, task: &Task) {
        if let Some(e) = self.polls.state.lock().tasks.get_mut(&self.id) {
            e.status = task.status;
            e.message = task.status_message.clone();
        }
    }

    /// Polls once more as soon as it can, and hands the answer on whatever it says.
    pub fn soon(&self) {
        {
            let mut st = self.polls.state.lock();
            let Some(e) = st.tasks.get_mut(&self.id) else {
                return;
            };
            e.tell_next = true;
            if e.slot.is_some() {
                st.schedule(&self.id, Instant::now());
            } else {
                e.soon = true;
            }
        }
        self.polls.wake.notify_one();
    }
}

impl Drop for Polling {
    fn drop(&mut self) {
        {
            let mut st = self.polls.state.lock();
            if let Some(slot) = st.tasks.remove(&self.id).and_then(|e| e.slot) {
                st.schedule.remove(&slot);
            }
        }
        self.polls.wake.notify_one();
    }
}

/// One poll of `id`, with its answer.
async fn poll(inner: &Inner, id: String) -> (String, Polled) {
    let answer = inner.get_task(&id, Some(POLL_TIMEOUT)).await;
    (id, answer)
}

/// The poller: sends the polls that are due, up to [`MAX_POLLS_IN_FLIGHT`] at once, and
/// hands their answers on; ends when no task is left.
async fn run(inner: Arc<Inner>, polls: Arc<Polls>) {
    let mut flying = Flights::default();
    let sleep = tokio::time::sleep_until(Instant::now());
    tokio::pin!(sleep);
    let mut sleeping_until: Option<Instant> = None;
    loop {
        let now = Instant::now();
        let mut next = None;
        {
            let mut st = polls.state.lock();
            if st.tasks.is_empty() && flying.busy() == 0 {
                st.running = false;
                return;
            }
            while flying.busy() < MAX_POLLS_IN_FLIGHT {
                let Some((&(due, slot), _)) = st.schedule.first_key_value() else {
                    break;
                };
                if due > now {
                    next = Some(due);
                    break;
                }
                let Some(id) = st.schedule.remove(&(due, slot)) else {
                    break;
                };
                let Some(e) = st.tasks.get_mut(&id) else {
                    continue;
                };
                e.slot = None;
                // One interval after this one was due, never before now, on the grid.
                e.after = on_grid((due + e.interval).max(now));
                flying.start(poll(&inner, id));
            }
        }
        if next != sleeping_until {
            if let Some(at) = next {
                sleep.as_mut().reset(at);
            }
            sleeping_until = next;
        }
        tokio::select! {
            done = std::future::poll_fn(|cx| flying.poll_done(cx)), if flying.busy() > 0 => {
                for (id, answer) in done {
                    hand_on(&polls, &id, answer);
                }
            }
            () = &mut sleep, if sleeping_until.is_some() => {
                sleeping_until = None;
            }
            () = polls.wake.notified() => {}
        }
    }
}

/// The polls under way, each in a box of its own that the next poll uses again: a poll's
/// future is over a kilobyte, and a new box for each (as `FuturesUnordered` makes) cost
/// more than the rest of the poller. Each box has its own waker, so an answer polls only
/// its own future.
struct Flights<F> {
    slots: Vec<Flight<F>>,
    woken: Arc<Woken>,
    busy: usize,
}

struct Flight<F> {
    future: Pin<Box<F>>,
    busy: bool,
    waker: Waker,
}

/// Which boxes were woken (a bit each), and the poller's waker.
#[derive(Default)]
struct Woken {
    bits: AtomicU64,
    poller: AtomicWaker,
}

/// The waker of box `index`.
struct WakeFlight {
    index: u32,
    woken: Arc<Woken>,
}

impl ArcWake for WakeFlight {
    fn wake_by_ref(me: &Arc<Self>) {
        me.woken.bits.fetch_or(1 << me.index, Ordering::AcqRel);
        me.woken.poller.wake();
    }
}

impl<F> Default for Flights<F> {
    fn default() -> Self {
        Flights {
            slots: Vec::new(),
            woken: Arc::default(),
            busy: 0,
        }
    }
}

impl<F: Future> Flights<F> {
    fn busy(&self) -> usize {
        self.busy
    }

    /// Starts `future` in a free box (at most [`MAX_POLLS_IN_FLIGHT`] are made).
    fn start(&mut self, future: F) {
        let index = match self.slots.iter().position(|f| !f.busy) {
            Some(i) => {
                self.slots[i].future.set(future);
                i
            }
            None => {
                let i = self.slots.len();
                let waker = futures::task::waker(Arc::new(WakeFlight {
                    index: u32::try_from(i).unwrap_or(0),
                    woken: self.woken.clone(),
                }));
                self.slots.push(Flight {
                    future: Box::pin(future),
                    busy: false,
                    waker,
                });
                i
            }
        };
        self.slots[index].busy = true;
        self.busy += 1;
        // Polled a first time on the poller's next turn.
        self.woken.bits.fetch_or(1 << index, Ordering::AcqRel);
    }

    /// What the woken polls came to; pending while none is done.
    fn poll_done(&mut self, cx: &mut Context<'_>) -> Poll<Vec<F::Output>> {
        self.woken.poller.register(cx.waker());
        let mut done = Vec::new();
        loop {
            let bits = self.woken.bits.swap(0, Ordering::AcqRel);
            if bits == 0 {
                break;
            }
            for (i, flight) in self.slots.iter_mut().enumerate() {
                if bits & (1 << i) == 0 || !flight.busy {
                    continue;
                }
                let mut fcx = Context::from_waker(&flight.waker);
                if let Poll::Ready(out) = flight.future.as_mut().poll(&mut fcx) {
                    flight.busy = false;
                    self.busy -= 1;
                    done.push(out);
                }
            }
        }
        if done.is_empty() {
            Poll::Pending
        } else {
            Poll::Ready(done)
        }
    }
}

/// Schedules `id`'s next poll and hands `answer` to its follower if it says something.
fn hand_on(polls: &Polls, id: &str, answer: Polled) {
    let mut st = polls.state.lock();
    let Some(e) = st.tasks.get_mut(id) else {
        return;
    };
    let tell = match &answer {
        Err(_) => {
            e.tell_next = true;
            true
        }
        Ok(s) if s.task.task_id != id => true,
        Ok(s) => {
            e.interval = s.task.poll_interval();
            let says = std::mem::take(&mut e.tell_next)
                || s.task.status != e.status
                || s.task.status_message != e.message
                || s.task.status.is_terminal()
                || !s.input_requests.is_empty();
            e.status = s.task.status;
            e.message.clone_from(&s.task.status_message);
            says
        }
    };
    if tell {
        // A follower that is behind gets a later answer instead.
        e.answers.push(answer);
    }
    let now = Instant::now();
    let at = if std::mem::take(&mut e.soon) {
        now
    } else if e.after >= now {
        e.after
    } else {
        // The answer came late: the next poll is due on the next tick.
        on_grid(now)
    };
    st.schedule(id, at);
}
