use super::*;

fn tokens(access: &str) -> StoredTokens {
    StoredTokens {
        access_token: access.into(),
        refresh_token: Some(format!("refresh-{access}")),
        expires_at: Some(1_900_000_000),
        issued_at: Some(1_899_996_400),
        scopes: vec!["read".into()],
        issuer: "https://auth.example".into(),
        token_endpoint: None,
    }
}

fn client() -> StoredClient {
    StoredClient {
        client_id: "client-1".into(),
        client_secret: Some("shh-client-secret".into()),
        token_endpoint_auth_method: "client_secret_post".into(),
        redirect_uri: "http://127.0.0.1:4000/callback".into(),
    }
}

fn exercise(store: &CredentialStore) {
    let r = "https://mcp.example/mcp";
    assert_eq!(store.tokens(r), None);
    store.save_tokens(r, &tokens("a1")).unwrap();
    assert_eq!(store.tokens(r), Some(tokens("a1")));
    store.save_tokens(r, &tokens("a2")).unwrap();
    assert_eq!(store.tokens(r), Some(tokens("a2")));
    store
        .save_client("https://auth.example", &client())
        .unwrap();
    assert_eq!(store.client("https://auth.example"), Some(client()));
    assert_eq!(store.forget_tokens(r), Ok(true));
    assert_eq!(store.forget_tokens(r), Ok(false));
    assert_eq!(store.tokens(r), None);
    store.forget_client("https://auth.example").unwrap();
    assert_eq!(store.client("https://auth.example"), None);
}

#[test]
fn memory_store_keeps_and_forgets() {
    exercise(&CredentialStore::memory());
    assert_eq!(CredentialStore::memory().location(), "in memory only");
}

#[test]
fn file_store_keeps_and_forgets_across_instances() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sub").join(CREDENTIALS_FILE);
    exercise(&CredentialStore::file(path.clone()));
    let a = CredentialStore::file(path.clone());
    a.save_tokens("https://x/mcp", &tokens("t")).unwrap();
    let b = CredentialStore::file(path.clone());
    assert_eq!(b.tokens("https://x/mcp"), Some(tokens("t")));
    assert_eq!(
        a.location(),
        format!("a file readable only by you: {}", path.display())
    );
    assert_eq!(a.file_path(), Some(path.as_path()));
}

#[cfg(unix)]
#[test]
fn file_is_private_and_fixed_when_it_was_not() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(CREDENTIALS_FILE);
    let store = CredentialStore::file(path.clone());
    store.save_tokens("https://x/mcp", &tokens("t")).unwrap();
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&path), 0o600);
    assert_eq!(store.warning(), None);

    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
    let again = CredentialStore::file(path.clone());
    assert_eq!(again.tokens("https://x/mcp"), Some(tokens("t")));
    assert_eq!(mode(&path), 0o600);
    let warning = again.warning().expect("a warning");
    assert!(
        warning.contains("was readable by other users (mode 644)"),
        "{warning}"
    );
    assert!(warning.contains("it is now private"), "{warning}");
}

#[test]
fn forgetting_removes_the_token_from_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(CREDENTIALS_FILE);
    let store = CredentialStore::file(path.clone());
    store
        .save_tokens("https://x/mcp", &tokens("secret-access"))
        .unwrap();
    assert!(std::fs::read_to_string(&path)
        .unwrap()
        .contains("secret-access"));
    store.forget_tokens("https://x/mcp").unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(!text.contains("secret-access"), "{text}");
    assert!(!text.contains("refresh-secret-access"), "{text}");
}

#[test]
fn a_damaged_file_is_reported_without_its_content() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(CREDENTIALS_FILE);
    std::fs::write(&path, "{\"tokens\": {\"x\": \"secret-access-token\"").unwrap();
    let store = CredentialStore::file(path.clone());
    assert_eq!(store.tokens("x"), None);
    let err = store
        .save_tokens("y", &tokens("t"))
        .unwrap_err()
        .to_string();
    assert!(err.contains("is damaged"), "{err}");
    assert!(err.contains("delete it and sign in again"), "{err}");
    assert!(!err.contains("secret-access-token"), "{err}");
}

#[test]
fn debug_output_holds_no_secret() {
    let shown = format!("{:?} {:?}", tokens("secret-access"), client());
    assert!(!shown.contains("secret-access"), "{shown}");
    assert!(!shown.contains("shh-client-secret"), "{shown}");
    assert!(shown.contains("https://auth.example"), "{shown}");
}

