//! The credentials file: JSON in the data directory, created with mode 0600, replaced
//! atomically (a private temporary file renamed over it) under an advisory lock so two
//! processes never lose each other's updates. A file found readable by others is made
//! private again and a warning recorded.

use parking_lot::Mutex;
use std::io::Write;
use std::path::{Path, PathBuf};

use super::{CredentialError, Kept};

/// Permission bits of the credentials file and its lock file: the user only.
#[cfg(unix)]
pub const FILE_MODE: u32 = 0o600;

pub struct FileBackend {
    path: PathBuf,
    warning: Mutex<Option<String>>,
}

impl FileBackend {
    pub fn new(path: PathBuf) -> FileBackend {
        FileBackend {
            path,
            warning: Mutex::default(),
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn warning(&self) -> Option<String> {
        self.warning.lock().clone()
    }

    /// What the file holds (nothing when it does not exist yet).
    pub fn load(&self) -> Result<Kept, CredentialError> {
        let text = match std::fs::read_to_string(&self.path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Kept::default()),
            Err(e) => {
                return Err(CredentialError::ReadFile {
                    path: self.path.display().to_string(),
                    reason: e.to_string(),
                })
            }
        };
        self.check_permissions();
        serde_json::from_str(&text).map_err(|e| CredentialError::Damaged {
            path: self.path.display().to_string(),
            // Only the position: the text around it may hold a token.
            position: position(&e),
        })
    }

    /// Reads, changes and writes the file under the lock; returns what `change` returned.
    pub fn update<T>(&self, change: impl FnOnce(&mut Kept) -> T) -> Result<T, CredentialError> {
        let dir = self.path.parent().unwrap_or(Path::new("."));
        std::fs::create_dir_all(dir).map_err(|e| CredentialError::CreateDir {
            dir: dir.display().to_string(),
            reason: e.to_string(),
        })?;
        let _lock = FileLock::take(&self.path.with_extension("lock"))?;
        let mut kept = self.load()?;
        let out = change(&mut kept);
        let text =
            serde_json::to_vec_pretty(&kept).map_err(|e| CredentialError::Encode(e.to_string()))?;
        write_private(&self.path, &text).map_err(|e| CredentialError::WriteFile {
            path: self.path.display().to_string(),
            reason: e.to_string(),
        })?;
        Ok(out)
    }

    #[cfg(unix)]
    fn check_permissions(&self) {
        use std::os::unix::fs::PermissionsExt;
        let Ok(meta) = std::fs::metadata(&self.path) else {
            return;
        };
        let mode = meta.permissions().mode() & 0o777;
        if mode & 0o077 == 0 {
            return;
        }
        let fixed =
            std::fs::set_permissions(&self.path, std::fs::Permissions::from_mode(FILE_MODE))
                .is_ok();
        let text = format!(
            "the credentials file {} was readable by other users (mode {mode:o}){}; sign out and in again if others may have read it",
            self.path.display(),
            if fixed { "; it is now private (mode 600)" } else { " and could not be made private" }
        );
        tracing::warn!("{text}");
        *self.warning.lock() = Some(text);
    }

    #[cfg(not(unix))]
    fn check_permissions(&self) {}
}

fn position(e: &serde_json::Error) -> String {
    format!("line {}, column {}", e.line(), e.column())
}

/// Writes `bytes` to a temporary file that is private from its creation, then renames it
/// over `path`.
fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "credentials".into());
    let tmp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
    let result = (|| {
        let _ = std::fs::remove_file(&tmp);
        let mut f = private_options().open(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

fn private_options() -> std::fs::OpenOptions {
    let mut o = std::fs::OpenOptions::new();
    o.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        o.mode(FILE_MODE);
    }
    o
}

/// An exclusive advisory lock on a file beside the credentials, held while it lives.
struct FileLock {
    #[allow(dead_code)] // held for its lock
    file: std::fs::File,
}

impl FileLock {
    fn take(path: &Path) -> Result<FileLock, CredentialError> {
        let mut o = std::fs::OpenOptions::new();
        o.read(true).write(true).create(true).truncate(false);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            o.mode(FILE_MODE);
        }
        let file = o.open(path).map_err(|e| CredentialError::OpenLock {
            path: path.display().to_string(),
            reason: e.to_string(),
        })?;
        #[cfg(unix)]
        {
            use std::os::unix::io::AsRawFd;
            // SAFETY: flock on a descriptor we own; released when the file is closed.
            if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX) } != 0 {
                return Err(CredentialError::Lock {
                    path: path.display().to_string(),
                    reason: std::io::Error::last_os_error().to_string(),
                });
            }
        }
        Ok(FileLock { file })
    }
}
