//! The writing half: messages leave in order, batched by one writer task.
//!
//! When nothing is queued and nothing was written directly since the burst began, `send`
//! writes the message to the (non-blocking) pipe itself, which saves a task switch per
//! request on an idle connection; everything else (a burst of requests, a full pipe, the
//! rest of a partial write) is appended to one queue that the writer task writes in large
//! batches. A burst ends when the writer task runs or a message arrives from the server
//! (the reader calls [`Outbox::burst_over`]): a direct write wakes no task, so a caller
//! that waits for each answer before the next request costs one system call per request
//! and nothing else. The rest of a large message that the pipe did not take at once goes
//! to the writer task as it is, without a copy. The pipe is only written with the queue's lock held or by the writer task
//! while it owns the queue's contents, so writes never interleave; the lock also guards the
//! descriptor, which is marked closed before it is dropped.
//!
//! The queue is bounded by the server's message limit: a server that stops reading its
//! stdin makes `send` fail at once with [`TransportError::Backlog`] rather than wait,
//! because `send` never waits by contract (callers hold no async context there) and a
//! server that does not read will not answer either; the call fails with a message that
//! says so instead of timing out later with harness9's memory grown.

use parking_lot::{Mutex, MutexGuard};
use std::os::fd::RawFd;
use std::process::ExitStatus;
use std::sync::Arc;

use futures::future::BoxFuture;
use futures::FutureExt;
use tokio::io::AsyncWriteExt;
use tokio::process::ChildStdin;
use tokio::sync::{watch, Notify};

use super::process::{end_group, SHUTDOWN_GRACE};
use crate::transport::{Outbound, TransportError, TransportSender};

/// A queue buffer that grew beyond this is given back to the allocator once written.
const WRITE_BATCH: usize = 1024 * 1024;

/// Pipe capacity asked for once a message of [`HANDOFF_MIN`] bytes or more goes through a
/// pipe (Linux; the default is 64 KiB): large messages then cross in a few system calls
/// and context switches instead of dozens. Pipes stay small until then, as the kernel
/// counts pipe memory against a per-user budget.
const PIPE_CAPACITY: libc::c_int = 1024 * 1024;

/// Messages of this size or more enlarge the pipe.
pub(super) const HANDOFF_MIN: usize = 64 * 1024;

/// Asks for a larger pipe; the kernel may refuse (a per-user limit), which is fine.
pub(super) fn grow_pipe(fd: RawFd) {
    #[cfg(target_os = "linux")]
    // SAFETY: F_SETPIPE_SZ on a descriptor we own has no memory-safety preconditions.
    unsafe {
        libc::fcntl(fd, libc::F_SETPIPE_SZ, PIPE_CAPACITY);
    }
    #[cfg(not(target_os = "linux"))]
    let _ = fd;
}

/// The outgoing side shared by every sender and the writer task.
pub(super) struct Outbox {
    pub(super) state: Mutex<OutState>,
    /// Wakes the writer task: bytes were queued, a direct write happened, or closing.
    pub(super) wake: Notify,
}

pub(super) struct OutState {
    /// The child's stdin while it is open. Only used with this lock held.
    pub(super) fd: Option<RawFd>,
    /// Newline-terminated messages waiting for the writer task, in order.
    pub(super) queue: Vec<u8>,
    /// The writer task holds bytes it has not finished writing.
    pub(super) writing: bool,
    /// A message was written directly since the writer task last ran: later messages of
    /// the same burst are queued, so that they leave in one batch.
    pub(super) wrote_directly: bool,
    /// `close` was called: no new messages; the writer flushes the queue and closes stdin.
    pub(super) closing: bool,
    /// The pipe was enlarged for a large message.
    pub(super) grown: bool,
    /// Bytes at the start of `queue` already written (the head of a large message whose
    /// buffer became the queue).
    pub(super) skip: usize,
}

impl Outbox {
    fn lock(&self) -> MutexGuard<'_, OutState> {
        self.state.lock()
    }

    /// The server answered: whatever is sent next starts a new burst, and may be written
    /// directly.
    pub(super) fn burst_over(&self) {
        self.lock().wrote_directly = false;
    }
}

/// What one non-blocking write attempt did.
enum Direct {
    All,
    Some(usize),
    WouldBlock,
    Failed,
}

/// Writes `message` and a newline with one system call, without blocking.
fn write_direct(fd: RawFd, message: &[u8]) -> Direct {
    let newline = [b'\n'];
    let iov = [
        libc::iovec {
            iov_base: message.as_ptr() as *mut libc::c_void,
            iov_len: message.len(),
        },
        libc::iovec {
            iov_base: newline.as_ptr() as *mut libc::c_void,
            iov_len: 1,
        },
    ];
    loop {
        // SAFETY: both iovecs point into live buffers of the given lengths, which writev
        // only reads; `fd` is open (the caller holds the lock that guards its closing).
        let n = unsafe { libc::writev(fd, iov.as_ptr(), 2) };
        if n >= 0 {
            let n = n as usize;
            return if n == message.len() + 1 {
                Direct::All
            } else {
                Direct::Some(n)
            };
        }
        match std::io::Error::last_os_error().kind() {
            std::io::ErrorKind::Interrupted => continue,
            std::io::ErrorKind::WouldBlock => return Direct::WouldBlock,
            _ => return Direct::Failed,
        }
    }
}

