//! Which tools one model request offers. Small tool sets go out whole. When the MCP tools
//! are more than [`DEFAULT_DEFER_OVER_TOOLS`], or their definitions would take more than
//! [`DEFER_CONTEXT_SHARE`] of the context window, they are deferred: the request carries
//! the registry's built-in tools, the engine's [`TOOL_SEARCH_TOOL`] and the tools search
//! has loaded so far in this conversation. This works with every provider, as it is only a
//! choice of definitions.
//!
//! Definitions and the search index are cached per registry generation, so a round-trip
//! pays for neither unless the registry changed.

use parking_lot::Mutex;
use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, OnceLock};

use serde_json::{json, Value};

use super::builtin::BuiltinToolError;
use super::message::ToolDefinition;
use super::resources::{self, LIST_RESOURCES_TOOL, READ_RESOURCE_TOOL};
use super::search::SearchIndex;
use super::spill::{read_output_definition, READ_OUTPUT_TOOL};
use crate::tools::{Tool, ToolRegistry, ToolSource};

/// The built-in tool that searches deferred tools.
pub const TOOL_SEARCH_TOOL: &str = "tool_search";
/// More MCP tools than this are deferred behind tool search.
pub const DEFAULT_DEFER_OVER_TOOLS: usize = 100;
/// Tool definitions taking more than this share of the context window are deferred.
pub const DEFER_CONTEXT_SHARE: f64 = 0.10;
/// Results one tool search returns when the model does not say.
pub const DEFAULT_SEARCH_RESULTS: usize = 5;
/// Most results one tool search returns.
pub const MAX_SEARCH_RESULTS: usize = 20;

/// The registry's tools at one generation, with what requests need of them.
pub struct Snapshot {
    pub generation: u64,
    tools: Vec<Arc<dyn Tool>>,
    defs: Vec<ToolDefinition>,
    by_name: HashMap<String, usize>,
    pub deferred: bool,
    /// Every definition, for a request when nothing is deferred.
    all: Arc<[ToolDefinition]>,
    /// Indexes (into `tools`) of the deferrable (MCP) tools, in index order.
    deferrable: Vec<usize>,
    index: OnceLock<SearchIndex>,
}

impl Snapshot {
    pub fn get(&self, name: &str) -> Option<&Arc<dyn Tool>> {
        self.by_name.get(name).map(|i| &self.tools[*i])
    }

    pub fn contains(&self, name: &str) -> bool {
        self.by_name.contains_key(name)
    }

    pub fn len(&self) -> usize {
        self.tools.len()
    }

    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }

    fn index(&self) -> &SearchIndex {
        self.index.get_or_init(|| {
            SearchIndex::build(self.deferrable.iter().map(|i| {
                let d = &self.defs[*i];
                (d.name.as_str(), d.description.as_str())
            }))
        })
    }

    /// The definitions one request offers.
    pub fn request_tools(
        &self,
        loaded: &BTreeSet<String>,
        with_read_output: bool,
        with_resources: bool,
    ) -> Arc<[ToolDefinition]> {
        if !self.deferred && !with_read_output && !with_resources {
            return self.all.clone();
        }
        let mut out: Vec<ToolDefinition> = if self.deferred {
            let mut v: Vec<ToolDefinition> = self
                .tools
                .iter()
                .zip(&self.defs)
                .filter(|(t, _)| matches!(t.spec().source, ToolSource::Builtin))
                .map(|(_, d)| d.clone())
                .collect();
            v.push(search_definition(self.deferrable.len()));
            v.extend(
                loaded
                    .iter()
                    .filter_map(|n| self.by_name.get(n))
                    .map(|i| self.defs[*i].clone()),
            );
            v
        } else {
            self.all.to_vec()
        };
        if with_read_output {
            out.push(read_output_definition());
        }
        if with_resources {
            out.push(resources::list_definition());
            out.push(resources::read_definition());
        }
        out.into()
    }

    /// Runs a tool search: the text for the model and the names it found.
    pub fn search(&self, arguments: &Value) -> Result<(String, Vec<String>), BuiltinToolError> {
        let query = arguments
            .get("query")
            .and_then(Value::as_str)
            .unwrap_or("")
            .trim();
        if query.is_empty() {
            return Err(BuiltinToolError::NoQuery);
        }
        let limit = arguments
            .get("limit")
            .and_then(Value::as_u64)
            .map_or(DEFAULT_SEARCH_RESULTS, |l| {
                (l as usize).clamp(1, MAX_SEARCH_RESULTS)
            });
        let index = self.index();
        let hits = index.search(query, limit);
        if hits.is_empty() {
            return Ok((
                format!("No tool matches \"{query}\". Try other words."),
                Vec::new(),
            ));
        }
        let mut text = format!(
            "Found {} tool(s). They are now available: call them by name.\n",
            hits.len()
        );
        let mut names = Vec::with_capacity(hits.len());
        for h in &hits {
            let def = &self.defs[self.deferrable[h.doc]];
            let first = def.description.lines().next().unwrap_or("");
            text.push_str(&format!("- {}: {}\n", def.name, first));
            names.push(def.name.clone());
        }
        Ok((text, names))
    }
}

fn search_definition(count: usize) -> ToolDefinition {
    ToolDefinition {
        name: TOOL_SEARCH_TOOL.into(),
        description: format!(
            "Searches {count} more tools that are not listed here (ranked over their names and descriptions). Tools it finds become callable in your next step. Search whenever you need a capability you do not see."
        ),
        input_schema: crate::mcp::schema_text::SchemaText::from(json!({
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "Words describing the tool you need."},
                "limit": {"type": "integer", "description": format!("Most tools to return (default {DEFAULT_SEARCH_RESULTS}, at most {MAX_SEARCH_RESULTS}).")}
            },
            "required": ["query"]
        })),
    }
}

