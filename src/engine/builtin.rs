//! Why a built-in tool of the engine (tool search, `read_output`, the resource tools) gave
//! no answer. The text is what the model is told, so it says what to send instead.

/// Why a built-in tool gave no answer (a tool error the model sees, never a crash).
#[derive(Debug, Clone, thiserror::Error)]
pub enum BuiltinToolError {
    #[error("give a \"query\": words describing the tool you need")]
    NoQuery,
    #[error("no saved output \"{0}\"; use the id from the cut-off result")]
    BadOutputId(String),
    #[error("no saved output \"{0}\" in this conversation")]
    NoOutput(String),
    #[error("offset {offset} is past the end of the output ({total} characters)")]
    PastEnd { offset: usize, total: usize },
    #[error("reading the saved output failed: {0}")]
    ReadFailed(String),
    /// `read_mcp_resource` without its arguments; the tool that lists them is named.
    #[error("give \"server\" and \"uri\" (see {0})")]
    NoServerOrUri(&'static str),
    #[error("this chat cannot read resources")]
    NoResources,
    /// Listing or reading resources failed; the text says why.
    #[error(transparent)]
    Resources(#[from] crate::host::catalog::FeatureError),
}

impl BuiltinToolError {
    /// A stable kebab-case code for front ends and `--json` output (never changes once
    /// released).
    pub fn code(&self) -> &'static str {
        match self {
            BuiltinToolError::NoQuery
            | BuiltinToolError::PastEnd { .. }
            | BuiltinToolError::NoServerOrUri(_) => "invalid-arguments",
            BuiltinToolError::BadOutputId(_) | BuiltinToolError::NoOutput(_) => "unknown-output",
            BuiltinToolError::ReadFailed(_) => "internal",
            BuiltinToolError::NoResources => "unsupported",
            BuiltinToolError::Resources(e) => e.code(),
        }
    }
}
