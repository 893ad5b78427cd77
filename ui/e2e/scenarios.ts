// The projects the built UI is shown in Chromium (?scenario=...): the one fake backend
// (MockBackend) filled with data, plus the little life a browser test needs — servers that
// connect a moment after they are approved or restarted, a scripted chat model, resources
// that change. Nothing here decides what the core decides; the tests set such answers.
//
// "flows" (default): a demo project whose server needs approval. "rich": servers in every
// state, for screenshots. "big": 10,000 tools and 10,000 resources. "auth": a remote server
// that needs sign-in. "surface": a server with a title, icons, logging and annotated tools.

import type {
  ApprovalPick,
  AskView,
  ResourceRef,
  ChatDecision,
  ChatEvent,
  Icon,
  LogLevel,
  ReadPreview,
  ServerState,
  ServerStatus,
  SignedIn,
  JsonValue,
  ToolHints,
  TimedResult,
  TurnOutcome,
} from "../src/lib/bindings";
import { MockBackend, manyTools, noHints, type FullTool } from "../src/lib/backend/mock";

export type Scenario = "flows" | "rich" | "big" | "auth" | "surface";

const PNG_1X1 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mMwnvn/PwAFmQLLy7st7QAAAABJRU5ErkJggg==";
const RED_DOT = `data:image/png;base64,${PNG_1X1}`;

function tool(server: string, name: string, description: string, inputSchema: JsonValue, readOnly: boolean, more: Partial<FullTool> = {}): FullTool {
  const hints = more.hints ?? noHints(readOnly);
  return { name: `mcp__${server}__${name}`, server, tool: name, description, inputSchema, readOnly, title: null, hints, marks: hints.marks, icons: [], hasView: false, appOnly: false, ...more };
}

function demoTools(server: string): FullTool[] {
  return [
    tool(server, "read_file", "Reads a text file of the project and returns its content.", {
      type: "object",
      properties: {
        path: { type: "string", description: "Path relative to the project folder" },
        max_bytes: { type: "integer", minimum: 1, description: "Stop after this many bytes" },
      },
      required: ["path"],
    }, true),
    tool(server, "list_dir", "Lists a folder of the project.", {
      type: "object",
      properties: {
        path: { type: "string", default: "." },
        recursive: { type: "boolean" },
        sort: { enum: ["name", "size", "modified"], description: "Order of the entries" },
      },
    }, true),
    tool(server, "search_text", "Searches the project's text files for a pattern.", {
      type: "object",
      properties: {
        pattern: { type: "string", description: "Text or regular expression" },
        options: { type: "object", properties: { case_sensitive: { type: "boolean" }, globs: { type: "array", items: { type: "string" } } } },
      },
      required: ["pattern"],
    }, true),
  ];
}

const DESTRUCTIVE: ToolHints = {
  readOnlyHint: false,
  destructiveHint: true,
  idempotentHint: null,
  openWorldHint: false,
  readOnly: false,
  destructive: true,
  idempotent: false,
  openWorld: false,
  marks: ["destructive"],
};

/** Icons as a careless core could pass them: the window must show only https: and data:. */
const MIXED_ICONS: Icon[] = [
  { src: "javascript:window.__pwned=1", mimeType: null, theme: null },
  { src: "http://example.com/rm.png", mimeType: null, theme: null },
  { src: RED_DOT, mimeType: "image/png", theme: null },
];

function connected(tools: number): ServerState {
  return { status: "connected", tools, protocolVersion: "2025-11-25", serverName: "mock-server", serverVersion: "1.0.0", era: "legacy" };
}

const HARNESS9 = { command: "harness9", args: ["mcp", "serve", "--project", "."] };

/** A MockBackend whose servers live a little: they connect after approval or a restart. */
export class ScenarioBackend extends MockBackend {
  /** Each server's status row and the tools it lists once connected. */
  servers = new Map<string, { row: ServerStatus; tools: FullTool[] }>();
  #resourceVersions = new Map<string, number>();
  #turn: ((e: ChatEvent) => void) | null = null;

  constructor(readonly scenario: Scenario) {
    super();
  }

