//! The real binary on a terminal: in tmux ([`Tmux`], the screen as a person sees it) or
//! under a pseudo-terminal ([`Pty`], every byte that reaches the terminal).

use std::io::{Read, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;

use super::bins::harness9_bin;
use super::process::unique_mark;
use super::project::Project;
use super::provider_stub::TEST_KEY;
use super::wait::{poll_for, poll_until, DEADLINE};

/// The time between two keys a test types: part of the input, as a person's typing is. A
/// terminal reads Escape and a key right behind it as one Alt+key.
const KEY_GAP: Duration = Duration::from_millis(60);

/// Whether tmux is here. Under CI its absence fails the test (the test command installs
/// it); elsewhere the test is skipped.
pub fn have_tmux() -> bool {
    if Command::new("tmux").arg("-V").output().is_ok() {
        return true;
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "tmux is missing; the test command installs it"
    );
    eprintln!("skipped: tmux is not installed");
    false
}

/// A tmux server of its own running one program in a 100×30 window; killed on drop.
pub struct Tmux {
    socket: String,
}

impl Tmux {
    /// `harness9 tui --yes` on project `p`, chatting with the scripted Anthropic-wire model
    /// at `model_url`, with the project's private data folder and `config` as the config
    /// folder (it must outlive the session).
    pub fn chat(p: &Project, model_url: String, config: &Path) -> Tmux {
        let cmd = format!("{} tui --yes {}", harness9_bin(), p.path().display());
        Tmux::start(
            &cmd,
            &[
                ("HARNESS9_DATA_DIR", p.data.path().display().to_string()),
                ("XDG_CONFIG_HOME", config.display().to_string()),
                ("HARNESS9_CONFIG_DIR", config.display().to_string()),
                ("HARNESS9_PROVIDER", "anthropic".into()),
                ("HARNESS9_MODEL", "stub-model".into()),
                ("ANTHROPIC_BASE_URL", model_url),
                ("ANTHROPIC_API_KEY", TEST_KEY.into()),
                ("TERM", "xterm-256color".into()),
            ],
        )
    }

    pub fn start(cmd: &str, env: &[(&str, String)]) -> Tmux {
        let socket = format!("h9-{}", unique_mark());
        let mut c = Command::new("tmux");
        c.args([
            "-L",
            &socket,
            "-f",
            "/dev/null",
            "new-session",
            "-d",
            "-x",
            "100",
            "-y",
            "30",
        ]);
        for (k, v) in env {
            c.arg("-e").arg(format!("{k}={v}"));
        }
        let status = c.arg(cmd).status().expect("tmux runs");
        assert!(status.success());
        Tmux { socket }
    }

    pub fn screen(&self) -> String {
        let o = Command::new("tmux")
            .args(["-L", &self.socket, "capture-pane", "-p"])
            .output()
            .unwrap();
        String::from_utf8_lossy(&o.stdout).into_owned()
    }

    /// Presses keys (tmux key names), one after another.
    pub fn keys(&self, keys: &[&str]) {
        for k in keys {
            let status = Command::new("tmux")
                .args(["-L", &self.socket, "send-keys", k])
                .status()
                .unwrap();
            assert!(status.success());
            std::thread::sleep(KEY_GAP);
        }
    }

    /// Types `text` as it is (tmux's literal mode: no key names).
    pub fn text(&self, text: &str) {
        let status = Command::new("tmux")
            .args(["-L", &self.socket, "send-keys", "-l", text])
            .status()
            .unwrap();
        assert!(status.success());
        std::thread::sleep(KEY_GAP);
    }

    /// Waits until the screen shows `what`; returns the screen.
    pub fn wait_for(&self, what: &str) -> String {
        self.wait_until(&format!("{what:?}"), |s| s.contains(what))
    }

    /// Waits until the screen satisfies `ok`; returns the screen.
    pub fn wait_until(&self, what: &str, ok: impl Fn(&str) -> bool) -> String {
        poll_for(&format!("the screen to show {what}"), DEADLINE, || {
            let s = self.screen();
            if ok(&s) {
                Ok(s)
            } else {
                Err(format!("the screen shows:\n{s}"))
            }
        })
    }

    /// Presses `key` until the screen satisfies `ok`, waiting after each press for the
    /// screen to change (a focus moving, say); at most `max` presses.
    pub fn press_until(&self, key: &str, what: &str, max: usize, ok: impl Fn(&str) -> bool) {
        let mut s = self.screen();
        for _ in 0..max {
            if ok(&s) {
                return;
            }
            self.keys(&[key]);
            let before = s;
            s = self.wait_until(&format!("a change after {key}"), |now| now != before);
        }
        assert!(
            ok(&s),
            "{max} × {key} and no {what}; the screen shows:\n{s}"
        );
    }

    /// A tmux format about the pane: `#{alternate_on}`, `#{cursor_flag}`, …
    pub fn pane(&self, format: &str) -> String {
        let o = Command::new("tmux")
            .args(["-L", &self.socket, "display-message", "-p", format])
            .output()
            .unwrap();
        String::from_utf8_lossy(&o.stdout).trim().to_string()
    }

    /// Whether tmux still runs the program.
    pub fn alive(&self) -> bool {
        Command::new("tmux")
            .args(["-L", &self.socket, "has-session"])
            .status()
            .map(|s| s.success())
            .unwrap_or(false)
    }

    /// Waits until the program has ended (and tmux with it).
    pub fn wait_exit(&self, limit: Duration) {
        poll_for("the program to exit", limit, || {
            if self.alive() {
                Err(format!("the screen shows:\n{}", self.screen()))
            } else {
                Ok(())
            }
        })
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .args(["-L", &self.socket, "kill-server"])
            .status();
    }
}

/// A program under a pseudo-terminal (`script`), its output collected as it comes.
pub struct Pty {
    child: Child,
    stdin: Option<ChildStdin>,
    out: Arc<Mutex<Vec<u8>>>,
    reader: Option<std::thread::JoinHandle<()>>,
}

impl Pty {
    /// Runs `args` of the binary (which name project `p`) in a 120×40 terminal.
    pub fn start(p: &Project, args: &[&str]) -> Pty {
        Pty::start_env(p, args, &[])
    }

    /// [`Pty::start`] with more variables in the program's environment.
    pub fn start_env(p: &Project, args: &[&str], env: &[(&str, &str)]) -> Pty {
        let quoted: Vec<String> = std::iter::once(harness9_bin())
            .chain(args.iter().copied())
            .map(|a| format!("'{}'", a.replace('\'', r"'\''")))
            .collect();
        let cmd = format!("stty cols 120 rows 40; exec {}", quoted.join(" "));
        let mut child = Command::new("script")
            .args(["-q", "-e", "-c", &cmd, "/dev/null"])
            .env("SHELL", "/bin/sh")
            .env("HARNESS9_DATA_DIR", p.data.path())
            .env("HARNESS9_CONFIG_DIR", p.data.path().join("config"))
            .env("HARNESS9_CREDENTIALS", "file")
            .env("HARNESS9_PROVIDER", "")
            .env("TERM", "xterm-256color")
            .envs(env.iter().copied())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("script runs");
        let mut stdout = child.stdout.take().unwrap();
        let out = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&out);
        let reader = std::thread::spawn(move || {
            let mut buf = [0u8; 8192];
            while let Ok(n) = stdout.read(&mut buf) {
                if n == 0 {
                    break;
                }
                sink.lock().extend_from_slice(&buf[..n]);
            }
        });
        Pty {
            stdin: child.stdin.take(),
            child,
            out,
            reader: Some(reader),
        }
    }

    /// Types these bytes.
    pub fn send(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().unwrap();
        stdin.write_all(bytes).unwrap();
        stdin.flush().unwrap();
    }

    /// Everything the terminal got so far, as text.
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.out.lock()).into_owned()
    }

    /// Waits until the output holds `what`; returns the output so far.
    pub fn wait_for(&self, what: &str) -> String {
        poll_for(&format!("{what:?} on the terminal"), DEADLINE, || {
            let text = self.text();
            if text.contains(what) {
                Ok(text)
            } else {
                Err(format!("the terminal got:\n{}", text.escape_debug()))
            }
        })
    }

    /// Waits for the program to end (closing its input first); returns all it wrote.
    pub fn finish(mut self) -> Vec<u8> {
        drop(self.stdin.take());
        poll_until("the program to end", Duration::from_secs(30), || {
            self.child.try_wait().unwrap().is_some()
        });
        if let Some(r) = self.reader.take() {
            let _ = r.join();
        }
        std::mem::take(&mut *self.out.lock())
    }
}

/// Runs `args` of the binary on project `p` (`--project` added) to the end on a terminal,
/// with `input` typed and these variables set; returns what reached the terminal.
pub fn on_terminal(p: &Project, args: &[&str], env: &[(&str, &str)], input: &[u8]) -> Vec<u8> {
    let project = p.path().to_string_lossy();
    let args: Vec<&str> = args
        .iter()
        .copied()
        .chain(["--project", &project])
        .collect();
    let mut t = Pty::start_env(p, &args, env);
    if !input.is_empty() {
        t.send(input);
    }
    t.finish()
}

impl Drop for Pty {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
