//! The seam through which an approved `sampling/createMessage` reaches a model:
//! [`Sampler`]. The asks service owns the consent flow (approve → sample → optional
//! review → answer, see `host::asks`); a sampler only runs what the user approved. The
//! engine supplies the real one (`crate::engine::sampling`), so this layer never imports
//! the engine.

use futures::future::BoxFuture;

use super::requests::{CreateMessageRequest, CreateMessageResult};

/// What a sampler answers: the model's message, or why it could not (in words the
/// server and the user are shown).
pub type SampleFuture = BoxFuture<'static, Result<CreateMessageResult, String>>;

/// Runs sampling requests on the host's model.
pub trait Sampler: Send + Sync + 'static {
    /// `Err(text)` when no model can run a request now, the text naming what to
    /// configure. Checked before the user is asked.
    fn check(&self) -> BoxFuture<'static, Result<(), String>>;

    /// Runs one approved request (never more output tokens than it asks for).
    fn sample(&self, request: CreateMessageRequest) -> SampleFuture;
}
