//! One JSON file of user data: cached in memory under its generation, changed under the
//! shared lock by re-reading and merging, replaced through an exclusive temp file.
//!
//! Reading and writing are blocking: call them off the async runtime.

use std::fs::File;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use parking_lot::Mutex;
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

/// One user-data file. Cheap to clone; clones share the cache.
pub struct JsonFile<T> {
    path: PathBuf,
    cache: Arc<Mutex<Option<Cached<T>>>>,
}

impl<T> Clone for JsonFile<T> {
    fn clone(&self) -> Self {
        JsonFile {
            path: self.path.clone(),
            cache: self.cache.clone(),
        }
    }
}

impl<T> std::fmt::Debug for JsonFile<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JsonFile").field("path", &self.path).finish()
    }
}

impl<T: Default + Serialize + DeserializeOwned> JsonFile<T> {
    pub fn at(path: PathBuf) -> Self {
        JsonFile {
            path,
            cache: Arc::default(),
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
    /// user-data writer, and writes it back. Blocking.
    pub fn update<R>(&self, edit: impl FnOnce(&mut T) -> R) -> Result<R, UserDataError> {
        let dir = folder_of(&self.path);
        std::fs::create_dir_all(dir).map_err(|source| UserDataError::Write {
            path: dir.display().to_string(),
            source,
        })?;
        let _lock = Lock::take(&dir.join(LOCK_FILE))?;
        let (_, mut value) = self.read();
        let out = edit(&mut value);
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
        Ok(out)
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
            o.mode(0o600).custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC);
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
    let (tmp, mut file) = loop {
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let tmp = dir.join(format!(".{name}.{}.{n}.tmp", std::process::id()));
        let mut o = std::fs::OpenOptions::new();
        // create_new is O_CREAT|O_EXCL: it fails on anything at that name, a dangling
        // symlink too, instead of writing through it.
        o.write(true).create_new(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            o.mode(0o600).custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC);
        }
        match o.open(&tmp) {
            Ok(f) => break (tmp, f),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && n % 1000 != 999 => {}
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
        for n in 0..64 {
            let tmp = dir
                .path()
                .join(format!(".x.json.{}.{n}.tmp", std::process::id()));
            std::os::unix::fs::symlink(&victim, tmp).unwrap();
        }
        let f = JsonFile::<Map>::at(path.clone());
        f.update(|m| m.insert("k".into(), 1)).unwrap();
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep");
        assert!(!std::fs::symlink_metadata(&path).unwrap().is_symlink());
    }
}
