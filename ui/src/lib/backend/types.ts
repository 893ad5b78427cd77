// The one interface between the UI and the Rust backend. Components and state talk to a
// `Backend`; the real one (tauri.ts) is the only module that imports @tauri-apps/*, and the
// tests use the in-memory one (mock.ts).

import type {
  AboutInfo,
  ContextSummary,
  ApprovalPick,
  ApprovalRequest,
  ApproveOutcome,
  AskReply,
  AskView,
  ResourceRef,
  ChatDecision,
  ChatEvent,
  ChatItem,
  ChatState,
  Completion,
  ConfigChange,
  ConfigCheck,
  ConfigEdit,
  ConfigText,
  ConnectionCheck,
  FoundSource,
  ImportPlan,
  ImportSource,
  InstallRequest,
  Installed,
  OutdatedReport,
  PlanView,
  SearchResults,
  ServerSecretsView,
  OnConflict,
  Scope,
  ConversationSummary,
  ErrorCode,
  HeldToolEntry,
  LogLevel,
  LogLine,
  MenuAction,
  PermissionRule,
  ProjectInfo,
  PromptEntry,
  ProviderChange,
  ProviderKind,
  ProviderView,
  SurfaceEvent,
  ResourceListing,
  ReadPreview,
  ServerDetails,
  ServerEntry,
  SignedIn,
  StatusSnapshot,
  ToolDetail,
  ToolEntry,
  ToolPermission,
  TimedResult,
  PendingMessage,
  ViewCall,
  ViewEvent,
  ViewOpened,
  ViewReply,
  CallToolResult,
  CancelOutcome,
  TaskEvent,
  TaskRecord,
} from "../bindings";

export type Unlisten = () => void;

/**
 * An error from the backend: a closed `code` to branch on, a message for people, and the
 * core error's own stable code (`detail`: `needs-auth`, `timeout`, …) when it has one.
 */
export class BackendError extends Error {
  readonly code: ErrorCode;
  readonly detail: string | null;
  constructor(code: ErrorCode, message: string, detail: string | null = null) {
    super(message);
    this.name = "BackendError";
    this.code = code;
    this.detail = detail;
  }

  /** Normalizes whatever a failed call rejected with. */
  static from(e: unknown): BackendError {
    if (e instanceof BackendError) return e;
    if (e && typeof e === "object" && "code" in e && "message" in e) {
      const o = e as { code: ErrorCode; message: string; detail?: string | null };
      return new BackendError(o.code, String(o.message), o.detail ?? null);
    }
    return new BackendError("internal", e instanceof Error ? e.message : String(e));
  }
}

export interface LogFollow {
  lines: LogLine[];
  stop(): void;
}

export interface Backend {
  currentProject(): Promise<ProjectInfo | null>;
  openProject(path: string): Promise<ProjectInfo>;
  /** The native folder picker; null when cancelled. */
  pickFolder(): Promise<string | null>;
  recentProjects(): Promise<string[]>;
  /**
   * Tells the backend the first frame is painted, `pageMs` after the page started loading;
   * returns ms since the process started.
   */
  reportPainted(pageMs: number): Promise<number>;
  /** The app is closing (its window or File → Quit): tear the views down, then call `readyToQuit`. */
  onQuitting(cb: () => void): Promise<Unlisten>;
  /** The views are torn down after `onQuitting`: the app closes now. */
  readyToQuit(): Promise<void>;

  getStatus(): Promise<StatusSnapshot>;
  pendingApprovals(): Promise<ApprovalRequest[]>;
  /** Approves exactly the entries shown (name + fingerprint); `stale` ones changed since. */
  approve(servers: ApprovalPick[], remember: boolean): Promise<ApproveOutcome>;
  restartServer(server: string): Promise<void>;
  stopServer(server: string): Promise<void>;
  setServerDisabled(server: string, disabled: boolean): Promise<void>;
  serverEntry(server: string): Promise<ServerEntry | null>;
  followLog(server: string, onLine: (line: LogLine) => void): Promise<LogFollow>;
  /** Title, icons and logging of a connected server; null when it is not connected. */
  serverDetails(server: string): Promise<ServerDetails | null>;
  /** `logging/setLevel`; kept for the session and set again when the server restarts. */
  setLogLevel(server: string, level: LogLevel): Promise<void>;
  /** The project's extra roots (folders besides the project that servers may use). */
  extraRoots(): Promise<string[]>;
  /** Adds a folder to the extra roots (kept per project); returns the list now. */
  addExtraRoot(path: string): Promise<string[]>;
  removeExtraRoot(path: string): Promise<string[]>;
  /**
   * Signs in to a remote server: the backend opens its authorization page in the browser
   * and resolves once the user has signed in (stopping the server cancels).
   */
  signIn(server: string): Promise<SignedIn>;
  /** Forgets the sign-in kept for a remote server; true when there was one. */
  signOut(server: string): Promise<boolean>;

