// The one fake Backend, for the component tests (vitest) and, behind the IPC adapter
// (ui/e2e/mock-ipc.ts), for the built UI in Chromium. It holds data and records calls; it
// never decides anything the core decides (validation messages, approval, masking, conflict
// detection, what a config edit writes): a test sets the answer it needs (`configCheck`,
// `edited`, `approveOutcome`, `answerErrors`, `fail`), and the real backend is tested by
// ui/e2e/webdriver.test.mjs and the Rust suite.
//
// Adding a Backend method: implement it here (record the call, answer from a field), map
// its command in ui/e2e/mock-ipc.ts (the compiler names the missing entry), done.

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
  SearchHit,
  SearchResults,
  ServerSecretsView,
  OnConflict,
  Scope,
  ConversationSummary,
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
  ResourceEntry,
  SurfaceEvent,
  ResourceListing,
  ReadPreview,
  TemplateEntry,
  ServerDetails,
  ServerEntry,
  SignedIn,
  StatusSnapshot,
  ToolDetail,
  ToolEntry,
  ToolHints,
  ToolPermission,
  TimedResult,
} from "../bindings";
import type { PendingMessage, ViewCall, ViewEvent, ViewOpened, ViewReply } from "../bindings";
import type { CallToolResult, CancelOutcome, TaskEvent, TaskRecord } from "../bindings";
import { BackendError, type Backend, type LogFollow, type Unlisten } from "./types";

type Listener<T> = (v: T) => void;

function listeners<T>() {
  const set = new Set<Listener<T>>();
  return {
    add(cb: Listener<T>): Promise<Unlisten> {
      set.add(cb);
      return Promise.resolve(() => set.delete(cb));
    },
    emit(v: T) {
      for (const cb of set) cb(v);
    },
  };
}

export class MockBackend implements Backend {
  project: ProjectInfo | null = { path: "/home/user/projects/demo", name: "demo", configPath: "/home/user/projects/demo/.mcp.json" };
  status: StatusSnapshot = { revision: 0, servers: [], configError: null };
  /** Each with its input schema and hints, which `listTools` leaves out as the core does. */
  tools: FullTool[] = [];
  /** Tools the backend holds back; `acceptTools` removes what it accepts. */
  held: HeldToolEntry[] = [];
  approvalsPending: ApprovalRequest[] = [];
  /** What the next `approve` answers (as the core would); `null`: everything approved. */
  approveOutcome: ApproveOutcome | null = null;
  config: ConfigText = { path: "/home/user/projects/demo/.mcp.json", text: '{\n  "mcpServers": {}\n}\n', exists: true, hash: "h0" };
  entries: Record<string, ServerEntry> = {};
  /** What the next `signIn` does: resolve with an account, or reject with a message. */
  signInResult: SignedIn | string = { issuer: "https://auth.example.com", scopes: ["read"], expiresAt: null, refreshable: true, keptIn: "the system keychain (Secret Service)" };
  /** Set while a `signIn` waits: call it to let the sign-in finish (as the browser would). */
  finishSignIn: ((result?: SignedIn | string) => void) | null = null;
  logs: Record<string, LogLine[]> = {};
  /** Details of connected servers (title, icons, logging), by name. */
  details: Record<string, ServerDetails> = {};
  /** The project's extra roots. */
  roots: string[] = [];
  /** Every call, as [method, ...args]. */
  calls: unknown[][] = [];
  toolResult: (server: string, tool: string, args: unknown) => TimedResult = (_s, _t, args) => ({
    content: [{ type: "text", text: `called with ${JSON.stringify(args)}` }],
    structuredContent: null,
    isError: false,
    durationMs: 12,
  });

