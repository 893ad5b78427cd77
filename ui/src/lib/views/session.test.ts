// The view bridge against a fake window and frame: what a view sends counts only from its
// own frame and origin, nothing goes to it before it is initialized, the input goes once
// and before the result, replies go to its exact origin, and teardown waits (a while) for
// the view; quitting tears every view down at once, within a bound.

import { afterEach, describe, expect, test, vi } from "vitest";
import type { CallToolResult } from "../bindings";
import { LEFT, LiveViews } from "./live";
import { MAX_WAITING_NOTIFICATIONS, ViewSession, type ViewBackend, type ViewScreen } from "./session";
import type { ViewReply } from "./types";

const ORIGIN = "h9view://demo1";
type ViewSessionArgs = ConstructorParameters<typeof ViewSession>[0]["arguments"];
const VIEW = "v".repeat(32);

type Posted = { message: Record<string, unknown>; target: string };

/** A window that delivers message events, and a frame that records what it is sent. */
function fakeWindow() {
  const listeners = new Set<(e: MessageEvent) => void>();
  const posted: Posted[] = [];
  // As the engine does, the message is cloned (a reactive proxy cannot be).
  const frame = { postMessage: (message: Record<string, unknown>, target: string) => posted.push({ message: structuredClone(message), target }) };
  const other = { postMessage: () => {} };
  const host = {
    addEventListener: (_: string, l: EventListener) => listeners.add(l as (e: MessageEvent) => void),
    removeEventListener: (_: string, l: EventListener) => listeners.delete(l as (e: MessageEvent) => void),
  } as unknown as Window;
  /** The frame (or another source) posts `data` from `origin`. */
  const send = (data: unknown, { source = frame as unknown, origin = ORIGIN } = {}) => {
    for (const l of listeners) l({ data, source, origin } as unknown as MessageEvent);
  };
  return { host, frame, other, posted, send, listeners };
}

const tick = async (n = 5) => {
  for (let i = 0; i < n; i++) await new Promise((r) => setTimeout(r, 0));
};

const INIT_ANSWER = {
  protocolVersion: "2026-01-26",
  hostInfo: { name: "harness9", version: "0.1.0" },
  hostCapabilities: { serverTools: {}, openLinks: {}, logging: {} },
  hostContext: { toolInfo: { id: "call-1", tool: { name: "get-time", inputSchema: { type: "object" } } } },
};

function setup(answers: (method: string, params: unknown) => ViewReply = () => ({ kind: "noted" }), args: ViewSessionArgs = { tz: "UTC" }) {
  const w = fakeWindow();
  const calls: Array<[string, unknown]> = [];
  const resized: Array<[number | null, number | null]> = [];
  const backend: ViewBackend = {
    async request(viewId, method, params) {
      expect(viewId).toBe(VIEW);
      calls.push([method, params]);
      if (method === "ui/initialize") return { kind: "answer", result: INIT_ANSWER };
      return answers(method, params);
    },
  };
  const screen: ViewScreen = {
    resize: (width, height) => resized.push([width, height]),
    displayMode: () => {},
    download: async () => false,
    context: () => ({ theme: "dark", platform: "desktop", displayMode: "inline" }),
  };
  const session = new ViewSession({
    viewId: VIEW,
    origin: ORIGIN,
    host: w.host,
    frame: () => w.frame as unknown as Window,
    arguments: args,
    backend,
    screen,
    teardownTimeoutMs: 200,
  });
  return { ...w, session, calls, resized };
}

const initialize = { jsonrpc: "2.0", id: 1, method: "ui/initialize", params: { protocolVersion: "2026-01-26", appInfo: { name: "v", version: "1" }, appCapabilities: {} } };
const initialized = { jsonrpc: "2.0", method: "ui/notifications/initialized", params: {} };
const RESULT: CallToolResult = { content: [{ type: "text", text: "12:00" }] as CallToolResult["content"] };

