// An in-memory Backend for component tests: a project with servers and tools, recorded
// calls, and helpers to push events the way the Rust side would.

import type {
  ApprovalPickDto,
  ApprovalRequestDto,
  ApproveOutcomeDto,
  AskAnswerDto,
  AskDto,
  AttachmentDto,
  ChatDecisionDto,
  ChatEventDto,
  ChatItem,
  ChatStateDto,
  CompletionDto,
  ConfigChangedDto,
  ConfigCheckDto,
  ConfigEditDto,
  ConfigTextDto,
  FoundSource,
  ImportPlan,
  ImportSource,
  OnConflict,
  Scope,
  ConversationSummary,
  HeldToolDto,
  LogLevelDto,
  LogLineDto,
  MenuAction,
  ProjectDto,
  PromptDto,
  ResourceDto,
  ResourceEventDto,
  ResourceListDto,
  ResourceReadDto,
  ResourceTemplateDto,
  ServerDetailsDto,
  ServerEntryDto,
  SignedInDto,
  StatusDto,
  ToolDto,
  ToolRunDto,
} from "../bindings";
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

/** Line and column (1-based) of a JSON.parse error, found by re-parsing prefixes. */
export function jsonErrorPosition(text: string): { line: number; column: number; message: string } | null {
  try {
    JSON.parse(text);
    return null;
  } catch (e) {
    const message = (e as Error).message;
    const m = /position (\d+)/.exec(message);
    let pos = m ? Number(m[1]) : text.length;
    if (pos > text.length) pos = text.length;
    const before = text.slice(0, pos).split("\n");
    return { line: before.length, column: before[before.length - 1].length + 1, message };
  }
}

export class MockBackend implements Backend {
  project: ProjectDto | null = { path: "/home/user/projects/demo", name: "demo", configPath: "/home/user/projects/demo/.mcp.json" };
  status: StatusDto = { revision: 0, servers: [], configError: null };
  tools: ToolDto[] = [];
  /** Tools the backend holds back; `acceptTools` removes what it accepts. */
  held: HeldToolDto[] = [];
  approvalsPending: ApprovalRequestDto[] = [];
  /** What the next `approve` answers (as the core would); `null`: everything approved. */
  approveOutcome: ApproveOutcomeDto | null = null;
  config: ConfigTextDto = { path: "/home/user/projects/demo/.mcp.json", text: '{\n  "mcpServers": {}\n}\n', exists: true, hash: "h0" };
  entries: Record<string, ServerEntryDto> = {};
  /** What the next `signIn` does: resolve with an account, or reject with a message. */
  signInResult: SignedInDto | string = { issuer: "https://auth.example.com", scopes: ["read"], expiresAtMs: null, refreshable: true, keptIn: "the system keychain (Secret Service)" };
  /** Set while a `signIn` waits: call it to let the sign-in finish (as the browser would). */
  finishSignIn: (() => void) | null = null;
  logs: Record<string, LogLineDto[]> = {};
  /** Details of connected servers (title, icons, logging), by name. */
  details: Record<string, ServerDetailsDto> = {};
  /** The project's extra roots. */
  roots: string[] = [];
  /** Every call, as [method, ...args]. */
  calls: unknown[][] = [];
  toolResult: (server: string, tool: string, args: unknown) => ToolRunDto = (_s, _t, args) => ({
    content: [{ type: "text", text: `called with ${JSON.stringify(args)}` }],
    structuredContent: null,
    isError: false,
    durationMs: 12,
  });

  chat: ChatStateDto = {
    provider: "anthropic",
    model: "stub-model",
    error: null,
    busy: false,
    conversationId: "c1",
    history: [],
  };
  /** The prompts of the connected servers. */
  prompts: PromptDto[] = [];
  /** A server's suggestions for an argument (filtered by what is typed). */
  completions: (server: string, prompt: string, argument: string, value: string, context: Record<string, string>) => string[] = () => [];
  /** The messages a prompt opens its turn with (by default one user message naming it). */
  promptOpening: (server: string, name: string, args: Record<string, string>) => ChatItem[] = (server, name, args) => [
    { kind: "user", text: `${server}:${name} ${JSON.stringify(args)}` },
  ];
  /** The running turn's event callback (set by `chatSend`). */
  chatListener: ((e: ChatEventDto) => void) | null = null;

  readonly statusEvents = listeners<StatusDto>();
  readonly toolEvents = listeners<null>();
  readonly configEvents = listeners<ConfigChangedDto>();
  readonly projectEvents = listeners<ProjectDto>();
  readonly menuEvents = listeners<MenuAction>();
  readonly askEvents = listeners<AskDto[]>();
  /** What servers ask the user (an answer removes the ask, as the backend does). */
  asks: AskDto[] = [];
  #logFollowers = new Map<string, Set<Listener<LogLineDto>>>();
  #hash = 0;

