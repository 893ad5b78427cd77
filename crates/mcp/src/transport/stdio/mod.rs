//! stdio transport: a child process speaking newline-delimited JSON-RPC, and everything
//! that contains its process tree.
//!
//! Containment. The child runs in its own process group, spawned without a `pre_exec`
//! hook so std uses posix_spawn (no fork of this large multi-threaded process). Every group
//! is registered with the [`reaper`], one small process per harness9 process that ends the
//! registered groups when harness9 dies, however it dies (see its docs). The end of a
//! server is noticed from its exit status as well as from end of file on stdout (a
//! grandchild may hold stdout): pending calls fail at once with the status and the stderr
//! tail. Whenever a connection ends (crash, stdout closed, shutdown), the whole group gets
//! SIGTERM and then SIGKILL, so restarts leave no orphans. Shutdown closes stdin, waits,
//! then ends the group; [`CLOSE_DEADLINE`] bounds the sequence, and callers that bound a
//! shutdown wait at least that long.
//!
//! Memory. Stdout is framed by [`framer::LineReader`] with the server's
//! `max_message_bytes`: nothing is buffered past it, noise lines are skipped as they
//! stream in. Stderr is drained line by line into the bounded log ring, a line cut at
//! [`crate::log::LOG_MAX_LINE`]. The write queue is bounded (see [`writer`]).
//!
//! Files: `framer` (line framing), `reader` (receiving half), `writer` (sending half),
//! `process` (signals and deadlines), `reaper`, `shell_env` (PATH from the login shell).

pub mod framer;
mod process;
mod reader;
pub mod reaper;
pub mod shell_env;
mod writer;

pub use process::{CLOSE_DEADLINE, SHUTDOWN_GRACE};
pub use reader::{too_long, EXIT_OUTPUT_GRACE};

use parking_lot::Mutex;
use std::ffi::OsString;
use std::os::fd::AsRawFd;
use std::path::PathBuf;
use std::process::{ExitStatus, Stdio};
use std::sync::Arc;

use tokio::io::{AsyncBufReadExt, AsyncReadExt, BufReader};
use tokio::process::Command;
use tokio::sync::{watch, Notify};

use super::Connection;
use crate::log::{LogSource, ServerLog};
use writer::{OutState, Outbox, StdinGuard, StdioSender};

/// Buffer size for reading the child's stdout (a longer message is read in several turns):
/// with twenty servers, every kilobyte here is twenty.
const READ_BUFFER: usize = 64 * 1024;

/// The write queue always admits at least this many bytes, whatever the message limit.
const MIN_QUEUE_BYTES: usize = 16 * 1024 * 1024;

/// What to run.
#[derive(Debug, Clone)]
pub struct StdioSpec {
    pub command: String,
    pub args: Vec<String>,
    pub env: Vec<(String, String)>,
    pub cwd: Option<PathBuf>,
    /// PATH to give the child when `env` does not set one (e.g. the login shell's).
    pub path: Option<OsString>,
    /// The longest line read from the child (see [`crate::settings::DEFAULT_MAX_MESSAGE_BYTES`]).
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

impl SpawnError {
    /// A stable kebab-case code for front ends and `--json` output (never changes once
    /// released).
    pub fn code(&self) -> &'static str {
        match self {
            SpawnError::NotFound { .. } => "command-not-found",
            SpawnError::PermissionDenied { .. } => "permission-denied",
            SpawnError::NoCwd(_) => "no-working-directory",
            SpawnError::Other { .. } => "spawn-failed",
        }
    }
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
    let mut child = cmd.spawn().map_err(|e| spawn_error(spec, own_path, e))?;
    let pid = child.id().unwrap_or(0) as i32;
    let stdin = child.stdin.take().expect("piped stdin");
    let stdout = child.stdout.take().expect("piped stdout");
    let stderr = child.stderr.take().expect("piped stderr");

    // Publishes the exit status once; reaps the leader only when its group is done with.
    let (exit_tx, exit_rx) = watch::channel::<Option<ExitStatus>>(None);
    let group = process::watch_leader(child, pid, exit_tx);

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
            skip: 0,
        }),
        wake: Notify::new(),
    });
    tokio::spawn(writer::write_loop(StdinGuard {
        stdin: Some(stdin),
        out: out.clone(),
    }));

    let sender = Arc::new(StdioSender {
        out: out.clone(),
        max_queued: spec.max_message_bytes.max(MIN_QUEUE_BYTES),
        exit: exit_rx.clone(),
        group: group.clone(),
    });
    let receiver = Box::new(reader::StdioReceiver {
        lines: framer::LineReader::new(
            BufReader::with_capacity(READ_BUFFER, stdout),
            spec.max_message_bytes,
        ),
        log,
        exited: Some(reader::exited(exit_rx.clone())),
        exit: exit_rx,
        out,
        stderr_done: stderr_done_rx,
        group,
        max_message_bytes: spec.max_message_bytes,
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
    let mut reader = BufReader::with_capacity(8 * 1024, stderr);
    let mut buf = Vec::with_capacity(1024);
    loop {
        buf.clear();
        // Read at most a little over one kept line, so a flood without newlines stays bounded.
        let mut limited = (&mut reader).take(crate::log::LOG_MAX_LINE as u64 + 1);
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
