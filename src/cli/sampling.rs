//! `harness9 mcp sampling`: which servers of the project may use the model without asking
//! ("always for this server", given in the terminal UI or the desktop app), and
//! `--revoke SERVER` to make one ask again.

use harness9::{Harness, HarnessOptions};
use serde_json::json;

use super::{ProjectArgs, EXIT_FAILED};

pub async fn run(args: ProjectArgs, revoke: Option<String>) -> i32 {
    let harness = Harness::open(&args.project, HarnessOptions::default());
    if let Some(server) = revoke {
        return match harness.revoke_sampling(&server).await {
            Ok(true) => {
                outln!("{server} asks again before it uses the model");
                0
            }
            Ok(false) => {
                outln!("{server} was not allowed to use the model without asking");
                0
            }
            Err(e) => {
                errln!("harness9: cannot change the sampling grants: {e}");
                EXIT_FAILED
            }
        };
    }
    let grants = harness.sampling_grants().await;
    let config = harness.load_config();
    let rows: Vec<(String, bool)> = grants
        .iter()
        .map(|(name, fp)| {
            let current = config
                .servers
                .get(name)
                .and_then(|s| s.as_ref().ok())
                .is_some_and(|c| c.fingerprint(&args.project) == *fp);
            (name.clone(), current)
        })
        .collect();
    if args.json {
        let out: Vec<_> = rows
            .iter()
            .map(|(name, current)| json!({"server": name, "current": current}))
            .collect();
        outln!("{}", serde_json::Value::Array(out));
        return 0;
    }
    if rows.is_empty() {
        outln!("no server may use the model without asking");
    }
    for (name, current) in rows {
        let note = if current {
            ""
        } else {
            " (its entry changed since: it asks again)"
        };
        outln!("{name}{note}");
    }
    0
}
