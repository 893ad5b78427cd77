//! Tokens in a real OS keychain: a private D-Bus session with GNOME Keyring's Secret
//! Service (unlocked with a throwaway password, its keyrings in a temporary home), the
//! Python SDK server that requires sign-in, and the real CLI with no credentials setting:
//! harness9 finds the keychain, keeps the tokens there (no credentials file) and forgets
//! them on logout.

use std::io::{BufRead, Write};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::json;

use super::support::auth::{python_auth_server, redirect_browser};
use super::support::server::free_port;
use super::support::wait::poll_until;
use super::support::{external, stderr, stdout, Project};

/// A child process killed on drop.
struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The programs this test needs; under CI they must be there (scripts/setup.sh installs
/// them), elsewhere the test is skipped.
fn tools_present() -> bool {
    let found = ["dbus-daemon", "dbus-send", "gnome-keyring-daemon"]
        .iter()
        .all(|p| {
            Command::new("which")
                .arg(p)
                .stdout(Stdio::null())
                .status()
                .is_ok_and(|s| s.success())
        });
    if !found {
        assert!(
            std::env::var_os("CI").is_none(),
            "dbus-daemon, dbus-send and gnome-keyring-daemon are needed; run scripts/setup.sh"
        );
        eprintln!("skipped: no dbus-daemon or gnome-keyring-daemon (run scripts/setup.sh)");
    }
    found
}

/// A session bus; returns it and its address.
fn session_bus() -> (Killed, String) {
    let mut child = Command::new("dbus-daemon")
        .args(["--session", "--nofork", "--print-address=1"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start dbus-daemon");
    let mut line = String::new();
    std::io::BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    (Killed(child), line.trim().to_string())
}

fn has_secret_service(bus: &str) -> bool {
    Command::new("dbus-send")
        .args([
            &format!("--bus={bus}"),
            "--print-reply",
            "--dest=org.freedesktop.DBus",
            "/org/freedesktop/DBus",
            "org.freedesktop.DBus.NameHasOwner",
            "string:org.freedesktop.secrets",
        ])
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).contains("boolean true"))
}

/// Whether the keyring's default collection (the login keyring, unlocked with the
/// throwaway password) exists yet: until it does, a write has nowhere to go.
fn has_default_collection(bus: &str) -> bool {
    Command::new("dbus-send")
        .args([
            &format!("--bus={bus}"),
            "--print-reply",
            "--dest=org.freedesktop.secrets",
            "/org/freedesktop/secrets",
            "org.freedesktop.Secret.Service.ReadAlias",
            "string:default",
        ])
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).contains("/collection/"))
}

fn keyring(bus: &str, home: &Path) -> Killed {
    let mut child = Command::new("gnome-keyring-daemon")
        .args(["--foreground", "--unlock", "--components=secrets"])
        .env("DBUS_SESSION_BUS_ADDRESS", bus)
        .env("HOME", home)
        .env("XDG_DATA_HOME", home.join("data"))
        .env_remove("XDG_RUNTIME_DIR")
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start gnome-keyring-daemon");
    child.stdin.take().unwrap().write_all(b"throwaway").unwrap();
    poll_until(
        "the Secret Service on the bus",
        Duration::from_secs(15),
        || has_secret_service(bus) && has_default_collection(bus),
    );
    Killed(child)
}

#[test]
fn tokens_are_kept_in_the_secret_service_when_one_answers() {
    let Some(python) = external("H9_PYTHON") else {
        return;
    };
    if !tools_present() {
        return;
    }
    let scratch = tempfile::tempdir().unwrap();
    let home = scratch.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let (_bus, address) = session_bus();
    let _keyring = keyring(&address, &home);
    let port = free_port();
    let _server = python_auth_server(&python, port, &scratch.path().join("events"));
    let project = Project::new(&json!({"mcpServers": {
        "srv": {"type": "http", "url": format!("http://127.0.0.1:{port}/mcp")}
    }}));
    let run = |args: &[&str]| {
        let args: Vec<&str> = args.iter().copied().chain(["--yes"]).collect();
        let out = project
            .command(&args)
            // No credentials setting: harness9 finds the keychain by itself.
            .env_remove("HARNESS9_CREDENTIALS")
            .env("DBUS_SESSION_BUS_ADDRESS", &address)
            .env("HOME", &home)
            .env_remove("XDG_RUNTIME_DIR")
            .env("BROWSER", redirect_browser(&python))
            .output()
            .unwrap();
        (out.status.code(), stdout(&out), stderr(&out))
    };

    let (code, out, err) = run(&["mcp", "login", "srv"]);
    assert_eq!(code, Some(0), "{out}{err}");
    assert!(
        out.contains("Tokens are kept in the system keychain (Secret Service)\n"),
        "{out}"
    );
    let credentials = project.data.path().join("credentials.json");
    assert!(
        !credentials.exists(),
        "no credentials file beside a keychain"
    );

    let (code, out, err) = run(&["mcp", "call", "srv", "echo", r#"{"text": "kept"}"#]);
    assert_eq!((code, out.as_str()), (Some(0), "kept\n"), "{err}");

    let (code, out, err) = run(&["mcp", "logout", "srv"]);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(
        out,
        "Signed out of \"srv\"; its tokens were removed from the system keychain (Secret Service)\n"
    );
    let (_, out, _) = run(&["mcp", "list", "--json"]);
    let rows: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(rows[0]["status"], "needs-auth", "{out}");
}