  addServer(name: string, how: { command?: string; args?: string[]; url?: string }, state: ServerState, tools: FullTool[] = []) {
    const target = how.command ? [how.command, ...(how.args ?? [])].join(" ") : (how.url ?? "");
    this.servers.set(name, {
      row: { name, transport: how.url ? "http" : "stdio", scope: "project", target, state, restart: null, heldTools: 0, signedIn: null },
      tools,
    });
    this.entries[name] = {
      name,
      scope: "project",
      transport: how.url ? "http" : "stdio",
      command: how.command ?? null,
      args: how.args ?? [],
      url: how.url ?? null,
      cwd: null,
      // What the core shows: these commands and URLs are plain text.
      shownCommand: how.command === undefined ? null : [how.command, ...(how.args ?? [])].join(" "),
      shownUrl: how.url ?? null,
      env: [],
      headers: [],
      disabled: state.status === "disabled",
      startupTimeoutMs: 30000,
      toolTimeoutMs: 60000,
      error: null,
    };
    if (state.status === "awaiting-approval") {
      const command = how.command ?? null;
      const args = how.args ?? [];
      const url = how.url ?? null;
      // `shown` is what the core renders for display; these scenario names and commands are
      // plain text, so it is the same text.
      const shown = { name, command: command === null ? null : [command, ...args].join(" "), url, cwd: null, envKeys: [], headerKeys: [], oauth: null };
      this.approvalsPending.push({ name, transport: "stdio", command, args, url, cwd: null, envKeys: [], headerKeys: [], oauth: null, shown, fingerprint: `fp-${name}` });
    }
  }

  /** Sends the status and the tool list the servers' rows make, as the core does on a change. */
  publish() {
    const rows = [...this.servers.entries()].sort(([a], [b]) => (a < b ? -1 : 1));
    this.tools = rows.flatMap(([, s]) => (s.row.state.status === "connected" ? s.tools : []));
    this.pushStatus({
      revision: 0,
      servers: rows.map(([name, s]) => ({ ...s.row, heldTools: this.held.filter((h) => h.server === name).length })),
      configError: null,
    });
    this.toolEvents.emit(null);
  }

  setState(name: string, state: ServerState) {
    const s = this.servers.get(name);
    if (s) s.row = { ...s.row, state };
  }

  /** Starts a server: "starting", then connected 150 ms later (or still needing sign-in). */
  start(name: string) {
    const s = this.servers.get(name);
    if (!s) return;
    this.setState(name, { status: "starting", phase: "initializing" });
    this.pushLog(name, "starting", "host", "info");
    setTimeout(() => {
      if (s.row.state.status !== "starting") return;
      const remote = this.entries[name]?.url;
      this.setState(name, remote && !s.row.signedIn ? { status: "needs-auth", reason: "the server requires sign-in (HTTP 401)" } : connected(s.tools.length));
      this.pushLog(name, `${name}: ready`);
      this.publish();
    }, 150);
  }

