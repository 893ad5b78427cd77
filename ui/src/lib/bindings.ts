// Generated from src-tauri/src/bridge.rs by ts-rs. Do not edit by hand:
// run `UPDATE_BINDINGS=1 cargo test -p harness9-desktop bindings` instead.

export type JsonValue = number | string | boolean | Array<JsonValue> | { [key in string]: JsonValue } | null;

export type ErrorCode = "no-project" | "not-found" | "not-connected" | "unsupported" | "tool-failed" | "held" | "invalid-config" | "changed-on-disk" | "io" | "cancelled" | "not-configured" | "busy" | "sign-in-failed" | "invalid-arguments" | "request-failed" | "refused" | "internal";

export type BridgeError = { code: ErrorCode, message: string, 
/**
 * The core error's own stable kebab-case code (`needs-auth`, `timeout`,
 * `unknown-prompt`, …; never changed once released), finer than `code`; null for the
 * desktop crate's own errors and plain I/O errors.
 */
detail: string | null, };

export type ProjectInfo = { path: string, name: string, configPath: string, };

export type MenuAction = "open-folder" | "settings";

export type StatusSnapshot = { 
/**
 * Grows by one with every change, so a front end can drop a snapshot older than the one
 * it shows (one fetched before a newer one was pushed).
 */
revision: number, servers: Array<ServerStatus>, 
/**
 * Set when `.mcp.json` cannot be used as a whole.
 */
configError: string | null, };

export type ServerStatus = { name: string, 
/**
 * `stdio`, `http` or `sse` (empty when the entry is too broken to tell). The transport
 * in use: an `http` entry whose server only speaks the legacy HTTP+SSE transport shows
 * `sse` once the fallback happened.
 */
transport: string, 
/**
 * The config scope the entry comes from (`local`, `project` or `user`).
 */
scope: Scope, 
/**
 * Command line or URL as written, secrets masked ([`ServerConfig::display_target`]);
 * env and header values are never included. Display text: control, bidi and invisible
 * characters are escaped ([`crate::term_text::line`]), so every front end shows them.
 */
target: string, state: ServerState, 
/**
 * Automatic restarts after crashes in a row (see the manager's `RestartPolicy`); `None` when the
 * server has not crashed since it was last started by hand.
 */
restart: RestartStatus | null, 
/**
 * Tools whose definition changed since they were pinned, held back from the model
 * until the user accepts them (counted by the tool sink: `ToolSink::held`).
 */
heldTools: number, 
/**
 * Who the user is signed in as on this (remote) server, when tokens are held.
 */
signedIn: SignedIn | null, };

export type SignedIn = { 
/**
 * The authorization server's issuer.
 */
issuer: string, scopes: Array<string>, 
/**
 * Seconds since the Unix epoch when the access token expires, when known.
 */
expiresAt: number | null, 
/**
 * Whether a refresh token is kept.
 */
refreshable: boolean, 
/**
 * Where the tokens are kept, in words ([`CredentialStore::location`]).
 */
keptIn: string, };

export type StartPhase = "spawning" | "initializing" | "listing-tools" | "signing-in";

export type ServerState = { "status": "starting", phase: StartPhase, } | { "status": "connected", tools: number, protocolVersion: string, serverName: string, serverVersion: string, 
/**
 * The era the connection speaks, from the version.
 */
era: Era, } | { "status": "failed", reason: string, stderrTail: string, } | { "status": "disabled" } | { "status": "awaiting-approval" } | { "status": "needs-auth", reason: string, } | { "status": "stopped" };

export type Era = "legacy" | "modern";

export type RestartStatus = { 
/**
 * The latest attempt (1-based) in this series of crashes.
 */
attempt: number, maxAttempts: number, 
/**
 * Set while waiting for the next attempt.
 */
retryInMs: number | null, 
/**
 * Every attempt was used; the server stays failed until restarted by hand.
 */
gaveUp: boolean, };

export type LogSource = "stderr" | "server" | "host" | "view";

export type LogLine = { 
/**
 * Milliseconds since the Unix epoch.
 */
timeMs: number, source: LogSource, 
/**
 * For server notifications: the level; otherwise empty.
 */
level: string, text: string, };

export type LogFollowDto = { 
/**
 * Pass to `unfollow_log` to stop the stream.
 */
followId: number, lines: Array<LogLine>, };

