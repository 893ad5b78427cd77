//! Asks: what servers ask of the host and the user. Elicitation (a form, or agreeing to
//! open a URL) and sampling (letting the host's model answer) wait in one queue
//! (`queue`) until a front end answers them (`view` is how they show and how a reply
//! reads); `roots/list` gets the project folder and the extra roots. Every server's client
//! gets its handler from here (`handler`, through the manager's
//! [`RequestHandlers`] hook); sampling requests go through one consent flow
//! (`sampling`).
//!
//! Invariants: the service holds no reference to the manager (a handler lives as long as
//! its client); sampling is announced only to servers started after it was turned on; an
//! "always" grant holds for the server's entry as it was granted.

mod handler;
mod queue;
mod sampling;
mod view;
pub use queue::{
    Ask, AskAnswer, AskError, AskKind, SamplingChoice, Unanswered, ViewAsk, DEFAULT_ASK_TIMEOUT,
};
pub use sampling::NO_SAMPLER;
pub use view::{
    AskDetail, AskReply, AskView, ReplyError, Resolved, SAMPLING_REFUSAL, VIEW_REFUSAL,
};

use parking_lot::Mutex;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::watch;

use crate::config::ServerConfig;
use crate::manager::RequestHandlers;
use crate::mcp::elicit_form::FieldValue;
use crate::mcp::handler::{ClientHandler, Handles};
use crate::mcp::log::{LogSource, ServerLog};
use crate::mcp::requests::Root;
use crate::mcp::sampling::Sampler;
use crate::trust::sampling::SamplingGrants;

/// What the handlers of all servers share; no reference back to the manager.
struct Shared {
    queue: Arc<queue::AskQueue>,
    sampling: AtomicBool,
    /// Announce MCP Apps (the host renders views) to servers started from now on.
    apps: AtomicBool,
    sampler: Mutex<Option<Arc<dyn Sampler>>>,
    grants: SamplingGrants,
    project: PathBuf,
    project_root: Root,
    extra_roots: Mutex<Vec<Root>>,
}

impl Shared {
    fn sampler(&self) -> Option<Arc<dyn Sampler>> {
        self.sampler.lock().clone()
    }

    fn roots(&self) -> Vec<Root> {
        let mut roots = vec![self.project_root.clone()];
        roots.extend(self.extra_roots.lock().iter().cloned());
        roots
    }
}

/// Writes what became of a server's request to its log.
#[derive(Clone)]
struct Notes {
    server: String,
    log: Arc<ServerLog>,
}

impl Notes {
    fn note(&self, text: &str) {
        tracing::info!(server = %self.server, "{text}");
        self.log.push(LogSource::Host, "info", text);
    }
}

/// The asks of one project's servers: the consent queue, sampling and roots.
pub struct Asks {
    shared: Arc<Shared>,
}

impl RequestHandlers for Asks {
    /// The handler given to one server's client at connect; an "always" sampling grant is
    /// bound to the fingerprint of the entry it starts with.
    fn handler(
        &self,
        server: &str,
        cfg: &ServerConfig,
        log: Arc<ServerLog>,
    ) -> Arc<dyn ClientHandler> {
        let shared = self.shared.clone();
        let sampling = shared.sampling.load(Ordering::Relaxed);
        let handles = Handles {
            elicitation_form: true,
            elicitation_url: true,
            sampling,
            // Tools in sampling requests go to the model like any other request.
            sampling_tools: sampling,
            roots: true,
            roots_list_changed: true,
            apps: shared.apps.load(Ordering::Relaxed),
        };
        Arc::new(handler::ServerHandler {
            server: server.to_string(),
            fingerprint: Some(cfg.fingerprint(&shared.project)),
            shared,
            handles,
            notes: Notes {
                server: server.to_string(),
                log,
            },
        })
    }
}

impl Asks {
    /// The asks of `project`'s servers, with the sampling grants kept beside the approvals.
    pub fn new(project: &Path, approvals: &Path) -> Asks {
        let name = project
            .file_name()
            .map(|n| n.to_string_lossy().into_owned());
        Asks {
            shared: Arc::new(Shared {
                queue: Arc::default(),
                sampling: AtomicBool::new(false),
                apps: AtomicBool::new(false),
                sampler: Mutex::default(),
                grants: SamplingGrants::beside(approvals),
                project: project.to_path_buf(),
                project_root: Root::of_path(project, name),
                extra_roots: Mutex::default(),
            }),
        }
    }

    /// Wakes on every change of the pending asks; holding one makes you a front end (asks
    /// wait for its answer instead of getting their default at once).
    pub fn subscribe(&self) -> watch::Receiver<Arc<Vec<Ask>>> {
        self.shared.queue.subscribe()
    }

