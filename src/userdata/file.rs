//! One JSON file of user data: cached in memory under its generation, changed under the
//! shared lock by re-reading and merging, replaced through an exclusive temp file.
//!
//! Reading and writing are blocking: call them off the async runtime.

use std::fs::File;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use parking_lot::{Condvar, Mutex};
use serde::de::DeserializeOwned;
use serde::Serialize;

use super::UserDataError;

/// The lock file every user-data writer holds, in the folder of the files.
pub const LOCK_FILE: &str = "userdata.lock";

/// What identifies one version of a file without reading it. A replace by rename gives a
/// new inode; size and times catch an in-place edit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Stamp {
    dev: u64,
    ino: u64,
    size: u64,
    mtime_ns: i128,
    ctime_ns: i128,
}

#[cfg(unix)]
fn stamp_of(meta: &std::fs::Metadata) -> Stamp {
    use std::os::unix::fs::MetadataExt;
    Stamp {
        dev: meta.dev(),
        ino: meta.ino(),
        size: meta.size(),
        mtime_ns: i128::from(meta.mtime()) * 1_000_000_000 + i128::from(meta.mtime_nsec()),
        ctime_ns: i128::from(meta.ctime()) * 1_000_000_000 + i128::from(meta.ctime_nsec()),
    }
}

#[cfg(not(unix))]
fn stamp_of(meta: &std::fs::Metadata) -> Stamp {
    let ns = |t: std::io::Result<std::time::SystemTime>| {
        t.ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map_or(0, |d| d.as_nanos() as i128)
    };
    Stamp {
        dev: 0,
        ino: 0,
        size: meta.len(),
        mtime_ns: ns(meta.modified()),
        ctime_ns: ns(meta.created()),
    }
}

struct Cached<T> {
    /// `None`: the file did not exist.
    stamp: Option<Stamp>,
    value: Arc<T>,
}

/// One change waiting for a writer.
type Job<T> = Box<dyn FnOnce(&mut T) + Send>;

/// How a queued change ended: `None` while waiting; the error as kind and text (one write
/// error is reported to every change of its batch).
type Outcome = Arc<Mutex<Option<Result<(), (std::io::ErrorKind, String, bool)>>>>;

/// One user-data file. Cheap to clone; clones share the cache and the queue of changes.
pub struct JsonFile<T> {
    path: PathBuf,
    cache: Arc<Mutex<Option<Cached<T>>>>,
    /// Changes of this process not written yet, and whether a writer is at work: the
    /// next writer writes all waiting changes in one locked update (group commit), so
    /// concurrent changes cost one write, not one each.
    writing: Arc<(Mutex<Queue<T>>, Condvar)>,
}

struct Queue<T> {
    jobs: Vec<(Job<T>, Outcome)>,
    busy: bool,
}

impl<T> Default for Queue<T> {
    fn default() -> Self {
        Queue {
            jobs: Vec::new(),
            busy: false,
        }
    }
}

impl<T> Clone for JsonFile<T> {
    fn clone(&self) -> Self {
        JsonFile {
            path: self.path.clone(),
            cache: self.cache.clone(),
            writing: self.writing.clone(),
        }
    }
}

impl<T> std::fmt::Debug for JsonFile<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JsonFile")
            .field("path", &self.path)
            .finish()
    }
}