export type ToolEntry = { 
/**
 * The model-facing name (`mcp__server__tool`).
 */
name: string, 
/**
 * The server it comes from (`null` for built-in tools).
 */
server: string | null, 
/**
 * The tool's own name on its server (used to call it).
 */
tool: string, description: string, readOnly: boolean, 
/**
 * The server's title for the tool (the name stays the identifier).
 */
title: string | null, 
/**
 * What the annotations say, a word or two each ([`crate::mcp::features::ToolAnnotations::marks`]).
 */
marks: Array<string>, 
/**
 * Only `https:` and `data:` icons.
 */
icons: Array<Icon>, 
/**
 * The tool has an interactive view (MCP Apps): a call of it can open one.
 */
hasView: boolean, 
/**
 * Only the server's views may call it (MCP Apps): never offered to the model.
 */
appOnly: boolean, };

export type ToolDetail = { 
/**
 * With local `$ref`s resolved, as the model sees it.
 */
inputSchema: JsonValue, hints: ToolHints, };

export type ToolHints = { readOnlyHint: boolean | null, destructiveHint: boolean | null, idempotentHint: boolean | null, openWorldHint: boolean | null, 
/**
 * `destructive` counts only when the tool is not read-only.
 */
readOnly: boolean, destructive: boolean, idempotent: boolean, openWorld: boolean, 
/**
 * [`ToolAnnotations::marks`].
 */
marks: Array<string>, };

export type Icon = { src: string, mimeType?: string | null, sizes?: Array<string>, 
/**
 * `light` or `dark`, when the icon is meant for one theme.
 */
theme?: string | null, };

export type ServerDetails = { name: string, 
/**
 * `serverInfo.title`, when the server gave one (the name stays the identifier).
 */
title?: string | null, 
/**
 * The server's icons a front end may load (`https:` and `data:` only).
 */
icons: Array<Icon>, 
/**
 * Whether it announced `logging` (takes `logging/setLevel`).
 */
logging: boolean, 
/**
 * The level the user chose this session, if any.
 */
logLevel?: LogLevel | null, };

export type LogLevel = "debug" | "info" | "notice" | "warning" | "error" | "critical" | "alert" | "emergency";

export type HeldToolEntry = { server: string, tool: string, 
/**
 * One line: "it is new", "its description changed", ...
 */
summary: string, 
/**
 * The readable diff, one line each (`+` now, `-` pinned).
 */
diff: Array<string>, };

export type Content = { "type": "text", text: string, } | { "type": "image", data: string, mimeType: string, } | { "type": "audio", data: string, mimeType: string, } | { "type": "resource_link", uri: string, name: string, mimeType?: string | null, description?: string | null, } | { "type": "resource", resource: JsonValue, } | { [key in string]?: JsonValue };

export type CallToolResult = { content: Array<Content>, structuredContent?: JsonValue | null, isError?: boolean, _meta?: JsonValue | null, };

export type TimedResult = { 
/**
 * Milliseconds, with fractions.
 */
durationMs: number, content: Array<Content>, structuredContent?: JsonValue | null, isError?: boolean, _meta?: JsonValue | null, };

export type ApprovalRequest = { name: string, transport: string, 
/**
 * Command (stdio) as written, `${VAR}` references unexpanded.
 */
command: string | null, 
/**
 * Args as written, `${VAR}` references unexpanded.
 */
args: Array<string>, 
/**
 * URL (http, sse) as written, userinfo and query values masked.
 */
url: string | null, 
/**
 * The directory the server runs in (stdio): `cwd` as written, or the project folder.
 */
cwd: string | null, 
/**
 * Names of the variables set for the server (values are not shown).
 */
envKeys: Array<string>, 
/**
 * Names of the headers sent to the server (values are not shown).
 */
headerKeys: Array<string>, 
/**
 * The entry's `oauth` block as written, the client secret masked.
 */
oauth: string | null, 
/**
 * The same fields rendered for display, with control, bidirectional and invisible
 * characters visibly escaped ([`crate::term_text`]); front ends show these.
 */
shown: ApprovalShown, 
/**
 * [`ServerConfig::fingerprint`] of the entry shown; pass it back to approve, so that
 * an entry changed meanwhile is refused rather than approved unseen.
 */
fingerprint: string, };

export type ApprovalShown = { name: string, 
/**
 * Command and args as one shell-quoted line.
 */
command: string | null, url: string | null, cwd: string | null, envKeys: Array<string>, headerKeys: Array<string>, oauth: string | null, };