  chat: ChatState = {
    provider: "anthropic",
    model: "stub-model",
    error: null,
    busy: false,
    conversationId: "c1",
    history: [],
    pending: [],
  };
  /** The prompts of the connected servers. */
  prompts: PromptEntry[] = [];
  /** A server's suggestions for an argument (filtered by what is typed). */
  completions: (server: string, prompt: string, argument: string, value: string, context: Record<string, string>) => string[] = () => [];
  /** The messages a prompt opens its turn with (by default one user message naming it). */
  promptOpening: (server: string, name: string, args: Record<string, string>) => ChatItem[] = (server, name, args) => [
    { kind: "user", text: `${server}:${name} ${JSON.stringify(args)}` },
  ];
  /** The running turn's event callback (set by `chatSend`). */
  chatListener: ((e: ChatEvent) => void) | null = null;

  readonly statusEvents = listeners<StatusSnapshot>();
  readonly toolEvents = listeners<null>();
  readonly configEvents = listeners<ConfigChange>();
  readonly projectEvents = listeners<ProjectInfo>();
  readonly menuEvents = listeners<MenuAction>();
  readonly askEvents = listeners<AskView[]>();
  /** What servers ask the user (an answer removes the ask, as the backend does). */
  asks: AskView[] = [];
  #logFollowers = new Map<string, Set<Listener<LogLine>>>();
  #hash = 0;

  /**
   * A failure the next call of a method gives (once), as the core would answer it; for the
   * methods that change something (those in `calls`).
   */
  fail: Partial<Record<keyof Backend, BackendError>> = {};

