//! The reaper: ends every server process group when harness9 dies, however it dies.
//!
//! Design. Each server runs in its own process group (`process_group(0)`, which std
//! spawns with posix_spawn, so a spawn costs no fork of our large multi-threaded process).
//! Once per harness9 process, on the first spawn, we fork one small reaper. It shares a
//! pipe with harness9: harness9 holds the only write end (close-on-exec, so no server
//! inherits it) and writes one record per event: a group id when a server starts, its
//! negation when the group is gone. When harness9 exits or is killed (even `kill -9`),
//! the kernel closes the write end; the reaper reads end of file, sends SIGTERM to every
//! registered group, waits up to [`REAPER_GRACE`] and sends SIGKILL to what is left, then
//! exits. Signalling the group reaches grandchildren too (`sh -c` wrappers, `npx`, `uvx`
//! that fork instead of exec), which a parent-death signal on the direct child cannot.
//!
//! The reaper is a fork without exec, so between fork and exit it makes only
//! async-signal-safe system calls (no allocation, no locks): it moves to its own process
//! group (a Ctrl-C at the terminal is for harness9, not for it), ignores terminal and
//! termination signals, points stdio at /dev/null and closes every other inherited
//! descriptor, so it never keeps a server's stdin open nor a test's output pipe.
//! Registration costs one 4-byte `write` per start and per end.

use std::os::fd::RawFd;
use std::sync::OnceLock;
use std::time::Duration;

/// How long the reaper waits between SIGTERM and SIGKILL once harness9 is gone.
pub const REAPER_GRACE: Duration = Duration::from_millis(1000);

/// Groups the reaper tracks at once; beyond this, new groups are not tracked.
const REAPER_SLOTS: usize = 4096;

/// The write end of the reaper's pipe, or `None` when it could not be started.
fn pipe() -> Option<RawFd> {
    static REAPER: OnceLock<Option<RawFd>> = OnceLock::new();
    *REAPER.get_or_init(start)
}

/// Starts the reaper now (it is otherwise started by the first spawn).
pub fn ensure_started() -> bool {
    pipe().is_some()
}

/// Tells the reaper to end group `pgid` if harness9 dies.
pub fn register(pgid: i32) {
    if pgid > 0 {
        send(pgid);
    }
}

/// Tells the reaper that group `pgid` is gone.
pub fn unregister(pgid: i32) {
    if pgid > 0 {
        send(-pgid);
    }
}

fn send(record: i32) {
    let Some(fd) = pipe() else { return };
    let bytes = record.to_ne_bytes();
    loop {
        // SAFETY: writes 4 bytes from a live buffer to a descriptor we own; writes of at
        // most PIPE_BUF bytes are atomic, so records never interleave.
        let n = unsafe { libc::write(fd, bytes.as_ptr().cast(), bytes.len()) };
        if n >= 0 || std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted {
            return;
        }
    }
}

fn start() -> Option<RawFd> {
    let mut fds: [libc::c_int; 2] = [0; 2];
    // SAFETY: pipe2 fills the two-element array.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        tracing::warn!(
            "cannot start the process reaper: {}",
            std::io::Error::last_os_error()
        );
        return None;
    }
    let (read_end, write_end) = (fds[0], fds[1]);
    // SAFETY: the child runs only `reaper_main`, which makes async-signal-safe calls.
    match unsafe { libc::fork() } {
        -1 => {
            tracing::warn!(
                "cannot start the process reaper: {}",
                std::io::Error::last_os_error()
            );
            // SAFETY: closing descriptors we own.
            unsafe {
                libc::close(read_end);
                libc::close(write_end);
            }
            None
        }
        // SAFETY: we are the forked child.
        0 => unsafe { reaper_main(read_end, write_end) },
        _ => {
            // SAFETY: the child has its copy; ours is not needed.
            unsafe { libc::close(read_end) };
            Some(write_end)
        }
    }
}