describe("the view bridge", () => {
  test("messages from another frame or another origin, and malformed ones, are ignored", async () => {
    const t = setup();
    await t.session.start();
    t.send(initialize, { source: t.other });
    t.send(initialize, { origin: "tauri://localhost" });
    t.send(initialize, { origin: "h9view://other" });
    t.send({ id: 1, method: "ui/initialize" });
    t.send("not json-rpc");
    await tick();
    expect(t.calls).toEqual([]);
    expect(t.posted).toEqual([]);
    expect(t.session.refused.map((r) => r.why)).toEqual(["source", "origin", "origin", "shape", "shape"]);
  });

  test("nothing goes out before initialized; then the input once, then the result, to the exact origin", async () => {
    const t = setup();
    await t.session.start();
    // What the app holds may be a reactive proxy.
    t.session.setResult(new Proxy(RESULT, {}));
    t.session.refreshContext();
    await tick();
    expect(t.posted).toEqual([]);

    t.send(initialize);
    await tick();
    // Only the answer to ui/initialize, with the core's host info and the window's context.
    expect(t.posted.map((p) => p.message.id)).toEqual([1]);
    const init = t.posted[0].message.result as Record<string, any>;
    expect(init.hostInfo).toEqual(INIT_ANSWER.hostInfo);
    expect(init.hostContext.theme).toBe("dark");
    expect(init.hostContext.toolInfo.id).toBe("call-1");
    expect(t.calls.map((c) => c[0])).toEqual(["ui/initialize"]);

    t.send(initialized);
    await tick();
    const methods = t.posted.slice(1).map((p) => p.message.method);
    expect(methods).toEqual(["ui/notifications/tool-input", "ui/notifications/tool-result"]);
    expect(t.posted[1].message.params).toEqual({ arguments: { tz: "UTC" } });
    expect((t.posted[2].message.params as CallToolResult).content).toEqual(RESULT.content);
    expect(new Set(t.posted.map((p) => p.target))).toEqual(new Set([ORIGIN]));
    expect(t.calls.map((c) => c[0])).toEqual(["ui/initialize", "ui/notifications/initialized"]);

    // A second result or a cancellation after it sends nothing more.
    t.session.setResult(RESULT);
    t.session.setCancelled("stopped");
    t.send(initialized);
    await tick();
    expect(t.posted.length).toBe(3);
  });

  test("a result that comes after initialized is sent at once; a cancellation instead of it too", async () => {
    const t = setup();
    await t.session.start();
    t.send(initialize);
    await tick();
    t.send(initialized);
    await tick();
    expect(t.posted.map((p) => p.message.method ?? "answer")).toEqual(["answer", "ui/notifications/tool-input"]);
    t.session.setCancelled("the user stopped the turn");
    await tick();
    expect(t.posted.at(-1)?.message).toMatchObject({ method: "ui/notifications/tool-cancelled", params: { reason: "the user stopped the turn" } });
  });

  test("while the model writes the call, the view gets the latest input so far; then the input once, then the result", async () => {
    const t = setup(undefined, null);
    await t.session.start();
    // The view is not ready yet: only the latest partial input waits.
    t.session.setPartial({ tz: "U" });
    t.session.setPartial({ tz: "UT" });
    t.send(initialize);
    await tick();
    t.send(initialized);
    await tick();
    t.session.setPartial({ tz: "UTC" });
    await tick();
    t.session.setResult(RESULT);
    await tick();
    // The result waits for the input.
    expect(t.posted.slice(1).map((p) => [p.message.method, p.message.params])).toEqual([
      ["ui/notifications/tool-input-partial", { arguments: { tz: "UT" } }],
      ["ui/notifications/tool-input-partial", { arguments: { tz: "UTC" } }],
    ]);
    t.session.setInput({ tz: "UTC", as: "iso" });
    t.session.setPartial({ tz: "late" });
    t.session.setInput({ other: true });
    await tick();
    expect(t.posted.slice(3).map((p) => p.message.method)).toEqual(["ui/notifications/tool-input", "ui/notifications/tool-result"]);
    expect(t.posted[3].message.params).toEqual({ arguments: { tz: "UTC", as: "iso" } });
  });

  test("a call that ends while its arguments are written (the answer failed) is only cancelled for the view", async () => {
    const t = setup(undefined, null);
    await t.session.start();
    t.session.setPartial({ tz: "U" });
    t.session.setCancelled("the model's answer ended before this call was complete");
    t.send(initialize);
    await tick();
    t.send(initialized);
    await tick();
    expect(t.posted.slice(1).map((p) => p.message.method)).toEqual(["ui/notifications/tool-input-partial", "ui/notifications/tool-cancelled"]);
  });

  test("a view's requests go to the core with their method; its answer goes back", async () => {
    const t = setup((method) =>
      method === "tools/call"
        ? { kind: "answer", result: { content: [{ type: "text", text: "done" }] } }
        : method === "ui/notifications/size-changed"
          ? { kind: "resize", width: null, height: 480 }
          : { kind: "noted" },
    );
    await t.session.start();
    t.send(initialize);
    await tick();
    t.send(initialized);
    await tick();
    t.send({ jsonrpc: "2.0", id: 7, method: "tools/call", params: { name: "get-time", arguments: {} } });
    t.send({ jsonrpc: "2.0", method: "ui/notifications/size-changed", params: { width: 300, height: 99999 } });
    await tick(10);
    expect(t.calls).toContainEqual(["tools/call", { name: "get-time", arguments: {} }]);
    const answer = t.posted.find((p) => p.message.id === 7)?.message;
    expect(answer?.result).toEqual({ content: [{ type: "text", text: "done" }] });
    expect(t.resized).toEqual([[null, 480]]);
  });

  test("a request sent right after initialized reaches the core after it, however slow the core is to take it", async () => {
    // Each message is its own invoke; the core refuses anything before `initialized`.
    let initializedTaken = false;
    const arrived: string[] = [];
    const t = setup();
    const slow: ViewBackend = {
      request: async (_v, method) => {
        arrived.push(method);
        if (method === "ui/initialize") return { kind: "answer", result: INIT_ANSWER };
        if (method === "ui/notifications/initialized") {
          await new Promise((r) => setTimeout(r, 30));
          initializedTaken = true;
          return { kind: "noted" };
        }
        if (!initializedTaken) throw new Error(`the view sent ${method} before it was initialized`);
        if (method === "ui/request-display-mode") return { kind: "displayMode", mode: "fullscreen" };
        return { kind: "noted" };
      },
    };
    const s = new ViewSession({
      viewId: VIEW, origin: ORIGIN, host: t.host, frame: () => t.frame as unknown as Window,
      arguments: {}, backend: slow, screen: { resize() {}, displayMode() {}, download: async () => false, context: () => ({}) },
    });
    await s.start();
    t.send(initialize);
    await tick();
    t.send(initialized);
    t.send({ jsonrpc: "2.0", method: "ui/notifications/size-changed", params: { width: 300, height: 120 } });
    t.send({ jsonrpc: "2.0", id: 2, method: "ui/request-display-mode", params: { mode: "fullscreen" } });
    await new Promise((r) => setTimeout(r, 80));
    expect(arrived).toEqual(["ui/initialize", "ui/notifications/initialized", "ui/notifications/size-changed", "ui/request-display-mode"]);
    expect(t.posted.find((p) => p.message.id === 2)?.message.result).toEqual({ mode: "fullscreen" });
  });

  test("a flood of notifications waits in a bounded queue; a request after it still reaches the core", async () => {
    const t = setup((method) => (method === "tools/call" ? { kind: "answer", result: { content: [] } } : { kind: "noted" }));
    await t.session.start();
    t.send(initialize);
    await tick();
    t.send(initialized);
    for (let i = 0; i < 10_000; i++) t.send({ jsonrpc: "2.0", method: "notifications/message", params: { level: "info", data: i } });
    t.send({ jsonrpc: "2.0", id: 9, method: "tools/call", params: { name: "get-time", arguments: {} } });
    await new Promise((r) => setTimeout(r, 200));
    const logged = t.calls.filter(([m]) => m === "notifications/message").length;
    expect(logged).toBeGreaterThan(0);
    expect(logged).toBeLessThanOrEqual(MAX_WAITING_NOTIFICATIONS);
    expect(t.posted.find((p) => p.message.id === 9)?.message.result).toEqual({ content: [] });
  });

  test("a download goes to the save dialog; full screen is shown and the view told", async () => {
    const offered: unknown[] = [];
    const modes: Array<"inline" | "fullscreen" | "pip"> = [];
    const w = fakeWindow();
    const s = new ViewSession({
      viewId: VIEW,
      origin: ORIGIN,
      host: w.host,
      frame: () => w.frame as unknown as Window,
      arguments: {},
      backend: {
        request: async (_v, method) => {
          if (method === "ui/initialize") return { kind: "answer", result: INIT_ANSWER };
          if (method === "ui/download-file") return { kind: "download", offer: { downloadId: "d1", files: [{ name: "a.csv", mimeType: "text/csv", size: 3 }] } };
          if (method === "ui/request-display-mode") return { kind: "displayMode", mode: "fullscreen" };
          return { kind: "noted" };
        },
      },
      screen: {
        resize() {},
        displayMode: (m) => modes.push(m),
        download: async (offer) => (offered.push(offer), offered.length === 1),
        context: () => ({ displayMode: modes.at(-1) ?? "inline" }),
      },
    });
    await s.start();
    w.send(initialize);
    await tick();
    w.send(initialized);
    await tick();
    w.send({ jsonrpc: "2.0", id: 20, method: "ui/download-file", params: { contents: [{ type: "resource", resource: { uri: "file:///a.csv", mimeType: "text/csv", text: "a,b" } }] } });
    await tick(10);
    w.send({ jsonrpc: "2.0", id: 21, method: "ui/download-file", params: { contents: [{ type: "resource", resource: { uri: "file:///a.csv", mimeType: "text/csv", text: "a,b" } }] } });
    await tick(10);
    w.send({ jsonrpc: "2.0", id: 22, method: "ui/request-display-mode", params: { mode: "fullscreen" } });
    await tick(10);
    const answer = (id: number) => w.posted.find((p) => p.message.id === id)?.message;
    expect(offered.length).toBe(2);
    expect(answer(20)?.result).toEqual({});
    // Nothing saved (the user cancelled the dialog): the view hears it.
    expect(answer(21)?.result).toEqual({ isError: true });
    expect(answer(22)?.result).toEqual({ mode: "fullscreen" });
    expect(modes).toEqual(["fullscreen"]);
    const changed = w.posted.find((p) => p.message.method === "ui/notifications/host-context-changed");
    expect((changed?.message.params as { displayMode: string }).displayMode).toBe("fullscreen");
  });

  test("a refusal of the core reaches the view as an error", async () => {
    const t = setup();
    const refusing: ViewBackend = {
      request: async (_v, method) => {
        if (method === "ui/initialize") return { kind: "answer", result: INIT_ANSWER };
        throw new Error("get-secret is not offered to views");
      },
    };
    const s = new ViewSession({
      viewId: VIEW, origin: ORIGIN, host: t.host, frame: () => t.frame as unknown as Window,
      arguments: {}, backend: refusing, screen: { resize() {}, displayMode() {}, download: async () => false, context: () => ({}) },
    });
    await s.start();
    t.send(initialize);
    await tick();
    t.send(initialized);
    await tick();
    t.send({ jsonrpc: "2.0", id: 9, method: "tools/call", params: { name: "get-secret" } });
    await tick(10);
    const answer = t.posted.find((p) => p.message.id === 9)?.message;
    expect(answer?.error).toEqual({ code: -32000, message: "get-secret is not offered to views" });
  });

  test("teardown asks the live view and waits for its answer, or for the time limit", async () => {
    const t = setup();
    await t.session.start();
    // Before initialized: nothing is sent, the link just closes.
    const early = setup();
    await early.session.start();
    await early.session.teardown();
    expect(early.posted).toEqual([]);
    expect(early.listeners.size).toBe(0);

    t.send(initialize);
    await tick();
    t.send(initialized);
    await tick();
    const started = Date.now();
    const done = t.session.teardown("conversation-left");
    await tick();
    const request = t.posted.at(-1)!.message;
    expect(request.method).toBe("ui/resource-teardown");
    // The view hears why.
    expect(request.params).toEqual({ reason: "conversation-left" });
    t.send({ jsonrpc: "2.0", id: request.id, result: {} });
    await done;
    expect(Date.now() - started).toBeLessThan(150);
    expect(t.listeners.size).toBe(0);

    // A view that never answers: the frame goes after the limit.
    const mute = setup();
    await mute.session.start();
    mute.send(initialize);
    await tick();
    mute.send(initialized);
    await tick();
    const t0 = Date.now();
    await mute.session.teardown();
    expect(Date.now() - t0).toBeGreaterThanOrEqual(190);
    expect(mute.listeners.size).toBe(0);
  });
});

