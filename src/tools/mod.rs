//! The tool registry: one [`Tool`] trait for built-in and MCP tools. The engine and the
//! front ends see only this; [`McpTool`] adapts one tool of one server and dispatches by the
//! raw `(server, tool)` pair, never by splitting the model-facing name.

pub mod cost;
mod display;
pub mod naming;
pub mod schema_refs;
pub mod tasks;

pub use cost::{context_tokens, ContextCost, ServerCost};
pub use display::{loadable_icons, ToolDisplay};

use parking_lot::RwLock;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
use futures::FutureExt;
use serde::Serialize;
use serde_json::Value;
use tokio::sync::{mpsc, watch};

use crate::mcp::client::{CallOutcome, Follow, TaskCall, TaskError};
use crate::mcp::era::Era;
use crate::mcp::schema_text::SchemaText;
use crate::mcp::tasks::TaskSupport;
use crate::mcp::{CallToolResult, Client, ClientError, Progress, RequestOptions, ToolDef};
use tasks::{StartedTask, TaskContext, TaskWait};

/// Where a tool comes from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum ToolSource {
    Builtin,
    Mcp { server: String, tool: String },
}

/// What the model and the UI are told about a tool.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolSpec {
    /// The model-facing name (`mcp__server__tool` for MCP tools).
    pub name: String,
    pub description: String,
    /// Shared with the server's listing unless `$ref`s were resolved.
    pub input_schema: SchemaText,
    /// The server's `readOnlyHint` (an untrusted hint).
    pub read_only: bool,
    pub source: ToolSource,
    /// Title, annotations and icons for front ends (empty for built-in tools).
    pub display: ToolDisplay,
}

impl ToolSpec {
    /// Whether the permission check treats the tool as destructive: an MCP tool whose
    /// `readOnlyHint` is not true and whose `destructiveHint` is not false (the spec's
    /// defaults; see [`crate::engine::permissions`]). Built-in tools never are.
    pub fn destructive(&self) -> bool {
        match self.source {
            ToolSource::Builtin => false,
            ToolSource::Mcp { .. } => self.display.annotations.destructive(),
        }
    }
}

/// Extra inputs of one call.
#[derive(Debug, Default, Clone)]
pub struct CallContext {
    /// Overrides the tool's own timeout.
    pub timeout: Option<Duration>,
    /// Make it with [`crate::mcp::client::progress_channel`] (bounded; a flood is dropped).
    pub progress: Option<mpsc::Sender<Progress>>,
    /// Where a task the call starts goes ([`tasks`]); without it the call follows its task
    /// to the end itself.
    pub task: Option<TaskContext>,
}

/// Why a call produced no result. Shown to the model as an error result by the engine.
#[derive(Debug, Clone, thiserror::Error)]
pub enum ToolError {
    #[error(transparent)]
    Client(#[from] ClientError),
    /// The call ran as a task, which ended without a result.
    #[error(transparent)]
    Task(#[from] TaskError),
    #[error("{0}")]
    Other(String),
}

impl ToolError {
    /// A stable kebab-case code for front ends and `--json` output (never changes once
    /// released).
    pub fn code(&self) -> &'static str {
        match self {
            ToolError::Client(e) => e.code(),
            ToolError::Task(e) => e.code(),
            ToolError::Other(_) => "tool-failed",
        }
    }
}

pub trait Tool: Send + Sync {
    fn spec(&self) -> &ToolSpec;
    /// Runs the tool. Dropping the future cancels the call.
    fn call(
        &self,
        arguments: Value,
        ctx: CallContext,
    ) -> BoxFuture<'_, Result<CallToolResult, ToolError>>;
}

/// One tool of one MCP server.
pub struct McpTool {
    spec: ToolSpec,
    tool: String,
    client: Arc<Client>,
    timeout: Duration,
    /// Legacy `execution.taskSupport`.
    task_support: TaskSupport,
}

impl McpTool {
    pub fn definition_name(&self) -> &str {
        &self.tool
    }

