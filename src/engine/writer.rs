//! Appending to a file from async code without blocking a runtime thread: one dedicated
//! thread per file opens it (creating its folder, ending a torn last line) and then takes
//! whole lines from a channel and writes each with one `write_all`, in the order they were
//! queued. The caller never touches the disk. A failed open or write is reported by the next
//! append (or by [`AppendWriter::flush`]); a file that could not be opened reports it again
//! for every later line, which is dropped. Dropping the writer waits until every queued line
//! is written, so nothing queued is lost when the program ends normally.

use parking_lot::Mutex;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{channel, Sender};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::SystemTime;

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
    /// Starts the thread that owns the file at `path`: it creates the folder, opens the file
    /// for appending (creating it), starts the next line on a line of its own after a torn
    /// last line, and sets the modification time to now (a reopened file counts as in use),
    /// all before the first queued line.
    pub fn open(path: PathBuf, name: &str) -> std::io::Result<AppendWriter> {
        let failed = Arc::new(Mutex::new(None));
        let (tx, rx) = channel::<Job>();
        let failed_in = failed.clone();
        let thread = std::thread::Builder::new()
            .name(format!("append {name}"))
            .spawn(move || {
                let report = |e: std::io::Error| {
                    let mut slot = failed_in.lock();
                    slot.get_or_insert(e);
                };
                let mut file = match open_for_append(&path) {
                    Ok(f) => Ok(f),
                    Err(e) => {
                        let why = format!("could not open it: {e}");
                        report(std::io::Error::new(e.kind(), why.clone()));
                        Err((e.kind(), why))
                    }
                };
                for job in rx {
                    match (job, &mut file) {
                        (Job::Line(line), Ok(file)) => {
                            if let Err(e) = file.write_all(&line) {
                                report(e);
                            }
                        }
                        (Job::Line(_), Err((kind, why))) => {
                            report(std::io::Error::new(*kind, why.clone()))
                        }
                        (Job::Flush(done), _) => {
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
        match self.failed.lock().take() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}

/// Opens `path` for appending, as [`AppendWriter::open`] describes.
fn open_for_append(path: &Path) -> std::io::Result<File> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let mut file = OpenOptions::new().create(true).append(true).open(path)?;
    if ends_mid_line(path) {
        file.write_all(b"\n")?;
    }
    // Only a hint for clean-ups that go by age; a file system without it is no error.
    let _ = file.set_modified(SystemTime::now());
    Ok(file)
}

fn ends_mid_line(path: &Path) -> bool {
    use std::io::{Read, Seek, SeekFrom};
    let Ok(mut f) = File::open(path) else {
        return false;
    };
    let mut last = [0u8; 1];
    f.seek(SeekFrom::End(-1)).is_ok() && f.read_exact(&mut last).is_ok() && last[0] != b'\n'
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
        let path = dir.path().join("new folder").join("log.jsonl");
        let w = AppendWriter::open(path.clone(), "test").unwrap();
        for i in 0..1000 {
            w.append(format!("{i}\n").into_bytes()).unwrap();
        }
        drop(w);
        let text = std::fs::read_to_string(&path).unwrap();
        let expected: String = (0..1000).map(|i| format!("{i}\n")).collect();
        assert_eq!(text, expected);
    }

    #[test]
    fn a_torn_last_line_is_ended_before_the_next() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("log.jsonl");
        std::fs::write(&path, "whole\ntorn").unwrap();
        let w = AppendWriter::open(path.clone(), "test").unwrap();
        w.append(b"next\n".to_vec()).unwrap();
        w.flush().unwrap();
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "whole\ntorn\nnext\n"
        );
    }

    #[test]
    fn a_file_that_cannot_be_opened_is_reported_for_every_line() {
        // Its folder would have to be inside a file.
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("file"), "").unwrap();
        let w = AppendWriter::open(dir.path().join("file").join("log"), "bad").unwrap();
        w.append(b"x\n".to_vec()).ok();
        let e = w.flush().unwrap_err();
        assert!(e.to_string().starts_with("could not open it: "), "{e}");
        w.append(b"y\n".to_vec()).ok();
        assert!(w.flush().is_err(), "still reported");
        assert!(w.flush().is_ok(), "an error is reported once per failure");
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_failed_write_is_reported_by_flush() {
        // Every write to /dev/full fails with "no space left".
        let w = AppendWriter::open(PathBuf::from("/dev/full"), "full").unwrap();
        // The append may already report the failed open (the thread can be that quick);
        // the line itself fails too, so the flush reports in either case.
        w.append(b"x\n".to_vec()).ok();
        assert!(w.flush().is_err());
        assert!(w.flush().is_ok(), "an error is reported once");
    }
}