  /** Records a call; throws the failure scripted for the method, if any. */
  #record(method: keyof Backend, ...args: unknown[]) {
    this.calls.push([method, ...args]);
    const e = this.fail[method];
    if (e) {
      delete this.fail[method];
      throw e;
    }
  }

  /** Sets the status and emits it with the next revision, as the backend does on every change. */
  pushStatus(s: StatusSnapshot) {
    this.status = { ...s, revision: this.status.revision + 1 };
    this.statusEvents.emit(this.status);
  }

  /** A line of a server's log, as the core sends it to followers. */
  pushLog(server: string, text: string, source: LogLine["source"] = "stderr", level = "") {
    const line: LogLine = { timeMs: Date.now(), source, level, text };
    (this.logs[server] ??= []).push(line);
    for (const cb of this.#logFollowers.get(server) ?? []) cb(line);
  }

  async currentProject() {
    return this.project;
  }
  async openProject(path: string) {
    this.#record("openProject", path);
    this.project = { path, name: path.split("/").pop() ?? path, configPath: `${path}/.mcp.json` };
    return this.project;
  }
  async pickFolder() {
    this.#record("pickFolder");
    return null;
  }
  async recentProjects() {
    return this.project ? [this.project.path] : [];
  }
  async reportPainted(_pageMs: number) {
    return 1;
  }
  readonly quitEvents = listeners<null>();
  onQuitting(cb: () => void) {
    return this.quitEvents.add(() => cb());
  }
  async readyToQuit() {
    this.#record("readyToQuit");
  }
  async getStatus() {
    return this.status;
  }
  async pendingApprovals() {
    return this.approvalsPending;
  }
  async approve(servers: ApprovalPick[], remember: boolean): Promise<ApproveOutcome> {
    this.#record("approve", servers, remember);
    const outcome = this.approveOutcome ?? { approved: servers.map((s) => s.name), stale: [] };
    this.approveOutcome = null;
    this.approvalsPending = this.approvalsPending.filter((a) => !outcome.approved.includes(a.name));
    return outcome;
  }
  async restartServer(server: string) {
    this.#record("restartServer", server);
  }
  async stopServer(server: string) {
    this.#record("stopServer", server);
  }
  async setServerDisabled(server: string, disabled: boolean) {
    this.#record("setServerDisabled", server, disabled);
  }
  async serverEntry(server: string) {
    return this.entries[server] ?? null;
  }
  async signIn(server: string): Promise<SignedIn> {
    this.#record("signIn", server);
    return new Promise((resolve, reject) => {
      this.finishSignIn = (result = this.signInResult) => {
        this.finishSignIn = null;
        if (typeof result === "string") reject(new BackendError("sign-in-failed", result));
        else resolve(result);
      };
    });
  }
  async signOut(server: string) {
    this.#record("signOut", server);
    return true;
  }
  async followLog(server: string, onLine: (l: LogLine) => void): Promise<LogFollow> {
    const set = this.#logFollowers.get(server) ?? new Set();
    set.add(onLine);
    this.#logFollowers.set(server, set);
    return { lines: [...(this.logs[server] ?? [])], stop: () => set.delete(onLine) };
  }
  async serverDetails(server: string) {
    return this.details[server] ?? null;
  }
  async setLogLevel(server: string, level: LogLevel) {
    this.#record("setLogLevel", server, level);
    const d = this.details[server];
    if (d) this.details[server] = { ...d, logLevel: level };
  }
  async extraRoots() {
    return this.roots;
  }
  async addExtraRoot(path: string) {
    this.#record("addExtraRoot", path);
    this.roots = [...this.roots, path];
    return this.roots;
  }
  async removeExtraRoot(path: string) {
    this.#record("removeExtraRoot", path);
    this.roots = this.roots.filter((r) => r !== path);
    return this.roots;
  }
  async listTools(): Promise<ToolEntry[]> {
    return this.tools.map(({ inputSchema: _s, hints: _h, ...entry }) => entry);
  }
  async toolDetail(name: string): Promise<ToolDetail | null> {
    const t = this.tools.find((t) => t.name === name);
    return t ? { inputSchema: t.inputSchema, hints: t.hints } : null;
  }
  async heldTools() {
    return this.held;
  }
  async acceptTools(server: string, tools: string[]) {
    this.#record("acceptTools", server, tools);
    const accepted = this.held.filter((h) => h.server === server && (tools.length === 0 || tools.includes(h.tool)));
    this.held = this.held.filter((h) => !accepted.includes(h));
    return accepted;
  }
  #nextCall = 0;
  async callTool(server: string, tool: string, args: unknown, started: (callId: number) => void) {
    const callId = ++this.#nextCall;
    this.#record("callTool", callId, server, tool, args);
    started(callId);
    if (this.toolGate) await this.toolGate;
    return this.toolResult(server, tool, args);
  }
  /** While set, calls wait for it (a call still running). */
  toolGate: Promise<void> | null = null;
  async cancelToolCall(callId: number) {
    this.#record("cancelToolCall", callId);
  }
  async readConfig(scope?: Scope) {
    if (scope && scope !== "project") return this.scopeConfigs[scope];
    return this.config;
  }
  /** The user and local scopes' files. */
  scopeConfigs: Record<"user" | "local", ConfigText> = {
    user: { path: "/home/user/.config/harness9/mcp.json", text: "", exists: false, hash: "hu" },
    local: { path: "/home/user/.local/share/harness9/projects/demo/mcp.json", text: "", exists: false, hash: "hl" },
  };
  /** What `importSources` finds. */
  foundSources: FoundSource[] = [];
  /** What `importServers` answers. */
  importPlan: ImportPlan = { path: "", added: [], skipped: [], notes: [], confirm: false, digest: "" };
  async importSources() {
    return this.foundSources;
  }
  async importServers(from: ImportSource, scope: Scope, onConflict: OnConflict, dryRun: boolean, confirmed?: string | null) {
    this.#record("importServers", from, scope, onConflict, dryRun, confirmed ?? null);
    return this.importPlan;
  }
  /** What `checkConfig` answers, whatever the text (the core's messages are its own). */
  configCheck: ConfigCheck = { error: null, servers: [] };
  async checkConfig(_text: string): Promise<ConfigCheck> {
    return this.configCheck;
  }
  /** The text the next `editConfig` returns (the core writes the edit); the text as it was when null. */
  edited: string | null = null;
  async editConfig(text: string, edit: ConfigEdit) {
    this.#record("editConfig", edit);
    const out = this.edited ?? text;
    this.edited = null;
    return out;
  }
  async saveConfig(text: string, expectedHash: string | null, scope?: Scope) {
    this.#record("saveConfig", text, expectedHash, ...(scope && scope !== "project" ? [scope] : []));
    if (scope && scope !== "project") {
      const c = this.scopeConfigs[scope];
      this.scopeConfigs[scope] = { ...c, text, exists: true, hash: `${c.hash}${++this.#hash}` };
      return this.scopeConfigs[scope];
    }
    this.config = { ...this.config, text, exists: true, hash: `h${++this.#hash}` };
    return this.config;
  }
  /** The file changes on disk behind the app's back (the watcher's event follows). */
  changeOnDisk(text: string) {
    this.config = { ...this.config, text, hash: `h${++this.#hash}` };
    this.configEvents.emit({ revision: this.#hash, hash: this.config.hash });
  }
  async openConfigInEditor(scope?: Scope) {
    this.#record("openConfigInEditor", ...(scope && scope !== "project" ? [scope] : []));
  }
  async chatState() {
    return this.chat;
  }
  async chatNew() {
    this.#record("chatNew");
    this.chat = { ...this.chat, conversationId: "c2", history: [] };
    return this.chat;
  }
  /** Saved conversations (newest first) and the history each reopens with. */
  conversations: { summary: ConversationSummary; history: ChatItem[] }[] = [];
  async chatConversations() {
    return this.conversations.map((c) => c.summary);
  }
  async chatOpen(id: string) {
    this.#record("chatOpen", id);
    const c = this.conversations.find((x) => x.summary.id === id);
    if (!c) throw new BackendError("not-found", `no saved conversation "${id}" for this project`);
    this.chat = { ...this.chat, conversationId: id, history: c.history };
    return this.chat;
  }
  async chatSend(prompt: string, onEvent: (e: ChatEvent) => void, attachments?: ResourceRef[]) {
    this.#record("chatSend", prompt, ...(attachments?.length ? [attachments] : []));
    this.chatListener = onEvent;
  }
  /** Sends an event of the running turn, as the engine would. */
  chatEmit(e: ChatEvent) {
    this.chatListener?.(e);
  }
  async chatStop() {
    this.#record("chatStop");
  }
  async chatApprove(callId: string, decision: ChatDecision) {
    this.#record("chatApprove", callId, decision);
    return true;
  }
  async openUrl(url: string) {
    this.#record("openUrl", url);
  }
  async listPrompts() {
    return this.prompts;
  }
  async completePromptArgument(
    server: string,
    prompt: string,
    argument: string,
    value: string,
    context: Record<string, string>,
  ): Promise<Completion> {
    this.#record("completePromptArgument", server, prompt, argument, value, context);
    const values = this.completions(server, prompt, argument, value, context);
    return { values, total: null, hasMore: false };
  }
  async chatSendPrompt(server: string, name: string, args: Record<string, string>, onEvent: (e: ChatEvent) => void) {
    this.#record("chatSendPrompt", server, name, args);
    this.chatListener = onEvent;
    return this.promptOpening(server, name, args);
  }
  /** Sets the pending asks and emits them, as the backend does on every change. */
  // ---- MCP Apps views ----
  readonly viewEvents = listeners<ViewEvent>();
  /** Views opened, by id; `openView` fails with `viewError` when set. */
  views = new Map<string, ViewOpened>();
  viewError: string | null = null;
  /** What `viewMessage` answers, by method (`noted` otherwise). */
  viewReplies: Record<string, ViewReply> = {};
  pending: PendingMessage[] = [];
  async openView(server: string, tool: string, call: ViewCall): Promise<ViewOpened> {
    this.#record("openView", server, tool, call);
    if (this.viewError) throw new BackendError("not-found", this.viewError);
    const viewId = `view${this.views.size + 1}`.padEnd(32, "0");
    const opened: ViewOpened = {
      viewId,
      server,
      tool,
      resourceUri: `ui://${server}/${tool}`,
      origin: server.toLowerCase().replace(/[^a-z0-9]/g, "") || "view",
      csp: "default-src 'none'",
      allow: "",
      permissions: [],
      externalOrigins: [],
      droppedDomains: [],
      prefersBorder: null,
      serverTitle: null,
      serverIcons: [],
      toolDefinition: { name: tool },
      call,
    };
    this.views.set(viewId, opened);
    return opened;
  }
  async viewMessage(viewId: string, method: string, params: unknown): Promise<ViewReply> {
    this.#record("viewMessage", viewId, method, params);
    if (!this.views.has(viewId)) throw new BackendError("not-found", `the view ${viewId} is closed`);
    return this.viewReplies[method] ?? { kind: "noted" };
  }
  async closeView(viewId: string) {
    this.#record("closeView", viewId);
    const had = this.views.delete(viewId);
    if (had) this.viewEvents.emit({ type: "teardown", viewId, reason: "closed", message: "the view was closed" });
    return had;
  }
  pushPending(messages: PendingMessage[]) {
    this.pending = messages;
    this.viewEvents.emit({ type: "pending_messages", messages });
  }
  async pendingMessages() {
    return this.pending;
  }
  async sendPending(id: number, onEvent: (e: ChatEvent) => void) {
    this.#record("sendPending", id);
    const message = this.pending.find((m) => m.id === id);
    if (!message) throw new BackendError("not-found", `there is no pending message ${id}`);
    this.pushPending(this.pending.filter((m) => m.id !== id));
    await this.chatSend(message.text, onEvent);
  }
  async discardPending(id: number) {
    this.#record("discardPending", id);
    const had = this.pending.some((m) => m.id === id);
    this.pushPending(this.pending.filter((m) => m.id !== id));
    return had;
  }
  async saveDownload(downloadId: string, names: string[]) {
    this.#record("saveDownload", downloadId, names);
    return names.length > 0;
  }
  onViews(cb: (e: ViewEvent) => void) {
    return this.viewEvents.add(cb);
  }

  pushAsks(asks: AskView[]) {
    this.asks = asks;
    this.askEvents.emit(asks);
  }
  async pendingAsks() {
    return this.asks;
  }
  async answerAsk(id: number, answer: AskReply) {
    this.#record("answerAsk", id, answer);
    // Scripted: the messages the core would give a form that does not fit (once).
    const errors = this.answerErrors;
    this.answerErrors = {};
    if (Object.keys(errors).length === 0) this.pushAsks(this.asks.filter((a) => a.id !== id));
    return errors;
  }
  answerErrors: Record<string, string> = {};
  /** Servers allowed to sample without asking. */
  samplingGranted: string[] = [];
  /** The provider settings the core would show (never a key). */
  provider: ProviderView = {
    provider: "anthropic",
    model: "",
    baseUrl: "",
    defaultModel: "claude-sonnet-4-5",
    defaultBaseUrl: "https://api.anthropic.com",
    keySource: { type: "env", var: "ANTHROPIC_API_KEY" },
    key: { state: "missing" },
    keyText: "missing",
    keyStore: "the system keychain (Secret Service)",
    overriddenBy: [],
    settingsPath: "/home/user/.config/harness9/settings.json",
    error: null,
  };
  /** Keys kept in the fake keychain, by provider (only to say whether one is set). */
  providerKeys = new Set<ProviderKind>();
  /** What the next connection test answers. */
  connection: ConnectionCheck = { ok: true, message: "connected", elapsedMs: 12 };
  rules: PermissionRule[] = [];
  async providerSettings() {
    return this.provider;
  }
  async saveProviderSettings(change: ProviderChange) {
    // Recorded without the key: nothing outside the core ever keeps it.
    this.#record("saveProviderSettings", { ...change, apiKey: change.apiKey ? "<key>" : null });
    if (change.keySource.type === "keychain" && change.apiKey) this.providerKeys.add(change.provider);
    const inKeychain = change.keySource.type === "keychain";
    const has = inKeychain ? this.providerKeys.has(change.provider) : false;
    this.provider = {
      ...this.provider,
      provider: change.provider,
      model: change.model,
      baseUrl: change.baseUrl,
      keySource: change.keySource,
      key: has ? { state: "keychain" } : { state: "missing" },
      keyText: has ? "set in keychain" : "missing",
    };
    return this.provider;
  }
  async forgetProviderKey(provider: ProviderKind) {
    this.#record("forgetProviderKey", provider);
    this.providerKeys.delete(provider);
    if (this.provider.keySource.type === "keychain")
      this.provider = { ...this.provider, key: { state: "missing" }, keyText: "missing" };
    return this.provider;
  }
  async testProvider(change: ProviderChange | null) {
    this.#record("testProvider", change ? { ...change, apiKey: change.apiKey ? "<key>" : null } : null);
    return this.connection;
  }
  /** The project's task table, newest first (a test keeps it and pushes the events). */
  tasks: TaskRecord[] = [];
  /** Finished tasks' results, by `server/taskId` (none: `taskResult` fails as the core would). */
  taskResults: Record<string, CallToolResult> = {};
  /** What the next `cancelTask` answers. */
  cancelOutcome: CancelOutcome = "cancelled";
  readonly taskEvents = listeners<TaskEvent | null>();

  async listTasks() {
    return this.tasks;
  }
  async cancelTask(server: string, taskId: string): Promise<CancelOutcome> {
    this.#record("cancelTask", server, taskId);
    return this.cancelOutcome;
  }
  async taskResult(server: string, taskId: string): Promise<CallToolResult> {
    this.#record("taskResult", server, taskId);
    const r = this.taskResults[`${server}/${taskId}`];
    if (!r) throw new BackendError("not-found", `there is no task ${taskId} of server "${server}" in this project's task list`);
    return r;
  }
  onTasks(cb: (e: TaskEvent | null) => void) {
    return this.taskEvents.add(cb);
  }

  async permissionRules() {
    return this.rules;
  }
  async setPermission(tool: string, permission: ToolPermission | null) {
    this.#record("setPermission", tool, permission);
    if (!tool.trim()) throw new BackendError("invalid-arguments", "a rule needs a tool name or pattern");
    const rest = this.rules.filter((r) => r.tool !== tool);
    this.rules = permission ? [...rest, { tool, permission }].sort((a, b) => (a.tool < b.tool ? -1 : 1)) : rest;
    return this.rules;
  }

  /** The registries' servers `searchServers` looks in (by name or title, as the registry does). */
  registryHits: SearchHit[] = [];
  /** Notes every search answers with ("registry unreachable; showing results from …"). */
  searchNotes: string[] = [];
  /** When set, searches wait for it to resolve (to test what the window does meanwhile). */
  searchGate: Promise<void> | null = null;
  async searchServers(query: string, limit: number): Promise<SearchResults> {
    this.#record("searchServers", query, limit);
    if (this.searchGate) await this.searchGate;
    const q = query.toLowerCase();
    const hits = this.registryHits.filter((h) => h.name.toLowerCase().includes(q) || (h.title ?? "").toLowerCase().includes(q));
    return { hits: hits.slice(0, limit), notes: this.searchNotes, problems: [], unreadable: 0 };
  }
  /** Versions by registry name, newest first. */
  versions: Record<string, string[]> = {};
  async serverVersions(_registry: string, name: string) {
    return this.versions[name] ?? [];
  }
  /** The plan `planInstall`, `planUpdate` and `planBundle` answer (the core makes it). */
  installPlan: PlanView | null = null;
  /** What `previewInstall` answers for the answers given (the core fills the plan): the plan as it is by default. */
  preview: (answers: Record<string, string>) => PlanView = () => {
    if (!this.installPlan) throw new BackendError("changed-on-disk", "this install is no longer shown; search and open the server again");
    return this.installPlan;
  };
  async planInstall(request: InstallRequest) {
    this.#record("planInstall", request);
    if (!this.installPlan) throw new BackendError("not-found", `no server named "${request.name}"`);
    return this.installPlan;
  }
  async planUpdate(server: string) {
    this.#record("planUpdate", server);
    if (!this.installPlan) throw new BackendError("not-found", `server "${server}" was not installed from a registry`);
    return this.installPlan;
  }
  /** What the bundle picker answers. */
  pickedBundle: string | null = null;
  async pickBundle() {
    this.#record("pickBundle");
    return this.pickedBundle;
  }
  async planBundle(path: string, scope: Scope | null) {
    this.#record("planBundle", path, scope);
    if (!this.installPlan) throw new BackendError("unsupported", `installing the bundle "${path}" is not supported`);
    return this.installPlan;
  }
  /** What the path picker answers. */
  pickedPath: string | null = null;
  async pickPath(directory: boolean) {
    this.#record("pickPath", directory);
    return this.pickedPath;
  }
  /** The bundle the app was opened with (taken once). */
  openedWith: string | null = null;
  async openedBundle() {
    const b = this.openedWith;
    this.openedWith = null;
    return b;
  }
  async previewInstall(planId: number, answers: Record<string, string>) {
    this.#record("previewInstall", planId, answers);
    return this.preview(answers);
  }
  async commitInstall(planId: number, answers: Record<string, string>, shown: string): Promise<Installed> {
    this.#record("commitInstall", planId, answers, shown);
    const p = this.installPlan!.plan;
    return {
      name: p.name,
      scope: p.scope,
      path: p.path,
      entry: p.entry,
      target: p.target,
      secrets: p.variables.filter((v) => v.secret && answers[v.name]).map((v) => v.name),
      secretsIn: "the system keychain (Secret Service)",
      replaced: p.replaces !== null,
      warnings: [],
      notes: [],
    };
  }
  outdated: OutdatedReport = { outdated: [], checked: 0, problems: [], notes: [] };
  async outdatedServers() {
    return this.outdated;
  }
  /** Each server's secrets: whether set (the fake keeps no values either). */
  secretStates: Record<string, ServerSecretsView> = {};
  async serverSecrets(server: string) {
    const s = this.secretStates[server];
    if (!s) throw new BackendError("not-found", `no server named "${server}"`);
    return s;
  }
  async setServerSecret(server: string, name: string, value: string) {
    this.#record("setServerSecret", server, name, value.length > 0 ? "(a value)" : "");
    const st = this.secretStates[server]?.secrets.find((x) => x.name === name);
    if (st) st.set = true;
  }
  async removeServerSecret(server: string, name: string) {
    this.#record("removeServerSecret", server, name);
    const st = this.secretStates[server]?.secrets.find((x) => x.name === name);
    const was = st?.set === true;
    if (st) st.set = false;
    return was;
  }
  readonly bundleEvents = listeners<string>();
  onBundle(cb: (path: string) => void) {
    return this.bundleEvents.add(cb);
  }

  async samplingGrants() {
    return this.samplingGranted;
  }
  async revokeSampling(server: string) {
    this.#record("revokeSampling", server);
    const had = this.samplingGranted.includes(server);
    this.samplingGranted = this.samplingGranted.filter((s) => s !== server);
    return had;
  }
  /** What `contextCost` answers (set by tests). */
  context: ContextSummary = { servers: {}, totalTokens: 0, warning: null };
  async contextCost() {
    return this.context;
  }
  /** What `diagnostics` answers. */
  diagnosticsText = "harness9 0.0.0-mock\nServers: none\n";
  async diagnostics() {
    this.#record("diagnostics");
    return this.diagnosticsText;
  }
  about: AboutInfo = {
    version: "0.0.0-mock",
    places: [{ what: "Project servers (.mcp.json)", location: "/mock/project/.mcp.json", isPath: true, exists: true }],
  };
  async aboutInfo() {
    return this.about;
  }
  onAsks(cb: (asks: AskView[]) => void) {
    return this.askEvents.add(cb);
  }
  onStatus(cb: (s: StatusSnapshot) => void) {
    return this.statusEvents.add(cb);
  }
  onToolsChanged(cb: () => void) {
    return this.toolEvents.add(() => cb());
  }
  onConfigChanged(cb: (c: ConfigChange) => void) {
    return this.configEvents.add(cb);
  }
  onProjectChanged(cb: (p: ProjectInfo) => void) {
    return this.projectEvents.add(cb);
  }
  onMenu(cb: (a: MenuAction) => void) {
    return this.menuEvents.add(cb);
  }

  // ---- resources ----
  resources: ResourceEntry[] = [];
  resourceTemplates: TemplateEntry[] = [];
  /** What `readResource` answers, by URI (a text part naming the URI otherwise). */
  resourceContents: Record<string, ReadPreview> = {};
  readonly resourceEvents = listeners<SurfaceEvent>();
  async listResources(server: string | null): Promise<ResourceListing> {
    const mine = <T extends { server: string }>(xs: T[]) => xs.filter((x) => server === null || x.server === server);
    return { resources: mine(this.resources), templates: mine(this.resourceTemplates), canSubscribe: server !== null };
  }
  async readResource(server: string, uri: string): Promise<ReadPreview> {
    this.#record("readResource", server, uri);
    return (
      this.resourceContents[uri] ?? {
        parts: [{ kind: "text", uri, mimeType: "text/plain", text: `contents of ${uri}`, totalChars: 12 + uri.length, truncated: false }],
      }
    );
  }
  async subscribeResource(server: string, uri: string, on: boolean) {
    this.#record("subscribeResource", server, uri, on);
  }
  async completeResource(server: string, uriTemplate: string, variable: string, value: string): Promise<Completion> {
    this.#record("completeResource", server, uriTemplate, variable, value);
    return { values: ["1", "2", "10", "11"].filter((v) => v.startsWith(value)), total: null, hasMore: false };
  }
  async saveResource(server: string, uri: string) {
    this.#record("saveResource", server, uri);
    return `/home/user/Downloads/${uri.split("/").pop()}`;
  }
  onResources(cb: (e: SurfaceEvent) => void) {
    return this.resourceEvents.add(cb);
  }
}

/** A tool as the fake backend keeps it: the list entry and what opening it shows. */
export type FullTool = ToolEntry & ToolDetail;

/** `n` synthetic tools spread over `servers` servers. */
export function manyTools(n: number, servers = 20): FullTool[] {
  const out: FullTool[] = [];
  for (let i = 0; i < n; i++) {
    const server = `srv${i % servers}`;
    const tool = `tool_${i}_${["read", "write", "search", "list", "fetch"][i % 5]}`;
    out.push({
      name: `mcp__${server}__${tool}`,
      server,
      tool,
      description: `Synthetic tool number ${i} that does ${["reading", "writing", "searching", "listing", "fetching"][i % 5]}.`,
      inputSchema: { type: "object", properties: { q: { type: "string" } } },
      readOnly: i % 2 === 0,
      title: null,
      hints: noHints(i % 2 === 0),
      marks: noHints(i % 2 === 0).marks,
      icons: [],
      hasView: false,
      appOnly: false,
    });
  }
  return out;
}

/** The hints of a tool whose server set only `readOnlyHint` (or nothing). */
export function noHints(readOnly: boolean): ToolHints {
  return {
    readOnlyHint: readOnly ? true : null,
    destructiveHint: null,
    idempotentHint: null,
    openWorldHint: null,
    readOnly,
    destructive: !readOnly,
    idempotent: false,
    openWorld: true,
    marks: readOnly ? ["read-only"] : [],
  };
}
