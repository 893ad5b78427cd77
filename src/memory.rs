//! Giving memory back to the system after a burst of work (servers starting, a large tool
//! listing handed to a front end). The allocator keeps what such a burst freed in its free
//! lists, where it counts against the app for as long as it runs; a trim returns the free
//! pages. Requests close together make one trim, once things have been quiet for a moment.

#[cfg(all(target_os = "linux", target_env = "gnu"))]
use std::sync::atomic::{AtomicU64, Ordering};

/// How long after the last request the trim runs.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
const QUIET: std::time::Duration = std::time::Duration::from_millis(1500);

/// Bumped by every request: only the latest one's timer trims.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
static LATEST: AtomicU64 = AtomicU64::new(0);

/// Asks for a trim once nothing else has asked for [`QUIET`]. Needs a tokio runtime (does
/// nothing outside one) and does nothing where the allocator has no trim.
pub fn trim_soon() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        let Ok(rt) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let mine = LATEST.fetch_add(1, Ordering::Relaxed) + 1;
        rt.spawn(async move {
            tokio::time::sleep(QUIET).await;
            if LATEST.load(Ordering::Relaxed) == mine {
                // SAFETY: malloc_trim only returns free memory to the system; it is
                // thread-safe and has no preconditions.
                let _ = tokio::task::spawn_blocking(|| unsafe { libc::malloc_trim(0) }).await;
            }
        });
    }
}