describe("quitting: every view torn down at once, bounded", () => {
  afterEach(() => vi.useRealTimers());

  /** A view the window shows: its bridge is live (initialized). */
  async function liveSession() {
    const t = setup();
    await t.session.start();
    t.send(initialize);
    await tick();
    t.send(initialized);
    await tick();
    return t;
  }

  const teardownOf = (t: ReturnType<typeof setup>) => t.posted.find((p) => p.message.method === "ui/resource-teardown")?.message;

  test("a view that answers, one that never does and a frame that hangs: all asked at once, done within the bound", async () => {
    const answers = await liveSession();
    const silent = await liveSession();
    const views = new LiveViews();
    const gone: string[] = [];
    for (const [id, t] of [["answers", answers], ["silent", silent]] as const) {
      views.add({
        viewId: id,
        conversationId: null,
        tearDown: async (reason) => {
          await t.session.teardown(reason);
          gone.push(id);
        },
      });
    }
    // A frame whose teardown never ends (a bug, a page that hangs the window's side).
    views.add({ viewId: "hung", conversationId: "c1", tearDown: () => new Promise(() => {}) });

    vi.useFakeTimers();
    let finished: boolean | null = null;
    const quitting = views.leaveAll(LEFT.quit, 500).then((ok) => (finished = ok));
    await vi.advanceTimersByTimeAsync(0);
    // Both live views were asked at once, and hear why.
    expect(teardownOf(answers)?.params).toEqual({ reason: "app-closed" });
    expect(teardownOf(silent)?.params).toEqual({ reason: "app-closed" });

    answers.send({ jsonrpc: "2.0", id: teardownOf(answers)!.id, result: {} });
    await vi.advanceTimersByTimeAsync(0);
    expect(gone).toEqual(["answers"]);
    // The silent view's frame goes at its own limit (200 ms here).
    await vi.advanceTimersByTimeAsync(200);
    expect(gone).toEqual(["answers", "silent"]);
    expect(silent.listeners.size).toBe(0);
    expect(finished).toBe(null);
    // The hung one does not keep the app: done at the bound, saying not all answered.
    await vi.advanceTimersByTimeAsync(300);
    await quitting;
    expect(finished).toBe(false);
  });

  test("views that all answer end the wait at once; no view: done at once", async () => {
    const views = new LiveViews();
    vi.useFakeTimers();
    expect(await views.leaveAll(LEFT.quit, 500)).toBe(true);
    vi.useRealTimers();

    const a = await liveSession();
    const b = await liveSession();
    for (const [id, t] of [["a", a], ["b", b]] as const) views.add({ viewId: id, conversationId: null, tearDown: (r) => t.session.teardown(r) });
    vi.useFakeTimers();
    const quitting = views.leaveAll(LEFT.quit, 500);
    await vi.advanceTimersByTimeAsync(0);
    for (const t of [a, b]) t.send({ jsonrpc: "2.0", id: teardownOf(t)!.id, result: {} });
    await vi.advanceTimersByTimeAsync(0);
    expect(await quitting).toBe(true);
    expect(vi.getTimerCount()).toBe(0);
  });
});