  override async approve(servers: ApprovalPick[], remember: boolean) {
    const outcome = await super.approve(servers, remember);
    for (const n of outcome.approved) this.start(n);
    this.publish();
    return outcome;
  }
  override async restartServer(server: string) {
    await super.restartServer(server);
    this.start(server);
    this.publish();
  }
  override async stopServer(server: string) {
    await super.stopServer(server);
    this.finishSignIn?.("the sign-in was cancelled");
    this.setState(server, { status: "stopped" });
    this.publish();
  }
  override async signIn(server: string) {
    this.setState(server, { status: "starting", phase: "signing-in" });
    this.publish();
    return super.signIn(server);
  }
  /** The user signs in in the browser: the server connects and the waiting sign-in ends. */
  signInAs(server: string) {
    const s = this.servers.get(server);
    if (!s) return;
    const account: SignedIn = { issuer: "https://auth.example.com", scopes: ["read", "write"], expiresAt: Math.floor(Date.now() / 1000) + 3600, refreshable: true, keptIn: "the system keychain" };
    s.row = { ...s.row, signedIn: account, state: connected(s.tools.length) };
    this.publish();
    this.finishSignIn?.(account);
  }
  override async signOut(server: string) {
    await super.signOut(server);
    const s = this.servers.get(server);
    if (s) s.row = { ...s.row, signedIn: null, state: { status: "needs-auth", reason: "signed out" } };
    this.publish();
    return true;
  }
  /** The server crashes; the core will restart it in 1 s. */
  crash(name: string) {
    const s = this.servers.get(name);
    if (!s) return;
    s.row = {
      ...s.row,
      state: { status: "failed", reason: "the server exited with status 3", stderrTail: "fixture: crashing on purpose" },
      restart: { attempt: 1, maxAttempts: 3, retryInMs: 1000, gaveUp: false },
    };
    this.pushLog(name, "the server crashed; restarting in 1 s (attempt 1 of 3)", "host", "warning");
    this.publish();
  }
  /** A server asks the user something; the dialog shows the oldest ask. */
  ask(a: AskView) {
    this.pushAsks([...this.asks, a]);
  }
  /** The core holds back a changed tool. */
  hold(h: MockBackend["held"][number]) {
    this.held = [...this.held, h];
    this.publish();
  }
  override async acceptTools(server: string, tools: string[]) {
    const accepted = await super.acceptTools(server, tools);
    this.publish();
    return accepted;
  }
  override async setLogLevel(server: string, level: LogLevel) {
    await super.setLogLevel(server, level);
    this.pushLog(server, `[everything-server] logging level set to ${level}`, "server", level);
  }

  override async callTool(server: string, name: string, args: unknown, started: (callId: number) => void): Promise<TimedResult> {
    await super.callTool(server, name, args, started);
    if (name === "read_file" && (args as { path?: string }).path === "missing.txt")
      return { content: [{ type: "text", text: "no such file: missing.txt" }], structuredContent: null, isError: true, durationMs: 3.2 };
    if (name === "list_dir")
      return {
        content: [{ type: "text", text: "README.md\nnotes/" }, { type: "image", data: PNG_1X1, mimeType: "image/png" }],
        structuredContent: { entries: ["README.md", "notes/"] },
        isError: false,
        durationMs: 7.9,
      };
    return { content: [{ type: "text", text: `${name} called with ${JSON.stringify(args)}` }], structuredContent: null, isError: false, durationMs: 12.4 };
  }

