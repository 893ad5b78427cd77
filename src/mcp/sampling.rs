//! The seam through which an approved `sampling/createMessage` reaches a model:
//! [`Sampler`]. The asks service owns the consent flow (approve → sample → optional
//! review → answer, see `host::asks`); a sampler only runs what the user approved. The
//! engine supplies the real one (`crate::engine::sampling`), so this layer never imports
//! the engine.

use futures::future::BoxFuture;

use super::requests::{CreateMessageRequest, CreateMessageResult};

/// Why a sampler could not run a request, in words the server and the user are shown,
/// with the stable code of the error behind it (the engine's: `not-configured`,
/// `rate-limited`, …). This layer does not know the engine's errors, so the sampler hands
/// over their text and code.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct SampleError {
    code: &'static str,
    message: String,
}

impl SampleError {
    /// `code` is the stable kebab-case code of the error behind it.
    pub fn new(code: &'static str, message: impl Into<String>) -> SampleError {
        SampleError {
            code,
            message: message.into(),
        }
    }

    /// A stable kebab-case code for front ends and `--json` output (never changes once
    /// released).
    pub fn code(&self) -> &'static str {
        self.code
    }
}

/// What a sampler answers: the model's message, or why it could not.
pub type SampleFuture = BoxFuture<'static, Result<CreateMessageResult, SampleError>>;

/// Runs sampling requests on the host's model.
pub trait Sampler: Send + Sync + 'static {
    /// An error when no model can run a request now, its text naming what to configure.
    /// Checked before the user is asked.
    fn check(&self) -> BoxFuture<'static, Result<(), SampleError>>;

    /// Runs one approved request (never more output tokens than it asks for).
    fn sample(&self, request: CreateMessageRequest) -> SampleFuture;
}
