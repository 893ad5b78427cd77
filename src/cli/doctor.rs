//! `harness9 doctor`: starts the project's servers (approved ones, or all with `--yes`),
//! waits a bounded time for them, and prints [`harness9::doctor::report`] as text or JSON.

use std::time::Duration;

use super::{ask_approval, EXIT_USAGE};
use crate::ProjectArgs;

/// How long the report waits for servers to settle; one still starting then is reported so.
pub const DOCTOR_SERVER_WAIT: Duration = Duration::from_secs(20);

pub async fn run(args: ProjectArgs) -> i32 {
    if !args.project.is_dir() {
        errln!(
            "harness9: project folder \"{}\" does not exist",
            args.project.display()
        );
        return EXIT_USAGE;
    }
    let harness = super::harness_for(&args);
    // A broken .mcp.json is part of the report, not a reason to stop.
    let _ = harness.start(None).await;
    ask_approval(&harness).await;
    harness.manager().wait_settled(DOCTOR_SERVER_WAIT).await;
    let report = harness9::doctor::report(&harness).await;
    if args.json {
        crate::cli::out::json(&report);
    } else {
        out!("{}", report.text());
    }
    harness.shutdown().await;
    0
}
