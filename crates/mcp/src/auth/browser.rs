//! Opening the authorization page: `$BROWSER` when set, else the system opener. Only links
//! [`crate::links::check_link`] allows are opened, in their parsed form.
//!
//! The browser is started detached (its own process group, output discarded) and never
//! waited for: a browser that stays open must not hold up the sign-in, and one that exits
//! at once is normal (it handed the URL to a running instance).

use futures::future::BoxFuture;

use super::Opener;
use crate::links::LinkRefused;

/// The environment variable naming the browser command (split like a command line; the
/// URL is appended as its last argument, or replaces `%s` when present).
pub const BROWSER_ENV: &str = "BROWSER";

/// The platform's opener, used when [`BROWSER_ENV`] is unset.
#[cfg(target_os = "macos")]
pub const SYSTEM_OPENER: &str = "open";
#[cfg(not(target_os = "macos"))]
pub const SYSTEM_OPENER: &str = "xdg-open";

/// Opens URLs with `$BROWSER` (the URL as its last argument) when set, else the
/// platform's opener (`xdg-open` on Linux, `open` on macOS).
#[derive(Debug, Default, Clone)]
pub struct SystemOpener;

impl Opener for SystemOpener {
    fn open(&self, url: &str) -> BoxFuture<'static, Result<(), BrowserError>> {
        let result = open_now(url);
        Box::pin(async move { result })
    }
}

/// Why the browser was not started; the text says what to do instead.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BrowserError {
    /// A server chose the URL, and the link rules refuse it.
    #[error("refused to open {url:?}: {refused}")]
    Refused { url: String, refused: LinkRefused },
    /// [`BROWSER_ENV`] cannot be split into words.
    #[error("${BROWSER_ENV} cannot be used ({0}); fix it, or open the URL printed above")]
    BadVariable(SplitError),
    #[error("no browser command")]
    NoCommand,
    #[error("could not start the browser ({program}: {reason}); set ${BROWSER_ENV} or open the URL printed above")]
    Spawn { program: String, reason: String },
    /// Another [`Opener`] (the desktop app's, a headless one) could not show the page; the
    /// text says why and what to do.
    #[error("{0}")]
    NotShown(String),
}

impl BrowserError {
    /// A stable kebab-case code for front ends and `--json` output (never changes once
    /// released).
    pub fn code(&self) -> &'static str {
        match self {
            BrowserError::Refused { .. } => "link-refused",
            BrowserError::BadVariable(_) => "bad-browser-variable",
            BrowserError::NoCommand => "no-browser",
            BrowserError::Spawn { .. } => "browser-not-started",
            BrowserError::NotShown(_) => "page-not-shown",
        }
    }
}

/// Why a command line could not be split into words.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum SplitError {
    #[error("unterminated single quote")]
    SingleQuote,
    #[error("unterminated double quote")]
    DoubleQuote,
    #[error("a backslash at the end")]
    TrailingBackslash,
    #[error("it is empty")]
    Empty,
}

impl SplitError {
    /// A stable kebab-case code for front ends and `--json` output (never changes once
    /// released).
    pub fn code(&self) -> &'static str {
        match self {
            SplitError::SingleQuote => "unterminated-single-quote",
            SplitError::DoubleQuote => "unterminated-double-quote",
            SplitError::TrailingBackslash => "trailing-backslash",
            SplitError::Empty => "empty-command",
        }
    }
}

/// Opens `url` in the browser now (see [`SystemOpener`]).
fn open_now(url: &str) -> Result<(), BrowserError> {
    let browser = std::env::var(BROWSER_ENV).ok();
    // A server chose this URL: only what the link rule allows opens, in its parsed form.
    let link = crate::links::check_link(url).map_err(|refused| BrowserError::Refused {
        url: url.to_string(),
        refused,
    })?;
    let argv = command_for(browser.as_deref(), link.as_str())?;
    spawn_detached(&argv)
}

/// The command line that opens `url`: `$BROWSER` split into words, else the system opener.
pub fn command_for(browser: Option<&str>, url: &str) -> Result<Vec<String>, BrowserError> {
    let Some(browser) = browser.filter(|b| !b.trim().is_empty()) else {
        return Ok(vec![SYSTEM_OPENER.to_string(), url.to_string()]);
    };
    let mut words = split_command_line(browser).map_err(BrowserError::BadVariable)?;
    if words.iter().any(|w| w.contains("%s")) {
        for w in &mut words {
            *w = w.replace("%s", url);
        }
    } else {
        words.push(url.to_string());
    }
    Ok(words)
}

