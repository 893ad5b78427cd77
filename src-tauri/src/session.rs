//! The app's state: the open project (one [`Harness`] with its config watcher) and the
//! tasks that forward the core's status, tool and config changes to the window as events.
//! Log streams in flight are kept by id so the UI can stop them (tool calls are numbered
//! and cancelled by the core).
//!
//! Opening a project never blocks the window: the harness starts its servers in the
//! background and the status events follow.

use parking_lot::Mutex;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use harness9::harness::ProjectInfo;
use harness9::manager::RestartPolicy;
use harness9::watch::ConfigWatcher;
use harness9::{Harness, HarnessOptions};
use tauri::ipc::Channel;
use tauri::{AppHandle, Emitter, Manager};
use tokio::sync::RwLock;
use tokio::task::AbortHandle;

use crate::bridge::{events, BridgeError, BridgeResult, LogFollowDto, ProjectEmitter};

/// How long closing the app waits for servers to stop: the whole stdio close sequence
/// (stdin close, SIGTERM, SIGKILL) plus a margin.
pub const SHUTDOWN_TIMEOUT: Duration =
    harness9::mcp::transport::stdio::CLOSE_DEADLINE.saturating_add(Duration::from_secs(1));

/// How long the first project's servers wait for the window's first frame before starting
/// anyway: the window paints first, the servers start right behind it.
pub const FIRST_PAINT_WAIT: Duration = Duration::from_millis(1500);

/// Lines of a server's output sent when the panel opens.
pub const LOG_TAIL_LINES: usize = 500;

/// One open project.
pub struct Session {
    pub harness: Arc<Harness>,
    pub project: ProjectInfo,
    _watcher: Option<ConfigWatcher>,
    tasks: Vec<AbortHandle>,
}

impl Drop for Session {
    fn drop(&mut self) {
        for t in &self.tasks {
            t.abort();
        }
    }
}

#[derive(Default)]
pub struct AppState {
    session: RwLock<Option<Arc<Session>>>,
    follows: Mutex<HashMap<u32, AbortHandle>>,
    next_id: AtomicU32,
    /// The number of the last project session opened ([`ProjectEmitter::session`]).
    next_session: AtomicU32,
    pub startup: Startup,
    /// Install plans shown in the window ([`crate::plans`]).
    pub plans: crate::plans::Plans,
    /// A bundle the app was opened with (or that was dropped on its window), until the
    /// window takes it.
    pub opened_bundle: Mutex<Option<String>>,
}

/// When the process started, for the "window painted after" figure.
pub struct Startup {
    /// Age of the process when `main` began (from /proc; zero where unknown).
    before_main: Duration,
    main_started: Instant,
    painted_ms: Mutex<Option<f64>>,
    painted: tokio::sync::watch::Sender<bool>,
}

impl Default for Startup {
    fn default() -> Self {
        Startup {
            before_main: process_age().unwrap_or_default(),
            main_started: Instant::now(),
            painted_ms: Mutex::default(),
            painted: tokio::sync::watch::channel(false).0,
        }
    }
}

impl Startup {
    /// Records the first painted frame, `page_ms` after the page began loading (later
    /// calls keep the first figure).
    pub fn painted(&self, page_ms: f64) -> f64 {
        self.painted.send_replace(true);
        let mut p = self.painted_ms.lock();
        *p.get_or_insert_with(|| {
            let ms = (self.before_main + self.main_started.elapsed()).as_secs_f64() * 1000.0;
            if std::env::var_os("HARNESS9_REPORT_STARTUP").is_some() {
                eprintln!(
                    "harness9-desktop: window painted {ms:.0} ms after launch \
                     (the page took {page_ms:.0} ms of it; main started after {:.0} ms)",
                    self.before_main.as_secs_f64() * 1000.0
                );
            }
            ms
        })
    }

    /// Resolves once the first frame is painted (or after [`FIRST_PAINT_WAIT`]).
    fn first_paint(&self) -> impl std::future::Future<Output = ()> + Send + 'static {
        let mut rx = self.painted.subscribe();
        async move {
            let _ = tokio::time::timeout(FIRST_PAINT_WAIT, rx.wait_for(|p| *p)).await;
        }
    }
}