/// Keeps the [`Snapshot`] of a registry current.
pub struct ToolSets {
    registry: Arc<ToolRegistry>,
    defer_over: usize,
    /// Token budget of the definitions before they are deferred.
    token_budget: usize,
    cache: Mutex<Option<Arc<Snapshot>>>,
}

impl ToolSets {
    pub fn new(registry: Arc<ToolRegistry>, defer_over: usize, context_window: u32) -> ToolSets {
        ToolSets {
            registry,
            defer_over,
            token_budget: defer_budget(context_window),
            cache: Mutex::new(None),
        }
    }

    pub fn registry(&self) -> &Arc<ToolRegistry> {
        &self.registry
    }

    /// The current snapshot, rebuilt when the registry changed.
    pub fn current(&self) -> Arc<Snapshot> {
        // Read the generation before the list: a change in between only means a rebuild
        // on the next call.
        let generation = *self.registry.subscribe().borrow();
        if let Some(s) = self.cache.lock().as_ref() {
            if s.generation == generation {
                return s.clone();
            }
        }
        let snap = Arc::new(self.build(generation));
        *self.cache.lock() = Some(snap.clone());
        snap
    }

    fn build(&self, generation: u64) -> Snapshot {
        let (tools, tokens): (Vec<Arc<dyn Tool>>, Vec<u32>) = self
            .registry
            .list_with_tokens()
            .into_iter()
            .filter(|(t, _)| {
                let name = &t.spec().name;
                let engine_own = name == TOOL_SEARCH_TOOL
                    || name == READ_OUTPUT_TOOL
                    || name == LIST_RESOURCES_TOOL
                    || name == READ_RESOURCE_TOOL;
                if engine_own {
                    tracing::warn!("a tool named {name} hides the engine's own; it is skipped");
                }
                // MCP Apps: a tool visible to views only is never offered to the model.
                !engine_own && t.spec().display.model_visible()
            })
            .unzip();
        let mut defs = Vec::with_capacity(tools.len());
        let mut by_name = HashMap::with_capacity(tools.len());
        let mut deferrable = Vec::new();
        let mut mcp_tokens = 0u64;
        for (i, (t, cost)) in tools.iter().zip(&tokens).enumerate() {
            let s = t.spec();
            by_name.entry(s.name.clone()).or_insert(i);
            if matches!(s.source, ToolSource::Mcp { .. }) {
                deferrable.push(i);
                mcp_tokens += u64::from(*cost);
            }
            defs.push(ToolDefinition {
                name: s.name.clone(),
                description: s.description.clone(),
                input_schema: s.input_schema.clone(),
            });
        }
        // The registry's estimate (crate::tools::cost), the one `mcp list` shows.
        let deferred = defers(
            deferrable.len(),
            mcp_tokens,
            self.defer_over,
            self.token_budget,
        );
        Snapshot {
            generation,
            all: defs.clone().into(),
            tools,
            defs,
            by_name,
            deferred,
            deferrable,
            index: OnceLock::new(),
        }
    }
}

/// Whether MCP tools this many, with definitions this large, go behind tool search.
fn defers(tools: usize, tokens: u64, defer_over: usize, token_budget: usize) -> bool {
    tools > defer_over || tokens > token_budget as u64
}

/// The token budget of the MCP tool definitions for a context window
/// ([`DEFER_CONTEXT_SHARE`] of it); past it, or past [`DEFAULT_DEFER_OVER_TOOLS`] tools,
/// tool search takes over.
pub fn defer_budget(context_window: u32) -> usize {
    (context_window as f64 * DEFER_CONTEXT_SHARE) as usize
}

/// The warning front ends show next to the context cost when the engine with its default
/// settings would defer the MCP tools behind tool search; `None` below both thresholds.
pub fn context_warning(cost: &crate::tools::ContextCost, context_window: u32) -> Option<String> {
    let (tools, tokens) = (cost.total_tools(), cost.total_tokens());
    let budget = defer_budget(context_window);
    if !defers(
        usize::try_from(tools).unwrap_or(usize::MAX),
        tokens,
        DEFAULT_DEFER_OVER_TOOLS,
        budget,
    ) {
        return None;
    }
    let why = if tokens > budget as u64 {
        format!(
            "MCP tool definitions take about {tokens} tokens, more than {}% of the model's \
             {context_window}-token context window ({budget} tokens)",
            (DEFER_CONTEXT_SHARE * 100.0).round()
        )
    } else {
        format!("{tools} MCP tools are more than {DEFAULT_DEFER_OVER_TOOLS}")
    };
    Some(format!(
        "{why}: tool search takes over (the model gets `{TOOL_SEARCH_TOOL}` and loads tools as it needs them)"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::{ContextCost, ServerCost};

    fn cost(tools: u32, tokens: u32) -> ContextCost {
        let mut c = ContextCost::default();
        c.servers.insert("s".into(), ServerCost { tools, tokens });
        c
    }

    #[test]
    fn the_warning_comes_at_the_engines_own_thresholds() {
        assert_eq!(context_warning(&cost(100, 20_000), 200_000), None);
        assert_eq!(
            context_warning(&cost(3, 20_001), 200_000).as_deref(),
            Some(
                "MCP tool definitions take about 20001 tokens, more than 10% of the model's \
                 200000-token context window (20000 tokens): tool search takes over (the model \
                 gets `tool_search` and loads tools as it needs them)"
            )
        );
        assert_eq!(
            context_warning(&cost(101, 500), 200_000).as_deref(),
            Some(
                "101 MCP tools are more than 100: tool search takes over (the model gets \
                 `tool_search` and loads tools as it needs them)"
            )
        );
    }
}
