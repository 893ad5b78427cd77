// MCP Apps views in the window, against the mock backend: the frame is on the server's own
// origin (never srcdoc) with the sandbox and no more, a view that cannot be shown leaves a
// placeholder, Close asks the core and the frame goes on its teardown, pending messages
// wait with Send and Discard, a view's link ask shows the host first; what takes views away
// (leaving a conversation, opening another project, quitting) tears them down before it
// happens; in the chat, a call's view opens while the model writes the call.

import { afterEach, describe, expect, test } from "vitest";
import ViewFrame from "./ViewFrame.svelte";
import ChatPane from "./ChatPane.svelte";
import { LEFT } from "../lib/views/live";
import PendingMessages from "./PendingMessages.svelte";
import AskBody from "./AskBody.svelte";
import type { AskReply, AskView, ViewCall } from "../lib/bindings";
import { $, render, settle, setup, type } from "../test/render";

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

/** Waits (3 s at most) until `ready` holds: the bridge loads with the first view. */
async function until(ready: () => unknown) {
  for (let i = 0; i < 300 && !ready(); i++) await settle(10);
}

const CALL: ViewCall = { conversationId: null, callId: "7", arguments: { tz: "UTC" }, result: { content: [{ type: "text", text: "12:00" }] } as ViewCall["result"] };