/// How long ago this process was started, from /proc (Linux only).
fn process_age() -> Option<Duration> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // Fields after the command name (which may hold spaces) start after the last ')'.
    let rest = &stat[stat.rfind(')')? + 2..];
    let start_ticks: f64 = rest.split_whitespace().nth(19)?.parse().ok()?;
    let uptime: f64 = std::fs::read_to_string("/proc/uptime")
        .ok()?
        .split_whitespace()
        .next()?
        .parse()
        .ok()?;
    // The kernel reports start time in USER_HZ ticks, 100 on every Linux ABI.
    let age = uptime - start_ticks / 100.0;
    (age >= 0.0).then(|| Duration::from_secs_f64(age))
}

impl AppState {
    pub async fn session(&self) -> Option<Arc<Session>> {
        self.session.read().await.clone()
    }

    /// The answer to a request for a view's document (the view scheme's handler).
    pub async fn view_document(
        &self,
        target: crate::views::scheme::Target,
    ) -> crate::views::scheme::Answer {
        match self.session().await {
            Some(s) => crate::views::document(&s.harness, &target),
            None => crate::views::scheme::Answer::not_found(),
        }
    }

    /// Whether the open project shows MCP Apps views ([`crate::quit`]). Answered without
    /// waiting: while a project is being opened or closed (the slot is locked for that),
    /// none is shown, as the window tears a project's views down before it asks for
    /// another, and the new one has none yet.
    pub fn views_live(&self) -> bool {
        self.session.try_read().is_ok_and(|slot| {
            slot.as_ref()
                .is_some_and(|s| !s.harness.live_views().is_empty())
        })
    }

    pub async fn open_session(&self) -> BridgeResult<Arc<Session>> {
        self.session().await.ok_or_else(BridgeError::no_project)
    }

    pub async fn harness(&self) -> BridgeResult<Arc<Harness>> {
        self.session()
            .await
            .map(|s| s.harness.clone())
            .ok_or_else(BridgeError::no_project)
    }

    /// Opens a project folder (closing the current one) and starts its servers in the
    /// background.
    pub async fn open(&self, app: &AppHandle, folder: PathBuf) -> BridgeResult<ProjectInfo> {
        let folder = std::fs::canonicalize(&folder)
            .map_err(|e| BridgeError::folder(format!("cannot open {}: {e}", folder.display())))?;
        if !folder.is_dir() {
            return Err(BridgeError::folder(format!(
                "{} is not a folder",
                folder.display()
            )));
        }
        // Opened once (from the command line, too): the window may open it again.
        crate::folders::offer(&folder);
        let mut slot = self.session.write().await;
        if let Some(old) = slot.take() {
            let _ = tokio::time::timeout(SHUTDOWN_TIMEOUT, old.harness.shutdown()).await;
        }
        self.stop_all_follows();
        // Asking the login shell for PATH may take a moment: not on the async workers.
        let dir = folder.clone();
        let harness = tokio::task::spawn_blocking(move || {
            Harness::open(
                &dir,
                HarnessOptions {
                    restart: Some(RestartPolicy::default()),
                    ..HarnessOptions::default()
                },
            )
        })
        .await
        .map_err(BridgeError::from)?;
        let harness = Arc::new(harness);
        // Always announced: without a configured provider a request is answered with an
        // error naming what to set (and the server's log shows it).
        harness.enable_sampling(harness9::engine::sampling::SamplingSource::Settings(
            Default::default(),
        ));
        // The window renders MCP Apps views: servers started from now on are told.
        harness.enable_apps();
        let watcher = match harness.watch_config() {
            Ok(w) => Some(w),
            Err(e) => {
                tracing::warn!("{e}; .mcp.json changes made outside the app need a reopen");
                None
            }
        };
        let project = harness.project_info();
        let emitter = ProjectEmitter {
            app: app.clone(),
            project: project.path.clone(),
            session: self.next_session.fetch_add(1, Ordering::Relaxed) + 1,
        };
        let mut tasks = vec![
            forward_status(emitter.clone(), &harness),
            forward_tools(emitter.clone(), &harness),
            crate::asks::forward(emitter.clone(), &harness),
            crate::resources::forward(emitter.clone(), &harness),
            crate::views::forward(emitter.clone(), &harness),
            crate::tasks::forward(emitter.clone(), &harness),
        ];
        if let Some(w) = &watcher {
            tasks.push(forward_config(emitter.clone(), w));
        }
        let starter = harness.clone();
        let painted = self.startup.first_paint();
        tasks.push(
            tokio::spawn(async move {
                painted.await;
                starter.start(None).await;
                // Tasks of an earlier run: an HTTP server's are followed again.
                starter.resume_tasks().await;
            })
            .abort_handle(),
        );
        *slot = Some(Arc::new(Session {
            harness,
            project: project.clone(),
            _watcher: watcher,
            tasks,
        }));
        drop(slot);
        crate::recent::remember(&folder);
        if let Some(window) = app.get_webview_window("main") {
            let _ = window.set_title(&format!("{} — harness9", project.name));
        }
        let _ = app.emit(events::PROJECT_CHANGED, &project);
        Ok(project)
    }