export type ApprovalPick = { name: string, fingerprint: string, };

export type ApproveOutcome = { 
/**
 * Approved (and started if they were waiting).
 */
approved: Array<string>, 
/**
 * Refused: the entry changed (or went away) since the prompt showed it. Show the
 * current entry and ask again.
 */
stale: Array<string>, };

export type KeyValue = { key: string, value: string, };

export type ServerEntry = { name: string, transport: string, 
/**
 * The config scope the entry is written in.
 */
scope: Scope, command: string | null, args: Array<string>, url: string | null, cwd: string | null, 
/**
 * Command and args (as above) as one shell-quoted line for display, with control,
 * bidirectional and invisible characters visibly escaped ([`crate::term_text`]).
 */
shownCommand: string | null, 
/**
 * The URL (as above) for display, escaped the same way.
 */
shownUrl: string | null, 
/**
 * Values are masked unless they are `${VAR}` references.
 */
env: Array<KeyValue>, headers: Array<KeyValue>, disabled: boolean, startupTimeoutMs: number, toolTimeoutMs: number, 
/**
 * Why the entry cannot be used.
 */
error: string | null, };

export type Scope = "local" | "project" | "user";

export type ImportSource = "claude-desktop" | "claude-code" | "cursor" | "vscode" | "codex";

export type OnConflict = "skip" | "rename";

export type FoundSource = { source: ImportSource, 
/**
 * The tool's name for people.
 */
title: string, 
/**
 * The files read, each with how many servers it holds.
 */
files: Array<FoundSourceFile>, 
/**
 * Servers in all its files.
 */
servers: number, 
/**
 * Files that exist but cannot be read.
 */
errors: Array<string>, };

export type FoundSourceFile = { path: string, servers: number, };

export type ImportPlan = { 
/**
 * The file written.
 */
path: string, 
/**
 * Added servers (under their new name when renamed).
 */
added: Array<ImportedServer>, 
/**
 * Servers left out, each with why.
 */
skipped: Array<ImportedServer>, 
/**
 * Notes for the user (inputs without a value yet).
 */
notes: Array<string>, 
/**
 * Some added server comes from a file inside the project: the user must see the plan
 * and confirm it before it is written.
 */
confirm: boolean, 
/**
 * A digest of what is added (names and entries) and where: a confirmation names it,
 * so what is written is exactly what was shown.
 */
digest: string, };

export type ImportedServer = { 
/**
 * Its name in harness9.
 */
name: string, 
/**
 * Its name in the tool's file (differs when renamed).
 */
original: string, 
/**
 * The file it comes from.
 */
from: string, 
/**
 * Why it was skipped or renamed (empty for a plain add).
 */
reason: string, 
/**
 * What it runs or connects to, as written: the command line, or the URL.
 */
target: string, 
/**
 * Whether it comes from a file inside the project.
 */
fromProject: boolean, };

export type ConfigText = { path: string, 
/**
 * The file's text; empty when the file does not exist.
 */
text: string, exists: boolean, 
/**
 * [`content_hash`] of the text, to tell whether the file changed since it was read.
 */
hash: string, };

export type ConfigChange = { 
/**
 * Counts reloads since the watcher started (0 = none yet).
 */
revision: number, 
/**
 * [`content_hash`] of the project's `.mcp.json` that was loaded ("" when the file is
 * gone).
 */
hash: string, };

export type ProjectEvent<T> = { project: string, session: number, payload: T, };

export type ConfigProblem = { message: string, 
/**
 * 1-based position of a JSON syntax error.
 */
line: number | null, column: number | null, };

export type EntryCheck = { name: string, 
/**
 * `stdio`, `http`, `sse`, or empty when it cannot be told.
 */
transport: string, 
/**
 * Why the entry cannot be used; `None` when it is valid.
 */
error: string | null, disabled: boolean, };

export type ConfigCheck = { 
/**
 * Set when the text cannot be saved (invalid JSON or wrong shape).
 */
error: ConfigProblem | null, 
/**
 * Every entry, in file order of names (sorted).
 */
servers: Array<EntryCheck>, };

export type ConfigEdit = { "op": "setServer", name: string, entry: JsonValue, previous: string | null, } | { "op": "removeServer", name: string, } | { "op": "setDisabled", name: string, disabled: boolean, };