  listTools(): Promise<ToolEntry[]>;
  /** One tool's input schema and annotations (by its model-facing name), fetched when its view opens; `null`: the tool is gone. */
  toolDetail(name: string): Promise<ToolDetail | null>;
  /** Tools held back because they changed since they were pinned, with their diff. */
  heldTools(): Promise<HeldToolEntry[]>;
  /** Accepts held tools of one server (all when `tools` is empty); returns what was accepted. */
  acceptTools(server: string, tools: string[]): Promise<HeldToolEntry[]>;
  /** Calls a tool by hand; `started` gets the core's number of the call (for cancelToolCall). */
  callTool(server: string, tool: string, args: unknown, started: (callId: number) => void): Promise<TimedResult>;
  cancelToolCall(callId: number): Promise<void>;

  /** One config scope's file; the project's `.mcp.json` without a scope. */
  readConfig(scope?: Scope): Promise<ConfigText>;
  checkConfig(text: string): Promise<ConfigCheck>;
  editConfig(text: string, edit: ConfigEdit): Promise<string>;
  saveConfig(text: string, expectedHash: string | null, scope?: Scope): Promise<ConfigText>;
  openConfigInEditor(scope?: Scope): Promise<void>;
  /** Other tools with MCP servers configured on this machine. */
  importSources(): Promise<FoundSource[]>;
  /**
   * Plans (`dryRun`) or runs an import. `confirmed` is the `digest` of the plan the user saw
   * and accepted: the core writes only that plan, and requires it when the plan adds
   * servers from a file inside the project.
   */
  importServers(
    from: ImportSource,
    scope: Scope,
    onConflict: OnConflict,
    dryRun: boolean,
    confirmed?: string | null,
  ): Promise<ImportPlan>;

  /** The provider and model (or why there is none) and the project's conversation. */
  chatState(): Promise<ChatState>;
  /** Starts a new conversation (the old one stays saved). */
  chatNew(): Promise<ChatState>;
  /** The project's saved conversations, newest first. */
  chatConversations(): Promise<ConversationSummary[]>;
  /** Reopens a saved conversation with its history. */
  chatOpen(id: string): Promise<ChatState>;
  /**
   * Sends a message; the turn's events follow on `onEvent`, `turn_end` last. The backend
   * reads the `attachments` (resources picked with `@`) and sends them with the message.
   */
  chatSend(prompt: string, onEvent: (e: ChatEvent) => void, attachments?: ResourceRef[]): Promise<void>;
  chatStop(): Promise<void>;
  /** Answers an approval card; false when no call waits under `callId`. */
  chatApprove(callId: string, decision: ChatDecision): Promise<boolean>;
  /** Opens an http(s) link in the user's browser. */
  openUrl(url: string): Promise<void>;

  /** The prompts of the connected servers. */
  listPrompts(): Promise<PromptEntry[]>;
  /** The server's suggestions for a prompt argument, given the other arguments filled. */
  completePromptArgument(
    server: string,
    prompt: string,
    argument: string,
    value: string,
    context: Record<string, string>,
  ): Promise<Completion>;
  /**
   * Starts a turn with a server's prompt; resolves with the messages it opened with, and
   * the turn's events follow on `onEvent`, `turn_end` last.
   */
  chatSendPrompt(
    server: string,
    name: string,
    args: Record<string, string>,
    onEvent: (e: ChatEvent) => void,
  ): Promise<ChatItem[]>;

  /**
   * Opens the view of a tool call (MCP Apps): the core reads its `ui://` resource from the
   * server now; the document is then served at `h9view://<origin>/<viewId>`.
   */
  openView(server: string, tool: string, call: ViewCall): Promise<ViewOpened>;
  /** One message a view's frame sent (its frame and origin already checked), for the core. */
  viewMessage(viewId: string, method: string, params: unknown): Promise<ViewReply>;
  /** The user closed a view; its teardown event follows. */
  closeView(viewId: string): Promise<boolean>;
  /** Messages views put in the chat, waiting for Send or Discard. */
  pendingMessages(): Promise<PendingMessage[]>;
  /** Sends a view's pending message as the user's next message; the turn's events follow. */
  sendPending(id: number, onEvent: (e: ChatEvent) => void): Promise<void>;
  discardPending(id: number): Promise<boolean>;
  /** Offers a view's download in the native save dialog; true when something was saved. */
  saveDownload(downloadId: string, names: string[]): Promise<boolean>;
  /** Teardowns, pending messages, model-context updates and floods of views. */
  onViews(cb: (e: ViewEvent) => void): Promise<Unlisten>;

  /** What servers ask the user, oldest first. */
  pendingAsks(): Promise<AskView[]>;
  /**
   * Answers an ask; accepting a URL elicitation opens its page (from the backend) first. A
   * form whose fields do not fit gives a message per field (the ask stays); `{}` when taken.
   */
  answerAsk(id: number, answer: AskReply): Promise<Record<string, string>>;
  /** The servers that may use the model without asking ("always for this server"). */
  samplingGrants(): Promise<string[]>;
  /** Makes a server ask again before it uses the model; false when it had no grant. */
  revokeSampling(server: string): Promise<boolean>;
  onAsks(cb: (asks: AskView[]) => void): Promise<Unlisten>;
  onStatus(cb: (s: StatusSnapshot) => void): Promise<Unlisten>;
  onToolsChanged(cb: () => void): Promise<Unlisten>;
  onConfigChanged(cb: (c: ConfigChange) => void): Promise<Unlisten>;
  onProjectChanged(cb: (p: ProjectInfo) => void): Promise<Unlisten>;
  onMenu(cb: (a: MenuAction) => void): Promise<Unlisten>;