    /// Whether a call asks the (legacy) server for a task: always for `required` tools,
    /// for `optional` ones when the setting says so. The modern era's server decides
    /// alone.
    fn asks_for_task(&self, optional_as_task: bool) -> Option<TaskCall> {
        let ask = match (self.client.era(), self.task_support) {
            (Era::Modern, _) | (Era::Legacy, TaskSupport::Forbidden) => false,
            (Era::Legacy, TaskSupport::Required) => true,
            (Era::Legacy, TaskSupport::Optional) => optional_as_task,
        };
        ask.then_some(TaskCall::default())
    }

    async fn call_mcp(
        &self,
        arguments: Value,
        ctx: CallContext,
    ) -> Result<CallToolResult, ToolError> {
        let opts = RequestOptions {
            timeout: Some(ctx.timeout.unwrap_or(self.timeout)),
            timeout_field: Some(crate::config::TOOL_TIMEOUT_FIELD),
            progress: ctx.progress,
        };
        let args = match arguments {
            Value::Null => None,
            a => Some(a),
        };
        let optional = ctx
            .task
            .as_ref()
            .map_or(tasks::DEFAULT_OPTIONAL_AS_TASK, |t| t.optional_as_task);
        let ask = self.asks_for_task(optional);
        if ask.is_none() && self.client.era() == Era::Legacy {
            // The usual call, on the client's fast path.
            return Ok(self.client.call_tool(&self.tool, args, opts).await?);
        }
        let kept_args = args.clone().unwrap_or(Value::Null);
        let created = match self
            .client
            .call_tool_as_task(&self.tool, args, opts, ask)
            .await?
        {
            CallOutcome::Done(r) => return Ok(r),
            CallOutcome::Task(created) => created,
        };
        let ToolSource::Mcp { server, .. } = &self.spec.source else {
            return Err(ToolError::Other("not an MCP tool".into()));
        };
        let Some(host) = ctx.task else {
            let follow = Follow {
                task: created.task,
                created: std::time::SystemTime::now(),
            };
            return Ok(self.client.follow_task(follow, &mut |_| {}).await?);
        };
        let started = StartedTask {
            server: server.clone(),
            tool: self.tool.clone(),
            arguments: kept_args,
            client: self.client.clone(),
            created: created.clone(),
            origin: host.origin.clone(),
        };
        match host.host.adopt(started, host.wait).await {
            TaskWait::Ended(outcome) => Ok(outcome?),
            TaskWait::Running {
                task_id,
                status,
                message,
            } => Ok(CallToolResult {
                content: vec![crate::mcp::Content::Text {
                    text: tasks::still_running_text(
                        server,
                        &task_id,
                        status,
                        message.as_deref(),
                        created.immediate_response.as_deref(),
                    ),
                }],
                meta: Some(serde_json::json!({
                    tasks::META_RUNNING_TASK: {"server": server, "taskId": task_id}
                })),
                ..CallToolResult::default()
            }),
        }
    }
}

impl Tool for McpTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn call(
        &self,
        arguments: Value,
        ctx: CallContext,
    ) -> BoxFuture<'_, Result<CallToolResult, ToolError>> {
        self.call_mcp(arguments, ctx).boxed()
    }
}

/// A server's tools, built once per listing (schemas resolved); only their names are
/// assigned again when the set of servers changes.
struct ServerTools {
    tools: Vec<Arc<McpTool>>,
    /// Per tool: bytes of its model-facing JSON without the name ([`cost`]), measured
    /// once per listing rather than on every rebuild.
    unnamed_bytes: Vec<usize>,
}

#[derive(Default)]
struct State {
    builtins: Vec<Arc<dyn Tool>>,
    servers: BTreeMap<String, ServerTools>,
    /// Every tool in order: built-ins first, then servers by name, tools in server order.
    ordered: Vec<Arc<dyn Tool>>,
    /// The context cost of each tool in `ordered` ([`cost::context_tokens`]), same order.
    tokens: Vec<u32>,
    by_name: HashMap<String, usize>,
    by_server: HashMap<String, Vec<usize>>,
}