#[test]
fn the_choice_forces_a_backend() {
    let dir = tempfile::tempdir().unwrap();
    let file = CredentialStore::open_as("file", dir.path());
    assert_eq!(
        file.file_path(),
        Some(dir.path().join(CREDENTIALS_FILE).as_path())
    );
    assert_eq!(
        CredentialStore::open_as("memory", dir.path()).location(),
        "in memory only"
    );
}

#[cfg(all(unix, not(target_os = "macos")))]
#[test]
fn without_a_bus_the_file_is_chosen_at_once() {
    // Only meaningful where no D-Bus session exists (CI, containers).
    if std::env::var_os("DBUS_SESSION_BUS_ADDRESS").is_some()
        || std::env::var_os("XDG_RUNTIME_DIR").is_some()
    {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let store = CredentialStore::open_as("auto", dir.path());
    assert!(store.file_path().is_some(), "{}", store.location());
    // Decided without asking a keychain (and so without waiting for one to answer).
    assert_eq!(
        probe_keychain(KEYCHAIN_PROBE_TIMEOUT).map_err(|e| e.to_string()),
        Err("no D-Bus session".to_string())
    );
}

#[test]
fn checked_saves_do_not_undo_a_sign_out_or_newer_tokens() {
    let store = CredentialStore::memory();
    let r = "https://mcp.example/mcp";
    store.save_tokens(r, &tokens("a1")).unwrap();
    let since = store.sign_outs(r);
    // A refresh from a1 that ends while a1 is still kept: saved.
    assert_eq!(
        store.save_tokens_if(r, &tokens("a2"), Some(&tokens("a1")), since),
        Ok(true)
    );
    // One that started from a1 (someone kept a2 meanwhile): not saved.
    assert_eq!(
        store.save_tokens_if(r, &tokens("b"), Some(&tokens("a1")), since),
        Ok(false)
    );
    assert_eq!(store.tokens(r), Some(tokens("a2")));
    // A refused a1 is not forgotten over a2; a refused a2 is.
    assert_eq!(store.forget_tokens_if(r, &tokens("a1")), Ok(false));
    assert_eq!(store.forget_tokens_if(r, &tokens("a2")), Ok(true));
    assert_eq!(store.tokens(r), None);
    // After a sign-out, a sign-in that started before it keeps nothing, even though the
    // store holds what it started from (nothing); one started after it does.
    let before = store.sign_outs(r);
    assert_eq!(store.forget_tokens(r), Ok(false));
    assert_eq!(
        store.save_tokens_if(r, &tokens("c"), None, before),
        Ok(false)
    );
    assert_eq!(store.tokens(r), None);
    let after = store.sign_outs(r);
    assert_eq!(store.save_tokens_if(r, &tokens("c"), None, after), Ok(true));
    assert_eq!(store.tokens(r), Some(tokens("c")));
}

/// Another process holds the file's lock and writes newer tokens while a checked save
/// waits for it: the save must compare with what the file holds once it has the lock (so
/// it refuses), not with what it read before.
#[cfg(target_os = "linux")]
#[test]
fn a_checked_save_compares_under_the_file_lock() {
    use std::os::unix::fs::MetadataExt;
    use std::os::unix::io::AsRawFd;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(CREDENTIALS_FILE);
    let r = "https://mcp.example/mcp";
    let store = std::sync::Arc::new(CredentialStore::file(path.clone()));
    store.save_tokens(r, &tokens("a1")).unwrap();

    // The other process: takes the lock the store uses.
    let lock = std::fs::File::open(path.with_extension("lock")).unwrap();
    let inode = lock.metadata().unwrap().ino();
    // SAFETY: flock on a descriptor we own; released when it is closed.
    assert_eq!(unsafe { libc::flock(lock.as_raw_fd(), libc::LOCK_EX) }, 0);

    let saving = store.clone();
    let save =
        std::thread::spawn(move || saving.save_tokens_if(r, &tokens("b1"), Some(&tokens("a1")), 0));
    // Wait until the save is blocked on the lock (a waiter shows in /proc/locks as `->`).
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let waiting = || {
        std::fs::read_to_string("/proc/locks")
            .unwrap_or_default()
            .lines()
            .any(|l| l.contains("->") && l.contains(&format!(":{inode} ")))
    };
    while !waiting() {
        assert!(
            std::time::Instant::now() < deadline,
            "the save never waited for the lock"
        );
        std::thread::yield_now();
    }
    // Meanwhile the other process keeps newer tokens, then lets go.
    let mut kept: Kept = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    kept.tokens.insert(r.to_string(), tokens("c1"));
    std::fs::write(&path, serde_json::to_vec(&kept).unwrap()).unwrap();
    drop(lock);

    assert_eq!(save.join().unwrap(), Ok(false));
    assert_eq!(store.tokens(r), Some(tokens("c1")));
}