export type ChatEvent = { "type": "turn_start", conversationId: string, provider: string, model: string, } | { "type": "model_request", roundTrip: number, tools: number, } | { "type": "retry", attempt: number, delayMs: number, reason: string, } | { "type": "text_delta", text: string, } | { "type": "tool_input_partial", callId: string, name: string, arguments: JsonValue, view: ToolView, } | { "type": "tool_call_start", callId: string, name: string, arguments: JsonValue, 
/**
 * Set when the tool has an interactive view (MCP Apps): a front end that renders
 * views can open it now, while the call runs.
 */
view?: ToolView, } | { "type": "approval_request", callId: string, name: string, arguments: JsonValue, 
/**
 * The server marks the tool read-only (an untrusted hint).
 */
readOnly: boolean, } | { "type": "tool_call_progress", callId: string, progress: number, total: number | null, message: string | null, } | { "type": "tool_call_end", callId: string, name: string, arguments: JsonValue, status: CallStatus, durationMs: number, 
/**
 * Why the call failed (absent on success).
 */
error: string | null, 
/**
 * The result as the model sees it (text; images as placeholders).
 */
output: string, 
/**
 * The whole output was saved and only its first page shown to the model.
 */
spilled: string | null, 
/**
 * Set when the tool has an interactive view (MCP Apps) and the call returned a
 * result: what a front end that renders views needs to open it.
 */
view?: CallView, } | { "type": "notice", message: string, } | { "type": "turn_end", outcome: TurnOutcome, roundTrips: number, durationMs: number, usage: Usage, };

export type CallView = { server: string, tool: string, resourceUri: string, arguments: JsonValue, result: CallToolResult, };

export type ToolView = { server: string, tool: string, resourceUri: string, };

export type CallStatus = "ok" | "error" | "timed_out" | "denied" | "cancelled";

export type TurnOutcome = { "status": "completed", answer: string, } | { "status": "cut_off", answer: string, notice: string, } | { "status": "stopped" } | { "status": "failed", error: string, code: string, };

export type Usage = { inputTokens: number, outputTokens: number, };

export type ChatDecision = "allow_once" | "allow_always" | "deny";

export type ChatItem = { "kind": "user", text: string, } | { "kind": "assistant", text: string, } | { "kind": "tool", callId: string, name: string, arguments: JsonValue, 
/**
 * `null` when the conversation holds no result for the call.
 */
output: string | null, isError: boolean, 
/**
 * The call's interactive view (MCP Apps), when its tool has one: a front end
 * that renders views opens it again; the others show a note.
 */
view?: CallView, } | { "kind": "notice", text: string, } | { "kind": "attachment", server: string, uri: string, };

export type ConversationSummary = { id: string, createdMs: number, messages: number, 
/**
 * The first user message, shortened.
 */
title: string, };

export type PendingApproval = { callId: string, name: string, arguments: JsonValue, 
/**
 * The server marks the tool read-only (an untrusted hint).
 */
readOnly: boolean, };

export type ChatState = { 
/**
 * `anthropic` or `openai`; `null` when no provider is configured.
 */
provider: string | null, model: string | null, 
/**
 * Why the chat cannot run (what to set), when it cannot.
 */
error: string | null, 
/**
 * A turn is running (the pane was reopened during one).
 */
busy: boolean, conversationId: string | null, history: Array<ChatItem>, 
/**
 * The running turn's tool calls waiting for the user, oldest first.
 */
pending: Array<PendingApproval>, };

export type AskView = { id: number, server: string, request: AskDetail, };

export type AskDetail = { "kind": "form", message: string, schema: JsonValue, form: ElicitForm | null, } | { "kind": "url", message: string, url: string, domain: string | null, } | { "kind": "sampling", messages: JsonValue, systemPrompt: string | null, maxTokens: number, tools: JsonValue | null, modelPreferences: JsonValue | null, } | { "kind": "samplingReview", messages: JsonValue, systemPrompt: string | null, maxTokens: number, tools: JsonValue | null, modelPreferences: JsonValue | null, 
/**
 * The model that answered.
 */
model: string, 
/**
 * The answer: one content block, or an array of them (text, tool calls).
 */
content: JsonValue, stopReason: string | null, } | { "kind": "view", viewId: string, request: ViewAsk, domain: string | null, };

export type ViewAsk = { "what": "toolCall", tool: string, arguments: JsonValue, 
/**
 * The server marks the tool read-only (an untrusted hint).
 */
readOnly: boolean, } | { "what": "permissions", permissions: Array<string>, } | { "what": "openLink", url: string, };