impl<T: Default + Serialize + DeserializeOwned> JsonFile<T> {
    pub fn at(path: PathBuf) -> Self {
        JsonFile {
            path,
            cache: Arc::default(),
            writing: Arc::default(),
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The file's content now: from the cache when the file is the version it was read
    /// from (one `stat`), read again otherwise. Blocking.
    pub fn current(&self) -> Arc<T> {
        let now = std::fs::metadata(&self.path).ok().map(|m| stamp_of(&m));
        if let Some(c) = self.cache.lock().as_ref() {
            if c.stamp == now {
                return c.value.clone();
            }
        }
        let (stamp, value) = self.read();
        let value = Arc::new(value);
        *self.cache.lock() = Some(Cached {
            stamp,
            value: value.clone(),
        });
        value
    }

    /// Reads the file and the stamp of the very version read (a missing or unreadable
    /// file is empty).
    fn read(&self) -> (Option<Stamp>, T) {
        let Ok(mut f) = File::open(&self.path) else {
            return (None, T::default());
        };
        let stamp = f.metadata().ok().map(|m| stamp_of(&m));
        let mut bytes = Vec::new();
        if f.read_to_end(&mut bytes).is_err() {
            return (stamp, T::default());
        }
        (stamp, serde_json::from_slice(&bytes).unwrap_or_default())
    }

    /// Applies a change to the file as it is on disk, under the lock shared by every
    /// user-data writer, and writes it back. Changes made at the same time by other
    /// threads of this process go into the same write. Blocking.
    pub fn update<R: Send + 'static>(
        &self,
        edit: impl FnOnce(&mut T) -> R + Send + 'static,
    ) -> Result<R, UserDataError> {
        let answer: Arc<Mutex<Option<R>>> = Arc::default();
        let outcome: Outcome = Arc::default();
        let slot = answer.clone();
        let job: Job<T> = Box::new(move |value: &mut T| {
            *slot.lock() = Some(edit(value));
        });
        let (queue, wake) = &*self.writing;
        let mut q = queue.lock();
        q.jobs.push((job, outcome.clone()));
        // Until a writer (this thread or another) has written this change.
        while outcome.lock().is_none() {
            if q.busy {
                wake.wait(&mut q);
                continue;
            }
            q.busy = true;
            let (jobs, outcomes): (Vec<Job<T>>, Vec<Outcome>) =
                std::mem::take(&mut q.jobs).into_iter().unzip();
            drop(q);
            {
                let _done = BatchDone {
                    writing: &self.writing,
                    outcomes: &outcomes,
                };
                self.write_batch(&outcomes, |value| {
                    jobs.into_iter().for_each(|job| job(value))
                });
            }
            q = queue.lock();
        }
        drop(q);
        let done = outcome.lock().take();
        match done {
            Some(Ok(())) => answer.lock().take().ok_or_else(|| UserDataError::Write {
                path: self.path.display().to_string(),
                source: std::io::Error::other("the change was not applied"),
            }),
            Some(Err((kind, text, lock))) => {
                let source = std::io::Error::new(kind, text);
                let path = self.path.display().to_string();
                Err(if lock {
                    UserDataError::Lock { path, source }
                } else {
                    UserDataError::Write { path, source }
                })
            }
            None => Err(UserDataError::Write {
                path: self.path.display().to_string(),
                source: std::io::Error::other("the change was not written"),
            }),
        }
    }

    /// Applies a batch of changes under the lock and writes the file once; tells each
    /// change's outcome.
    fn write_batch(&self, outcomes: &[Outcome], apply: impl FnOnce(&mut T)) {
        let result = self.write_locked(apply);
        let told = result.as_ref().map(|_| ()).map_err(|e| match e {
            UserDataError::Lock { source, .. } => (source.kind(), e.to_string(), true),
            UserDataError::Write { source, .. } => (source.kind(), e.to_string(), false),
        });
        for o in outcomes {
            *o.lock() = Some(told.clone());
        }
    }

    fn write_locked(&self, apply: impl FnOnce(&mut T)) -> Result<(), UserDataError> {
        let dir = folder_of(&self.path);
        std::fs::create_dir_all(dir).map_err(|source| UserDataError::Write {
            path: dir.display().to_string(),
            source,
        })?;
        let _lock = Lock::take(&dir.join(LOCK_FILE))?;
        let (_, mut value) = self.read();
        apply(&mut value);
        let bytes = serde_json::to_vec_pretty(&value).unwrap_or_default();
        replace(&self.path, &bytes).map_err(|source| UserDataError::Write {
            path: self.path.display().to_string(),
            source,
        })?;
        let stamp = std::fs::metadata(&self.path).ok().map(|m| stamp_of(&m));
        *self.cache.lock() = Some(Cached {
            stamp,
            value: Arc::new(value),
        });
        Ok(())
    }
}

/// Ends a batch even when a change panicked: its changes are told they failed, and the
/// next writer may go.
struct BatchDone<'a, T> {
    writing: &'a (Mutex<Queue<T>>, Condvar),
    outcomes: &'a [Outcome],
}

impl<T> Drop for BatchDone<'_, T> {
    fn drop(&mut self) {
        for o in self.outcomes {
            o.lock().get_or_insert_with(|| {
                Err((
                    std::io::ErrorKind::Other,
                    "the change failed while it was applied".into(),
                    false,
                ))
            });
        }
        let (queue, wake) = self.writing;
        queue.lock().busy = false;
        wake.notify_all();
    }
}

fn folder_of(path: &Path) -> &Path {
    path.parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
}

