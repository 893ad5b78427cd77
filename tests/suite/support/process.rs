//! Processes the tests start or look for: marks in the environment, `/proc` readings, the
//! CLI as a child with piped output.

use std::path::Path;
use std::process::{Child, Output, Stdio};
use std::time::Duration;

use super::project::Project;
use super::wait::{poll_for, try_poll_for};

/// A value unique to this test process and call, put in the servers' environment to find
/// them later.
pub fn unique_mark() -> String {
    use std::sync::atomic::{AtomicU32, Ordering};
    static N: AtomicU32 = AtomicU32::new(0);
    format!(
        "{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    )
}

/// Live processes (zombies left out) whose environment holds `H9_TEST_MARK=<mark>`.
pub fn processes_with_mark(mark: &str) -> Vec<u32> {
    let needle = format!("H9_TEST_MARK={mark}");
    let mut pids = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(env) = std::fs::read(entry.path().join("environ")) else {
            continue;
        };
        if state(pid).is_some_and(|s| s != 'Z')
            && env.split(|b| *b == 0).any(|kv| kv == needle.as_bytes())
        {
            pids.push(pid);
        }
    }
    pids
}

/// Waits until no process carries `mark`; fails naming those left after `limit`.
pub fn wait_none_marked(mark: &str, limit: Duration) {
    poll_for("no marked process to be left", limit, || {
        let left = processes_with_mark(mark);
        if left.is_empty() {
            Ok(())
        } else {
            Err(format!("left: {left:?}"))
        }
    })
}

/// The state letter of process `pid` (`Z` for a zombie), or `None` once it is reaped.
pub fn state(pid: u32) -> Option<char> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat.rsplit_once(')')?.1.trim_start().chars().next()
}

/// A line of `/proc/<pid>/status` (`VmHWM`, `Threads`, …) as a number.
fn status_number(pid: u32, key: &str) -> Option<u64> {
    let status =
        std::fs::read_to_string(Path::new("/proc").join(pid.to_string()).join("status")).ok()?;
    let line = status
        .lines()
        .find(|l| l.strip_prefix(key).is_some_and(|r| r.starts_with(':')))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// The peak resident set of a running process, in KiB.
pub fn vm_hwm_kib(pid: u32) -> Option<u64> {
    status_number(pid, "VmHWM")
}

/// How many threads process `pid` runs.
pub fn threads(pid: u32) -> Option<u64> {
    status_number(pid, "Threads")
}

/// The CLI on `p` ([`Project::command`]), started with piped output.
pub fn cli_child(p: &Project, args: &[&str]) -> Child {
    p.command(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Waits for `child` while reading its peak resident memory (`VmHWM`, KiB): the kernel
/// keeps the peak, the reading only has to come before the process ends.
pub fn output_with_peak_rss(child: Child) -> (Output, u64) {
    let pid = child.id();
    let sampler = std::thread::spawn(move || {
        let mut peak = 0;
        while let Some(kib) = vm_hwm_kib(pid) {
            peak = peak.max(kib);
            std::thread::sleep(Duration::from_millis(20));
        }
        peak
    });
    let out = child.wait_with_output().unwrap();
    (out, sampler.join().unwrap())
}

/// Waits for `child` (reading its output meanwhile) for `limit` at most; a child still
/// running then is killed and the test fails.
pub fn output_within(mut child: Child, limit: Duration) -> Output {
    use std::io::Read;
    fn drain(r: Option<impl Read + Send + 'static>) -> std::thread::JoinHandle<Vec<u8>> {
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            if let Some(mut r) = r {
                let _ = r.read_to_end(&mut buf);
            }
            buf
        })
    }
    let (out, err) = (drain(child.stdout.take()), drain(child.stderr.take()));
    let status = try_poll_for(limit, || child.try_wait().unwrap().ok_or_else(String::new));
    let Ok(status) = status else {
        let _ = child.kill();
        let _ = child.wait();
        panic!("the process did not end within {limit:?}");
    };
    Output {
        status,
        stdout: out.join().unwrap(),
        stderr: err.join().unwrap(),
    }
}