export type PromptEntry = { server: string, name: string, title: string | null, description: string | null, arguments: Array<PromptArgument>, };

export type PromptArgument = { name: string, title?: string | null, description?: string | null, required?: boolean, };

export type Completion = { values: Array<string>, 
/**
 * How many values exist in all, when the server says.
 */
total?: number | null, hasMore?: boolean, };

export type AskReply = { "action": "accept", content: JsonValue | null, } | { "action": "fill", values: { [key in string]: FieldValue }, } | { "action": "approve", always: boolean, review: boolean, } | { "action": "decline" } | { "action": "cancel" };

export type ElicitForm = { fields: Array<FormField>, 
/**
 * Each control's first value: the schema's default, else empty (or off).
 */
initial: { [key in string]: FieldValue }, };

export type FormField = { name: string, 
/**
 * The schema's `title`, else the name.
 */
label: string, description: string | null, required: boolean, kind: FieldKind, };

export type FieldKind = { "type": "string", format: Format | null, minLength: number | null, maxLength: number | null, } | { "type": "number", integer: boolean, minimum: number | null, maximum: number | null, } | { "type": "boolean" } | { "type": "enum", choices: Array<Choice>, } | { "type": "multi", choices: Array<Choice>, minItems: number | null, maxItems: number | null, };

export type FieldValue = boolean | string | Array<string>;

export type Choice = { value: string, label: string, };

export type Format = "email" | "uri" | "date" | "date-time";

export type ResourceEntry = { server: string, uri: string, name: string, title: string | null, description: string | null, mimeType: string | null, 
/**
 * Bytes, when the server says.
 */
size: number | null, };

export type TemplateEntry = { server: string, uriTemplate: string, name: string, title: string | null, description: string | null, mimeType: string | null, };

export type ResourceListing = { resources: Array<ResourceEntry>, templates: Array<TemplateEntry>, 
/**
 * Whether the server lets clients subscribe to updates (false for a listing of
 * every server).
 */
canSubscribe: boolean, };

export type PreviewPart = { "kind": "text", uri: string, mimeType: string | null, text: string, totalChars: number, truncated: boolean, } | { "kind": "image", uri: string, mimeType: string, dataUrl: string, bytes: number, } | { "kind": "binary", uri: string, mimeType: string | null, bytes: number, };

export type ReadPreview = { parts: Array<PreviewPart>, };

export type ResourceRef = { server: string, uri: string, };

export type SurfaceEvent = { "type": "listing-changed", server: string, } | { "type": "resource-updated", server: string, uri: string, } | { "type": "elicitation-complete", server: string, elicitationId: string, };

export type ContextSummary = { 
/**
 * Per server with tools, by name.
 */
servers: { [key in string]: ServerCost }, totalTokens: number, 
/**
 * Set when tool search takes over ([`crate::engine::toolset::context_warning`]).
 */
warning: string | null, };

export type ServerCost = { tools: number, 
/**
 * Estimated tokens of all its tool definitions.
 */
tokens: number, };

export type AboutInfo = { version: string, places: Array<PlaceInfo>, };

export type PlaceInfo = { 
/**
 * What is kept there, for people ("Project servers").
 */
what: string, 
/**
 * The path, or a description when it is not a file ("the system keychain (…)").
 */
location: string, 
/**
 * Whether `location` is a path on disk (a front end may offer to open it).
 */
isPath: boolean, 
/**
 * Whether that path exists now.
 */
exists: boolean, };

export type ProviderKind = "anthropic" | "openai";

export type KeySource = { "type": "env", var: string, } | { "type": "keychain" };

export type KeyState = { "state": "keychain" } | { "state": "env", var: string, } | { "state": "missing" };

export type ProviderView = { provider: ProviderKind, model: string, 
/**
 * Empty: the provider's default ([`ProviderView::default_base_url`]).
 */
baseUrl: string, defaultModel: string, defaultBaseUrl: string, keySource: KeySource, key: KeyState, 
/**
 * The key's state in words: "set in keychain", "from $VAR", "missing".
 */
keyText: string, 
/**
 * Where a key typed in the pane is kept, in words.
 */
keyStore: string, 
/**
 * Environment variables that win over these settings in this process.
 */
overriddenBy: Array<string>, settingsPath: string, 
/**
 * The settings file could not be read (the view shows defaults meanwhile).
 */
error: string | null, };