/// All tools the engine may call. Cheap to read, rebuilt on every change.
pub struct ToolRegistry {
    state: RwLock<State>,
    generation: watch::Sender<u64>,
}

impl Default for ToolRegistry {
    fn default() -> Self {
        ToolRegistry {
            state: RwLock::default(),
            generation: watch::channel(0).0,
        }
    }
}

/// Without a gate in front of it, every listed tool is usable.
impl crate::manager::ToolSink for ToolRegistry {
    fn place(
        &self,
        listing: crate::manager::ToolListing,
    ) -> futures::future::BoxFuture<'_, Option<usize>> {
        let usable = listing.defs.len();
        let server = listing.run.server().to_string();
        ToolRegistry::set_server_tools(
            self,
            &server,
            listing.client,
            listing.defs,
            listing.timeout,
        );
        Box::pin(std::future::ready(Some(usable)))
    }

    fn remove_server(&self, server: &str) {
        ToolRegistry::remove_server(self, server);
    }
}

impl ToolRegistry {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn register_builtin(&self, tool: Arc<dyn Tool>) {
        self.update(|s| s.builtins.push(tool));
    }

    /// Replaces the tools of one server.
    pub fn set_server_tools(
        &self,
        server: &str,
        client: Arc<Client>,
        defs: Vec<ToolDef>,
        timeout: Duration,
    ) {
        let tools = defs
            .iter()
            .map(|def| {
                Arc::new(McpTool {
                    spec: ToolSpec {
                        // Assigned by `rebuild`, across every server's tools.
                        name: String::new(),
                        description: def.description.clone().unwrap_or_default(),
                        input_schema: schema_refs::resolve_refs_text(&def.input_schema),
                        read_only: def.read_only_hint(),
                        source: ToolSource::Mcp {
                            server: server.to_string(),
                            tool: def.name.clone(),
                        },
                        display: ToolDisplay::of(def),
                    },
                    tool: def.name.clone(),
                    client: client.clone(),
                    timeout,
                    task_support: def.task_support(),
                })
            })
            .collect();
        let tools: Vec<Arc<McpTool>> = tools;
        let unnamed_bytes = tools
            .iter()
            .map(|t| cost::definition_bytes("", &t.spec.description, &t.spec.input_schema))
            .collect();
        self.update(|s| {
            s.servers.insert(
                server.to_string(),
                ServerTools {
                    tools,
                    unnamed_bytes,
                },
            );
        });
    }

    /// Removes the tools of one server (it stopped or failed).
    pub fn remove_server(&self, server: &str) {
        let present = self.state.read().servers.contains_key(server);
        if present {
            self.update(|s| {
                s.servers.remove(server);
            });
        }
    }

    pub fn get(&self, name: &str) -> Option<Arc<dyn Tool>> {
        let s = self.state.read();
        s.by_name.get(name).map(|i| s.ordered[*i].clone())
    }

    /// The tool a server lists under its raw name.
    pub fn get_mcp(&self, server: &str, tool: &str) -> Option<Arc<dyn Tool>> {
        let s = self.state.read();
        s.by_server
            .get(server)?
            .iter()
            .map(|i| &s.ordered[*i])
            .find(|t| matches!(&t.spec().source, ToolSource::Mcp { tool: raw, .. } if raw == tool))
            .cloned()
    }

    pub fn list(&self) -> Vec<Arc<dyn Tool>> {
        self.state.read().ordered.clone()
    }

    /// Every tool with its estimated context tokens ([`cost`]), as [`Self::list`] orders them.
    pub fn list_with_tokens(&self) -> Vec<(Arc<dyn Tool>, u32)> {
        let s = self.state.read();
        s.ordered
            .iter()
            .cloned()
            .zip(s.tokens.iter().copied())
            .collect()
    }