    /// The asks waiting for an answer, oldest first.
    pub fn pending(&self) -> Arc<Vec<Ask>> {
        self.shared.queue.pending()
    }

    /// Answers a pending ask.
    pub fn answer(&self, id: u64, answer: AskAnswer) -> Result<(), AskError> {
        self.shared.queue.answer(id, answer)
    }

    /// Accepts form ask `id` with what the user typed in its form: the content is built
    /// and checked here, fields left out get the schema's defaults; fields that do not fit
    /// come back as [`AskError::Invalid`] and the ask stays pending.
    pub fn answer_form(
        &self,
        id: u64,
        values: &BTreeMap<String, FieldValue>,
    ) -> Result<(), AskError> {
        self.shared.queue.answer_form(id, values)
    }

    /// How long asks wait for an answer (tests shorten it).
    pub fn set_timeout(&self, timeout: Duration) {
        self.shared.queue.set_timeout(timeout);
    }

    /// Whether servers started from now on are told the client handles sampling (off
    /// by default: only turn it on when something answers sampling asks).
    pub fn set_sampling(&self, enabled: bool) {
        self.shared.sampling.store(enabled, Ordering::Relaxed);
    }

    /// Whether sampling is turned on ([`Asks::set_sampling`]).
    pub fn sampling_enabled(&self) -> bool {
        self.shared.sampling.load(Ordering::Relaxed)
    }

    /// Whether servers started from now on are told the host renders MCP Apps views (the
    /// `io.modelcontextprotocol/ui` extension in the client capabilities, in both eras).
    /// Off by default: only a front end that shows views turns it on.
    pub fn set_apps(&self, enabled: bool) {
        self.shared.apps.store(enabled, Ordering::Relaxed);
    }

    /// Asks the user on behalf of view `view_id` of `server` (MCP Apps), through the same
    /// queue as the servers' own asks; the answer, or why there is none.
    pub async fn ask_for_view(
        &self,
        server: &str,
        view_id: &str,
        request: ViewAsk,
    ) -> Result<AskAnswer, Unanswered> {
        let kind = AskKind::View {
            view_id: view_id.to_string(),
            request,
        };
        self.shared.queue.ask(server, kind).answer().await
    }

    /// Runs a view's `sampling/createMessage` through the same consent flow as its
    /// server's own requests (an "always" grant for the server covers its views too);
    /// what became of it goes to the server's `log`.
    pub async fn sample_for_view(
        &self,
        server: &str,
        fingerprint: Option<String>,
        log: Arc<ServerLog>,
        request: crate::mcp::requests::CreateMessageRequest,
    ) -> Result<crate::mcp::requests::CreateMessageResult, crate::mcp::jsonrpc::RpcError> {
        sampling::SamplingFlow {
            shared: self.shared.clone(),
            server: server.to_string(),
            fingerprint,
            notes: Notes {
                server: server.to_string(),
                log,
            },
            task: None,
        }
        .run(request)
        .await
    }

    /// What runs approved sampling requests (`None`: they are answered with an error that
    /// says sampling has no model here).
    pub fn set_sampler(&self, sampler: Option<Arc<dyn Sampler>>) {
        *self.shared.sampler.lock() = sampler;
    }

    /// The servers of this project that may use the model without asking, with the
    /// fingerprint of the entry each grant holds for. Reads the store off the runtime.
    pub async fn sampling_grants(&self) -> BTreeMap<String, String> {
        let shared = self.shared.clone();
        tokio::task::spawn_blocking(move || shared.grants.granted(&shared.project))
            .await
            .unwrap_or_default()
    }

    /// Withdraws a server's "always" grant: its next sampling request asks again.
    /// `Ok(true)` when there was one.
    pub async fn revoke_sampling(&self, server: &str) -> std::io::Result<bool> {
        let shared = self.shared.clone();
        let server = server.to_string();
        tokio::task::spawn_blocking(move || shared.grants.revoke(&shared.project, &server))
            .await
            .map_err(std::io::Error::other)?
    }

    /// The roots every server gets: the project folder first, then the extra ones.
    pub fn roots(&self) -> Vec<Root> {
        self.shared.roots()
    }

    /// Replaces the extra roots (folders besides the project). Returns whether they
    /// changed: then the connected servers are to be told
    /// (`notifications/roots/list_changed`).
    pub fn set_extra_roots(&self, folders: &[PathBuf]) -> bool {
        let roots: Vec<Root> = folders
            .iter()
            .map(|f| Root::of_path(f, f.file_name().map(|n| n.to_string_lossy().into_owned())))
            .collect();
        let mut extra = self.shared.extra_roots.lock();
        if *extra == roots {
            return false;
        }
        *extra = roots;
        true
    }
}
