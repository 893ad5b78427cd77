//! What the user trusts: which project servers may start ([`approvals`]), which tool
//! definitions they saw when they approved them ([`pins`]) and which servers may use the
//! model without asking each time ([`sampling`]). All live in the user's data
//! directory, never in the project, so a `git pull` cannot grant itself trust. How those
//! files are read, locked and written, and shared with other harness9 processes, is
//! [`crate::userdata`]'s job.

pub mod approvals;
pub mod pins;
pub mod sampling;

pub use approvals::{data_dir, ApprovalStore, DATA_DIR_ENV};
