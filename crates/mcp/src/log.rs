//! Per-server ring buffer of recent output: the child's stderr, log notifications and
//! skipped stdout noise. Bounded in lines and bytes (each line counts a fixed overhead,
//! so a flood of empty lines is bounded too), so a flooding server cannot grow it; live
//! followers get a broadcast that never blocks the writer.

use parking_lot::Mutex;
use std::collections::VecDeque;
use std::time::SystemTime;

use serde::Serialize;
use tokio::sync::broadcast;

/// Bytes of recent output kept per server.
pub const LOG_CAPACITY_BYTES: usize = 256 * 1024;

/// Lines of recent output kept per server (empty lines count).
pub const LOG_CAPACITY_LINES: usize = 2000;

/// Bytes each kept line counts for beyond its text (so empty lines are not free).
const LINE_OVERHEAD: usize = 64;

/// Longest line kept; longer ones are cut (the rest is dropped, and the cut is marked).
pub const LOG_MAX_LINE: usize = 4096;

/// Lines of stderr quoted in an error message.
pub const ERROR_TAIL_LINES: usize = 12;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "lowercase")]
pub enum LogSource {
    /// The child's stderr.
    Stderr,
    /// A `notifications/message` from the server.
    Server,
    /// Something harness9 noticed (skipped stdout lines, restarts, ...).
    Host,
    /// A view of the server (MCP Apps): what it asked of the host, and what became of it.
    View,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct LogLine {
    /// Milliseconds since the Unix epoch.
    pub time_ms: u64,
    pub source: LogSource,
    /// For server notifications: the level; otherwise empty.
    pub level: String,
    pub text: String,
}

pub struct ServerLog {
    lines: Mutex<Ring>,
    live: broadcast::Sender<LogLine>,
}

#[derive(Default)]
struct Ring {
    lines: VecDeque<LogLine>,
    bytes: usize,
    /// Lines pushed since [`ServerLog::mark_new_process`], if it was called: error
    /// messages quote only the stderr of the process that is running now.
    since_mark: Option<usize>,
}

impl Default for ServerLog {
    fn default() -> Self {
        ServerLog {
            lines: Mutex::default(),
            live: broadcast::channel(1024).0,
        }
    }
}

impl ServerLog {
    pub fn push(&self, source: LogSource, level: &str, text: &str) {
        let text = if text.len() > LOG_MAX_LINE {
            let kept = crate::truncate::prefix(text, LOG_MAX_LINE);
            format!("{kept}… [line cut at {LOG_MAX_LINE} bytes]")
        } else {
            text.to_string()
        };
        let line = LogLine {
            time_ms: SystemTime::now()
                .duration_since(SystemTime::UNIX_EPOCH)
                .map(|d| d.as_millis() as u64)
                .unwrap_or(0),
            source,
            level: level.to_string(),
            text,
        };
        let mut ring = self.lines.lock();
        ring.bytes += line.text.len() + LINE_OVERHEAD;
        ring.lines.push_back(line.clone());
        if let Some(n) = ring.since_mark.as_mut() {
            *n += 1;
        }
        while ring.bytes > LOG_CAPACITY_BYTES || ring.lines.len() > LOG_CAPACITY_LINES {
            match ring.lines.pop_front() {
                Some(old) => ring.bytes -= old.text.len() + LINE_OVERHEAD,
                None => break,
            }
        }
        // Sent under the lock (a broadcast send never waits), so that a follower who
        // reads the ring and subscribes under it sees each line exactly once. No
        // receivers is fine; a lagging one skips ahead.
        let _ = self.live.send(line);
        drop(ring);
    }

    /// The most recent `n` lines, oldest first.
    pub fn tail(&self, n: usize) -> Vec<LogLine> {
        let ring = self.lines.lock();
        ring.lines
            .iter()
            .skip(ring.lines.len().saturating_sub(n))
            .cloned()
            .collect()
    }

    /// A new process of the same server starts (the log goes on): from now on
    /// [`ServerLog::stderr_tail`] quotes only what the new one writes.
    pub fn mark_new_process(&self) {
        self.lines.lock().since_mark = Some(0);
    }