  #record(...a: unknown[]) {
    this.calls.push(a);
  }

  /** Sets the status and emits it with the next revision, as the backend does on every change. */
  pushStatus(s: StatusDto) {
    this.status = { ...s, revision: this.status.revision + 1 };
    this.statusEvents.emit(this.status);
  }

  pushLog(server: string, text: string) {
    const line: LogLineDto = { timeMs: Date.now(), source: "stderr", level: "", text };
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
  async getStatus() {
    return this.status;
  }
  async pendingApprovals() {
    return this.approvalsPending;
  }
  async approve(servers: ApprovalPickDto[], remember: boolean): Promise<ApproveOutcomeDto> {
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
  signIn(server: string): Promise<SignedInDto> {
    this.#record("signIn", server);
    const result = this.signInResult;
    return new Promise((resolve, reject) => {
      this.finishSignIn = () => {
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
  async followLog(server: string, onLine: (l: LogLineDto) => void): Promise<LogFollow> {
    const set = this.#logFollowers.get(server) ?? new Set();
    set.add(onLine);
    this.#logFollowers.set(server, set);
    return { lines: [...(this.logs[server] ?? [])], stop: () => set.delete(onLine) };
  }
  async serverDetails(server: string) {
    return this.details[server] ?? null;
  }
  async setLogLevel(server: string, level: LogLevelDto) {
    this.#record("setLogLevel", server, level);
    const d = this.details[server];
    if (!d?.logging) throw new BackendError("not-connected", `server "${server}" does not offer logging`);
    this.details[server] = { ...d, logLevel: level };
  }
  async extraRoots() {
    return this.roots;
  }
  async addExtraRoot(path: string) {
    this.#record("addExtraRoot", path);
    if (this.roots.includes(path)) throw new BackendError("invalid-config", `${path} is already an extra root`);
    this.roots = [...this.roots, path];
    return this.roots;
  }
  async removeExtraRoot(path: string) {
    this.#record("removeExtraRoot", path);
    this.roots = this.roots.filter((r) => r !== path);
    return this.roots;
  }
  async listTools() {
    return this.tools;
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
  scopeConfigs: Record<"user" | "local", ConfigTextDto> = {
    user: { path: "/home/user/.config/harness9/mcp.json", text: "", exists: false, hash: "hu" },
    local: { path: "/home/user/.local/share/harness9/projects/demo/mcp.json", text: "", exists: false, hash: "hl" },
  };
  /** What `importSources` finds. */
  foundSources: FoundSource[] = [];
  /** What `importServers` answers. */
  importPlan: ImportPlan = { path: "", added: [], skipped: [], notes: [] };
  async importSources() {
    return this.foundSources;
  }
  async importServers(from: ImportSource, scope: Scope, onConflict: OnConflict, dryRun: boolean) {
    this.#record("importServers", from, scope, onConflict, dryRun);
    return this.importPlan;
  }
  async checkConfig(text: string): Promise<ConfigCheckDto> {
    const pos = jsonErrorPosition(text);
    if (pos) return { error: { message: `invalid JSON: ${pos.message}`, line: pos.line, column: pos.column }, servers: [] };
    const servers = Object.entries((JSON.parse(text) as { mcpServers?: Record<string, Record<string, unknown>> }).mcpServers ?? {});
    return {
      error: null,
      servers: servers.map(([name, e]) => ({
        name,
        transport: e.url ? "http" : e.command ? "stdio" : "",
        error: e.url || e.command ? null : `server "${name}": has neither "command" (a local server) nor "url" (a remote server)`,
        disabled: e.disabled === true,
      })),
    };
  }
  async editConfig(text: string, edit: ConfigEditDto) {
    this.#record("editConfig", edit);
    const doc = JSON.parse(text) as { mcpServers?: Record<string, unknown> };
    const servers = (doc.mcpServers ??= {});
    switch (edit.op) {
      case "setServer":
        if (edit.previous && edit.previous !== edit.name) delete servers[edit.previous];
        servers[edit.name] = edit.entry;
        break;
      case "removeServer":
        delete servers[edit.name];
        break;
      case "setDisabled":
        (servers[edit.name] as Record<string, unknown>).disabled = edit.disabled;
        break;
    }
    return JSON.stringify(doc, null, 2) + "\n";
  }
  async saveConfig(text: string, expectedHash: string | null, scope?: Scope) {
    this.#record("saveConfig", text, expectedHash, ...(scope && scope !== "project" ? [scope] : []));
    if (jsonErrorPosition(text)) throw new BackendError("invalid-config", "not saved: invalid JSON");
    if (scope && scope !== "project") {
      const c = this.scopeConfigs[scope];
      this.scopeConfigs[scope] = { ...c, text, exists: true, hash: `${c.hash}${++this.#hash}` };
      return this.scopeConfigs[scope];
    }
    if (expectedHash !== null && expectedHash !== this.config.hash)
      throw new BackendError("changed-on-disk", ".mcp.json changed on disk since it was loaded");
    this.config = { ...this.config, text, exists: true, hash: `h${++this.#hash}` };
    return this.config;
  }
  async openConfigInEditor() {
    this.#record("openConfigInEditor");
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
  async chatSend(prompt: string, onEvent: (e: ChatEventDto) => void, attachments?: AttachmentDto[]) {
    this.#record("chatSend", prompt, ...(attachments?.length ? [attachments] : []));
    if (this.chat.error) throw new BackendError("not-configured", this.chat.error);
    this.chatListener = onEvent;
  }
  /** Sends an event of the running turn, as the engine would. */
  chatEmit(e: ChatEventDto) {
    this.chatListener?.(e);
  }
  async chatStop() {
    this.#record("chatStop");
  }
  async chatApprove(callId: string, decision: ChatDecisionDto) {
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
  ): Promise<CompletionDto> {
    this.#record("completePromptArgument", server, prompt, argument, value, context);
    const values = this.completions(server, prompt, argument, value, context);
    return { values, total: null, hasMore: false };
  }
  async chatSendPrompt(server: string, name: string, args: Record<string, string>, onEvent: (e: ChatEventDto) => void) {
    this.#record("chatSendPrompt", server, name, args);
    if (this.chat.error) throw new BackendError("not-configured", this.chat.error);
    const p = this.prompts.find((x) => x.server === server && x.name === name);
    if (!p) throw new BackendError("not-found", `server "${server}" has no prompt "${name}"`);
    const missing = p.arguments.filter((a) => a.required && !args[a.name]).map((a) => a.name);
    if (missing.length)
      throw new BackendError("invalid-arguments", `the prompt ${server}:${name} needs ${missing.join(", ")}; add ${missing.map((m) => `${m}=…`).join(" ")} and send again`);
    this.chatListener = onEvent;
    return this.promptOpening(server, name, args);
  }
  /** Sets the pending asks and emits them, as the backend does on every change. */
  pushAsks(asks: AskDto[]) {
    this.asks = asks;
    this.askEvents.emit(asks);
  }
  async pendingAsks() {
    return this.asks;
  }
  async answerAsk(id: number, answer: AskAnswerDto) {
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
  async samplingGrants() {
    return this.samplingGranted;
  }
  async revokeSampling(server: string) {
    this.#record("revokeSampling", server);
    const had = this.samplingGranted.includes(server);
    this.samplingGranted = this.samplingGranted.filter((s) => s !== server);
    return had;
  }
  onAsks(cb: (asks: AskDto[]) => void) {
    return this.askEvents.add(cb);
  }
  onStatus(cb: (s: StatusDto) => void) {
    return this.statusEvents.add(cb);
  }
  onToolsChanged(cb: () => void) {
    return this.toolEvents.add(() => cb());
  }
  onConfigChanged(cb: (c: ConfigChangedDto) => void) {
    return this.configEvents.add(cb);
  }
  onProjectChanged(cb: (p: ProjectDto) => void) {
    return this.projectEvents.add(cb);
  }
  onMenu(cb: (a: MenuAction) => void) {
    return this.menuEvents.add(cb);
  }

  // ---- resources ----
  resources: ResourceDto[] = [];
  resourceTemplates: ResourceTemplateDto[] = [];
  /** What `readResource` answers, by URI (a text part naming the URI otherwise). */
  resourceContents: Record<string, ResourceReadDto> = {};
  readonly resourceEvents = listeners<ResourceEventDto>();
  async listResources(server: string | null): Promise<ResourceListDto> {
    const mine = <T extends { server: string }>(xs: T[]) => xs.filter((x) => server === null || x.server === server);
    return { resources: mine(this.resources), templates: mine(this.resourceTemplates), canSubscribe: server !== null };
  }
  async readResource(server: string, uri: string): Promise<ResourceReadDto> {
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
  async completeResource(server: string, uriTemplate: string, variable: string, value: string): Promise<CompletionDto> {
    this.#record("completeResource", server, uriTemplate, variable, value);
    return { values: ["1", "2", "10"].filter((v) => v.startsWith(value)), total: null, hasMore: false };
  }
  async saveResource(server: string, uri: string) {
    this.#record("saveResource", server, uri);
    return `/home/user/Downloads/${uri.split("/").pop()}`;
  }
  onResources(cb: (e: ResourceEventDto) => void) {
    return this.resourceEvents.add(cb);
  }
}

/** `n` synthetic tools spread over `servers` servers. */
export function manyTools(n: number, servers = 20): ToolDto[] {
  const out: ToolDto[] = [];
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
      icons: [],
    });
  }
  return out;
}

/** The hints of a tool whose server set only `readOnlyHint` (or nothing). */
export function noHints(readOnly: boolean): ToolDto["hints"] {
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