  /** The resources and templates of one server (of every connected one for null). */
  listResources(server: string | null): Promise<ResourceListing>;
  /** Reads a resource: text (bounded), images as data: URLs, other binary by size. */
  readResource(server: string, uri: string): Promise<ReadPreview>;
  subscribeResource(server: string, uri: string, on: boolean): Promise<void>;
  /** The server's completions for one variable of a template. */
  completeResource(
    server: string,
    uriTemplate: string,
    variable: string,
    value: string,
    context: Record<string, string>,
  ): Promise<Completion>;
  /** Writes a resource into the Downloads folder; returns the file's path. */
  saveResource(server: string, uri: string): Promise<string>;
  /** A server's resources changed (`listing`), or a subscribed resource did (`updated`). */
  onResources(cb: (e: SurfaceEvent) => void): Promise<Unlisten>;

  /** What each server's tool definitions take in the model's context, and the tool-search warning. */
  contextCost(): Promise<ContextSummary>;
  /** The doctor report plus each server's recent stderr, as text for the clipboard. */
  diagnostics(): Promise<string>;
  /** The version and where config, approvals, tokens and logs live. */
  aboutInfo(): Promise<AboutInfo>;
  /** The model provider settings; never the key, only where it is. */
  providerSettings(): Promise<ProviderView>;
  /** Keeps a change; a key given with it goes to the keychain. Applies to the next turn. */
  saveProviderSettings(change: ProviderChange): Promise<ProviderView>;
  /** Forgets the key kept in the keychain for a provider. */
  forgetProviderKey(provider: ProviderKind): Promise<ProviderView>;
  /** One minimal request to the provider: of `change` before it is kept, else of the saved settings. */
  testProvider(change: ProviderChange | null): Promise<ConnectionCheck>;
  /** The project's MCP tasks (running and recent), newest first. */
  listTasks(): Promise<TaskRecord[]>;
  /** Cancels a running task (`requested`: the server stops it when it gets to it). */
  cancelTask(server: string, taskId: string): Promise<CancelOutcome>;
  /** A finished task's result. */
  taskResult(server: string, taskId: string): Promise<CallToolResult>;
  /** A task started, changed or ended; `null` when events were missed (fetch the list again). */
  onTasks(cb: (e: TaskEvent | null) => void): Promise<Unlisten>;

  /** The project's remembered tool permission rules. */
  permissionRules(): Promise<PermissionRule[]>;
  /** Sets (or with null revokes) the rule for a tool name or pattern; the rules as they are now. */
  setPermission(tool: string, permission: ToolPermission | null): Promise<PermissionRule[]>;

  /**
   * Searches the configured registries (at most `limit` results; a larger limit is the next
   * page). Hits are labelled with their registry; `notes` say when a registry answered from
   * its kept answers ("registry unreachable; showing results from …").
   */
  searchServers(query: string, limit: number): Promise<SearchResults>;
  /** The versions of a registry server, newest first. */
  serverVersions(registry: string, name: string): Promise<string[]>;
  /** The plan of an install (the exact entry, the values it asks for); nothing is written. */
  planInstall(request: InstallRequest): Promise<PlanView>;
  /** The plan that updates an installed registry server (old and new entry). */
  planUpdate(server: string): Promise<PlanView>;
  /** The native file picker for a bundle (`.mcpb`); null when cancelled. */
  pickBundle(): Promise<string | null>;
  /** The plan of installing a bundle file into `scope` (null: the user scope). */
  planBundle(path: string, scope: Scope | null): Promise<PlanView>;
  /** The native picker for a value that is a path (a folder when `directory`); null when cancelled. */
  pickPath(directory: boolean): Promise<string | null>;
  /** The bundle the app was opened with from the file manager (once). */
  openedBundle(): Promise<string | null>;
  /** Plan `planId` with `answers` in, as it would be written (secret values never come back). */
  previewInstall(planId: number, answers: Record<string, string>): Promise<PlanView>;
  /**
   * Writes plan `planId` with `answers` when `shown` is the digest of the entry the user saw;
   * it counts as approved as shown, and the server starts.
   */
  commitInstall(planId: number, answers: Record<string, string>, shown: string): Promise<Installed>;
  /** Installed registry servers with a newer version. */
  outdatedServers(): Promise<OutdatedReport>;
  /** Which secrets of a server's entry are set (never their values). */
  serverSecrets(server: string): Promise<ServerSecretsView>;
  setServerSecret(server: string, name: string, value: string): Promise<void>;
  /** True when a value was kept. */
  removeServerSecret(server: string, name: string): Promise<boolean>;
  /** A bundle (`.mcpb`) was dropped on the window: its path. */
  onBundle(cb: (path: string) => void): Promise<Unlisten>;
}
