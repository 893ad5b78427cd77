//! `harness9 mcp tools --changed` and `--accept`: review and accept tools that are held
//! back because their definition changed since it was pinned (see
//! [`harness9::trust::pins`]). Both only call the [`harness9::Harness`] façade.

use harness9::trust::pins::HeldTool;

use super::{open, EXIT_FAILED, EXIT_USAGE};
use crate::ProjectArgs;

/// Prints every held tool (of one server, or all) with what changed.
pub async fn changed(args: ProjectArgs, server: Option<String>) -> i32 {
    let only = server.clone().map(|s| vec![s]);
    let harness = match open(&args, only.as_deref()).await {
        Ok(h) => h,
        Err(code) => return code,
    };
    let held = harness.held_tools(server.as_deref());
    if args.json {
        crate::cli::out::json(&held);
    } else if held.is_empty() {
        outln!("No tool changed since it was pinned.");
    } else {
        for h in &held {
            print_held(h);
        }
        outln!(
            "Accept with: harness9 mcp tools --accept SERVER [TOOL...] (all held tools of SERVER when no TOOL is named)"
        );
    }
    harness.shutdown().await;
    0
}

fn print_held(h: &HeldTool) {
    outln!("{}/{}: {}", h.server, h.tool, h.change.summary());
    for line in h.change.diff() {
        outln!("  {line}");
    }
    outln!();
}

/// Accepts held tools of one server (all of them when none is named).
pub async fn accept(args: ProjectArgs, what: Vec<String>) -> i32 {
    let Some((server, tools)) = what.split_first() else {
        errln!("harness9: --accept needs a server name, e.g. --accept SERVER [TOOL...]");
        return EXIT_USAGE;
    };
    let only = [server.clone()];
    let harness = match open(&args, Some(&only)).await {
        Ok(h) => h,
        Err(code) => return code,
    };
    let code = match harness.accept_tools(server, tools).await {
        Ok(accepted) if accepted.is_empty() => {
            outln!("Nothing to accept: no tool of \"{server}\" is held back.");
            0
        }
        Ok(accepted) => {
            for h in &accepted {
                outln!("accepted {}/{} ({})", h.server, h.tool, h.change.summary());
            }
            0
        }
        Err(e) => {
            crate::cli::out::failure(args.json, e.code(), &e.to_string());
            EXIT_FAILED
        }
    };
    harness.shutdown().await;
    code
}
