// What servers ask the user: the dialog names the server, shows the core's form and the
// core's messages for fields that do not fit, queues several asks, falls back to JSON,
// gates URL mode, and approves, refuses or reviews sampling.

import { afterEach, describe, expect, test } from "vitest";
import { flushSync } from "svelte";
import AskDialog from "./AskDialog.svelte";
import type { AskView } from "../lib/bindings";
import { $, render, settle, setup, type } from "../test/render";

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

const text = (el: Element) => el.textContent?.replace(/\s+/g, " ").trim();

const FORM: AskView = {
  id: 1,
  server: "profile-srv",
  request: {
    kind: "form",
    message: "Tell us about you",
    schema: {
      type: "object",
      properties: {
        name: { type: "string", default: "Ada" },
        email: { type: "string", format: "email" },
        plan: { type: "string", oneOf: [{ const: "free", title: "Free" }, { const: "pro", title: "Pro" }], default: "pro" },
        news: { type: "boolean" },
      },
      required: ["name", "email"],
    },
    // The core's form of that schema.
    form: {
      fields: [
        { name: "name", label: "name", description: null, required: true, kind: { type: "string", format: null, minLength: null, maxLength: null } },
        { name: "email", label: "email", description: null, required: true, kind: { type: "string", format: "email", minLength: null, maxLength: null } },
        { name: "plan", label: "plan", description: null, required: false, kind: { type: "enum", choices: [{ value: "free", label: "Free" }, { value: "pro", label: "Pro" }] } },
        { name: "news", label: "news", description: null, required: false, kind: { type: "boolean" } },
      ],
      initial: { name: "Ada", email: "", plan: "pro", news: false },
    },
  },
};
const URL_ASK: AskView = {
  id: 2,
  server: "pay",
  request: { kind: "url", message: "Confirm the payment", url: "https://pay.example.com/confirm?x=1", domain: "pay.example.com" },
};
const ODD: AskView = {
  id: 3,
  server: "odd",
  request: { kind: "form", message: "Nested", schema: { type: "object", properties: { who: { type: "object", properties: {} }, n: { type: "integer", default: 3 } } }, form: null },
};
const SAMPLING: AskView = {
  id: 4,
  server: "thinker",
  request: {
    kind: "sampling",
    messages: [{ role: "user", content: { type: "text", text: "Sum up" } }],
    systemPrompt: "Be brief",
    maxTokens: 100,
    tools: [{ name: "weather", description: "Weather for a city", inputSchema: { type: "object" } }],
    modelPreferences: null,
  },
};
const REVIEW: AskView = {
  id: 5,
  server: "thinker",
  request: {
    kind: "samplingReview",
    messages: [{ role: "user", content: { type: "text", text: "Sum up" } }],
    systemPrompt: null,
    maxTokens: 100,
    tools: null,
    modelPreferences: null,
    model: "stub-model",
    content: [
      { type: "text", text: "Calling the tool." },
      { type: "tool_use", id: "t1", name: "weather", input: { city: "Paris" } },
    ],
    stopReason: "toolUse",
  },
};

async function open(asks: AskView[]) {
  const { app, backend } = setup();
  backend.asks = asks;
  const r = render(AskDialog, {}, app);
  cleanups.push(r.destroy);
  await settle();
  return { r, backend };
}

