//! The façade's share of the client surface beyond tools: resources, prompts, completion,
//! logging levels, roots, and the consent queue through which servers ask the user
//! (elicitation) or the model (sampling). Each method is one call on a host service
//! ([`crate::host::catalog`], [`crate::host::asks`]).
//!
//! Consent model: every elicitation and sampling request becomes an [`Ask`] naming its
//! server. A front end that wants to answer holds [`Harness::subscribe_asks`] (a new ask
//! wakes it at once) and answers with [`Harness::answer_ask`]. When no front end holds
//! one, nothing waits: an elicitation is declined and a sampling request refused, and the
//! server is told so.
//!
//! Sampling ([`Harness::enable_sampling`]): the core checks that a model is configured,
//! asks (an [`AskKind::Sampling`](crate::host::asks::AskKind) the user answers with
//! [`AskAnswer::Approve`]: "always for this server" and "review the answer" are choices),
//! runs the request on the model and, when the user chose to review, asks again with the
//! answer ([`AskKind::SamplingReview`](crate::host::asks::AskKind): Send or Refuse).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Map, Value};
use tokio::sync::{broadcast, watch};

use super::Harness;
use crate::engine::sampling::{EngineSampler, SamplingSource};
use crate::host::asks::{
    Ask, AskAnswer, AskError, AskKind, AskReply, AskView, Asks, ReplyError, Resolved,
};
use crate::host::catalog::{
    FeatureError, ServerDetails, ServerFeatures, ServerPrompt, ServerResource, ServerTemplate,
    SurfaceEvent,
};
use crate::manager::Manager;
use crate::mcp::auth::Opener;
use crate::mcp::elicit_form::FieldErrors;
use crate::mcp::features::{
    Completion, CompletionRef, GetPromptResult, LogLevel, ReadResourceResult,
};
use crate::mcp::requests::{ElicitResult, Root};
use crate::mcp::ToolDef;

/// Most suggestions [`Harness::complete`] passes on (the spec caps a server's answer at
/// 100).
pub const MAX_COMPLETION_VALUES: usize = 100;

/// How long a listing call waits for servers that connected but are still being listed.
pub const FEATURES_WAIT: Duration = Duration::from_secs(30);

impl Harness {
    /// What each connected server (or one) offers beyond tools.
    pub async fn features(
        &self,
        server: Option<&str>,
    ) -> Result<Vec<(String, Arc<ServerFeatures>)>, FeatureError> {
        self.catalog
            .features(&self.manager, server, FEATURES_WAIT)
            .await
    }

    /// Every resource of the connected servers (or of one), all pages.
    pub async fn resources(
        &self,
        server: Option<&str>,
    ) -> Result<Vec<ServerResource>, FeatureError> {
        let all = self.features(server).await?;
        Ok(all
            .iter()
            .flat_map(|(s, f)| {
                f.resources.iter().map(|r| ServerResource {
                    server: s.clone(),
                    resource: r.clone(),
                })
            })
            .collect())
    }

    /// Every resource template of the connected servers (or of one).
    pub async fn resource_templates(
        &self,
        server: Option<&str>,
    ) -> Result<Vec<ServerTemplate>, FeatureError> {
        let all = self.features(server).await?;
        Ok(all
            .iter()
            .flat_map(|(s, f)| {
                f.templates.iter().map(|t| ServerTemplate {
                    server: s.clone(),
                    template: t.clone(),
                })
            })
            .collect())
    }

    /// Every prompt of the connected servers (or of one).
    pub async fn prompts(&self, server: Option<&str>) -> Result<Vec<ServerPrompt>, FeatureError> {
        let all = self.features(server).await?;
        Ok(all
            .iter()
            .flat_map(|(s, f)| {
                f.prompts.iter().map(|p| ServerPrompt {
                    server: s.clone(),
                    prompt: p.clone(),
                })
            })
            .collect())
    }

