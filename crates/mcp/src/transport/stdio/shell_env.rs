//! PATH for servers when harness9 was not started from a terminal (a desktop launcher gives
//! a minimal PATH, so `npx` and `uvx` are not found). The login shell is asked once, with a
//! time bound; its PATH comes first, then entries of our own PATH it lacks.

use std::ffi::OsString;
use std::io::Read;
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// How long the login shell may take to print its PATH.
pub const LOGIN_SHELL_TIMEOUT: Duration = Duration::from_secs(3);

const MARK: &str = "__HARNESS9_PATH__";

/// True when none of stdin, stdout and stderr is a terminal.
pub fn outside_terminal() -> bool {
    // SAFETY: isatty only inspects the descriptor.
    unsafe { libc::isatty(0) == 0 && libc::isatty(1) == 0 && libc::isatty(2) == 0 }
}

/// The merged PATH, computed once. `None` when the shell could not tell.
pub fn login_path() -> Option<OsString> {
    static PATH: OnceLock<Option<OsString>> = OnceLock::new();
    PATH.get_or_init(|| {
        let shell = std::env::var("SHELL").unwrap_or_else(|_| "/bin/sh".into());
        let found = ask_shell(&shell)?;
        let mut parts: Vec<std::path::PathBuf> = std::env::split_paths(&found).collect();
        if let Some(own) = std::env::var_os("PATH") {
            for p in std::env::split_paths(&own) {
                if !parts.contains(&p) {
                    parts.push(p);
                }
            }
        }
        std::env::join_paths(parts).ok()
    })
    .clone()
}

fn ask_shell(shell: &str) -> Option<OsString> {
    let script = format!("printf '{MARK}%s{MARK}' \"$PATH\"");
    let flags: &[&str] = if shell.ends_with("fish") {
        &["-l", "-c"]
    } else {
        &["-l", "-i", "-c"]
    };
    let mut child = Command::new(shell)
        .args(flags)
        .arg(&script)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .process_group(0)
        .spawn()
        .ok()?;
    let pgid = child.id() as i32;
    let mut out = child.stdout.take()?;
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut s = String::new();
        let _ = out.read_to_string(&mut s);
        let _ = tx.send(s);
    });
    // The output is complete at end of file, which a child the shell left behind may
    // delay forever; so the wait is bounded, and the shell's group ends either way.
    let deadline = Instant::now() + LOGIN_SHELL_TIMEOUT;
    let mut text = Err(std::sync::mpsc::RecvTimeoutError::Timeout);
    while Instant::now() < deadline {
        text = rx.recv_timeout(Duration::from_millis(10));
        if text.is_ok() {
            break;
        }
        if let Ok(Some(_)) = child.try_wait() {
            // The shell is done: whatever it left behind goes, which ends the output.
            // SAFETY: killpg has no memory-safety preconditions.
            unsafe { libc::killpg(pgid, libc::SIGKILL) };
            text = rx.recv_timeout(deadline.saturating_duration_since(Instant::now()));
            break;
        }
    }
    // SAFETY: killpg has no memory-safety preconditions.
    unsafe { libc::killpg(pgid, libc::SIGKILL) };
    let _ = child.wait();
    let Ok(text) = text else {
        tracing::warn!("the login shell {shell} did not print PATH within {LOGIN_SHELL_TIMEOUT:?}");
        return None;
    };
    let (_, after) = text.split_once(MARK)?;
    let (path, _) = after.split_once(MARK)?;
    (!path.is_empty()).then(|| OsString::from(path))
}

/// Name by which `.mcp.json` can run harness9's own built-in server (`harness9 mcp serve`).
pub const SELF_COMMAND: &str = "harness9";

/// `harness9` in a server's command means the `harness9` binary installed beside the
/// running program, when there is one, so the example project works from a fresh build
/// without installing anything on PATH. Any other command is returned unchanged.
pub fn resolve_command(command: &str) -> String {
    if command != SELF_COMMAND {
        return command.to_string();
    }
    std::env::current_exe()
        .ok()
        .and_then(|exe| {
            let sibling = exe.with_file_name(SELF_COMMAND);
            sibling.is_file().then(|| sibling.display().to_string())
        })
        .unwrap_or_else(|| command.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_child_left_holding_the_output_does_not_delay_the_answer() {
        let dir = tempfile::tempdir().unwrap();
        let shell = dir.path().join("shell");
        std::fs::write(
            &shell,
            format!("#!/bin/sh\nsleep 30 &\nprintf '{MARK}/from/shell{MARK}'\n"),
        )
        .unwrap();
        std::fs::set_permissions(&shell, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .unwrap();
        // Waiting for the end of the output (which the `sleep` holds open) would run into
        // the time limit, and then there is no PATH.
        let path = ask_shell(shell.to_str().unwrap());
        assert_eq!(path, Some(OsString::from("/from/shell")));
    }
}