describe("views", () => {
  test("the frame loads the view from its server's origin, sandboxed, with the server's name", async () => {
    const { backend, app } = setup();
    const r = render(ViewFrame, { server: "Time Server", tool: "get-time", call: CALL }, app);
    cleanups.push(r.destroy);
    await until(() => r.target.querySelector("iframe"));
    expect(backend.calls.find((c) => c[0] === "openView")).toEqual(["openView", "Time Server", "get-time", CALL]);
    const frame = $(r.target, "view-frame") as HTMLIFrameElement;
    const opened = [...backend.views.values()][0];
    expect(frame.getAttribute("src")).toBe(`h9view://timeserver/${opened.viewId}`);
    expect(frame.getAttribute("sandbox")).toBe("allow-scripts allow-same-origin allow-forms");
    expect(frame.hasAttribute("srcdoc")).toBe(false);
    expect(frame.getAttribute("allow")).toBe("");
    expect($(r.target, "view-server").textContent).toBe("Time Server");
    expect($(r.target, "view").classList.contains("bordered")).toBe(true);
  });

  test("a view that cannot be shown leaves a placeholder saying why", async () => {
    const { backend, app } = setup();
    backend.viewError = 'server "gone" is not available: stopped; its view cannot be shown (the text result stays)';
    const r = render(ViewFrame, { server: "gone", tool: "t", call: CALL }, app);
    cleanups.push(r.destroy);
    await settle(20);
    expect($(r.target, "view-unavailable").textContent).toMatch(/cannot be shown: server "gone" is not available/);
    expect(r.target.querySelector("iframe")).toBeNull();
  });

  test("Close asks the core; the frame goes on the teardown", async () => {
    const { backend, app } = setup();
    const r = render(ViewFrame, { server: "s", tool: "t", call: CALL }, app);
    cleanups.push(r.destroy);
    await until(() => r.target.querySelector("iframe"));
    $(r.target, "view-close").click();
    // The view never said initialized: nothing to ask it, the frame goes at once.
    await until(() => !r.target.querySelector("iframe"));
    expect(backend.calls.some((c) => c[0] === "closeView")).toBe(true);
    expect(r.target.querySelector("iframe")).toBeNull();
    expect($(r.target, "view-ended").textContent).toMatch(/the view was closed/);
  });

  test("leaving a conversation tears its views down first, then the conversation changes; opening another project tears down the rest", async () => {
    const { backend, app } = setup();
    const order: string[] = [];
    const view = (viewId: string, conversationId: string | null) =>
      app.views.add({
        viewId,
        conversationId,
        tearDown: async (reason) => {
          order.push(`${viewId} ${reason} (${backend.calls.length})`);
          await settle(5);
          order.push(`${viewId} gone`);
        },
      });
    view("chat1", "c1");
    view("chat2", "c1");
    view("manual", null);
    const before = backend.calls.length;
    await app.chat.newConversation();
    // Both chat views heard it before the backend was asked, and were gone before it.
    expect(order).toEqual([`chat1 conversation-left (${before})`, `chat2 conversation-left (${before})`, "chat1 gone", "chat2 gone"]);
    expect(backend.calls.slice(before).map((c) => c[0])).toEqual(["chatNew"]);
    order.length = 0;
    // The chat views unregistered themselves when gone; the manual one is still there.
    const calls = backend.calls.length;
    await app.openProject("/elsewhere");
    // Every view still registered heard it before the project was opened.
    expect(order.filter((o) => o.startsWith("manual "))).toEqual([`manual project-closed (${calls})`, "manual gone"]);
    expect(backend.calls.findIndex((c) => c[0] === "openProject")).toBeGreaterThanOrEqual(calls);
  });

  test("quitting: every view hears it, all at once, and only then the window says it is done", async () => {
    const { backend, app } = setup();
    await app.init();
    const order: string[] = [];
    for (const [viewId, conversationId] of [["chat1", "c1"], ["manual", null]] as const) {
      app.views.add({
        viewId,
        conversationId,
        tearDown: async (reason) => {
          order.push(`${viewId} ${reason}`);
          await settle(5);
          order.push(`${viewId} gone`);
        },
      });
    }
    backend.quitEvents.emit(null);
    await until(() => backend.calls.some((c) => c[0] === "readyToQuit"));
    expect(order).toEqual(["chat1 app-closed", "manual app-closed", "chat1 gone", "manual gone"]);
    expect(backend.calls.at(-1)).toEqual(["readyToQuit"]);
    app.destroy();
  });

  test("closing the tool panel's tool or showing another panel asks its view first; the latest navigation wins", async () => {
    const { app } = setup();
    const heard: string[] = [];
    const unregister = app.views.add({
      viewId: "manual",
      conversationId: null,
      tearDown: async (reason) => {
        heard.push(reason);
        await settle(20);
        unregister();
      },
    });
    app.selectTool("mcp__time__get-time");
    await settle(30);
    expect(app.selectedTool).toBe("mcp__time__get-time");
    expect(heard).toEqual(["closed"]);
    // Nothing live any more: navigation is immediate again.
    app.showChat();
    expect(app.view).toBe("chat");

    const unregister2 = app.views.add({ viewId: "manual2", conversationId: null, tearDown: async (reason) => (heard.push(reason), await settle(20), unregister2()) });
    app.showSettings();
    expect(app.view).toBe("chat");
    app.showTools();
    await settle(40);
    expect(app.view).toBe("tools");
    expect(heard).toEqual(["closed", "closed"]);
  });

  test("a view taken away by the window goes: its frame is removed and the core forgets it", async () => {
    const { backend, app } = setup();
    const r = render(ViewFrame, { server: "s", tool: "t", call: { ...CALL, conversationId: "c1" } }, app);
    cleanups.push(r.destroy);
    await until(() => r.target.querySelector("iframe"));
    expect(app.views.size).toBe(1);
    await app.views.leave((v) => v.conversationId === "c1", LEFT.conversation);
    await settle();
    expect(r.target.querySelector("iframe")).toBeNull();
    expect($(r.target, "view-ended").textContent).toMatch(/its conversation was left/);
    expect(backend.calls.some((c) => c[0] === "closeView")).toBe(true);
    expect(app.views.size).toBe(0);
  });

  test("in the chat, a call's view opens while the model writes it, and stays as it starts and ends", async () => {
    const { backend, app } = setup();
    const r = render(ChatPane, {}, app);
    cleanups.push(r.destroy);
    await settle();
    type($(r.target, "chat-input") as HTMLTextAreaElement, "show the time");
    $(r.target, "chat-send").click();
    await settle();
    const view = { server: "time", tool: "get-time", resourceUri: "ui://time/app.html" };
    backend.chatEmit({ type: "tool_input_partial", callId: "t1", name: "mcp__time__get-time", arguments: { tz: "Europe/Os" }, view });
    await until(() => r.target.querySelector("iframe"));
    const card = $(r.target, "tool-card");
    expect(card.dataset.status).toBe("writing");
    expect($(card, "tool-card-args").textContent).toContain("Europe/Os");
    const opens = () => backend.calls.filter((c) => c[0] === "openView");
    expect(opens()).toEqual([["openView", "time", "get-time", { conversationId: "c1", callId: "t1", arguments: {}, result: null }]]);
    backend.chatEmit({ type: "tool_call_start", callId: "t1", name: "mcp__time__get-time", arguments: { tz: "Europe/Oslo" }, view });
    await settle();
    expect(card.dataset.status).toBe("running");
    const result = { content: [{ type: "text", text: "12:00" }] } as ViewCall["result"] & object;
    backend.chatEmit({
      type: "tool_call_end", callId: "t1", name: "mcp__time__get-time", arguments: { tz: "Europe/Oslo" }, status: "ok", durationMs: 3, error: null,
      output: "12:00", spilled: null, view: { ...view, arguments: { tz: "Europe/Oslo" }, result },
    });
    await settle();
    // One view all along: opened while the call was written, never opened again.
    expect(opens().length).toBe(1);
    expect(r.target.querySelectorAll("iframe").length).toBe(1);

    // A call the model never finished writing (its answer failed) ends cancelled.
    backend.chatEmit({ type: "tool_input_partial", callId: "t2", name: "mcp__time__get-time", arguments: { tz: "U" }, view });
    backend.chatEmit({ type: "turn_end", outcome: { status: "failed", error: "the stream broke", code: "stream-broken" }, roundTrips: 1, durationMs: 9, usage: { inputTokens: 1, outputTokens: 1 } });
    await settle();
    const second = r.target.querySelectorAll<HTMLElement>("[data-testid=tool-card]")[1];
    expect(second.dataset.status).toBe("cancelled");
    expect($(second, "tool-card-error").textContent).toMatch(/ended before this call was complete/);
  });

  test("pending messages wait with Send and Discard; a view shows only its own", async () => {
    const { backend, app } = setup();
    const all = render(PendingMessages, {}, app);
    const mine = render(PendingMessages, { viewId: "v1" }, app);
    cleanups.push(all.destroy, mine.destroy);
    await settle();
    backend.pushPending([
      { id: 1, viewId: "v1", server: "s", tool: "t", conversationId: null, text: "first" },
      { id: 2, viewId: "v2", server: "s", tool: "u", conversationId: null, text: "second" },
    ]);
    await settle();
    expect(all.target.querySelectorAll("[data-testid=pending-message]").length).toBe(2);
    expect([...mine.target.querySelectorAll("[data-testid=pending-text]")].map((e) => e.textContent)).toEqual(["first"]);
    expect(mine.target.textContent).toMatch(/From the view of t \(s\), not sent yet/);
    $(mine.target, "pending-discard").click();
    await settle();
    expect(backend.calls).toContainEqual(["discardPending", 1]);
    expect(mine.target.querySelectorAll("[data-testid=pending-message]").length).toBe(0);
  });

  test("a view's link: its host first, then the URL; Open or Cancel", async () => {
    const { app } = setup();
    const answers: AskReply[] = [];
    const ask: AskView = { id: 4, server: "s", request: { kind: "view", viewId: "v1", request: { what: "openLink", url: "https://docs.example.com/a?b=1" }, domain: "docs.example.com" } };
    const r = render(AskBody, { ask, busy: false, error: null, fieldErrors: {}, more: 0, onanswer: (a: AskReply) => answers.push(a) }, app);
    cleanups.push(r.destroy);
    expect($(r.target, "ask-domain").textContent).toBe("docs.example.com");
    expect($(r.target, "ask-url").textContent).toBe("https://docs.example.com/a?b=1");
    $(r.target, "ask-decline").click();
    $(r.target, "ask-accept").click();
    expect(answers).toEqual([{ action: "decline" }, { action: "accept", content: null }]);
  });
});
