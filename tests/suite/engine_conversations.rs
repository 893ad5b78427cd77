//! Conversations kept on disk: reopened after a restart (the latest, or one by id),
//! listed without blocking the runtime, opened off the runtime with their history.

use std::io::Write;
use std::sync::Arc;

use harness9::engine::{ConversationChoice, Engine, EngineOptions};
use serde_json::json;

use super::support::provider_stub::{Reply, Stub, Wire};
use super::support::turns::*;
use super::support::wait::{poll_for_async, DEADLINE};
use super::support::Project;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conversations_reopen_after_a_restart() {
    let project = Project::fixture(json!({}));
    let harness = started(&project).await;
    let stub = Stub::start(
        Wire::Anthropic,
        vec![
            Reply::tool("mcp__fx__echo", json!({"text": "remember me"})),
            Reply::text("Noted."),
            Reply::text("You asked me to remember."),
        ],
    )
    .await;
    let first = harness.engine(options(&project, &stub)).unwrap();
    completed(&run(&first, "remember this").await);
    let id = first.conversation_id().to_string();
    drop(first);

    let mut opts = options(&project, &stub);
    opts.conversation = ConversationChoice::Latest;
    let second = harness.engine(opts).unwrap();
    assert_eq!(second.conversation_id(), id);
    assert_eq!(second.messages(), {
        let again = Engine::new(
            project.path(),
            harness.registry().clone(),
            EngineOptions {
                conversation: ConversationChoice::Resume(id.clone()),
                ..options(&project, &stub)
            },
        )
        .unwrap();
        again.messages()
    });
    assert_eq!(second.messages().len(), 4);
    let events = run(&second, "what did I ask?").await;
    assert_eq!(completed(&events), "You asked me to remember.");
    let msgs = stub.requests()[2].messages().clone();
    assert_eq!(msgs.len(), 5);
    assert_eq!(msgs[0]["content"][0]["text"], "remember this");
    assert_eq!(msgs[2]["content"][0]["content"][0]["text"], "remember me");
    let summaries = Engine::conversations(project.data.path(), project.path());
    assert_eq!(summaries.len(), 1);
    assert_eq!(summaries[0].title, "remember this");
    assert_eq!(summaries[0].messages, 6);
    harness.shutdown().await;
}

/// Listing conversations reads every file on tokio's blocking pool: a file that cannot be
/// read yet (a pipe nobody writes to) holds up the listing, never the runtime's only thread.
#[tokio::test(flavor = "current_thread")]
async fn listing_conversations_never_blocks_the_runtime() {
    use std::os::unix::fs::OpenOptionsExt;
    let project = Project::new(&json!({"mcpServers": {}}));
    let store =
        harness9::engine::store::ConversationStore::new(project.data.path(), project.path());
    std::fs::create_dir_all(store.dir()).unwrap();
    let pipe = store.dir().join("0000000000001-00001.jsonl");
    let made = std::process::Command::new("mkfifo")
        .arg(&pipe)
        .status()
        .unwrap();
    assert!(made.success());
    let header = json!({"type": "header", "project": "p", "created_ms": 1});
    let message = json!({"type": "message", "message": {"role": "user", "content": [{"type": "text", "text": "hello pipe"}]}});
    let text = format!("{header}\n{message}\n");
    // Should the listing block this thread, nothing here runs until the pipe is written to:
    // a thread of its own writes it when the test has waited too long, and says so.
    let rescued = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let (done, wait_done) = std::sync::mpsc::channel::<()>();
    let rescue = std::thread::spawn({
        let (pipe, text, rescued) = (pipe.clone(), text.clone(), rescued.clone());
        move || {
            if wait_done.recv_timeout(DEADLINE) != Err(std::sync::mpsc::RecvTimeoutError::Timeout) {
                return;
            }
            if let Ok(mut w) = std::fs::OpenOptions::new()
                .write(true)
                .custom_flags(libc::O_NONBLOCK)
                .open(&pipe)
            {
                rescued.store(true, std::sync::atomic::Ordering::SeqCst);
                let _ = w.write_all(text.as_bytes());
            }
        }
    });
    let (data, folder) = (
        project.data.path().to_path_buf(),
        project.path().to_path_buf(),
    );
    let listing = tokio::spawn(async move { Engine::list_conversations(&data, &folder).await });
    // The listing waits in the pipe's open for a writer (opening it to write without
    // blocking succeeds once a reader waits), while this task goes on running.
    let mut writer = poll_for_async("the listing to wait for the pipe", DEADLINE, || {
        assert!(
            !rescued.load(std::sync::atomic::Ordering::SeqCst),
            "the runtime was blocked while the listing waited for the pipe"
        );
        let opened = std::fs::OpenOptions::new()
            .write(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(&pipe);
        async move { opened.map_err(|e| e.to_string()) }
    })
    .await;
    assert!(!listing.is_finished());
    writer.write_all(text.as_bytes()).unwrap();
    drop(writer);
    let listed = tokio::time::timeout(DEADLINE, listing)
        .await
        .unwrap()
        .unwrap();
    done.send(()).unwrap();
    rescue.join().unwrap();
    assert_eq!(listed.len(), 1, "{listed:?}");
    assert_eq!(listed[0].title, "hello pipe");
}

/// Reopening a conversation through the async door gives what the blocking one gives.
#[tokio::test(flavor = "current_thread")]
async fn engines_open_off_the_runtime_with_their_history() {
    let project = Project::new(&json!({"mcpServers": {}}));
    let harness = project.harness();
    let stub = Stub::start(Wire::Anthropic, vec![Reply::text("Hi.")]).await;
    let first = harness.open_engine(options(&project, &stub)).await.unwrap();
    completed(&run(&first, "remember this").await);
    let id = first.conversation_id().to_string();
    drop(first);
    let again = harness
        .open_engine(EngineOptions {
            conversation: ConversationChoice::Resume(id.clone()),
            ..options(&project, &stub)
        })
        .await
        .unwrap();
    assert_eq!(again.conversation_id(), id);
    assert_eq!(again.messages().len(), 2);
}