    /// The last stderr lines as one text, for error messages.
    pub fn stderr_tail(&self) -> String {
        let ring = self.lines.lock();
        let mut lines: Vec<&str> = ring
            .lines
            .iter()
            .rev()
            .take(ring.since_mark.unwrap_or(usize::MAX))
            .filter(|l| l.source == LogSource::Stderr)
            .take(ERROR_TAIL_LINES)
            .map(|l| l.text.as_str())
            .collect();
        lines.reverse();
        lines.join("\n")
    }

    pub fn subscribe(&self) -> broadcast::Receiver<LogLine> {
        self.live.subscribe()
    }

    /// The most recent `n` lines and every line after them, each exactly once: the tail is
    /// read and the subscription made in one step.
    pub fn follow(&self, n: usize) -> LogFollow {
        let ring = self.lines.lock();
        let live = self.live.subscribe();
        let recent = ring
            .lines
            .iter()
            .skip(ring.lines.len().saturating_sub(n))
            .cloned()
            .collect();
        drop(ring);
        LogFollow { recent, live }
    }
}

/// A follower of one server's log ([`ServerLog::follow`]). Dropping it ends the
/// subscription.
pub struct LogFollow {
    /// The lines written before following began, oldest first.
    pub recent: Vec<LogLine>,
    live: broadcast::Receiver<LogLine>,
}

impl LogFollow {
    /// The next line written; a note in place of the lines a slow follower missed; `None`
    /// once the log is gone.
    pub async fn next(&mut self) -> Option<LogLine> {
        match self.live.recv().await {
            Ok(line) => Some(line),
            Err(broadcast::error::RecvError::Lagged(n)) => Some(LogLine {
                time_ms: SystemTime::now()
                    .duration_since(SystemTime::UNIX_EPOCH)
                    .map(|d| d.as_millis() as u64)
                    .unwrap_or(0),
                source: LogSource::Host,
                level: "warning".into(),
                text: format!("… {n} lines skipped (the log was too fast to show)"),
            }),
            Err(broadcast::error::RecvError::Closed) => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn following_gives_each_line_once_and_says_what_a_slow_follower_missed() {
        let log = std::sync::Arc::new(ServerLog::default());
        let writer = {
            let log = log.clone();
            std::thread::spawn(move || {
                for i in 0..500 {
                    log.push(LogSource::Stderr, "", &format!("line {i}"));
                }
            })
        };
        // Following starts once the writer is under way (and most likely before it ends).
        while log.tail(1).is_empty() {
            std::thread::yield_now();
        }
        let mut f = log.follow(usize::MAX);
        writer.join().unwrap();
        let mut seen: Vec<String> = f.recent.iter().map(|l| l.text.clone()).collect();
        while seen.len() < 500 {
            seen.push(f.next().await.unwrap().text);
        }
        let want: Vec<String> = (0..500).map(|i| format!("line {i}")).collect();
        assert_eq!(seen, want);

        let mut slow = log.follow(0);
        for _ in 0..2000 {
            log.push(LogSource::Stderr, "", "x");
        }
        let note = slow.next().await.unwrap();
        assert_eq!(note.source, LogSource::Host);
        assert!(
            note.text
                .ends_with("lines skipped (the log was too fast to show)"),
            "{}",
            note.text
        );
    }

    #[test]
    fn empty_lines_are_bounded_too() {
        let log = ServerLog::default();
        for _ in 0..3 * LOG_CAPACITY_LINES {
            log.push(LogSource::Stderr, "", "");
        }
        assert_eq!(log.tail(usize::MAX).len(), LOG_CAPACITY_LINES);
        let long = "x".repeat(LOG_MAX_LINE);
        for _ in 0..LOG_CAPACITY_LINES {
            log.push(LogSource::Stderr, "", &long);
        }
        let kept: usize = log.tail(usize::MAX).iter().map(|l| l.text.len()).sum();
        assert!(kept <= LOG_CAPACITY_BYTES, "{kept}");
    }
}