export type ProviderChange = { provider: ProviderKind, model: string, baseUrl: string, keySource: KeySource, 
/**
 * A new key to keep in the credential store (with [`KeySource::Keychain`]); `None`
 * keeps the one there.
 */
apiKey?: string, };

export type ConnectionCheck = { ok: boolean, 
/**
 * What worked, or what failed and what to do.
 */
message: string, elapsedMs: number, };

export type ToolPermission = "ask" | "allow" | "deny";

export type PermissionRule = { 
/**
 * A tool's model-facing name, or a pattern over such names.
 */
tool: string, permission: ToolPermission, };

export type ViewCall = { 
/**
 * The conversation the call belongs to; `None` for a call made by hand (the tool
 * panel), whose view no conversation change closes.
 */
conversationId: string | null, 
/**
 * The call's id (the model's tool-use id, or the manual call's number): the view's
 * `hostContext.toolInfo.id`.
 */
callId: string, arguments: JsonValue, 
/**
 * The result, once the call finished (the front end sends it to the view as
 * `ui/notifications/tool-result` after `initialized`).
 */
result: CallToolResult | null, };

export type ViewOpened = { 
/**
 * Unguessable (128 random bits, hex): the view's handle for every later call, and the
 * path its document is served under.
 */
viewId: string, server: string, tool: string, 
/**
 * The `ui://` resource the document was read from.
 */
resourceUri: string, 
/**
 * The origin label of the server's views: the same for every view of this server in
 * this project, different for every other server; lowercase letters and digits only
 * (safe as a URI host label), so two servers' views share no storage.
 */
origin: string, 
/**
 * The Content-Security-Policy the document is served with (also in
 * [`ViewDocument::csp`]).
 */
csp: string, 
/**
 * The iframe `allow` attribute: only permissions the resource declared and the user
 * granted (`""` for none).
 */
allow: string, 
/**
 * The permissions granted (`camera`, `microphone`, `geolocation`,
 * `clipboard-write`): `hostCapabilities.sandbox.permissions`.
 */
permissions: Array<string>, 
/**
 * External origins the policy lets the view reach, to tell the user (empty when it
 * reaches none).
 */
externalOrigins: Array<string>, 
/**
 * Declared domains left out of the policy, with why (also in the server's log).
 */
droppedDomains: Array<string>, 
/**
 * `_meta.ui.prefersBorder`; `None`: the host decides.
 */
prefersBorder: boolean | null, 
/**
 * The server's title (`serverInfo.title`) and loadable icons, for the view's frame.
 */
serverTitle: string | null, serverIcons: Array<Icon>, 
/**
 * The tool's definition as the server listed it: `hostContext.toolInfo.tool`.
 */
toolDefinition: JsonValue, 
/**
 * The call, as given to [`crate::Harness::open_view`].
 */
call: ViewCall, };

export type ViewReply = { "kind": "answer", result: JsonValue, } | { "kind": "noted" } | { "kind": "resize", width: number | null, height: number | null, } | { "kind": "displayMode", mode: DisplayMode, } | { "kind": "download", offer: DownloadOffer, };

export type DisplayMode = "inline" | "fullscreen" | "pip";

export type DownloadOffer = { downloadId: string, files: Array<DownloadFile>, };

export type DownloadFile = { 
/**
 * A file name to propose (no folders; made safe).
 */
name: string, mimeType: string | null, size: number, };

export type TeardownReason = "closed" | "view-asked" | "conversation-left" | "server-removed" | "server-stopped" | "server-restarted" | "server-failed" | "project-closed";

export type PendingMessage = { id: number, 
/**
 * The view it comes from, its server and tool (shown with it).
 */
viewId: string, server: string, tool: string, conversationId: string | null, 
/**
 * The message as it would be sent (text; other blocks described).
 */
text: string, };

export type ViewEvent = { "type": "teardown", viewId: string, reason: TeardownReason, 
/**
 * `reason` in words.
 */
message: string, } | { "type": "pending_messages", messages: Array<PendingMessage>, } | { "type": "model_context", viewId: string, server: string, conversationId: string | null, 
/**
 * What the model will read, shortened for display.
 */
preview: string, } | { "type": "throttled", viewId: string, server: string, message: string, };