/// The shared writer lock; released when dropped (the descriptor closes).
struct Lock {
    _file: File,
}

impl Lock {
    fn take(path: &Path) -> Result<Lock, UserDataError> {
        let failed = |source| UserDataError::Lock {
            path: path.display().to_string(),
            source,
        };
        let mut o = std::fs::OpenOptions::new();
        o.read(true).write(true).create(true).truncate(false);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            o.mode(0o600)
                .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC);
        }
        let file = o.open(path).map_err(failed)?;
        #[cfg(unix)]
        {
            use std::os::unix::io::AsRawFd;
            loop {
                // SAFETY: flock on a descriptor we own; released when the file is closed.
                if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX) } == 0 {
                    break;
                }
                let e = std::io::Error::last_os_error();
                if e.kind() != std::io::ErrorKind::Interrupted {
                    return Err(failed(e));
                }
            }
        }
        Ok(Lock { _file: file })
    }
}

/// Replaces `path` with `bytes`: a temp file created exclusively in the same folder (so
/// nothing planted at its name, a symlink included, is ever opened), fsynced, renamed over
/// the target, and the folder fsynced so the rename survives a crash.
fn replace(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let dir = folder_of(path);
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "data".into());
    let mut attempts = 0;
    let (tmp, mut file) = loop {
        // A name nobody can guess ahead (a random part), and unique within the process.
        let mut random = [0u8; 8];
        let _ = getrandom::fill(&mut random);
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let tmp = dir.join(format!(
            ".{name}.{}.{n}.{:016x}.tmp",
            std::process::id(),
            u64::from_le_bytes(random)
        ));
        let mut o = std::fs::OpenOptions::new();
        // create_new is O_CREAT|O_EXCL: it fails on anything at that name, a dangling
        // symlink too, instead of writing through it.
        o.write(true).create_new(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            o.mode(0o600)
                .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC);
        }
        match o.open(&tmp) {
            Ok(f) => break (tmp, f),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && attempts < 16 => {
                attempts += 1;
            }
            Err(e) => return Err(e),
        }
    };
    let written = (|| {
        file.write_all(bytes)?;
        file.sync_all()?;
        drop(file);
        std::fs::rename(&tmp, path)?;
        if let Ok(d) = File::open(dir) {
            d.sync_all()?;
        }
        Ok(())
    })();
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    type Map = BTreeMap<String, u32>;

    #[test]
    fn another_writer_is_seen_at_once_and_merged_not_overwritten() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.json");
        let (a, b) = (JsonFile::<Map>::at(path.clone()), JsonFile::<Map>::at(path));
        assert!(a.current().is_empty());
        b.update(|m| m.insert("b".into(), 1)).unwrap();
        assert_eq!(a.current().get("b"), Some(&1), "a sees b's write");
        a.update(|m| m.insert("a".into(), 2)).unwrap();
        b.update(|m| m.insert("c".into(), 3)).unwrap();
        assert_eq!(a.current().len(), 3, "{:?}", a.current());
    }

    #[cfg(unix)]
    #[test]
    fn a_symlink_planted_at_a_temp_name_is_not_followed() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.json");
        let victim = dir.path().join("victim");
        std::fs::write(&victim, "keep").unwrap();
        // The name earlier versions wrote through.
        let old = dir
            .path()
            .join(format!(".x.json.{}.tmp", std::process::id()));
        std::os::unix::fs::symlink(&victim, old).unwrap();
        let f = JsonFile::<Map>::at(path.clone());
        for i in 0..3 {
            f.update(move |m| m.insert(format!("k{i}"), i)).unwrap();
        }
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep");
        assert!(!std::fs::symlink_metadata(&path).unwrap().is_symlink());
        assert_eq!(f.current().len(), 3);
    }

    #[test]
    fn changes_from_many_threads_share_writes_and_none_is_lost() {
        let dir = tempfile::tempdir().unwrap();
        let f = JsonFile::<Map>::at(dir.path().join("x.json"));
        std::thread::scope(|s| {
            for t in 0..8 {
                let f = f.clone();
                s.spawn(move || {
                    for i in 0..25 {
                        f.update(move |m| m.insert(format!("{t}-{i}"), i)).unwrap();
                    }
                });
            }
        });
        assert_eq!(f.current().len(), 200);
        let other = JsonFile::<Map>::at(dir.path().join("x.json"));
        assert_eq!(other.current().len(), 200);
    }
}