fn spawn_detached(argv: &[String]) -> Result<(), BrowserError> {
    let (program, args) = argv.split_first().ok_or(BrowserError::NoCommand)?;
    let mut cmd = std::process::Command::new(program);
    cmd.args(args)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        // Its own process group: a Ctrl-C meant for harness9 does not close the browser.
        cmd.process_group(0);
    }
    let mut child = cmd.spawn().map_err(|e| BrowserError::Spawn {
        program: program.clone(),
        reason: e.to_string(),
    })?;
    // Reap it whenever it exits, without waiting here.
    let _ = std::thread::Builder::new()
        .name("browser-reaper".into())
        .spawn(move || {
            let _ = child.wait();
        });
    Ok(())
}

/// Splits a command line into words the way a POSIX shell would for plain words, single
/// and double quotes and backslash escapes (no expansions).
pub fn split_command_line(s: &str) -> Result<Vec<String>, SplitError> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(ch) => word.push(ch),
                        None => return Err(SplitError::SingleQuote),
                    }
                }
            }
            '"' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => match chars.next() {
                            Some(ch @ ('"' | '\\' | '$' | '`')) => word.push(ch),
                            Some(ch) => {
                                word.push('\\');
                                word.push(ch);
                            }
                            None => return Err(SplitError::DoubleQuote),
                        },
                        Some(ch) => word.push(ch),
                        None => return Err(SplitError::DoubleQuote),
                    }
                }
            }
            '\\' => {
                in_word = true;
                match chars.next() {
                    Some(ch) => word.push(ch),
                    None => return Err(SplitError::TrailingBackslash),
                }
            }
            c if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            c => {
                in_word = true;
                word.push(c);
            }
        }
    }
    if in_word {
        words.push(word);
    }
    if words.is_empty() {
        return Err(SplitError::Empty);
    }
    Ok(words)
}

#[cfg(test)]
mod tests {
    use super::*;

    const URL: &str = "https://auth.example/authorize?a=1&b=2";

    #[test]
    fn browser_variable_is_split_and_gets_the_url_last() {
        assert_eq!(
            command_for(Some("firefox --new-window"), URL).unwrap(),
            vec!["firefox", "--new-window", URL]
        );
        assert_eq!(
            command_for(Some(r#"'/opt/my browser/run' "--profile=a b" x\ y"#), URL).unwrap(),
            vec!["/opt/my browser/run", "--profile=a b", "x y", URL]
        );
        assert_eq!(
            command_for(Some("w3m -o x=%s"), URL).unwrap(),
            vec!["w3m", "-o", &format!("x={URL}")]
        );
    }

    #[test]
    fn without_browser_the_system_opener_is_used() {
        assert_eq!(command_for(None, URL).unwrap(), vec![SYSTEM_OPENER, URL]);
        assert_eq!(
            command_for(Some("  "), URL).unwrap(),
            vec![SYSTEM_OPENER, URL]
        );
    }

    #[test]
    fn a_broken_browser_variable_says_what_to_do() {
        let err = command_for(Some("'firefox"), URL).unwrap_err();
        assert_eq!(
            err.to_string(),
            "$BROWSER cannot be used (unterminated single quote); fix it, or open the URL printed above"
        );
    }

    #[test]
    fn a_missing_browser_says_what_to_do() {
        let err = spawn_detached(&["/nonexistent/browser-h9".into(), URL.into()])
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("could not start the browser (/nonexistent/browser-h9: "),
            "{err}"
        );
        assert!(
            err.ends_with("set $BROWSER or open the URL printed above"),
            "{err}"
        );
    }

    #[test]
    fn the_browser_is_not_waited_for() {
        // A browser that runs until the test lets it go: it waits for a pipe to be written.
        let dir = tempfile::tempdir().unwrap();
        let pipe = dir.path().join("pipe");
        let made = std::process::Command::new("mkfifo").arg(&pipe).status();
        assert!(made.unwrap().success());
        let argv = vec![
            "sh".to_string(),
            "-c".to_string(),
            "cat \"$0\" > /dev/null".to_string(),
            pipe.display().to_string(),
        ];
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let _ = tx.send(spawn_detached(&argv));
        });
        let returned = rx.recv_timeout(std::time::Duration::from_secs(20));
        if !matches!(returned, Ok(Err(_))) {
            // Lets the browser go (opening the pipe to write waits for it to read).
            drop(std::fs::OpenOptions::new().write(true).open(&pipe).unwrap());
        }
        let returned = returned.expect("spawn_detached returned while the browser still ran");
        assert_eq!(returned, Ok(()));
    }
}
