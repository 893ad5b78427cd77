//! stdio transport: a child process speaking newline-delimited JSON-RPC.
//!
//! Invariants: the child runs in its own process group and dies with harness9 (Linux
//! parent-death signal); its stderr is always drained into the server's log; stdout lines
//! that are not JSON are logged and skipped; lines have no length ceiling. Shutdown closes
//! stdin, waits, then SIGTERMs and finally SIGKILLs the whole group.
//!
//! Writing: messages go out in the order they were sent. When nothing is queued and
//! nothing was written directly since the writer task last ran, `send` writes the message
//! to the (non-blocking) pipe itself, which saves a task switch per request on an idle
//! connection; everything else (a burst of requests, a full pipe, the rest of a partial
//! write) is appended to one queue that the writer task writes in large batches. The pipe
//! is only written with the queue's lock held or by the writer task while it owns the
//! queue's contents, so writes never interleave; the lock also guards the descriptor,
//! which is marked closed before it is dropped.

use std::ffi::OsString;
use std::os::fd::{AsRawFd, RawFd};
use std::path::PathBuf;
use std::process::{ExitStatus, Stdio};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use futures::future::BoxFuture;
use futures::FutureExt;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::process::{ChildStdin, ChildStdout, Command};
use tokio::sync::{watch, Notify};

use super::{Connection, Inbound, TransportError, TransportReceiver, TransportSender};
use crate::mcp::log::{LogSource, ServerLog};

/// How long a server may take to exit after its stdin is closed, and again after SIGTERM.
pub const SHUTDOWN_GRACE: Duration = Duration::from_secs(2);

/// Buffer size for reading the child's stdout.
const READ_BUFFER: usize = 256 * 1024;

/// A queue buffer that grew beyond this is given back to the allocator once written.
const WRITE_BATCH: usize = 1024 * 1024;

/// Pipe capacity asked for once a message of [`HANDOFF_MIN`] bytes or more goes through a
/// pipe (Linux; the default is 64 KiB): large messages then cross in a few system calls
/// and context switches instead of dozens. Pipes stay small until then, as the kernel
/// counts pipe memory against a per-user budget.
const PIPE_CAPACITY: libc::c_int = 1024 * 1024;

/// Messages shorter than this are copied out of the line buffer (which is then reused);
/// longer ones take the buffer with them.
const HANDOFF_MIN: usize = 64 * 1024;

/// What to run.
#[derive(Debug, Clone)]
pub struct StdioSpec {
    pub command: String,
    pub args: Vec<String>,
    pub env: Vec<(String, String)>,
    pub cwd: Option<PathBuf>,
    /// PATH to give the child when `env` does not set one (e.g. the login shell's).
    pub path: Option<OsString>,
    /// The longest line read from the child (see [`crate::config::DEFAULT_MAX_MESSAGE_BYTES`]).
    pub max_message_bytes: usize,
}

#[derive(Debug, Clone, thiserror::Error)]
pub enum SpawnError {
    #[error("command \"{command}\" not found (PATH searched: {path}); install it, or give its full path in .mcp.json")]
    NotFound { command: String, path: String },
    #[error(
        "command \"{command}\" cannot be run: permission denied; make it executable (chmod +x)"
    )]
    PermissionDenied { command: String },
    #[error("working directory \"{0}\" does not exist; fix \"cwd\" in .mcp.json")]
    NoCwd(String),
    #[error("cannot start \"{command}\": {message}")]
    Other { command: String, message: String },
}