describe("the ask dialog", () => {
  test("nothing shows without asks, and an ask arriving opens the dialog", async () => {
    const { r, backend } = await open([]);
    expect(r.target.querySelector('[data-testid="ask-dialog"]')).toBeNull();
    backend.pushAsks([FORM]);
    flushSync();
    expect(text($(r.target, "ask-server"))).toBe("profile-srv");
  });

  test("a form names the server, pre-fills defaults, marks required, validates and accepts", async () => {
    const { r, backend } = await open([FORM, URL_ASK]);
    expect(text($(r.target, "ask-dialog").querySelector("h2")!)).toBe("profile-srv asks for input");
    expect(text($(r.target, "ask-message"))).toBe("Tell us about you");
    expect(text($(r.target, "ask-more"))).toBe("1 more waiting");
    const name = $(r.target, "ask-field-name").querySelector("input")!;
    expect(name.value).toBe("Ada");
    expect($(r.target, "ask-field-name").querySelector(".req")).not.toBeNull();
    expect($(r.target, "ask-field-news").querySelector(".req")).toBeNull();
    expect($(r.target, "ask-field-plan").querySelector("select")!.value).toBe("pro");
    // The core checks the fields; what does not fit comes back and the ask stays.
    backend.answerErrors = { email: "Required" };
    $(r.target, "ask-accept").click();
    await settle();
    expect(text($(r.target, "ask-error-email"))).toBe("Required");
    expect(text($(r.target, "ask-server"))).toBe("profile-srv");
    type($(r.target, "ask-field-email").querySelector("input")!, "ada@example.com");
    $(r.target, "ask-accept").click();
    await settle();
    expect(backend.calls.filter((c) => c[0] === "answerAsk")).toEqual([
      ["answerAsk", 1, { action: "fill", values: { name: "Ada", email: "", plan: "pro", news: false } }],
      ["answerAsk", 1, { action: "fill", values: { name: "Ada", email: "ada@example.com", plan: "pro", news: false } }],
    ]);
    // The next ask in the queue follows.
    expect(text($(r.target, "ask-server"))).toBe("pay");
  });

  test("decline and cancel are the spec's actions", async () => {
    const { r, backend } = await open([FORM, ODD]);
    $(r.target, "ask-decline").click();
    await settle();
    $(r.target, "ask-cancel").click();
    await settle();
    expect(backend.calls.filter((c) => c[0] === "answerAsk")).toEqual([
      ["answerAsk", 1, { action: "decline" }],
      ["answerAsk", 3, { action: "cancel" }],
    ]);
    expect(r.target.querySelector('[data-testid="ask-dialog"]')).toBeNull();
  });

  test("a schema the form cannot show becomes a JSON editor that checks its text", async () => {
    const { r, backend } = await open([ODD]);
    const editor = $(r.target, "ask-json") as HTMLTextAreaElement;
    expect(JSON.parse(editor.value)).toEqual({ n: 3 });
    type(editor, "[1, 2]");
    $(r.target, "ask-accept").click();
    flushSync();
    expect(text($(r.target, "ask-json-error"))).toBe('The answer must be one JSON object, like {"name": "Ada"}');
    type(editor, '{"who": {"a": 1}}');
    $(r.target, "ask-accept").click();
    await settle();
    expect(backend.calls).toContainEqual(["answerAsk", 3, { action: "accept", content: { who: { a: 1 } } }]);
  });

  test("URL mode shows the full domain and the URL, and opens only after the user agrees", async () => {
    const { r, backend } = await open([URL_ASK]);
    expect(text($(r.target, "ask-domain"))).toBe("pay.example.com");
    expect(text($(r.target, "ask-url"))).toBe("https://pay.example.com/confirm?x=1");
    const openBtn = $(r.target, "ask-accept") as HTMLButtonElement;
    expect(text(openBtn)).toBe("Open");
    expect(openBtn.disabled).toBe(true);
    $(r.target, "ask-agree").click();
    flushSync();
    expect(openBtn.disabled).toBe(false);
    openBtn.click();
    await settle();
    expect(backend.calls).toContainEqual(["answerAsk", 2, { action: "accept", content: null }]);
  });

  test("a sampling request shows what the model gets and is approved, always allowed or refused", async () => {
    const { r, backend } = await open([SAMPLING]);
    expect(text($(r.target, "ask-dialog").querySelector("h2")!)).toBe("thinker asks to use your model");
    expect(text($(r.target, "ask-messages"))).toBe("user: Sum up");
    expect(text($(r.target, "ask-system-prompt"))).toBe("Be brief");
    expect(text($(r.target, "ask-sampling-tools"))).toBe("weather — Weather for a city");
    expect(text($(r.target, "ask-sampling-limit"))).toBe("Up to 100 tokens");
    expect(r.target.querySelector('[data-testid="ask-accept"]')).toBeNull();
    $(r.target, "ask-review").click();
    flushSync();
    $(r.target, "ask-approve").click();
    await settle();
    expect(backend.calls).toContainEqual(["answerAsk", 4, { action: "approve", always: false, review: true }]);
    backend.pushAsks([SAMPLING]);
    flushSync();
    $(r.target, "ask-always").click();
    await settle();
    expect(backend.calls).toContainEqual(["answerAsk", 4, { action: "approve", always: true, review: false }]);
    backend.pushAsks([SAMPLING]);
    flushSync();
    $(r.target, "ask-deny").click();
    await settle();
    expect(backend.calls).toContainEqual(["answerAsk", 4, { action: "decline" }]);
  });

  test("the model's answer is shown for review and sent", async () => {
    const { r, backend } = await open([REVIEW]);
    expect(text($(r.target, "ask-dialog").querySelector("h2")!)).toBe("thinker — send the model's answer?");
    const parts = [...$(r.target, "ask-sampling-answer").querySelectorAll("p")].map(text);
    expect(parts).toEqual(["Calling the tool.", 'calls tool weather with {"city":"Paris"}']);
    $(r.target, "ask-send").click();
    await settle();
    expect(backend.calls).toContainEqual(["answerAsk", 5, { action: "accept", content: null }]);
  });
});