/// The child's stdin, owned by the writer task. Dropping it (also when the runtime drops
/// the task) marks the descriptor closed under the lock before closing it.
pub(super) struct StdinGuard {
    pub(super) stdin: Option<ChildStdin>,
    pub(super) out: Arc<Outbox>,
}

impl Drop for StdinGuard {
    fn drop(&mut self) {
        let mut state = self.out.lock();
        state.fd = None;
        state.closing = true;
        state.queue = Vec::new();
        state.skip = 0;
        drop(self.stdin.take());
    }
}

pub(super) async fn write_loop(mut guard: StdinGuard) {
    let out = guard.out.clone();
    let mut batch: Vec<u8> = Vec::new();
    loop {
        let (closing, skip) = {
            let mut state = out.lock();
            state.wrote_directly = false;
            std::mem::swap(&mut batch, &mut state.queue);
            state.writing = !batch.is_empty();
            (state.closing, std::mem::take(&mut state.skip))
        };
        if batch.is_empty() {
            if closing {
                break;
            }
            out.wake.notified().await;
            continue;
        }
        let Some(stdin) = guard.stdin.as_mut() else {
            break;
        };
        if stdin
            .write_all(batch.get(skip..).unwrap_or_default())
            .await
            .is_err()
        {
            break; // the child is gone; the reader reports why
        }
        if batch.capacity() > 4 * WRITE_BATCH {
            batch = Vec::new();
        } else {
            batch.clear();
        }
        // The next turn takes whatever was queued meanwhile, and clears `writing`.
    }
    if let Some(stdin) = guard.stdin.as_mut() {
        let _ = stdin.shutdown().await;
    }
    drop(guard); // closes the child's input
}

pub(super) struct StdioSender {
    pub(super) out: Arc<Outbox>,
    /// Bytes the queue may hold before a send fails (one message always fits).
    pub(super) max_queued: usize,
    pub(super) exit: watch::Receiver<Option<ExitStatus>>,
    pub(super) group: Arc<super::process::Group>,
}

impl TransportSender for StdioSender {
    fn send(&self, message: Outbound) -> Result<(), TransportError> {
        let message = message.bytes;
        let mut state = self.out.lock();
        let Some(fd) = state.fd.filter(|_| !state.closing) else {
            return Err(TransportError::Closed);
        };
        if message.len() >= HANDOFF_MIN && !state.grown {
            state.grown = true;
            grow_pipe(fd);
        }
        let mut written = 0;
        if !state.writing && state.queue.is_empty() && !state.wrote_directly {
            match write_direct(fd, &message) {
                Direct::All => {
                    // No task to wake: the burst ends with the answer (or the writer task).
                    state.wrote_directly = true;
                    return Ok(());
                }
                Direct::Some(n) => written = n,
                Direct::WouldBlock => {}
                // The child is gone. As when a batch fails, the message is lost, later
                // sends fail, and the reader reports why; the writer task stops.
                Direct::Failed => {
                    state.closing = true;
                    drop(state);
                    self.out.wake.notify_one();
                    return Ok(());
                }
            }
        }
        if !state.queue.is_empty() && state.queue.len() + message.len() > self.max_queued {
            return Err(TransportError::Backlog {
                queued: state.queue.len(),
            });
        }
        if message.len() - written >= HANDOFF_MIN && state.queue.is_empty() {
            // The rest of a large message: its own buffer becomes the queue (the client's
            // encoder made it from a vector nobody else holds, so no copy).
            let mut message = Vec::from(message);
            message.push(b'\n');
            state.queue = message;
            state.skip = written;
        } else {
            if written < message.len() {
                state.queue.extend_from_slice(&message[written..]);
            }
            state.queue.push(b'\n');
        }
        drop(state);
        self.out.wake.notify_one();
        Ok(())
    }

    fn close(&self) -> BoxFuture<'static, ()> {
        self.out.lock().closing = true;
        self.out.wake.notify_one();
        let mut exit = self.exit.clone();
        let group = self.group.clone();
        async move {
            let _ = tokio::time::timeout(SHUTDOWN_GRACE, exit.wait_for(|s| s.is_some())).await;
            end_group(group, exit).await;
        }
        .boxed()
    }
}

impl Drop for StdioSender {
    /// The last sender is gone: the writer flushes what is queued and closes stdin, so the
    /// child sees end of input.
    fn drop(&mut self) {
        self.out.lock().closing = true;
        self.out.wake.notify_one();
    }
}
