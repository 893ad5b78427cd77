//! A server process listening on a loopback port (a real MCP server over HTTP, an
//! authorization server), killed with its process group when dropped.

use std::process::{Child, Command, Stdio};
use std::time::Duration;

use super::wait::poll_until;

/// A free TCP port on 127.0.0.1 (free when asked; the server binds it soon after).
pub fn free_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().port()
}

/// A server on `127.0.0.1:port`, killed (with its group) on drop.
pub struct LoopbackServer {
    child: Child,
    pub port: u16,
}

impl LoopbackServer {
    /// Starts `cmd` in a process group of its own, output discarded, and waits until it
    /// listens on `port` (30 s at most: a Node or Python server can take a while to load).
    pub fn start(mut cmd: Command, port: u16) -> LoopbackServer {
        use std::os::unix::process::CommandExt;
        let what = format!("{cmd:?}");
        let child = cmd
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0)
            .spawn()
            .unwrap_or_else(|e| panic!("start {what}: {e}"));
        let server = LoopbackServer { child, port };
        poll_until(
            &format!("{what} to listen on 127.0.0.1:{port}"),
            Duration::from_secs(30),
            || std::net::TcpStream::connect(("127.0.0.1", port)).is_ok(),
        );
        server
    }

    /// `http://127.0.0.1:<port><path>`.
    pub fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }
}

impl Drop for LoopbackServer {
    fn drop(&mut self) {
        // SAFETY: signalling our own child's process group.
        unsafe {
            libc::killpg(self.child.id() as i32, libc::SIGKILL);
        }
        let _ = self.child.wait();
    }
}