    pub async fn read_resource(
        &self,
        server: &str,
        uri: &str,
    ) -> Result<ReadResourceResult, FeatureError> {
        self.catalog.read_resource(&self.manager, server, uri).await
    }

    /// Whether the server lets clients subscribe to resource updates.
    pub fn can_subscribe(&self, server: &str) -> bool {
        self.manager
            .connected(server)
            .is_ok_and(|c| c.can_subscribe())
    }

    /// Updates of the resource arrive as [`SurfaceEvent::ResourceUpdated`].
    pub async fn subscribe_resource(&self, server: &str, uri: &str) -> Result<(), FeatureError> {
        self.catalog
            .subscribe_resource(&self.manager, server, uri, true)
            .await
    }

    pub async fn unsubscribe_resource(&self, server: &str, uri: &str) -> Result<(), FeatureError> {
        self.catalog
            .subscribe_resource(&self.manager, server, uri, false)
            .await
    }

    pub async fn get_prompt(
        &self,
        server: &str,
        name: &str,
        arguments: Map<String, Value>,
    ) -> Result<GetPromptResult, FeatureError> {
        self.catalog
            .get_prompt(&self.manager, server, name, arguments)
            .await
    }

    /// Suggestions for a prompt argument or a template variable, as typed so far.
    pub async fn complete(
        &self,
        server: &str,
        reference: &CompletionRef,
        argument: &str,
        value: &str,
        context: &Map<String, Value>,
    ) -> Result<Completion, FeatureError> {
        let mut c = self
            .catalog
            .complete(&self.manager, server, reference, argument, value, context)
            .await?;
        c.values.truncate(MAX_COMPLETION_VALUES);
        Ok(c)
    }

    /// Sets a server's logging level; it is remembered for the session and set again
    /// whenever the server restarts.
    pub async fn set_log_level(&self, server: &str, level: LogLevel) -> Result<(), FeatureError> {
        self.catalog
            .set_log_level(&self.manager, server, level)
            .await
    }

    /// A connected server's title, loadable icons, and logging level (for details views).
    pub fn server_details(&self, server: &str) -> Result<ServerDetails, FeatureError> {
        self.catalog.server_details(&self.manager, server)
    }

    /// Listing changes, resource updates, finished URL elicitations.
    pub fn subscribe_surface(&self) -> broadcast::Receiver<SurfaceEvent> {
        self.catalog.subscribe()
    }

    /// The roots servers get: the project folder, then the extra roots.
    pub fn roots(&self) -> Vec<Root> {
        self.asks.roots()
    }

    /// Sets the extra roots; connected servers are told the roots changed.
    pub fn set_extra_roots(&self, folders: &[PathBuf]) {
        apply_extra_roots(&self.asks, &self.manager, folders)
    }

    /// The tool definitions as their servers listed them (annotations, titles, icons).
    pub fn tool_defs(&self, server: Option<&str>) -> Vec<(String, ToolDef)> {
        self.pins.tool_defs(server)
    }

    /// The asks waiting for the user; holding the receiver makes the caller a front end
    /// (asks wait for its answer instead of getting their default at once).
    pub fn subscribe_asks(&self) -> watch::Receiver<Arc<Vec<Ask>>> {
        self.asks.subscribe()
    }

    pub fn pending_asks(&self) -> Vec<Ask> {
        self.asks.pending().as_ref().clone()
    }

    pub fn answer_ask(&self, id: u64, answer: AskAnswer) -> Result<(), AskError> {
        self.asks.answer(id, answer)
    }

    /// The pending asks as a front end shows them, oldest first.
    pub fn ask_views(&self) -> Vec<AskView> {
        self.asks.pending().iter().map(Ask::view).collect()
    }

