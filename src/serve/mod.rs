//! harness9 as an MCP *server*: speaks JSON-RPC 2.0 over a byte stream (stdin
//! and stdout in production) and exposes built-in, read-only tools confined to
//! one project folder.
//!
//! This module owns the server side of the protocol: newline-delimited framing,
//! request/notification dispatch, the `initialize` handshake (protocol version
//! negotiation), `ping`, `tools/list` and `tools/call`, and the mapping of
//! failures onto JSON-RPC errors (malformed messages, unknown methods, bad
//! params, unknown tools) or onto tool results with `isError: true` (anything
//! that goes wrong while a tool runs, such as a missing file or a path outside
//! the project folder). It also holds the tool catalog: names, descriptions and
//! input schemas. The tool implementations and the path confinement live in
//! `fs_tools.rs`.
//!
//! Requests are answered one at a time, in the order they arrive. Tool calls
//! run on tokio's blocking pool since they do plain file I/O. Nothing but
//! protocol messages is ever written to the output stream; diagnostics go to
//! `tracing`.

mod fs_tools;
#[cfg(test)]
mod tests;

use std::io;
use std::path::PathBuf;
use std::sync::Arc;

use serde_json::{json, Map, Value};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};

use fs_tools::{Args, Project, ToolError, ToolResult};

/// Protocol revisions this server can speak, newest first.
const SUPPORTED_PROTOCOL_VERSIONS: [&str; 4] =
    ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];
/// Offered when the client asks for a revision we do not know.
const LATEST_PROTOCOL_VERSION: &str = SUPPORTED_PROTOCOL_VERSIONS[0];

const PARSE_ERROR: i64 = -32700;
const INVALID_REQUEST: i64 = -32600;
const METHOD_NOT_FOUND: i64 = -32601;
const INVALID_PARAMS: i64 = -32602;
const INTERNAL_ERROR: i64 = -32603;

/// One argument of a tool, as advertised in its `inputSchema`.
struct Param {
    name: &'static str,
    kind: &'static str,
    required: bool,
    description: &'static str,
}

impl Param {
    const fn new(
        name: &'static str,
        kind: &'static str,
        required: bool,
        description: &'static str,
    ) -> Self {
        Self {
            name,
            kind,
            required,
            description,
        }
    }
}

/// One built-in tool: its advertised definition and its implementation.
struct ToolSpec {
    name: &'static str,
    title: &'static str,
    description: &'static str,
    params: &'static [Param],
    run: fn(&Project, &Args<'_>) -> ToolResult,
}

impl ToolSpec {
    /// The `tools/list` entry for this tool.
    fn definition(&self) -> Value {
        let mut properties = Map::new();
        for p in self.params {
            let mut schema = json!({ "type": p.kind, "description": p.description });
            if p.kind == "integer" {
                schema["minimum"] = json!(1);
            }
            properties.insert(p.name.to_owned(), schema);
        }
        let required: Vec<&str> = self
            .params
            .iter()
            .filter(|p| p.required)
            .map(|p| p.name)
            .collect();
        json!({
            "name": self.name,
            "title": self.title,
            "description": self.description,
            "inputSchema": {
                "type": "object",
                "properties": properties,
                "required": required,
                "additionalProperties": false,
            },
            "annotations": { "readOnlyHint": true },
        })
    }

