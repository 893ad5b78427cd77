//! stdio transport: a child process speaking newline-delimited JSON-RPC.
//!
//! Invariants: the child runs in its own process group and dies with harness9 (Linux
//! parent-death signal); its stderr is always drained into the server's log; stdout lines
//! that are not JSON are logged and skipped; lines have no length ceiling. Shutdown closes
//! stdin, waits, then SIGTERMs and finally SIGKILLs the whole group.

use std::ffi::OsString;
use std::path::PathBuf;
use std::process::{ExitStatus, Stdio};
use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
use futures::FutureExt;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::process::{ChildStdin, ChildStdout, Command};
use tokio::sync::{mpsc, watch};

use super::{Connection, Inbound, TransportError, TransportReceiver, TransportSender};
use crate::mcp::log::{LogSource, ServerLog};

/// How long a server may take to exit after its stdin is closed, and again after SIGTERM.
pub const SHUTDOWN_GRACE: Duration = Duration::from_secs(2);

/// Buffer size for reading the child's stdout.
const READ_BUFFER: usize = 256 * 1024;

/// Largest batch of queued messages written in one go.
const WRITE_BATCH: usize = 1024 * 1024;

/// What to run.
#[derive(Debug, Clone)]
pub struct StdioSpec {
    pub command: String,
    pub args: Vec<String>,
    pub env: Vec<(String, String)>,
    pub cwd: Option<PathBuf>,
    /// PATH to give the child when `env` does not set one (e.g. the login shell's).
    pub path: Option<OsString>,
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

    let (out_tx, out_rx) = mpsc::unbounded_channel();
    let (closing_tx, closing_rx) = watch::channel(false);
    tokio::spawn(write_loop(stdin, out_rx, closing_rx));

    let sender = Arc::new(StdioSender {
        out: out_tx,
        closing: closing_tx,
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

async fn write_loop(
    mut stdin: ChildStdin,
    mut queue: mpsc::UnboundedReceiver<Vec<u8>>,
    mut closing: watch::Receiver<bool>,
) {
    let mut batch: Vec<u8> = Vec::with_capacity(64 * 1024);
    loop {
        let first = tokio::select! {
            biased;
            m = queue.recv() => m,
            _ = closing.wait_for(|c| *c) => None,
        };
        let Some(first) = first else { break };
        batch.clear();
        batch.extend_from_slice(&first);
        batch.push(b'\n');
        while batch.len() < WRITE_BATCH {
            match queue.try_recv() {
                Ok(m) => {
                    batch.extend_from_slice(&m);
                    batch.push(b'\n');
                }
                Err(_) => break,
            }
        }
        if stdin.write_all(&batch).await.is_err() {
            break; // the child is gone; the reader reports why
        }
        if batch.capacity() > 4 * WRITE_BATCH {
            batch = Vec::with_capacity(64 * 1024);
        }
    }
    let _ = stdin.shutdown().await;
    // Dropping stdin closes the child's input.
}

struct StdioSender {
    out: mpsc::UnboundedSender<Vec<u8>>,
    closing: watch::Sender<bool>,
    exit: watch::Receiver<Option<ExitStatus>>,
    pgid: i32,
}

impl TransportSender for StdioSender {
    fn send(&self, message: Vec<u8>) -> Result<(), TransportError> {
        if *self.closing.borrow() {
            return Err(TransportError::Closed);
        }
        self.out.send(message).map_err(|_| TransportError::Closed)
    }

    fn close(&self) -> BoxFuture<'static, ()> {
        let _ = self.closing.send(true);
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
                    Some(b'{') | Some(b'[') => {
                        // Hand over the buffer without copying; keep a fresh one.
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