  // ---- a scripted model: lists the folder (once allowed) and answers ----
  #send(e: ChatEvent, delay: number) {
    const turn = this.#turn;
    setTimeout(() => turn?.(e), delay);
  }
  #end(delay: number, outcome: TurnOutcome) {
    const turn = this.#turn;
    setTimeout(() => {
      if (this.#turn !== turn) return;
      this.#turn = null;
      this.chat = { ...this.chat, busy: false };
      turn?.({ type: "turn_end", outcome, roundTrips: 2, durationMs: 120, usage: { inputTokens: 10, outputTokens: 5 } });
    }, delay);
  }
  override async chatSend(prompt: string, onEvent: (e: ChatEvent) => void, attachments?: ResourceRef[]) {
    await super.chatSend(prompt, onEvent, attachments);
    this.#turn = onEvent;
    this.chat = { ...this.chat, busy: true, history: [...this.chat.history, { kind: "user", text: prompt }] };
    this.#send({ type: "turn_start", conversationId: "c1", provider: "anthropic", model: "stub-model" }, 0);
    this.#send({ type: "model_request", roundTrip: 1, tools: 3 }, 5);
    if (/evil/.test(prompt)) {
      this.#send({ type: "text_delta", text: '<img src=x onerror="window.__pwned=1"><script>window.__pwned=2</script> [click](javascript:window.__pwned=3)' }, 10);
      this.#end(30, { status: "completed", answer: "" });
      return;
    }
    const call = { callId: "call_1", name: "mcp__demo__list_dir", arguments: {} };
    this.#send({ type: "text_delta", text: "Let me look at the folder." }, 10);
    this.#send({ type: "tool_call_start", ...call }, 15);
    this.#send({ type: "approval_request", ...call, readOnly: true }, 20);
  }
  override async chatApprove(callId: string, decision: ChatDecision) {
    await super.chatApprove(callId, decision);
    if (!this.#turn || callId !== "call_1") return false;
    const denied = decision === "deny";
    const output = denied ? "the user denied this call" : "README.md\nnotes/";
    this.#send({ type: "tool_call_end", callId, name: "mcp__demo__list_dir", arguments: {}, status: denied ? "denied" : "ok", durationMs: denied ? 0 : 4.2, error: denied ? output : null, output, spilled: null }, 10);
    this.#send({ type: "model_request", roundTrip: 2, tools: 3 }, 15);
    const answer = denied ? ["I was not allowed to list it."] : ["The folder holds ", "**README.md** and ", "`notes/`."];
    answer.forEach((text, i) => this.#send({ type: "text_delta", text }, 30 + i * 30));
    this.#end(40 + answer.length * 30, { status: "completed", answer: answer.join("") });
    return true;
  }
  override async chatStop() {
    await super.chatStop();
    this.#end(0, { status: "stopped" });
  }
  override async chatSendPrompt(server: string, name: string, args: Record<string, string>, onEvent: (e: ChatEvent) => void) {
    const opening = await super.chatSendPrompt(server, name, args, onEvent);
    this.#turn = onEvent;
    const answer = "Done: the team has a new head.";
    this.#send({ type: "turn_start", conversationId: "c1", provider: "anthropic", model: "stub-model" }, 0);
    this.#send({ type: "text_delta", text: answer }, 20);
    this.#end(40, { status: "completed", answer });
    return opening;
  }

  // ---- resources whose text says which version they are at ----
  override async readResource(server: string, uri: string): Promise<ReadPreview> {
    await super.readResource(server, uri);
    const v = this.#resourceVersions.get(uri) ?? 1;
    if (uri.endsWith(".png")) return { parts: [{ kind: "image", uri, mimeType: "image/png", dataUrl: RED_DOT, bytes: 68 }] };
    if (uri.endsWith(".zip")) return { parts: [{ kind: "binary", uri, mimeType: "application/zip", bytes: 56 }] };
    const text = uri.startsWith("demo://notes/") ? `Note ${uri.split("/").pop()} (version ${v})` : `# demo\n\nversion ${v} of ${uri}`;
    return { parts: [{ kind: "text", uri, mimeType: "text/markdown", text, totalChars: text.length, truncated: false }] };
  }
  /** A subscribed resource changes on the server. */
  updateResource(server: string, uri: string) {
    this.#resourceVersions.set(uri, (this.#resourceVersions.get(uri) ?? 1) + 1);
    this.resourceEvents.emit({ type: "resource-updated", server, uri });
  }
}

const TEAMS: Record<string, string[]> = { Engineering: ["Alice", "Bob", "Charlie"], Sales: ["David", "Eve", "Frank"], Support: ["John", "Kim", "Lee"] };

/** The backend of a scenario. */
export function scenario(name: Scenario): ScenarioBackend {
  const b = new ScenarioBackend(name);
  switch (name) {
    case "big": {
      const tools = manyTools(10_000, 20);
      for (let k = 0; k < 20; k++) {
        const mine = tools.filter((t) => t.server === `srv${k}`);
        b.addServer(`srv${k}`, { command: "mcp-fixture", args: ["--tools", "500"] }, connected(mine.length), mine);
      }
      const kinds = ["notes", "logs", "docs", "data", "img"];
      b.resources = Array.from({ length: 10_000 }, (_, i) => {
        const kind = kinds[i % 5];
        return { server: "srv0", uri: `mem://srv0/${kind}/item-${i}.txt`, name: `item-${i}`, title: `${kind} item ${i}`, description: null, mimeType: "text/plain", size: 100 + i };
      });
      break;
    }
    case "rich":
      b.addServer("demo", HARNESS9, connected(3), demoTools("demo"));
      b.addServer("github", { command: "npx", args: ["-y", "github-mcp"] }, {
        status: "failed",
        reason: "the server exited with status 1; its last output on stderr:\nerror: GITHUB_TOKEN is not set",
        stderrTail: "error: GITHUB_TOKEN is not set",
      });
      b.servers.get("github")!.row.restart = { attempt: 2, maxAttempts: 3, retryInMs: 2000, gaveUp: false };
      b.entries.github.env = [{ key: "GITHUB_TOKEN", value: "${GITHUB_TOKEN}" }];
      b.addServer("search", { url: "https://mcp.example.com/mcp" }, { status: "starting", phase: "initializing" });
      b.entries.search.headers = [{ key: "Authorization", value: "••••••" }];
      b.addServer("notes", { command: "uvx", args: ["notes-mcp"] }, { status: "awaiting-approval" });
      b.addServer("legacy", { command: "old-server" }, { status: "disabled" });
      b.pushLog("demo", "harness9 mcp serve: serving /home/user/projects/demo");
      b.pushLog("demo", "3 tools ready", "server", "info");
      b.configCheck = {
        error: null,
        servers: ["demo", "github", "legacy", "notes", "search"].map((n) => ({ name: n, transport: b.entries[n].transport, error: null, disabled: n === "legacy" })),
      };
      break;
    case "surface":
      b.addServer("ev", { command: "mcp-server-everything", args: ["stdio"] }, connected(2), [
        tool("ev", "rm", "Removes a file of the project.", { type: "object", properties: { path: { type: "string" } }, required: ["path"] }, false, {
          title: "Remove a file",
          hints: DESTRUCTIVE,
          icons: MIXED_ICONS,
        }),
        tool("ev", "echo", "Echoes the text.", { type: "object", properties: { text: { type: "string" } } }, true, { title: "Echo Tool" }),
      ]);
      b.details.ev = { name: "ev", title: "Everything Demo", icons: [{ src: RED_DOT, mimeType: "image/png", theme: null }], logging: true, logLevel: null };
      b.pushLog("ev", "[everything-server] disk almost full", "server", "warning");
      break;
    case "auth":
      b.addServer("demo", HARNESS9, connected(3), demoTools("demo"));
      b.addServer("remote", { url: "https://mcp.example.com/mcp" }, { status: "needs-auth", reason: "the server requires sign-in (HTTP 401)" }, demoTools("remote").slice(0, 2));
      break;
    case "flows":
      b.addServer("demo", HARNESS9, { status: "awaiting-approval" }, demoTools("demo"));
      b.resources = [
        { server: "demo", uri: "file:///project/README.md", name: "README.md", title: "Project readme", description: "What the project is", mimeType: "text/markdown", size: 42 },
        { server: "demo", uri: "file:///project/logo.png", name: "logo.png", title: null, description: null, mimeType: "image/png", size: 68 },
        { server: "demo", uri: "file:///project/release.zip", name: "release.zip", title: null, description: null, mimeType: "application/zip", size: 56 },
      ];
      b.resourceTemplates = [{ server: "demo", uriTemplate: "demo://notes/{id}", name: "note", title: "Note by id", description: "One note", mimeType: "text/plain" }];
      b.prompts = [
        {
          server: "demo",
          name: "completable-prompt",
          title: "Team Management",
          description: "First argument choice narrows values for second argument.",
          arguments: [
            { name: "department", title: null, description: "Choose the department.", required: true },
            { name: "name", title: null, description: "Choose a team member to lead the selected department.", required: true },
          ],
        },
        { server: "demo", name: "simple-prompt", title: "Simple Prompt", description: "A prompt with no arguments", arguments: [] },
      ];
      b.completions = (_s, _p, argument, value, context) =>
        (argument === "department" ? Object.keys(TEAMS) : (TEAMS[context.department] ?? [])).filter((v) => v.startsWith(value));
      b.promptOpening = (_s, name, args) => [
        { kind: "user", text: name === "completable-prompt" ? `Please promote ${args.name} to the head of the ${args.department} team.` : "This is a simple prompt without arguments." },
      ];
      break;
  }
  const text = JSON.stringify({ mcpServers: Object.fromEntries([...b.servers.keys()].map((n) => [n, b.entries[n].url ? { url: b.entries[n].url } : { command: b.entries[n].command, args: b.entries[n].args }])) }, null, 2) + "\n";
  b.config = { ...b.config, text };
  b.publish();
  return b;
}
