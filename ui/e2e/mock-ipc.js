// A fake harness9 backend at the IPC level, for the built UI in a plain browser: it answers
// the same commands and emits the same events as src-tauri, so the real backend module
// (ui/src/lib/backend/tauri.ts) is what runs. Served by ui/e2e/chromium.test.mjs and
// installed before the app's bundle. `window.__mock` lets the test drive it.
//
// Scenarios (URL ?scenario=...): "flows" (default; a demo project whose servers need
// approval), "rich" (servers in every state, for screenshots), "big" (10,000 tools), "auth"
// (a remote server that needs sign-in; `__mock.finishSignIn(name)` plays the browser),
// "surface" (a server with a title, icons, logging and annotated tools).

const DEMO_TOOLS = [
  {
    tool: "read_file",
    description: "Reads a text file of the project and returns its content.",
    inputSchema: {
      type: "object",
      properties: {
        path: { type: "string", description: "Path relative to the project folder" },
        max_bytes: { type: "integer", minimum: 1, description: "Stop after this many bytes" },
      },
      required: ["path"],
    },
    readOnly: true,
  },
  {
    tool: "list_dir",
    description: "Lists a folder of the project.",
    inputSchema: {
      type: "object",
      properties: {
        path: { type: "string", default: "." },
        recursive: { type: "boolean" },
        sort: { enum: ["name", "size", "modified"], description: "Order of the entries" },
      },
    },
    readOnly: true,
  },
  {
    tool: "search_text",
    description: "Searches the project's text files for a pattern.",
    inputSchema: {
      type: "object",
      properties: {
        pattern: { type: "string", description: "Text or regular expression" },
        options: {
          type: "object",
          properties: {
            case_sensitive: { type: "boolean" },
            globs: { type: "array", items: { type: "string" } },
          },
        },
      },
      required: ["pattern"],
    },
    readOnly: true,
  },
];

const PNG_1X1 =
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mMwnvn/PwAFmQLLy7st7QAAAABJRU5ErkJggg==";

