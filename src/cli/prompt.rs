//! Questions on the terminal: a line, a yes/no, and a secret read without echo (the
//! terminal's echo is restored afterwards, on Ctrl-C too). Every question goes to stderr;
//! without a terminal on stdin and stderr nothing is asked.

use std::io::{BufRead, IsTerminal, Write};
use std::sync::OnceLock;

/// Whether questions can be asked (stdin and stderr are terminals).
pub fn interactive() -> bool {
    std::io::stdin().is_terminal() && std::io::stderr().is_terminal()
}

/// Asks for one line; `None` at end of input.
pub fn line(question: &str) -> Option<String> {
    let mut err = std::io::stderr();
    let _ = write!(err, "{question}");
    let _ = err.flush();
    let mut answer = String::new();
    match std::io::stdin().lock().read_line(&mut answer) {
        Ok(0) | Err(_) => None,
        Ok(_) => Some(answer.trim_end_matches(['\n', '\r']).to_string()),
    }
}

/// Asks a yes/no question; only `y` or `yes` is yes.
pub fn yes(question: &str) -> bool {
    line(&format!("{question} [y/N] "))
        .is_some_and(|a| matches!(a.trim().to_ascii_lowercase().as_str(), "y" | "yes"))
}

/// The terminal's settings before echo was turned off, for the Ctrl-C handler.
#[cfg(unix)]
static SAVED: OnceLock<libc::termios> = OnceLock::new();

#[cfg(unix)]
extern "C" fn restore_and_die(sig: libc::c_int) {
    // SAFETY: tcsetattr, signal and raise are async-signal-safe; SAVED is set before the
    // handler is installed and never changes.
    unsafe {
        if let Some(t) = SAVED.get() {
            libc::tcsetattr(0, libc::TCSANOW, t);
        }
        libc::signal(sig, libc::SIG_DFL);
        libc::raise(sig);
    }
}

/// Asks for a secret without echoing it; `None` at end of input.
pub fn secret(question: &str) -> Option<String> {
    #[cfg(unix)]
    {
        // SAFETY: plain termios calls on stdin with a struct we own.
        unsafe {
            let mut now: libc::termios = std::mem::zeroed();
            if libc::tcgetattr(0, &mut now) == 0 {
                let saved = *SAVED.get_or_init(|| now);
                let mut quiet = now;
                quiet.c_lflag &= !libc::ECHO;
                let old_int = libc::signal(
                    libc::SIGINT,
                    restore_and_die as *const () as libc::sighandler_t,
                );
                let old_term = libc::signal(
                    libc::SIGTERM,
                    restore_and_die as *const () as libc::sighandler_t,
                );
                libc::tcsetattr(0, libc::TCSANOW, &quiet);
                let answer = line(question);
                libc::tcsetattr(0, libc::TCSANOW, &saved);
                libc::signal(libc::SIGINT, old_int);
                libc::signal(libc::SIGTERM, old_term);
                let _ = writeln!(std::io::stderr());
                return answer;
            }
        }
    }
    line(question)
}