export type SearchHit = { 
/**
 * The registry it was found in (its base URL).
 */
registry: string, name: string, title: string | null, description: string, 
/**
 * The latest version.
 */
version: string, 
/**
 * How it runs: `npx`, `uvx`, `docker`, `dnx`, `mcpb`, or a remote's URL.
 */
runs: Array<string>, 
/**
 * `active`, `deprecated` or `deleted`, when the registry says.
 */
status: string | null, };

export type RegistryProblem = { registry: string, code: string, message: string, };

export type SearchResults = { hits: Array<SearchHit>, 
/**
 * What to know about the hits ("registry unreachable; showing results from 3 h ago").
 */
notes: Array<string>, 
/**
 * Registries that failed with no kept answer to show instead.
 */
problems: Array<RegistryProblem>, 
/**
 * Listed items that were not records (left out).
 */
unreadable: number, };

export type InstallRequest = { 
/**
 * The server's name in the registry.
 */
name: string, 
/**
 * `None`: the latest version.
 */
version: string | null, 
/**
 * Its name in harness9 (default: the last part of the registry name).
 */
localName: string | null, 
/**
 * Default: local.
 */
scope: Scope | null, choice: InstallChoice, 
/**
 * Ask only this registry (default: the configured ones).
 */
registry: string | null, };

export type InstallChoice = { "kind": "auto" } | { "kind": "package", "package": PackageKind } | { "kind": "remote" };

export type PackageKind = "npm" | "pypi" | "oci" | "nuget" | "mcpb";

export type PlanSource = { 
/**
 * The registry's base URL.
 */
registry: string, 
/**
 * The server's name there.
 */
name: string, version: string, title: string | null, description: string, repository: string | null, website: string | null, 
/**
 * The package used (`None`: a remote).
 */
package: PackageKind | null, };

export type Replaced = { entry: JsonValue, 
/**
 * Its command line or URL, as written.
 */
target: string, 
/**
 * The version it was installed at, when harness9 installed it.
 */
version: string | null, };

export type PlanVariable = { name: string, kind: VariableKind, description: string | null, required: boolean, 
/**
 * Kept in the credential store; the entry holds `${input:NAME}`.
 */
secret: boolean, default: string | null, choices: Array<string>, 
/**
 * `string`, `number`, `boolean` or `filepath`; a bundle's `directory` or `file` is a
 * path the user picks (an absolute one).
 */
format: string | null, placeholder: string | null, 
/**
 * Bounds of a `number`.
 */
min?: number, max?: number, 
/**
 * Several values (paths), one a line; `default` too.
 */
multiple: boolean, };

export type VariableKind = "env" | "header" | "argument" | "url";

export type Template = { "type": "stdio", command: string, args: Array<ArgGroup>, env: Array<[string, Array<Seg>]>, 
/**
 * The folder it runs in (a bundle's).
 */
cwd?: string, } | { "type": "http", url: Array<Seg>, headers: Array<[string, Array<Seg>]>, } | { "type": "sse", url: Array<Seg>, headers: Array<[string, Array<Seg>]>, };

export type Seg = { "text": string } | { "var": string };

export type ArgGroup = { parts: Array<Array<Seg>>, 
/**
 * A part that is one variable of several values (a bundle's `multiple` field) gives
 * one argument per value.
 */
spread: boolean, };

export type InstallPlan = { source: PlanSource, 
/**
 * The entry's name in harness9.
 */
name: string, scope: Scope, 
/**
 * The file it is written to.
 */
path: string, 
/**
 * The entry exactly as it will be written (with the values filled in so far).
 */
entry: unknown, 
/**
 * Its command line or URL, as written.
 */
target: string, 
/**
 * The values to ask for.
 */
variables: Array<PlanVariable>, 
/**
 * Plain values filled in (they are in `entry`).
 */
values: { [key in string]: string }, 
/**
 * Secret variables that already have a value in the credential store (for this
 * entry): asking again is optional.
 */
keptSecrets: Array<string>, 
/**
 * The entry it replaces (an update of an installed server).
 */
replaces: Replaced | null, 
/**
 * What the user should look at before saying yes.
 */
warnings: Array<string>, 
/**
 * Other things to know (a registry answered from the cache, precedence).
 */
notes: Array<string>, 
/**
 * A digest of what is written (file, name, entry): a commit names the one shown.
 */
digest: string, 
/**
 * How `entry` is made from the values.
 */
template: Template, 
/**
 * What a bundle is, declares and needs (`None`: from a registry).
 */
bundle: BundleInfo | null, };