/// Starts the child and returns its connection. `log` receives its stderr.
pub fn spawn(spec: &StdioSpec, log: Arc<ServerLog>) -> Result<Connection, SpawnError> {
    if let Some(cwd) = &spec.cwd {
        if !cwd.is_dir() {
            return Err(SpawnError::NoCwd(cwd.display().to_string()));
        }
    }
    let mut cmd = Command::new(&spec.command);
    cmd.args(&spec.args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    let own_path = spec.env.iter().any(|(k, _)| k == "PATH");
    if let (false, Some(p)) = (own_path, &spec.path) {
        cmd.env("PATH", p);
    }
    for (k, v) in &spec.env {
        cmd.env(k, v);
    }
    if let Some(cwd) = &spec.cwd {
        cmd.current_dir(cwd);
    }
    #[cfg(target_os = "linux")]
    unsafe {
        // SAFETY: only async-signal-safe calls between fork and exec.
        cmd.pre_exec(|| {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let mut child = cmd.spawn().map_err(|e| spawn_error(spec, own_path, e))?;
    let pid = child.id().unwrap_or(0) as i32;
    let stdin = child.stdin.take().expect("piped stdin");
    let stdout = child.stdout.take().expect("piped stdout");
    let stderr = child.stderr.take().expect("piped stderr");

    // Reaper: publishes the exit status once.
    let (exit_tx, exit_rx) = watch::channel::<Option<ExitStatus>>(None);
    tokio::spawn(async move {
        let status = child.wait().await.ok();
        let _ = exit_tx.send(status.or(Some(ExitStatus::default())));
    });

    // Stderr drain: never lets the pipe fill up.
    let (stderr_done_tx, stderr_done_rx) = watch::channel(false);
    let stderr_log = log.clone();
    tokio::spawn(async move {
        drain_stderr(stderr, &stderr_log).await;
        let _ = stderr_done_tx.send(true);
    });

    let out = Arc::new(Outbox {
        state: Mutex::new(OutState {
            fd: Some(stdin.as_raw_fd()),
            queue: Vec::new(),
            writing: false,
            wrote_directly: false,
            closing: false,
            grown: false,
        }),
        wake: Notify::new(),
    });
    tokio::spawn(write_loop(StdinGuard {
        stdin: Some(stdin),
        out: out.clone(),
    }));

    let sender = Arc::new(StdioSender {
        out,
        exit: exit_rx.clone(),
        pgid: pid,
    });
    let receiver = Box::new(StdioReceiver {
        stdout: BufReader::with_capacity(READ_BUFFER, stdout),
        line: Vec::with_capacity(4096),
        log,
        exit: exit_rx,
        stderr_done: stderr_done_rx,
        closed: false,
        grown: false,
    });
    Ok(Connection { sender, receiver })
}

fn spawn_error(spec: &StdioSpec, own_path: bool, e: std::io::Error) -> SpawnError {
    let command = spec.command.clone();
    match e.kind() {
        std::io::ErrorKind::NotFound => {
            let path = if own_path {
                spec.env
                    .iter()
                    .find(|(k, _)| k == "PATH")
                    .map(|(_, v)| v.clone())
                    .unwrap_or_default()
            } else {
                spec.path
                    .clone()
                    .or_else(|| std::env::var_os("PATH"))
                    .map(|p| p.to_string_lossy().into_owned())
                    .unwrap_or_default()
            };
            SpawnError::NotFound { command, path }
        }
        std::io::ErrorKind::PermissionDenied => SpawnError::PermissionDenied { command },
        _ => SpawnError::Other {
            command,
            message: e.to_string(),
        },
    }
}

async fn drain_stderr(stderr: tokio::process::ChildStderr, log: &ServerLog) {
    let mut reader = BufReader::with_capacity(64 * 1024, stderr);
    let mut buf = Vec::with_capacity(1024);
    loop {
        buf.clear();
        // Read at most a little over one kept line, so a flood without newlines stays bounded.
        let mut limited = (&mut reader).take(crate::mcp::log::LOG_MAX_LINE as u64 + 1);
        match limited.read_until(b'\n', &mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(_) => {
                let text = String::from_utf8_lossy(&buf);
                let text = text.trim_end_matches(['\n', '\r']);
                tracing::debug!(target: "harness9::server_stderr", "{text}");
                log.push(LogSource::Stderr, "", text);
            }
        }
    }
}

/// Asks for a larger pipe; the kernel may refuse (a per-user limit), which is fine.
fn grow_pipe(fd: RawFd) {
    #[cfg(target_os = "linux")]
    // SAFETY: F_SETPIPE_SZ on a descriptor we own has no memory-safety preconditions.
    unsafe {
        libc::fcntl(fd, libc::F_SETPIPE_SZ, PIPE_CAPACITY);
    }
    #[cfg(not(target_os = "linux"))]
    let _ = fd;
}

/// The outgoing side shared by every sender and the writer task.
struct Outbox {
    state: Mutex<OutState>,
    /// Wakes the writer task: bytes were queued, a direct write happened, or closing.
    wake: Notify,
}

struct OutState {
    /// The child's stdin while it is open. Only used with this lock held.
    fd: Option<RawFd>,
    /// Newline-terminated messages waiting for the writer task, in order.
    queue: Vec<u8>,
    /// The writer task holds bytes it has not finished writing.
    writing: bool,
    /// A message was written directly since the writer task last ran: later messages of
    /// the same burst are queued, so that they leave in one batch.
    wrote_directly: bool,
    /// `close` was called: no new messages; the writer flushes the queue and closes stdin.
    closing: bool,
    /// The pipe was enlarged for a large message.
    grown: bool,
}

impl Outbox {
    fn lock(&self) -> MutexGuard<'_, OutState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
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
struct StdinGuard {
    stdin: Option<ChildStdin>,
    out: Arc<Outbox>,
}

impl Drop for StdinGuard {
    fn drop(&mut self) {
        let mut state = self.out.lock();
        state.fd = None;
        state.closing = true;
        state.queue = Vec::new();
        drop(self.stdin.take());
    }
}

async fn write_loop(mut guard: StdinGuard) {
    let out = guard.out.clone();
    let mut batch: Vec<u8> = Vec::new();
    loop {
        let closing = {
            let mut state = out.lock();
            state.wrote_directly = false;
            std::mem::swap(&mut batch, &mut state.queue);
            state.writing = !batch.is_empty();
            state.closing
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
        if stdin.write_all(&batch).await.is_err() {
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

struct StdioSender {
    out: Arc<Outbox>,
    exit: watch::Receiver<Option<ExitStatus>>,
    pgid: i32,
}

impl TransportSender for StdioSender {
    fn send(&self, message: Vec<u8>) -> Result<(), TransportError> {
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
                    state.wrote_directly = true;
                    drop(state);
                    // Let the writer task see the direct write (it ends the burst).
                    self.out.wake.notify_one();
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
        if written < message.len() {
            state.queue.extend_from_slice(&message[written..]);
        }
        state.queue.push(b'\n');
        drop(state);
        self.out.wake.notify_one();
        Ok(())
    }

    fn close(&self) -> BoxFuture<'static, ()> {
        self.out.lock().closing = true;
        self.out.wake.notify_one();
        let mut exit = self.exit.clone();
        let pgid = self.pgid;
        async move {
            let exited = tokio::time::timeout(SHUTDOWN_GRACE, exit.wait_for(|s| s.is_some()))
                .await
                .is_ok();
            if pgid <= 0 {
                return;
            }
            // Even when the leader exited, its group may hold children (npx → node).
            signal_group(pgid, libc::SIGTERM);
            if !exited {
                let _ = tokio::time::timeout(SHUTDOWN_GRACE, exit.wait_for(|s| s.is_some())).await;
            }
            if group_alive(pgid) {
                tokio::time::sleep(Duration::from_millis(50)).await;
                if group_alive(pgid) {
                    let deadline = tokio::time::Instant::now() + SHUTDOWN_GRACE;
                    while group_alive(pgid) && tokio::time::Instant::now() < deadline {
                        tokio::time::sleep(Duration::from_millis(20)).await;
                    }
                }
            }
            signal_group(pgid, libc::SIGKILL);
            let _ = exit.wait_for(|s| s.is_some()).await;
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

fn signal_group(pgid: i32, sig: libc::c_int) {
    // SAFETY: killpg has no memory-safety preconditions; ESRCH (no such group) is fine.
    unsafe {
        libc::killpg(pgid, sig);
    }
}

fn group_alive(pgid: i32) -> bool {
    // SAFETY: signal 0 only checks for existence.
    unsafe { libc::killpg(pgid, 0) == 0 }
}

struct StdioReceiver {
    stdout: BufReader<ChildStdout>,
    line: Vec<u8>,
    log: Arc<ServerLog>,
    exit: watch::Receiver<Option<ExitStatus>>,
    stderr_done: watch::Receiver<bool>,
    closed: bool,
    /// The pipe was enlarged for a large message.
    grown: bool,
}

impl TransportReceiver for StdioReceiver {
    fn recv(&mut self) -> BoxFuture<'_, Inbound> {
        async move {
            if self.closed {
                return Inbound::Closed("the connection is closed".into());
            }
            loop {
                self.line.clear();
                match self.stdout.read_until(b'\n', &mut self.line).await {
                    Ok(0) | Err(_) => {
                        self.closed = true;
                        return Inbound::Closed(self.close_reason().await);
                    }
                    Ok(_) => {}
                }
                let mut end = self.line.len();
                while end > 0 && matches!(self.line[end - 1], b'\n' | b'\r') {
                    end -= 1;
                }
                let start = self.line[..end]
                    .iter()
                    .position(|b| !b.is_ascii_whitespace())
                    .unwrap_or(end);
                let body = &self.line[start..end];
                match body.first() {
                    None => continue,
                    Some(b'{') | Some(b'[') if body.len() < HANDOFF_MIN => {
                        // A small message: copy it, keep the buffer.
                        let msg = body.to_vec();
                        if self.line.capacity() > READ_BUFFER {
                            self.line = Vec::with_capacity(4096);
                        }
                        return Inbound::Message(msg);
                    }
                    Some(b'{') | Some(b'[') => {
                        if !self.grown {
                            self.grown = true;
                            grow_pipe(self.stdout.get_ref().as_raw_fd());
                        }
                        // A large one: hand over the buffer without copying; keep a fresh one.
                        let mut msg = std::mem::replace(&mut self.line, Vec::with_capacity(4096));
                        msg.truncate(end);
                        if start > 0 {
                            msg.drain(..start);
                        }
                        return Inbound::Message(msg);
                    }
                    Some(_) => {
                        let text = String::from_utf8_lossy(body);
                        tracing::warn!("skipped a non-JSON line on the server's stdout: {text}");
                        self.log.push(
                            LogSource::Host,
                            "warning",
                            &format!("skipped non-JSON stdout line: {text}"),
                        );
                    }
                }
            }
        }
        .boxed()
    }
}

impl StdioReceiver {
    /// Exit status and stderr tail, waiting briefly for both to be known.
    async fn close_reason(&mut self) -> String {
        let _ =
            tokio::time::timeout(Duration::from_secs(1), self.exit.wait_for(|s| s.is_some())).await;
        let _ = tokio::time::timeout(
            Duration::from_millis(500),
            self.stderr_done.wait_for(|d| *d),
        )
        .await;
        let status = *self.exit.borrow();
        let mut reason = match status {
            Some(s) => describe_exit(s),
            None => "the server closed its output".to_string(),
        };
        let tail = self.log.stderr_tail();
        if !tail.is_empty() {
            reason.push_str("; its last output on stderr:\n");
            reason.push_str(&tail);
        }
        reason
    }
}

fn describe_exit(status: ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(code), _) => format!("the server exited with status {code}"),
        (None, Some(sig)) => format!("the server was killed by signal {sig}"),
        (None, None) => "the server exited".to_string(),
    }
}