/// The reaper's whole life. Only async-signal-safe calls; no allocation.
unsafe fn reaper_main(read_end: RawFd, write_end: RawFd) -> ! {
    libc::close(write_end);
    libc::setpgid(0, 0);
    for sig in [
        libc::SIGINT,
        libc::SIGQUIT,
        libc::SIGHUP,
        libc::SIGTERM,
        libc::SIGPIPE,
        libc::SIGTSTP,
        libc::SIGTTIN,
        libc::SIGTTOU,
    ] {
        libc::signal(sig, libc::SIG_IGN);
    }
    libc::signal(libc::SIGCHLD, libc::SIG_DFL);
    let mut set: libc::sigset_t = std::mem::zeroed();
    libc::sigemptyset(&mut set);
    libc::sigprocmask(libc::SIG_SETMASK, &set, std::ptr::null_mut());
    let null = libc::open(c"/dev/null".as_ptr(), libc::O_RDWR);
    if null >= 0 {
        for fd in 0..3 {
            libc::dup2(null, fd);
        }
    }
    close_others(read_end);

    let mut groups = [0i32; REAPER_SLOTS];
    let mut buf = [0u8; 512];
    let mut have = 0usize;
    loop {
        let n = libc::read(read_end, buf[have..].as_mut_ptr().cast(), buf.len() - have);
        if n < 0 && *libc::__errno_location() == libc::EINTR {
            continue;
        }
        if n <= 0 {
            break;
        }
        have += n as usize;
        let whole = have - have % 4;
        let mut at = 0;
        while at < whole {
            let record = i32::from_ne_bytes([buf[at], buf[at + 1], buf[at + 2], buf[at + 3]]);
            track(&mut groups, record);
            at += 4;
        }
        buf.copy_within(whole..have, 0);
        have -= whole;
    }

    // harness9 is gone: end every registered group.
    for &g in groups.iter().filter(|g| **g > 0) {
        libc::killpg(g, libc::SIGTERM);
    }
    let step = libc::timespec {
        tv_sec: 0,
        tv_nsec: 50_000_000,
    };
    let mut waited = Duration::ZERO;
    // A group seen gone is forgotten at once: its id may be handed to another process's
    // group from then on, so the SIGKILL below goes only to groups still there.
    let exists = |g: i32| libc::killpg(g, 0) == 0;
    while waited < REAPER_GRACE && forget_gone(&mut groups, exists) {
        libc::nanosleep(&step, std::ptr::null_mut());
        waited += Duration::from_millis(50);
    }
    forget_gone(&mut groups, exists);
    for &g in groups.iter().filter(|g| **g > 0) {
        libc::killpg(g, libc::SIGKILL);
    }
    libc::_exit(0)
}

/// Clears the slots of groups that no longer exist; whether any group is left.
fn forget_gone(groups: &mut [i32], exists: impl Fn(i32) -> bool) -> bool {
    let mut left = false;
    for g in groups.iter_mut().filter(|g| **g > 0) {
        if exists(*g) {
            left = true;
        } else {
            *g = 0;
        }
    }
    left
}

fn track(groups: &mut [i32; REAPER_SLOTS], record: i32) {
    if record > 0 {
        if let Some(slot) = groups.iter_mut().find(|g| **g == 0) {
            *slot = record;
        }
    } else if record < 0 {
        let pgid = record.checked_neg().unwrap_or(0);
        if let Some(slot) = groups.iter_mut().find(|g| **g == pgid) {
            *slot = 0;
        }
    }
}

/// Closes every descriptor above 2 except `keep`.
unsafe fn close_others(keep: RawFd) {
    let ranges = [
        (3u32, (keep as u32).wrapping_sub(1)),
        (keep as u32 + 1, u32::MAX),
    ];
    for (first, last) in ranges {
        if first > last {
            continue;
        }
        if libc::syscall(libc::SYS_close_range, first, last, 0) != 0 {
            // Kernels before 5.9: close one by one up to the descriptor limit.
            let mut lim: libc::rlimit = std::mem::zeroed();
            let max = if libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) == 0 {
                lim.rlim_cur.min(1 << 20) as u32
            } else {
                4096
            };
            let mut fd = first;
            while fd <= last && fd < max {
                libc::close(fd as i32);
                fd += 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_group_seen_gone_is_never_signalled_again() {
        let mut groups = [0i32; 4];
        groups[0] = 100;
        groups[2] = 200;
        // 100 is gone on the first look; 200 still runs.
        assert!(forget_gone(&mut groups, |g| g == 200));
        assert_eq!(groups, [0, 0, 200, 0]);
        // Even if the id 100 is in use again later, the slot stays empty.
        assert!(forget_gone(&mut groups, |_| true));
        assert_eq!(groups, [0, 0, 200, 0]);
        assert!(!forget_gone(&mut groups, |_| false));
        assert_eq!(groups, [0; 4]);
    }
}