    /// Runs the tool (blocking file I/O) with the call's `arguments`.
    fn call(&self, project: &Project, arguments: &Map<String, Value>) -> ToolResult {
        let allowed: Vec<&str> = self.params.iter().map(|p| p.name).collect();
        let args = Args::new(arguments, self.name, &allowed)?;
        (self.run)(project, &args)
    }
}

/// The tools `tools/list` advertises, in that order.
const TOOLS: [ToolSpec; 3] = [
    ToolSpec {
        name: "read_file",
        title: "Read file",
        description: "Read a UTF-8 text file in the project folder. Returns its lines numbered \
            from 1 (line number, tab, text). Use offset and limit to read part of a long file; \
            files over 10 MiB can only be read in parts. Binary files are refused.",
        params: &[
            Param::new(
                "path",
                "string",
                true,
                "File path relative to the project folder, e.g. 'src/main.rs'.",
            ),
            Param::new(
                "offset",
                "integer",
                false,
                "1-based line number to start reading from (default 1).",
            ),
            Param::new(
                "limit",
                "integer",
                false,
                "Maximum number of lines to return (default: to the end).",
            ),
        ],
        run: fs_tools::read_file,
    },
    ToolSpec {
        name: "list_dir",
        title: "List folder",
        description: "List the entries of a folder in the project folder, sorted by name. \
            Folders end with '/', files show their size in bytes, symlinks show their target.",
        params: &[Param::new(
            "path",
            "string",
            false,
            "Folder path relative to the project folder (default: the project folder).",
        )],
        run: fs_tools::list_dir,
    },
    ToolSpec {
        name: "search_text",
        title: "Search text",
        description: "Search files for a plain, case-sensitive substring (not a regular \
            expression), recursively under a folder of the project folder. Skips .git, \
            node_modules and target folders, symlinks and binary files. Returns one \
            'path:line: text' line per match.",
        params: &[
            Param::new(
                "pattern",
                "string",
                true,
                "Exact text to look for (case-sensitive, single line).",
            ),
            Param::new(
                "path",
                "string",
                false,
                "Folder or file to search, relative to the project folder (default: all of it).",
            ),
            Param::new(
                "max_results",
                "integer",
                false,
                "Stop after this many matching lines (default 200).",
            ),
        ],
        run: fs_tools::search_text,
    },
];

/// A JSON-RPC error to send back in place of a result.
#[derive(Debug)]
struct RpcError {
    code: i64,
    message: String,
}

impl RpcError {
    fn new(code: i64, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
        }
    }

    fn invalid_params(message: impl Into<String>) -> Self {
        Self::new(INVALID_PARAMS, message)
    }
}

/// Serve MCP on the given reader/writer (stdin/stdout in production) until EOF.
///
/// Each input line is one JSON-RPC message; each response is written as one
/// compact JSON line and flushed. Fails only if `root` cannot be resolved to
/// a folder, or on an I/O error reading the input or writing the output.
pub async fn serve<R: AsyncRead + Unpin, W: AsyncWrite + Unpin>(
    root: PathBuf,
    input: R,
    output: W,
) -> io::Result<()> {
    let project = Arc::new(tokio::task::spawn_blocking(move || Project::new(&root)).await??);
    tracing::debug!(root = %project.root().display(), "serving MCP");
    let mut input = BufReader::new(input);
    let mut output = output;
    let mut line = Vec::new();
    loop {
        line.clear();
        if input.read_until(b'\n', &mut line).await? == 0 {
            break;
        }
        let Some(response) = handle_line(&project, &line).await else {
            continue;
        };
        let mut bytes = serde_json::to_vec(&response).map_err(io::Error::other)?;
        bytes.push(b'\n');
        output.write_all(&bytes).await?;
        output.flush().await?;
    }
    tracing::debug!("MCP input closed");
    output.flush().await
}

fn error_response(id: Value, code: i64, message: impl Into<String>) -> Value {
    json!({
        "jsonrpc": "2.0",
        "id": id,
        "error": { "code": code, "message": message.into() },
    })
}

/// Handles one input line; `None` when nothing should be sent back
/// (blank lines, notifications, responses from the client).
async fn handle_line(project: &Arc<Project>, line: &[u8]) -> Option<Value> {
    if line.iter().all(u8::is_ascii_whitespace) {
        return None;
    }
    let message: Value = match serde_json::from_slice(line) {
        Ok(message) => message,
        Err(err) => {
            tracing::debug!(%err, "unparseable input line");
            return Some(error_response(
                Value::Null,
                PARSE_ERROR,
                format!("Parse error: {err}"),
            ));
        }
    };
    let Value::Object(message) = message else {
        return Some(error_response(
            Value::Null,
            INVALID_REQUEST,
            "Invalid request: expected a single JSON-RPC 2.0 object (batches are not supported)",
        ));
    };
    let id = message.get("id").cloned();
    let Some(method) = message.get("method") else {
        if id.is_some() && (message.contains_key("result") || message.contains_key("error")) {
            // We never send requests, so a response from the client is stray.
            tracing::debug!(?id, "ignoring unexpected response from client");
            return None;
        }
        return Some(error_response(
            id.unwrap_or(Value::Null),
            INVALID_REQUEST,
            "Invalid request: missing method",
        ));
    };
    let Some(id) = id else {
        tracing::debug!(%method, "ignoring notification");
        return None;
    };
    if !(id.is_string() || id.is_number()) {
        return Some(error_response(
            Value::Null,
            INVALID_REQUEST,
            "Invalid request: id must be a string or number",
        ));
    }
    if message.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return Some(error_response(
            id,
            INVALID_REQUEST,
            "Invalid request: jsonrpc must be \"2.0\"",
        ));
    }
    let Value::String(method) = method else {
        return Some(error_response(
            id,
            INVALID_REQUEST,
            "Invalid request: method must be a string",
        ));
    };
    Some(
        match dispatch(project, method, message.get("params")).await {
            Ok(result) => json!({ "jsonrpc": "2.0", "id": id, "result": result }),
            Err(err) => error_response(id, err.code, err.message),
        },
    )
}

