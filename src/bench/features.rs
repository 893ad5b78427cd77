//! The `big_features` case of `harness9 bench mcp`: one server offering 10,000 resources
//! and 1,000 prompts (in pages), listed to the end by the client core, as the desktop app
//! and `harness9 mcp resources` do after a server connects. Not part of the default set
//! of the `mcp-bench/1` contract: run it with `--scenarios big_features`. The server is
//! asked for the items with `REFSERVER_RESOURCES` and `REFSERVER_PROMPTS` (our fixture
//! honours both).

use std::time::Instant;

use serde_json::json;

use super::{figures, round_to, BenchError, Outcome, Stats};
use crate::mcp::Client;

/// Resources the server is asked to offer.
pub(crate) const BIG_RESOURCES: usize = 10_000;
/// Prompts the server is asked to offer.
pub(crate) const BIG_PROMPTS: usize = 1_000;
/// Environment variable asking the server for N resources.
pub(crate) const ENV_RESOURCES: &str = "REFSERVER_RESOURCES";
/// Environment variable asking the server for N prompts.
pub(crate) const ENV_PROMPTS: &str = "REFSERVER_PROMPTS";
/// Timed listings (each: every resource page, then every prompt page).
const CALLS: usize = 5;

/// Lists everything [`CALLS`] times; the value is the median of resources + prompts.
pub(crate) async fn big_features_on(client: &Client) -> Outcome {
    let mut totals = Vec::with_capacity(CALLS);
    let mut resource_ms = Vec::with_capacity(CALLS);
    let mut prompt_ms = Vec::with_capacity(CALLS);
    for _ in 0..CALLS {
        let start = Instant::now();
        let resources = client
            .list_resources(None)
            .await
            .map_err(|e| BenchError::request("resources/list", e))?;
        let middle = Instant::now();
        let prompts = client
            .list_prompts(None)
            .await
            .map_err(|e| BenchError::request("prompts/list", e))?;
        let end = Instant::now();
        if resources.len() < BIG_RESOURCES || prompts.len() < BIG_PROMPTS {
            return Err(BenchError::WrongAnswer(format!(
                "the server listed {} resources and {} prompts, fewer than the {BIG_RESOURCES} and {BIG_PROMPTS} asked for with {ENV_RESOURCES} and {ENV_PROMPTS}",
                resources.len(),
                prompts.len()
            )));
        }
        totals.push((end - start).as_secs_f64() * 1e3);
        resource_ms.push((middle - start).as_secs_f64() * 1e3);
        prompt_ms.push((end - middle).as_secs_f64() * 1e3);
    }
    let total = Stats::of(&totals);
    Ok(figures([
        ("unit", json!("ms")),
        ("value", round_to(total.median, 3)),
        ("median", round_to(total.median, 3)),
        ("resources_ms", round_to(Stats::of(&resource_ms).median, 3)),
        ("prompts_ms", round_to(Stats::of(&prompt_ms).median, 3)),
        ("n", json!(CALLS)),
        ("resources", json!(BIG_RESOURCES)),
        ("prompts", json!(BIG_PROMPTS)),
    ]))
}
