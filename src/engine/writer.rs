//! Appending to a file from async code without blocking a runtime thread: one dedicated
//! thread per file takes whole lines from a channel and writes each with one `write_all`,
//! in the order they were queued. A failed write is reported by the next append (or by
//! [`AppendWriter::flush`]); dropping the writer waits until every queued line is written,
//! so nothing queued is lost when the program ends normally.

use std::fs::File;
use std::io::Write;
use std::sync::mpsc::{channel, Sender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

enum Job {
    Line(Vec<u8>),
    Flush(Sender<()>),
}

/// The writer thread of one append-only file.
#[derive(Debug)]
pub struct AppendWriter {
    tx: Option<Sender<Job>>,
    /// The first write error not yet reported.
    failed: Arc<Mutex<Option<std::io::Error>>>,
    thread: Option<JoinHandle<()>>,
}

impl std::fmt::Debug for Job {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Job::Line(l) => write!(f, "Line({} bytes)", l.len()),
            Job::Flush(_) => write!(f, "Flush"),
        }
    }
}

impl AppendWriter {
    /// Starts the thread that owns `file`.
    pub fn new(mut file: File, name: &str) -> std::io::Result<AppendWriter> {
        let failed = Arc::new(Mutex::new(None));
        let (tx, rx) = channel::<Job>();
        let failed_in = failed.clone();
        let thread = std::thread::Builder::new()
            .name(format!("append {name}"))
            .spawn(move || {
                for job in rx {
                    match job {
                        Job::Line(line) => {
                            if let Err(e) = file.write_all(&line) {
                                let mut slot = failed_in.lock().expect("writer error lock");
                                slot.get_or_insert(e);
                            }
                        }
                        Job::Flush(done) => {
                            let _ = done.send(());
                        }
                    }
                }
            })?;
        Ok(AppendWriter {
            tx: Some(tx),
            failed,
            thread: Some(thread),
        })
    }

    /// Queues `line` (which should end with `\n`); returns the error of an earlier write
    /// that failed, if one has not been reported yet. Never blocks on the disk.
    pub fn append(&self, line: Vec<u8>) -> std::io::Result<()> {
        let earlier = self.take_error();
        let sent = self.tx.as_ref().map(|tx| tx.send(Job::Line(line)));
        if !matches!(sent, Some(Ok(()))) {
            return Err(std::io::Error::other(
                "the file's writer thread has stopped",
            ));
        }
        earlier
    }

    /// Waits until every queued line is written (blocking: not for async code).
    pub fn flush(&self) -> std::io::Result<()> {
        let (done_tx, done_rx) = channel();
        if let Some(tx) = &self.tx {
            if tx.send(Job::Flush(done_tx)).is_ok() {
                let _ = done_rx.recv();
            }
        }
        self.take_error()
    }

    fn take_error(&self) -> std::io::Result<()> {
        match self.failed.lock().expect("writer error lock").take() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}

impl Drop for AppendWriter {
    fn drop(&mut self) {
        drop(self.tx.take());
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_arrive_in_order_and_drop_waits_for_them() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("log.jsonl");
        let file = File::create(&path).unwrap();
        let w = AppendWriter::new(file, "test").unwrap();
        for i in 0..1000 {
            w.append(format!("{i}\n").into_bytes()).unwrap();
        }
        drop(w);
        let text = std::fs::read_to_string(&path).unwrap();
        let expected: String = (0..1000).map(|i| format!("{i}\n")).collect();
        assert_eq!(text, expected);
    }

    #[test]
    fn a_failed_write_is_reported_by_flush() {
        // A file opened read-only refuses writes.
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ro");
        std::fs::write(&path, "").unwrap();
        let w = AppendWriter::new(File::open(&path).unwrap(), "ro").unwrap();
        w.append(b"x\n".to_vec()).unwrap();
        assert!(w.flush().is_err());
        assert!(w.flush().is_ok(), "an error is reported once");
    }
}