    /// What each MCP server's tool definitions take in the model's context.
    pub fn context_cost(&self) -> ContextCost {
        let s = self.state.read();
        let mut cost = ContextCost::default();
        for (server, ix) in &s.by_server {
            let c = cost.servers.entry(server.clone()).or_default();
            // Tools visible to views only (MCP Apps) never reach the model's context.
            for i in ix
                .iter()
                .filter(|i| s.ordered[**i].spec().display.model_visible())
            {
                c.tools = c.tools.saturating_add(1);
                c.tokens = c.tokens.saturating_add(s.tokens[*i]);
            }
        }
        cost
    }

    pub fn server_tools(&self, server: &str) -> Vec<Arc<dyn Tool>> {
        let s = self.state.read();
        s.by_server
            .get(server)
            .map(|ix| ix.iter().map(|i| s.ordered[*i].clone()).collect())
            .unwrap_or_default()
    }

    pub fn len(&self) -> usize {
        self.state.read().ordered.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Ticks on every change.
    pub fn subscribe(&self) -> watch::Receiver<u64> {
        self.generation.subscribe()
    }

    fn update(&self, f: impl FnOnce(&mut State)) {
        {
            let mut s = self.state.write();
            f(&mut s);
            rebuild(&mut s);
        }
        self.generation.send_modify(|g| *g += 1);
    }
}

fn rebuild(s: &mut State) {
    let mut ordered: Vec<Arc<dyn Tool>> = s.builtins.clone();
    let reserved: HashSet<String> = s.builtins.iter().map(|t| t.spec().name.clone()).collect();
    let pairs: Vec<(String, String)> = s
        .servers
        .iter()
        .flat_map(|(srv, st)| st.tools.iter().map(move |t| (srv.clone(), t.tool.clone())))
        .collect();
    let names = naming::assign_names(&pairs, &reserved);
    let mut by_server: HashMap<String, Vec<usize>> = HashMap::new();
    let mut tokens: Vec<u32> = ordered.iter().map(|t| context_tokens(t.spec())).collect();
    let mut k = 0;
    for (server, st) in s.servers.iter_mut() {
        for (tool, unnamed) in st.tools.iter_mut().zip(&st.unnamed_bytes) {
            let name = &names[k];
            k += 1;
            // Model-facing names are made of [A-Za-z0-9_-] only: they add their length.
            tokens.push(cost::tokens_of_bytes(unnamed + name.len()));
            if tool.spec.name != *name {
                let plain = format!(
                    "{}{}__{}",
                    naming::MCP_PREFIX,
                    naming::clean(server),
                    naming::clean(&tool.tool)
                );
                if reserved.contains(&plain) {
                    tracing::warn!(
                        "MCP tool {server}/{} is named like a built-in tool; it is exposed as {name}",
                        tool.tool
                    );
                }
                // Renamed in place when nothing else holds it (a new listing), else
                // made again with the new name.
                if let Some(t) = Arc::get_mut(tool) {
                    t.spec.name = name.clone();
                } else {
                    *tool = Arc::new(McpTool {
                        spec: ToolSpec {
                            name: name.clone(),
                            ..tool.spec.clone()
                        },
                        tool: tool.tool.clone(),
                        client: tool.client.clone(),
                        timeout: tool.timeout,
                        task_support: tool.task_support,
                    });
                }
            }
            by_server
                .entry(server.clone())
                .or_default()
                .push(ordered.len());
            ordered.push(tool.clone());
        }
    }
    let mut by_name = HashMap::with_capacity(ordered.len());
    for (i, t) in ordered.iter().enumerate() {
        by_name.entry(t.spec().name.clone()).or_insert(i);
    }
    debug_assert_eq!(tokens.len(), ordered.len());
    s.tokens = tokens;
    s.ordered = ordered;
    s.by_name = by_name;
    s.by_server = by_server;
}