    /// Stops every server of the open project; used when the app quits.
    pub async fn shutdown(&self) {
        if let Some(s) = self.session.write().await.take() {
            let _ = tokio::time::timeout(SHUTDOWN_TIMEOUT, s.harness.shutdown()).await;
        }
    }

    fn next_id(&self) -> u32 {
        self.next_id.fetch_add(1, Ordering::Relaxed) + 1
    }

    /// Sends a server's recent output now and every new line on `channel` until
    /// [`AppState::unfollow`].
    pub async fn follow_log(
        &self,
        server: &str,
        channel: Channel<harness9::mcp::LogLine>,
    ) -> BridgeResult<LogFollowDto> {
        let harness = self.harness().await?;
        let mut follow = harness
            .follow_log(server, LOG_TAIL_LINES)
            .ok_or_else(|| BridgeError::no_server(server))?;
        let lines = std::mem::take(&mut follow.recent);
        let id = self.next_id();
        let task = tokio::spawn(async move {
            while let Some(line) = follow.next().await {
                if channel.send(line).is_err() {
                    return;
                }
            }
        });
        self.follows.lock().insert(id, task.abort_handle());
        Ok(LogFollowDto {
            follow_id: id,
            lines,
        })
    }

    pub fn unfollow(&self, id: u32) {
        if let Some(t) = self.follows.lock().remove(&id) {
            t.abort();
        }
    }

    fn stop_all_follows(&self) {
        for (_, t) in self.follows.lock().drain() {
            t.abort();
        }
    }

    /// Calls a tool by hand; the core's number of the call goes to `started` at once (for
    /// [`AppState::cancel_call`]).
    pub async fn call_tool(
        &self,
        server: String,
        tool: String,
        arguments: serde_json::Value,
        started: Channel<u64>,
    ) -> BridgeResult<harness9::harness::TimedResult> {
        let harness = self.harness().await?;
        let call = harness.start_call(&server, &tool, arguments);
        let _ = started.send(call.id);
        call.outcome().await.map_err(BridgeError::from)
    }

    pub async fn cancel_call(&self, call_id: u64) {
        if let Ok(harness) = self.harness().await {
            harness.cancel_call(call_id);
        }
    }
}

fn forward_status(app: ProjectEmitter, harness: &Harness) -> AbortHandle {
    let mut rx = harness.subscribe_status();
    // A change of the stored user data (a grant revoked by the CLI) sends the status again:
    // the views that show grants and rules fetch them anew on each status.
    let mut user_data = harness.subscribe_user_data();
    tokio::spawn(async move {
        loop {
            let snapshot = rx.borrow_and_update().clone();
            app.emit(events::STATUS, snapshot);
            let changed = tokio::select! {
                c = rx.changed() => c,
                c = user_data.changed() => c,
            };
            if changed.is_err() {
                return;
            }
        }
    })
    .abort_handle()
}

fn forward_tools(app: ProjectEmitter, harness: &Harness) -> AbortHandle {
    let mut rx = harness.subscribe_tools();
    tokio::spawn(async move {
        while rx.changed().await.is_ok() {
            app.emit(events::TOOLS_CHANGED, ());
            // Coalesce bursts (twenty servers connecting at once) into a few refreshes.
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .abort_handle()
}

fn forward_config(app: ProjectEmitter, watcher: &ConfigWatcher) -> AbortHandle {
    let mut rx = watcher.subscribe();
    tokio::spawn(async move {
        while rx.changed().await.is_ok() {
            let change = rx.borrow_and_update().clone();
            app.emit(events::CONFIG_CHANGED, change);
        }
    })
    .abort_handle()
}