async fn dispatch(
    project: &Arc<Project>,
    method: &str,
    params: Option<&Value>,
) -> Result<Value, RpcError> {
    let params = match params {
        None | Some(Value::Null) => None,
        Some(Value::Object(params)) => Some(params),
        Some(_) => return Err(RpcError::invalid_params("params must be an object")),
    };
    match method {
        "initialize" => initialize(project, params),
        "ping" => Ok(json!({})),
        "tools/list" => {
            let tools: Vec<Value> = TOOLS.iter().map(|t| t.definition()).collect();
            Ok(json!({ "tools": tools }))
        }
        "tools/call" => call_tool(project, params).await,
        _ => Err(RpcError::new(
            METHOD_NOT_FOUND,
            format!("Method not found: {method}"),
        )),
    }
}

fn initialize(project: &Project, params: Option<&Map<String, Value>>) -> Result<Value, RpcError> {
    let requested = params
        .and_then(|p| p.get("protocolVersion"))
        .and_then(Value::as_str)
        .ok_or_else(|| {
            RpcError::invalid_params("initialize requires params.protocolVersion (a string)")
        })?;
    let version = if SUPPORTED_PROTOCOL_VERSIONS.contains(&requested) {
        requested
    } else {
        LATEST_PROTOCOL_VERSION
    };
    tracing::debug!(requested, version, "initialize");
    let instructions = format!(
        "Read-only access to the project folder {}. All paths are relative to it; paths \
         outside it are refused. Use list_dir to explore folders, search_text to find \
         where text occurs, and read_file (with offset/limit for long files) to read files.",
        project.root().display()
    );
    Ok(json!({
        "protocolVersion": version,
        "capabilities": { "tools": {} },
        "serverInfo": { "name": "harness9", "version": env!("CARGO_PKG_VERSION") },
        "instructions": instructions,
    }))
}

async fn call_tool(
    project: &Arc<Project>,
    params: Option<&Map<String, Value>>,
) -> Result<Value, RpcError> {
    let params = params
        .ok_or_else(|| RpcError::invalid_params("tools/call requires params {name, arguments}"))?;
    let name = params
        .get("name")
        .and_then(Value::as_str)
        .ok_or_else(|| RpcError::invalid_params("tools/call requires params.name (a string)"))?;
    let arguments = match params.get("arguments") {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(arguments)) => arguments.clone(),
        Some(_) => {
            return Err(RpcError::invalid_params(
                "tools/call params.arguments must be an object",
            ))
        }
    };
    let Some(tool) = TOOLS.iter().find(|t| t.name == name) else {
        let known: Vec<&str> = TOOLS.iter().map(|t| t.name).collect();
        return Err(RpcError::invalid_params(format!(
            "Unknown tool: {name} (available tools: {})",
            known.join(", ")
        )));
    };
    let project = Arc::clone(project);
    let outcome = tokio::task::spawn_blocking(move || tool.call(&project, &arguments))
        .await
        .map_err(|err| {
            RpcError::new(
                INTERNAL_ERROR,
                format!("tool {name} failed unexpectedly: {err}"),
            )
        })?;
    let (text, is_error) = match outcome {
        Ok(text) => (text, false),
        Err(ToolError(message)) => {
            tracing::debug!(tool = name, %message, "tool call failed");
            (message, true)
        }
    };
    Ok(json!({
        "content": [{ "type": "text", "text": text }],
        "isError": is_error,
    }))
}