    /// Answers ask `id` with what the user chose in a front end. Accepting a URL
    /// elicitation opens the server's URL with `opener` first (and answers only when it
    /// opened). A form whose fields do not fit its schema is not sent: the answer is a
    /// message per field (empty when the answer was taken), and the ask stays pending.
    pub async fn reply_ask(
        &self,
        id: u64,
        reply: AskReply,
        opener: &dyn Opener,
    ) -> Result<FieldErrors, ReplyError> {
        let ask = self
            .asks
            .pending()
            .iter()
            .find(|a| a.id == id)
            .cloned()
            .ok_or(AskError::Unknown(id))?;
        let outcome = match reply.resolve(&ask)? {
            Resolved::Answer(answer) => self.answer_ask(id, answer),
            Resolved::Fill(values) => self.answer_form(id, &values),
            Resolved::OpenUrl(url) => {
                let link =
                    crate::links::check_link(&url).map_err(|refused| ReplyError::Refused {
                        url: url.clone(),
                        refused,
                    })?;
                if let Err(reason) = opener.open(link.as_str()).await {
                    return Err(ReplyError::Open { url, reason });
                }
                let answer = match &ask.kind {
                    // A view's link, opened: the view hears it was.
                    AskKind::View { .. } => AskAnswer::Approve(Default::default()),
                    AskKind::Elicitation { .. }
                    | AskKind::Sampling { .. }
                    | AskKind::SamplingReview { .. } => {
                        AskAnswer::Elicit(ElicitResult::accept_url())
                    }
                };
                self.answer_ask(id, answer)
            }
        };
        match outcome {
            Ok(()) => Ok(FieldErrors::new()),
            Err(AskError::Invalid { fields, .. }) => Ok(fields),
            Err(e) => Err(e.into()),
        }
    }

    /// Accepts a form elicitation with what the user typed in the form of its schema
    /// ([`crate::mcp::elicit_form::ElicitForm`]); fields that do not fit come back as
    /// [`AskError::Invalid`] with a message each, and the ask stays pending.
    pub fn answer_form(
        &self,
        id: u64,
        values: &BTreeMap<String, crate::mcp::elicit_form::FieldValue>,
    ) -> Result<(), AskError> {
        self.asks.answer_form(id, values)
    }

    /// Announce sampling to servers started from now on (off by default): only when a
    /// front end answers sampling asks.
    pub fn set_sampling(&self, enabled: bool) {
        self.asks.set_sampling(enabled)
    }

    /// Runs servers' sampling requests on `source`'s model after the user approved them,
    /// and announces sampling (with tools) to servers started from now on. Front ends
    /// that can ask the user (terminal UI, desktop) call this before starting servers,
    /// with [`SamplingSource::Settings`]: without a configured provider a request is
    /// answered with an error naming what to configure.
    pub fn enable_sampling(&self, source: SamplingSource) {
        let source = match source {
            SamplingSource::Settings(mut o) => {
                self.fill_overrides(&mut o);
                SamplingSource::Settings(o)
            }
            other => other,
        };
        let sampler: Arc<dyn crate::mcp::sampling::Sampler> = Arc::new(EngineSampler::new(source));
        self.asks.set_sampler(Some(sampler));
        self.asks.set_sampling(true);
    }

    /// The servers that may use the model without asking ("always for this server"),
    /// with the fingerprint of the entry each grant holds for.
    pub async fn sampling_grants(&self) -> BTreeMap<String, String> {
        self.asks.sampling_grants().await
    }

    /// Withdraws a server's "always" grant; `Ok(true)` when there was one.
    pub async fn revoke_sampling(&self, server: &str) -> std::io::Result<bool> {
        self.asks.revoke_sampling(server).await
    }
}

/// Sets the extra roots servers get; when they changed, every connected server is told
/// (`notifications/roots/list_changed`).
pub(super) fn apply_extra_roots(asks: &Asks, manager: &Manager, folders: &[PathBuf]) {
    if asks.set_extra_roots(folders) {
        for client in manager.clients() {
            let _ = client.notify_roots_changed();
        }
    }
}
