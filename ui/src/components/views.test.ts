// MCP Apps views in the window, against the mock backend: the frame is on the server's own
// origin (never srcdoc) with the sandbox and no more, a view that cannot be shown leaves a
// placeholder, Close asks the core and the frame goes on its teardown, pending messages
// wait with Send and Discard, and a view's link ask shows the host first.

import { afterEach, describe, expect, test } from "vitest";
import ViewFrame from "./ViewFrame.svelte";
import PendingMessages from "./PendingMessages.svelte";
import AskBody from "./AskBody.svelte";
import type { AskReply, AskView, ViewCall } from "../lib/bindings";
import { $, render, settle, setup } from "../test/render";

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