export type BundleInfo = { 
/**
 * The bundle file.
 */
file: string, 
/**
 * Its SHA-256 (hex): the commit unpacks the file only if it is still this one.
 */
sha256: string, 
/**
 * The folder its files are unpacked into.
 */
dir: string, manifestVersion: string | null, 
/**
 * `node`, `python`, `uv` or `binary`.
 */
serverType: string, author: string, authorEmail: string | null, authorUrl: string | null, tools: Array<DeclaredItem>, 
/**
 * The server makes more tools than it declares.
 */
toolsGenerated: boolean, prompts: Array<DeclaredItem>, promptsGenerated: boolean, compatibility: Compatibility, 
/**
 * It carries a signature block (not verified by harness9).
 */
signed: boolean, 
/**
 * Files in it.
 */
files: number, 
/**
 * Bytes once unpacked.
 */
unpackedBytes: number, };

export type DeclaredItem = { name: string, description: string | null, };

export type Compatibility = { 
/**
 * The platforms it runs on (empty: any).
 */
platforms: Array<string>, 
/**
 * This one.
 */
platform: string, platformOk: boolean, runtimes: Array<RuntimeCheck>, };

export type RuntimeCheck = { 
/**
 * `node`, `python`, `uv`.
 */
name: string, 
/**
 * The program looked for on the servers' PATH.
 */
program: string, 
/**
 * The range the bundle asks for (`None`: any version).
 */
wanted: string | null, 
/**
 * The version found (`None`: not found, or it did not say).
 */
found: string | null, ok: boolean, };

export type PlanView = { id: number, plan: InstallPlan, 
/**
 * Names of the required values with no answer, default or kept secret yet.
 */
missing: Array<string>, };

export type Installed = { name: string, scope: Scope, path: string, entry: unknown, target: string, 
/**
 * Secret values kept, by name (never the values).
 */
secrets: Array<string>, 
/**
 * Where they are kept, in words.
 */
secretsIn: string, 
/**
 * Whether it replaced an entry (an update).
 */
replaced: boolean, 
/**
 * What went wrong after the entry was written (the approval or the record of where it
 * came from could not be kept).
 */
warnings: Array<string>, 
/**
 * Precedence between scopes, as for `mcp add`.
 */
notes: Array<string>, };

export type Outdated = { 
/**
 * Its name in harness9.
 */
server: string, scope: Scope, registry: string, 
/**
 * Its name in the registry.
 */
name: string, installed: string, latest: string, };

export type OutdatedReport = { outdated: Array<Outdated>, 
/**
 * Installed servers checked.
 */
checked: number, problems: Array<RegistryProblem>, notes: Array<string>, };

export type SecretState = { name: string, 
/**
 * A value is kept; `None` when the store could not be asked (it says why in `error`).
 */
set: boolean | null, error?: string, };

export type ServerSecretsView = { 
/**
 * The scope of the entry they belong to.
 */
scope: Scope, secrets: Array<SecretState>, };

export type TaskState = "working" | "input_required" | "cancel_requested" | "completed" | "failed" | "cancelled" | "expired" | "lost";

export type TaskRecord = { server: string, 
/**
 * The tool's raw name on its server.
 */
tool: string, arguments: JsonValue, taskId: string, era: Era, 
/**
 * When it was created (ms since the epoch, our clock).
 */
createdMs: number, 
/**
 * Its time to live in ms from creation; `null`: unlimited.
 */
ttlMs: number | null, state: TaskState, 
/**
 * The server's last status message.
 */
message: string | null, 
/**
 * When its state or message last changed (ms since the epoch).
 */
updatedMs: number, 
/**
 * Why it ended without a result, when it did.
 */
error?: string, 
/**
 * The model's tool call that started it, if any (its late result goes there).
 */
origin?: TaskOrigin, 
/**
 * Its server runs over stdio: the task ends with the server's process.
 */
local: boolean, 
/**
 * The server takes `tasks/cancel` (legacy servers declare it).
 */
canCancel: boolean, };

export type TaskOrigin = { conversationId: string, 
/**
 * The tool call's id in the conversation.
 */
callId: string, 
/**
 * The model-facing tool name of the call.
 */
name: string, };

export type TaskEvent = { "type": "started", task: TaskRecord, } | { "type": "status", server: string, taskId: string, state: TaskState, message: string | null, } | { "type": "ended", task: TaskRecord, result: CallToolResult | null, };

export type CancelOutcome = "cancelled" | "requested";
