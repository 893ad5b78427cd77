// The chat pane against the mock backend (happy-dom): streaming, tool cards, approval,
// Stop, history, the "not configured" message, and Markdown that stays text.

import { afterEach, describe, expect, test } from "vitest";
import ChatPane from "./ChatPane.svelte";
import { $, render, settle, setup, type } from "../test/render";
import { BackendError } from "../lib/backend/types";

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

async function openChat() {
  const { backend, app } = setup();
  const r = render(ChatPane, {}, app);
  cleanups.push(r.destroy);
  await settle();
  return { backend, app, target: r.target };
}

async function sendMessage(target: HTMLElement, text: string) {
  type($(target, "chat-input") as HTMLTextAreaElement, text);
  $(target, "chat-send").click();
  await settle();
}

describe("ChatPane", () => {
  test("shows the provider and streams the answer", async () => {
    const { backend, target } = await openChat();
    expect($(target, "chat-provider").textContent).toContain("anthropic · stub-model");
    await sendMessage(target, "hello");
    expect(backend.calls).toContainEqual(["chatSend", "hello"]);
    expect($(target, "chat-user").textContent).toBe("hello");
    expect($(target, "chat-stop")).toBeTruthy();
    backend.chatEmit({ type: "turn_start", conversationId: "c1", provider: "anthropic", model: "stub-model" });
    backend.chatEmit({ type: "model_request", roundTrip: 1, tools: 3 });
    backend.chatEmit({ type: "text_delta", text: "Hel" });
    await settle();
    expect($(target, "chat-assistant").textContent).toBe("Hel");
    backend.chatEmit({ type: "text_delta", text: "lo **there**" });
    await settle();
    expect($(target, "chat-assistant").textContent).toBe("Hello there");
    expect($(target, "chat-assistant").querySelector("strong")?.textContent).toBe("there");
    backend.chatEmit({
      type: "turn_end",
      outcome: { status: "completed", answer: "Hello there" },
      roundTrips: 1,
      durationMs: 5,
      usage: { inputTokens: 1, outputTokens: 2 },
    });
    await settle();
    expect(target.querySelector("[data-testid=chat-stop]")).toBeNull();
    expect(target.querySelector("[data-testid=chat-send]")).toBeTruthy();
  });

  test("a tool call asks for approval, then shows its result, status and duration", async () => {
    const { backend, target } = await openChat();
    await sendMessage(target, "list the folder");
    backend.chatEmit({ type: "tool_call_start", callId: "t1", name: "mcp__demo__list_dir", arguments: { path: "." } });
    backend.chatEmit({ type: "approval_request", callId: "t1", name: "mcp__demo__list_dir", arguments: { path: "." }, readOnly: true });
    await settle();
    const card = $(target, "tool-card");
    expect(card.dataset.status).toBe("approval");
    expect($(card, "tool-card-args").textContent).toContain('"path": "."');
    $(card, "approve-once").click();
    await settle();
    expect(backend.calls).toContainEqual(["chatApprove", "t1", "allow_once"]);
    expect(target.querySelector("[data-testid=chat-approval]")).toBeNull();
    expect($(target, "tool-card").dataset.status).toBe("running");
    backend.chatEmit({
      type: "tool_call_end",
      callId: "t1",
      name: "mcp__demo__list_dir",
      arguments: { path: "." },
      status: "ok",
      durationMs: 7.5,
      error: null,
      output: "README.md\nsrc/",
      spilled: null,
    });
    await settle();
    expect($(target, "tool-card").dataset.status).toBe("ok");
    expect($(target, "tool-card-duration").textContent).toBe("7.5 ms");
    expect($(target, "tool-card-output").textContent).toBe("README.md\nsrc/");
  });

  test("Always allow and Deny answer with their decision; errors show on the card", async () => {
    const { backend, target } = await openChat();
    await sendMessage(target, "go");
    backend.chatEmit({ type: "approval_request", callId: "a", name: "x", arguments: {}, readOnly: false });
    backend.chatEmit({ type: "approval_request", callId: "b", name: "y", arguments: {}, readOnly: false });
    await settle();
    const [a, b] = target.querySelectorAll<HTMLElement>("[data-testid=tool-card]");
    $(a, "approve-always").click();
    $(b, "approve-deny").click();
    await settle();
    expect(backend.calls).toContainEqual(["chatApprove", "a", "allow_always"]);
    expect(backend.calls).toContainEqual(["chatApprove", "b", "deny"]);
    backend.chatEmit({ type: "tool_call_end", callId: "b", name: "y", arguments: {}, status: "denied", durationMs: 0, error: "denied by the user", output: "", spilled: null });
    await settle();
    expect(b.dataset.status).toBe("denied");
    expect($(b, "tool-card-error").textContent).toBe("denied by the user");
  });

  test("Stop asks the backend to stop; the turn ends stopped", async () => {
    const { backend, target } = await openChat();
    await sendMessage(target, "long job");
    $(target, "chat-stop").click();
    await settle();
    expect(backend.calls).toContainEqual(["chatStop"]);
    backend.chatEmit({ type: "turn_end", outcome: { status: "stopped" }, roundTrips: 1, durationMs: 5, usage: { inputTokens: 0, outputTokens: 0 } });
    await settle();
    expect($(target, "chat-notice").textContent).toBe("Stopped.");
    expect(target.querySelector("[data-testid=chat-stop]")).toBeNull();
  });

  test("an answer cut off at the token limit says so, in the core's words", async () => {
    const { backend, target } = await openChat();
    await sendMessage(target, "write a novel");
    backend.chatEmit({ type: "text_delta", text: "Once upon a" });
    const notice = "the answer was cut off at the output token limit (raise maxTokens)";
    backend.chatEmit({ type: "turn_end", outcome: { status: "cut_off", answer: "Once upon a", notice }, roundTrips: 1, durationMs: 5, usage: { inputTokens: 0, outputTokens: 0 } });
    await settle();
    expect(target.textContent).toContain("Once upon a");
    expect($(target, "chat-notice").textContent).toBe("The answer was cut off at the output token limit (raise maxTokens)");
  });

  test("model and tool output with HTML stays text", async () => {
    const { backend, target } = await openChat();
    await sendMessage(target, "<b>hi</b>");
    const evil = '<script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2"> [x](javascript:alert(1))';
    backend.chatEmit({ type: "text_delta", text: evil });
    backend.chatEmit({ type: "tool_call_end", callId: "t", name: "n", arguments: { q: "<img src=x onerror=alert(1)>" }, status: "ok", durationMs: 1, error: null, output: evil, spilled: null });
    await settle();
    for (const sel of ["script", "img", "b", "a"]) expect(target.querySelector(sel)).toBeNull();
    expect($(target, "chat-user").textContent).toBe("<b>hi</b>");
    expect($(target, "chat-assistant").textContent).toContain("<script>window.__pwned = 1</script>");
    expect($(target, "tool-card-output").textContent).toBe(evil);
    expect((globalThis as { __pwned?: number }).__pwned).toBeUndefined();
  });

  test("http links render as links and open through the backend", async () => {
    const { backend, target } = await openChat();
    await sendMessage(target, "docs?");
    backend.chatEmit({ type: "text_delta", text: "See [the docs](https://example.com/docs)." });
    await settle();
    const a = target.querySelector("a")!;
    expect(a.getAttribute("href")).toBe("https://example.com/docs");
    a.click();
    await settle();
    expect(backend.calls).toContainEqual(["openUrl", "https://example.com/docs"]);
  });

  test("reopening shows the saved conversation", async () => {
    const { backend, app } = setup();
    backend.chat.history = [
      { kind: "user", text: "earlier question" },
      { kind: "tool", callId: "t0", name: "mcp__demo__read_file", arguments: { path: "a" }, output: "content", isError: false },
      { kind: "assistant", text: "earlier `answer`" },
    ];
    const r = render(ChatPane, {}, app);
    cleanups.push(r.destroy);
    await settle();
    expect($(r.target, "chat-user").textContent).toBe("earlier question");
    expect($(r.target, "tool-card").dataset.status).toBe("ok");
    expect($(r.target, "chat-assistant").querySelector("code")?.textContent).toBe("answer");
  });

  test("reopened during a turn: the calls waiting for the user show as approval cards", async () => {
    const { backend, app } = setup();
    backend.chat = {
      ...backend.chat,
      busy: true,
      history: [{ kind: "user", text: "read both" }],
      pending: [
        { callId: "p1", name: "mcp__demo__read_file", arguments: { path: "a" }, readOnly: true },
        { callId: "p2", name: "mcp__demo__read_file", arguments: { path: "b" }, readOnly: true },
      ],
    };
    const r = render(ChatPane, {}, app);
    cleanups.push(r.destroy);
    await settle();
    const cards = [...r.target.querySelectorAll<HTMLElement>("[data-testid=tool-card]")];
    expect(cards.map((c) => c.dataset.status)).toEqual(["approval", "approval"]);
    $(cards[1], "approve-once").click();
    await settle();
    expect(backend.calls).toContainEqual(["chatApprove", "p2", "allow_once"]);
  });

  test("without a provider: says what to set, and sending reports it", async () => {
    const { backend, app } = setup();
    backend.chat = { provider: null, model: null, error: "no model provider is configured: set HARNESS9_PROVIDER", busy: false, conversationId: null, history: [], pending: [] };
    const r = render(ChatPane, {}, app);
    cleanups.push(r.destroy);
    await settle();
    expect($(r.target, "chat-not-configured").textContent).toContain("set HARNESS9_PROVIDER");
    expect($(r.target, "chat-provider").textContent).toContain("no model provider");
    backend.fail.chatSend = new BackendError("not-configured", "no model provider is configured: set HARNESS9_PROVIDER");
    await sendMessage(r.target, "hi");
    expect($(r.target, "chat-not-configured")).toBeTruthy();
    expect(r.target.querySelector("[data-testid=chat-stop]")).toBeNull();
  });
});