/** The hints of a tool whose server set only readOnlyHint (or nothing), as the bridge sends them. */
function plainHints(readOnly) {
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

const RED_DOT = `data:image/png;base64,${PNG_1X1}`;

/** Tools of the "surface" scenario: one destructive with a title and icons, one read-only. */
const SURFACE_TOOLS = [
  {
    tool: "rm",
    title: "Remove a file",
    description: "Removes a file of the project.",
    inputSchema: { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
    readOnly: false,
    hints: {
      readOnlyHint: false,
      destructiveHint: true,
      idempotentHint: null,
      openWorldHint: false,
      readOnly: false,
      destructive: true,
      idempotent: false,
      openWorld: false,
      marks: ["destructive"],
    },
    // The core passes only https: and data: icons; the window checks again.
    icons: [
      { src: "javascript:window.__pwned=1", mimeType: null, theme: null },
      { src: "http://example.com/rm.png", mimeType: null, theme: null },
      { src: RED_DOT, mimeType: "image/png", theme: null },
    ],
  },
  {
    tool: "echo",
    title: "Echo Tool",
    description: "Echoes the text.",
    inputSchema: { type: "object", properties: { text: { type: "string" } } },
    readOnly: true,
  },
];

function jsonError(text) {
  try {
    JSON.parse(text);
    return null;
  } catch (e) {
    const m = /position (\d+)/.exec(e.message);
    const pos = Math.min(m ? Number(m[1]) : text.length, text.length);
    const before = text.slice(0, pos).split("\n");
    return { message: `invalid JSON: ${e.message.replace(/ in JSON at position \d+.*$/, "")}`, line: before.length, column: before[before.length - 1].length + 1 };
  }
}

function entryTransport(e) {
  if (!e || typeof e !== "object") return "";
  if (e.command) return "stdio";
  if (e.url) return e.type === "sse" ? "sse" : "http";
  return "";
}

function entryError(name, e) {
  if (!e || typeof e !== "object") return `server "${name}": the entry must be a JSON object`;
  if (!e.command && !e.url) return `server "${name}": has neither "command" (a local server) nor "url" (a remote server)`;
  return null;
}

export function install(mockIPC, scenario) {
  const project = { path: "/home/user/projects/demo", name: "demo", configPath: "/home/user/projects/demo/.mcp.json" };
  // The events of the open project cross tagged with it, as src-tauri's ProjectEmitter sends them.
  const PROJECT_EVENTS = new Set(["mcp-status", "tools-changed", "asks-changed", "resources-changed", "config-changed"]);
  const emit = (event, payload) =>
    window.__TAURI_INTERNALS__.invoke("plugin:event|emit", {
      event,
      payload: PROJECT_EVENTS.has(event) ? { project: project.path, session: 1, payload } : payload,
    });
  /** name -> { entry, state, tools, restart, log[] } */
  const servers = new Map();
  const followers = new Map();
  let configText = "";
  // The user and local scopes' files (the project's is `configText`).
  const scopeTexts = { user: "", local: "" };
  const SCOPE_PATHS = { user: "/home/user/.config/harness9/mcp.json", local: "/home/user/.local/share/harness9/projects/demo/mcp.json" };
  function scopeFile(scope) {
    const text = scopeTexts[scope];
    return { path: SCOPE_PATHS[scope], text, exists: text !== "", hash: `h-${scope}-${text.length}` };
  }
  let hash = 1;
  const calls = [];
  /** Tools held back as changed since accepted: { server, tool, summary, diff }. */
  let held = [];

  function addServer(name, entry, state, tools = []) {
    servers.set(name, { entry, state, tools, restart: null, log: [], details: null, level: null });
  }
  /** The project's extra roots. */
  let roots = [];

  function setConfigFromServers() {
    const obj = { mcpServers: {} };
    for (const [n, s] of servers) obj.mcpServers[n] = s.entry;
    configText = JSON.stringify(obj, null, 2) + "\n";
  }

  if (scenario === "big") {
    for (let k = 0; k < 20; k++) {
      const tools = [];
      for (let i = k; i < 10000; i += 20) {
        const verb = ["read", "write", "search", "list", "fetch"][i % 5];
        tools.push({
          tool: `tool_${i}_${verb}`,
          description: `Synthetic tool number ${i} that does ${verb}ing of things.`,
          inputSchema: { type: "object", properties: { q: { type: "string" } } },
          readOnly: i % 2 === 0,
        });
      }
      addServer(`srv${k}`, { command: "mcp-fixture", args: ["--tools", "500"] }, connected(tools.length), tools);
    }
  } else if (scenario === "rich") {
    addServer("demo", { command: "harness9", args: ["mcp", "serve", "--project", "."] }, connected(3), DEMO_TOOLS);
    addServer("github", { command: "npx", args: ["-y", "github-mcp"], env: { GITHUB_TOKEN: "${GITHUB_TOKEN}" } }, {
      status: "failed",
      reason: "the server exited with status 1; its last output on stderr:\nerror: GITHUB_TOKEN is not set",
      stderrTail: "error: GITHUB_TOKEN is not set",
    });
    servers.get("github").restart = { attempt: 2, maxAttempts: 3, retryInMs: 2000, gaveUp: false };
    addServer("search", { type: "http", url: "https://mcp.example.com/mcp", headers: { Authorization: "Bearer x" } }, { status: "starting", phase: "initializing" });
    addServer("notes", { command: "uvx", args: ["notes-mcp"] }, { status: "awaiting-approval" });
    addServer("legacy", { command: "old-server", disabled: true }, { status: "disabled" });
    servers.get("demo").log.push(
      line("stderr", "", "harness9 mcp serve: serving /home/user/projects/demo"),
      line("server", "info", "3 tools ready"),
    );
  } else if (scenario === "surface") {
    addServer("ev", { command: "mcp-server-everything", args: ["stdio"] }, connected(2), SURFACE_TOOLS);
    servers.get("ev").details = { title: "Everything Demo", icons: [{ src: RED_DOT, mimeType: "image/png", theme: null }], logging: true };
    servers.get("ev").log.push(line("server", "warning", "[everything-server] disk almost full"));
  } else if (scenario === "auth") {
    addServer("demo", { command: "harness9", args: ["mcp", "serve", "--project", "."] }, connected(3), DEMO_TOOLS);
    addServer("remote", { type: "http", url: "https://mcp.example.com/mcp" }, { status: "needs-auth", reason: "the server requires sign-in (HTTP 401)" }, DEMO_TOOLS.slice(0, 2));
  } else {
    addServer("demo", { command: "harness9", args: ["mcp", "serve", "--project", "."] }, { status: "awaiting-approval" }, DEMO_TOOLS);
  }
  setConfigFromServers();

  function connected(n) {
    return { status: "connected", tools: n, protocolVersion: "2025-11-25", serverName: "mock-server", serverVersion: "1.0.0", era: "legacy" };
  }

  function line(source, level, text) {
    return { timeMs: Date.now(), source, level, text };
  }

  let revision = 0;
  function status() {
    return {
      revision: ++revision,
      servers: [...servers.entries()]
        .sort(([a], [b]) => (a < b ? -1 : 1))
        .map(([name, s]) => ({
          name,
          transport: entryTransport(s.entry),
          scope: "project",
          target: s.entry.command ? [s.entry.command, ...(s.entry.args ?? [])].join(" ") : (s.entry.url ?? ""),
          state: s.state,
          restart: s.restart,
          heldTools: held.filter((h) => h.server === name).length,
          signedIn: s.signedIn ?? null,
        })),
      configError: null,
    };
  }

  function toolList() {
    const out = [];
    for (const [name, s] of [...servers.entries()].sort(([a], [b]) => (a < b ? -1 : 1))) {
      if (s.state.status !== "connected") continue;
      for (const t of s.tools)
        out.push({
          name: `mcp__${name}__${t.tool}`,
          server: name,
          tool: t.tool,
          description: t.description,
          inputSchema: t.inputSchema,
          readOnly: t.readOnly,
          title: t.title ?? null,
          hints: t.hints ?? plainHints(t.readOnly),
          icons: (t.icons ?? []).filter((i) => /^(https|data):/i.test(i.src)),
        });
    }
    return out;
  }

  function pushLog(name, l) {
    const s = servers.get(name);
    if (!s) return;
    s.log.push(l);
    for (const ch of followers.get(name) ?? []) ch.onmessage(l);
  }

  function publish() {
    emit("mcp-status", status());
    emit("tools-changed", null);
  }

  function start(name, delay = 150) {
    const s = servers.get(name);
    if (!s) return;
    if (s.entry.disabled) {
      s.state = { status: "disabled" };
      return;
    }
    s.state = { status: "starting", phase: "initializing" };
    pushLog(name, line("host", "info", "starting"));
    setTimeout(() => {
      if (s.state.status !== "starting") return;
      if (!s.tools.length && s.entry.command && s.entry.command !== "harness9") s.tools = DEMO_TOOLS.slice(0, 1);
      // In the sign-in scenario a remote server answers 401 until the user signs in.
      if (scenario === "auth" && s.entry.url && !s.signedIn) s.state = { status: "needs-auth", reason: "the server requires sign-in (HTTP 401)" };
      else s.state = connected(s.tools.length);
      pushLog(name, line("stderr", "", `${name}: ready`));
      publish();
    }, delay);
  }

  // ---- resources: per server { resources, templates, canSubscribe } ----
  const resourceData = new Map();
  const ZIP_B64 = "UEsDBAoAAAAAAAAAIQAAAAAAAAAAAAAAAAAEAAAAYS50eHRQSwUGAAAAAAEAAQAyAAAAIgAAAAAA";
  if (scenario === "big") {
    const many = [];
    for (let i = 0; i < 10000; i++) {
      const kind = ["notes", "logs", "docs", "data", "img"][i % 5];
      many.push({ server: "srv0", uri: `mem://srv0/${kind}/item-${i}.txt`, name: `item-${i}`, title: `${kind} item ${i}`, description: null, mimeType: "text/plain", size: 100 + i });
    }
    resourceData.set("srv0", { resources: many, templates: [], canSubscribe: false });
  } else {
    resourceData.set("demo", {
      canSubscribe: true,
      resources: [
        { server: "demo", uri: "file:///project/README.md", name: "README.md", title: "Project readme", description: "What the project is", mimeType: "text/markdown", size: 42 },
        { server: "demo", uri: "file:///project/logo.png", name: "logo.png", title: null, description: null, mimeType: "image/png", size: 68 },
        { server: "demo", uri: "file:///project/release.zip", name: "release.zip", title: null, description: null, mimeType: "application/zip", size: 56 },
      ],
      templates: [{ server: "demo", uriTemplate: "demo://notes/{id}", name: "note", title: "Note by id", description: "One note", mimeType: "text/plain" }],
    });
  }
  const resourceVersions = new Map();
  function readMock(server, uri) {
    calls.push({ readResource: uri });
    const v = resourceVersions.get(uri) ?? 1;
    if (uri.endsWith(".png")) return { parts: [{ kind: "image", uri, mimeType: "image/png", dataUrl: `data:image/png;base64,${PNG_1X1}`, bytes: 68 }] };
    if (uri.endsWith(".zip")) return { parts: [{ kind: "binary", uri, mimeType: "application/zip", bytes: 56 }] };
    const text = uri.startsWith("demo://notes/") ? `Note ${uri.split("/").pop()} (version ${v})` : `# demo\n\nversion ${v} of ${uri}`;
    return { parts: [{ kind: "text", uri, mimeType: "text/markdown", text, totalChars: text.length, truncated: false }] };
  }
  const resourceHandlers = {
    list_resources: ({ server }) => {
      const names = server ? [server] : [...resourceData.keys()];
      const out = { resources: [], templates: [], canSubscribe: false };
      for (const n of names) {
        if (servers.get(n)?.state.status !== "connected") continue;
        const d = resourceData.get(n);
        if (!d) continue;
        out.resources.push(...d.resources);
        out.templates.push(...d.templates);
        out.canSubscribe = server ? d.canSubscribe : false;
      }
      return out;
    },
    read_resource: ({ server, uri }) => readMock(server, uri),
    subscribe_resource: ({ server, uri, on }) => {
      calls.push({ subscribe: uri, on });
      return null;
    },
    complete_resource: ({ variable, value }) => {
      calls.push({ complete: variable, value });
      return { values: ["1", "2", "10", "11"].filter((x) => x.startsWith(value)), hasMore: false };
    },
    save_resource: ({ uri }) => {
      calls.push({ save: uri });
      return `/home/user/Downloads/${uri.split("/").pop()}`;
    },
  };

  const handlers = {
    current_project: () => project,
    open_project: ({ path }) => ({ ...project, path, name: path.split("/").pop() }),
    pick_folder: () => null,
    recent_projects: () => [project.path],
    report_painted: () => 1,
    get_status: () => status(),
    list_tools: () => toolList(),
    held_tools: () => held,
    accept_tools: ({ server, tools }) => {
      const accepted = held.filter((h) => h.server === server && (tools.length === 0 || tools.includes(h.tool)));
      held = held.filter((h) => !accepted.includes(h));
      publish();
      return accepted;
    },
    pending_approvals: () =>
      [...servers.entries()]
        .filter(([, s]) => s.state.status === "awaiting-approval")
        .map(([name, s]) => ({
          name,
          transport: entryTransport(s.entry),
          command: s.entry.command ?? null,
          args: s.entry.args ?? [],
          url: s.entry.url ?? null,
          cwd: s.entry.cwd ?? null,
          envKeys: Object.keys(s.entry.env ?? {}),
          headerKeys: Object.keys(s.entry.headers ?? {}),
          fingerprint: `fp-${name}`,
        })),
    approve: ({ servers: picks }) => {
      const names = picks.map((p) => p.name);
      for (const n of names) start(n);
      emit("mcp-status", status());
      return { approved: names, stale: [] };
    },
    restart_server: ({ server }) => {
      start(server);
      emit("mcp-status", status());
      return null;
    },
    sign_in: ({ server }) => {
      const s = servers.get(server);
      calls.push({ signIn: server });
      s.state = { status: "starting", phase: "signing-in" };
      publish();
      return new Promise((resolve, reject) => signIns.set(server, { resolve, reject }));
    },
    sign_out: ({ server }) => {
      const s = servers.get(server);
      calls.push({ signOut: server });
      const had = Boolean(s.signedIn);
      s.signedIn = null;
      s.state = { status: "needs-auth", reason: "signed out" };
      publish();
      return had;
    },
    stop_server: ({ server }) => {
      signIns.get(server)?.reject({ code: "sign-in-failed", message: "the sign-in was cancelled" });
      signIns.delete(server);
      servers.get(server).state = { status: "stopped" };
      publish();
      return null;
    },
    set_server_disabled: ({ server, disabled }) => {
      const s = servers.get(server);
      if (disabled) s.entry.disabled = true;
      else delete s.entry.disabled;
      s.state = disabled ? { status: "disabled" } : s.state;
      if (!disabled) start(server);
      setConfigFromServers();
      hash++;
      publish();
      return null;
    },
    server_entry: ({ server }) => {
      const s = servers.get(server);
      if (!s) return null;
      const e = s.entry;
      const mask = (o) => Object.entries(o ?? {}).map(([key, value]) => ({ key, value: /^\$\{\w+\}$/.test(value) ? value : "••••••" }));
      return {
        name: server,
        transport: entryTransport(e),
        scope: "project",
        command: e.command ?? null,
        args: e.args ?? [],
        url: e.url ?? null,
        cwd: e.cwd ?? null,
        env: mask(e.env),
        headers: mask(e.headers),
        disabled: e.disabled === true,
        startupTimeoutMs: 30000,
        toolTimeoutMs: 60000,
        error: entryError(server, e),
      };
    },
    follow_log: ({ server, channel }) => {
      const set = followers.get(server) ?? new Set();
      set.add(channel);
      followers.set(server, set);
      return { followId: 1, lines: [...(servers.get(server)?.log ?? [])] };
    },
    unfollow_log: () => null,
    server_details: ({ server }) => {
      const s = servers.get(server);
      if (!s || s.state.status !== "connected") return null;
      const d = s.details ?? { title: null, icons: [], logging: false };
      return { name: server, title: d.title, icons: d.icons, logging: d.logging, logLevel: s.level };
    },
    set_log_level: ({ server, level }) => {
      const s = servers.get(server);
      calls.push({ setLogLevel: [server, level] });
      if (!s?.details?.logging) throw { code: "not-connected", message: `server "${server}" does not offer logging` };
      s.level = level;
      pushLog(server, line("server", level, `[everything-server] logging level set to ${level}`));
      return null;
    },
    extra_roots: () => roots,
    add_extra_root: ({ path }) => {
      if (roots.includes(path)) throw { code: "invalid-config", message: `${path} is already an extra root` };
      if (!path.startsWith("/")) throw { code: "not-found", message: `${path} is not a folder; give the path of an existing folder` };
      roots = [...roots, path];
      return roots;
    },
    remove_extra_root: ({ path }) => {
      roots = roots.filter((r) => r !== path);
      return roots;
    },
    call_tool: ({ server, tool, arguments: args, started }) => {
      calls.push({ server, tool, args });
      if (started && typeof started.onmessage === "function") started.onmessage(calls.length);
      if (tool === "read_file" && args.path === "missing.txt")
        return { content: [{ type: "text", text: "no such file: missing.txt" }], structuredContent: null, isError: true, durationMs: 3.2 };
      if (tool === "list_dir")
        return {
          content: [{ type: "text", text: "README.md\nnotes/" }, { type: "image", data: PNG_1X1, mimeType: "image/png" }],
          structuredContent: { entries: ["README.md", "notes/"] },
          isError: false,
          durationMs: 7.9,
        };
      return { content: [{ type: "text", text: `${tool} called with ${JSON.stringify(args)}` }], structuredContent: null, isError: false, durationMs: 12.4 };
    },
    cancel_tool_call: () => null,
    read_config: ({ scope }) =>
      scope && scope !== "project" ? scopeFile(scope) : { path: project.configPath, text: configText, exists: true, hash: `h${hash}` },
    check_config: ({ text }) => {
      const error = jsonError(text);
      if (error) return { error, servers: [] };
      const doc = JSON.parse(text);
      return {
        error: null,
        servers: Object.entries(doc.mcpServers ?? {})
          .sort(([a], [b]) => (a < b ? -1 : 1))
          .map(([name, e]) => ({ name, transport: entryTransport(e), error: entryError(name, e), disabled: e?.disabled === true })),
      };
    },
    edit_config: ({ text, edit }) => {
      const doc = JSON.parse(text);
      const s = (doc.mcpServers ??= {});
      if (edit.op === "setServer") {
        if (edit.previous && edit.previous !== edit.name) delete s[edit.previous];
        s[edit.name] = edit.entry;
      } else if (edit.op === "removeServer") delete s[edit.name];
      else if (edit.op === "setDisabled") s[edit.name].disabled = edit.disabled;
      return JSON.stringify(doc, null, 2) + "\n";
    },
    save_config: ({ text, expectedHash, scope }) => {
      if (jsonError(text)) throw { code: "invalid-config", message: "not saved: invalid JSON" };
      if (scope && scope !== "project") {
        scopeTexts[scope] = text;
        return scopeFile(scope);
      }
      if (expectedHash !== null && expectedHash !== `h${hash}`)
        throw { code: "changed-on-disk", message: ".mcp.json changed on disk since it was loaded" };
      configText = text;
      hash++;
      const doc = JSON.parse(text).mcpServers ?? {};
      for (const n of [...servers.keys()]) if (!(n in doc)) servers.delete(n);
      for (const [n, e] of Object.entries(doc)) {
        const old = servers.get(n);
        if (!old) addServer(n, e, { status: "awaiting-approval" });
        else if (JSON.stringify(old.entry) !== JSON.stringify(e)) {
          old.entry = e;
          start(n);
        }
      }
      publish();
      return { path: project.configPath, text: configText, exists: true, hash: `h${hash}` };
    },
    open_config_in_editor: () => null,
    import_sources: () => [],
    import_servers: ({ scope }) => ({ path: scope, added: [], skipped: [], notes: [] }),

    // The chat: a scripted model that lists the folder (after approval) and answers.
    chat_state: () => chatState(),
    chat_new: () => {
      chat.history = [];
      return chatState();
    },
    chat_conversations: () => [],
    chat_open: ({ id }) => {
      throw { code: "not-found", message: `no saved conversation "${id}" for this project` };
    },
    chat_send: ({ prompt, channel, attachments }) => {
      if (chat.turn) throw { code: "busy", message: "a turn is already running; stop it or wait for it to end" };
      if (attachments) chat.attachments = [...(chat.attachments ?? []), ...attachments];
      const turn = { channel, events: [] };
      chat.turn = turn;
      chat.history.push({ kind: "user", text: prompt });
      const send = (e, delay = 20) => setTimeout(() => turn.channel.onmessage(e), delay);
      send({ type: "turn_start", conversationId: "c1", provider: "anthropic", model: "stub-model" }, 0);
      send({ type: "model_request", roundTrip: 1, tools: 3 }, 5);
      if (/evil/.test(prompt)) {
        send({ type: "text_delta", text: '<img src=x onerror="window.__pwned=1"><script>window.__pwned=2</script> [click](javascript:window.__pwned=3)' }, 10);
        finish(turn, 30, { status: "completed", answer: "" });
        return null;
      }
      send({ type: "text_delta", text: "Let me look at the folder." }, 10);
      send({ type: "tool_call_start", callId: "call_1", name: "mcp__demo__list_dir", arguments: {} }, 15);
      send({ type: "approval_request", callId: "call_1", name: "mcp__demo__list_dir", arguments: {}, readOnly: true }, 20);
      return null;
    },
    chat_stop: () => {
      if (chat.turn) finish(chat.turn, 0, { status: "stopped" });
      return null;
    },
    chat_approve: ({ callId, decision }) => {
      const turn = chat.turn;
      if (!turn || callId !== "call_1") return false;
      chat.approvals.push({ callId, decision });
      const send = (e, delay) => setTimeout(() => turn.channel.onmessage(e), delay);
      const denied = decision === "deny";
      send(
        {
          type: "tool_call_end",
          callId,
          name: "mcp__demo__list_dir",
          arguments: {},
          status: denied ? "denied" : "ok",
          durationMs: denied ? 0 : 4.2,
          error: denied ? "the user denied this call" : null,
          output: denied ? "the user denied this call" : "README.md\nnotes/",
          spilled: null,
        },
        10,
      );
      send({ type: "model_request", roundTrip: 2, tools: 3 }, 15);
      const answer = denied ? ["I was not allowed to list it."] : ["The folder holds ", "**README.md** and ", "`notes/`."];
      answer.forEach((text, i) => send({ type: "text_delta", text }, 30 + i * 30));
      finish(turn, 40 + answer.length * 30, { status: "completed", answer: answer.join("") });
      return true;
    },
    open_url: ({ url }) => {
      chat.opened.push(url);
      return null;
    },
    // Prompts: the everything server's team prompt, whose second argument's values depend
    // on the first (sent along as context), and one without arguments.
    list_prompts: () => PROMPTS,
    complete_prompt_argument: ({ server, prompt, argument, value, context }) => {
      calls.push({ complete: { server, prompt, argument, value, context } });
      const values = argument === "department" ? Object.keys(TEAMS) : (TEAMS[context.department] ?? []);
      return { values: values.filter((v) => v.startsWith(value)), total: null, hasMore: false };
    },
    chat_send_prompt: ({ server, name, arguments: args, channel }) => {
      if (chat.turn) throw { code: "busy", message: "a turn is already running; stop it or wait for it to end" };
      calls.push({ sendPrompt: { server, name, arguments: args } });
      const missing = (PROMPTS.find((p) => p.server === server && p.name === name)?.arguments ?? []).filter((a) => a.required && !args[a.name]);
      if (missing.length) throw { code: "invalid-arguments", message: `the prompt ${server}:${name} needs ${missing.map((a) => a.name).join(", ")}` };
      const opening =
        name === "completable-prompt"
          ? [{ kind: "user", text: `Please promote ${args.name} to the head of the ${args.department} team.` }]
          : [{ kind: "user", text: "This is a simple prompt without arguments." }];
      const turn = { channel, events: [] };
      chat.turn = turn;
      chat.history.push(...opening);
      const send = (e, delay) => setTimeout(() => turn.channel.onmessage(e), delay);
      send({ type: "turn_start", conversationId: "c1", provider: "anthropic", model: "stub-model" }, 0);
      send({ type: "text_delta", text: "Done: the team has a new head." }, 20);
      finish(turn, 40, { status: "completed", answer: "Done: the team has a new head." });
      return opening;
    },
    pending_asks: () => asks,
    sampling_grants: () => samplingGranted,
    revoke_sampling: ({ server }) => {
      calls.push({ revokeSampling: server });
      const had = samplingGranted.includes(server);
      samplingGranted = samplingGranted.filter((s) => s !== server);
      return had;
    },
    answer_ask: ({ id, answer }) => {
      calls.push({ answerAsk: id, answer });
      const asked = asks.find((a) => a.id === id);
      asks = asks.filter((a) => a.id !== id);
      // As the core does: an approved sampling request with review comes back with the
      // model's answer (the mock model says "Mock answer.").
      if (asked?.request.kind === "sampling" && answer.action === "approve" && answer.always && !samplingGranted.includes(asked.server)) {
        samplingGranted = [...samplingGranted, asked.server];
      }
      if (asked?.request.kind === "sampling" && answer.action === "approve" && answer.review) {
        const review = { ...asked.request, kind: "samplingReview", model: "mock-model", content: { type: "text", text: "Mock answer." }, stopReason: "endTurn" };
        asks = [{ id: id + 1000, server: asked.server, request: review }, ...asks];
      }
      emit("asks-changed", asks);
      return {};
    },
  };

  /** What servers ask the user, oldest first (set with `__mock.ask`). */
  let asks = [];
  /** Servers allowed to use the model without asking; an "always" answer adds one. */
  let samplingGranted = [];

  const PROMPTS = [
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
  const TEAMS = { Engineering: ["Alice", "Bob", "Charlie"], Sales: ["David", "Eve", "Frank"], Support: ["John", "Kim", "Lee"] };

  const chat = { history: [], turn: null, approvals: [], opened: [] };
  /** Sign-ins waiting for the browser: name -> { resolve, reject }. */
  const signIns = new Map();

  function chatState() {
    return { provider: "anthropic", model: "stub-model", error: null, busy: chat.turn !== null, conversationId: "c1", history: chat.history };
  }

  function finish(turn, delay, outcome) {
    setTimeout(() => {
      if (chat.turn !== turn) return;
      chat.turn = null;
      turn.channel.onmessage({ type: "turn_end", outcome, roundTrips: 2, durationMs: 120, usage: { inputTokens: 10, outputTokens: 5 } });
    }, delay);
  }

  mockIPC(
    (cmd, args) => {
      const h = handlers[cmd] ?? resourceHandlers[cmd];
      if (!h) throw { code: "internal", message: `mock: unknown command ${cmd}` };
      return h(args ?? {});
    },
    { shouldMockEvents: true },
  );

  window.__mock = {
    calls,
    chat,
    status,
    emit,
    pushLog,
    get configText() {
      return configText;
    },
    /** The text of the user or local scope's file. */
    scopeText(scope) {
      return scopeTexts[scope];
    },
    /** Changes the file "on disk" behind the app's back. */
    changeOnDisk(text) {
      configText = text;
      hash++;
      emit("config-changed", { revision: hash, hash: `h${hash}` });
    },
    /** The backend holds back a changed tool of a server. */
    hold(h) {
      held.push(h);
      publish();
    },
    get held() {
      return held;
    },
    /** The user signs in in the browser: the waiting sign_in resolves. */
    finishSignIn(name) {
      const s = servers.get(name);
      s.signedIn = { issuer: "https://auth.example.com", scopes: ["read", "write"], expiresAtMs: Date.now() + 3600_000, refreshable: true };
      s.state = connected(s.tools.length);
      publish();
      signIns.get(name)?.resolve(s.signedIn);
      signIns.delete(name);
    },
    /** A server asks the user something (an AskDto); the dialog shows the oldest. */
    ask(a) {
      asks = [...asks, a];
      emit("asks-changed", asks);
    },
    /** A subscribed resource changes on the server. */
    updateResource(server, uri) {
      resourceVersions.set(uri, (resourceVersions.get(uri) ?? 1) + 1);
      emit("resources-changed", { type: "updated", server, uri });
    },
    crash(name) {
      const s = servers.get(name);
      s.state = { status: "failed", reason: "the server exited with status 3", stderrTail: "fixture: crashing on purpose" };
      s.restart = { attempt: 1, maxAttempts: 3, retryInMs: 1000, gaveUp: false };
      pushLog(name, line("host", "warning", "the server crashed; restarting in 1 s (attempt 1 of 3)"));
      publish();
    },
  };
}
