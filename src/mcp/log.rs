//! Per-server ring buffer of recent output: the child's stderr, log notifications and
//! skipped stdout noise. Bounded in lines and bytes (each line counts a fixed overhead,
//! so a flood of empty lines is bounded too), so a flooding server cannot grow it; live
//! followers get a broadcast that never blocks the writer.

use std::collections::VecDeque;
use std::sync::Mutex;
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
#[serde(rename_all = "lowercase")]
pub enum LogSource {
    /// The child's stderr.
    Stderr,
    /// A `notifications/message` from the server.
    Server,
    /// Something harness9 noticed (skipped stdout lines, restarts, ...).
    Host,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
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
            let mut cut = LOG_MAX_LINE;
            while !text.is_char_boundary(cut) {
                cut -= 1;
            }
            format!("{}… [line cut at {LOG_MAX_LINE} bytes]", &text[..cut])
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
        {
            let mut ring = self.lines.lock().expect("log lock");
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
        }
        // No receivers is fine; a lagging one skips ahead.
        let _ = self.live.send(line);
    }

    /// The most recent `n` lines, oldest first.
    pub fn tail(&self, n: usize) -> Vec<LogLine> {
        let ring = self.lines.lock().expect("log lock");
        ring.lines
            .iter()
            .skip(ring.lines.len().saturating_sub(n))
            .cloned()
            .collect()
    }

    /// A new process of the same server starts (the log goes on): from now on
    /// [`ServerLog::stderr_tail`] quotes only what the new one writes.
    pub fn mark_new_process(&self) {
        self.lines.lock().expect("log lock").since_mark = Some(0);
    }

    /// The last stderr lines as one text, for error messages.
    pub fn stderr_tail(&self) -> String {
        let ring = self.lines.lock().expect("log lock");
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
}

#[cfg(test)]
mod tests {
    use super::*;

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
