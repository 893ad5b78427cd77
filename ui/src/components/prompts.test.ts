// The chat's prompt picker and prompt form against the mock backend (happy-dom): `/` and
// the Prompts button open the picker, typing filters it, a prompt with arguments opens a
// form whose fields complete from the server, and Send starts the turn with its messages.

import { afterEach, describe, expect, test } from "vitest";
import ChatPane from "./ChatPane.svelte";
import { $, render, settle, setup, type } from "../test/render";
import { filterPrompts, missingArguments } from "../lib/prompts.svelte";
import type { PromptEntry } from "../lib/bindings";

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

const PROMPTS: PromptEntry[] = [
  {
    server: "ev",
    name: "completable-prompt",
    title: "Team Management",
    description: "First argument choice narrows values for second argument.",
    arguments: [
      { name: "department", title: null, description: "Choose the department.", required: true },
      { name: "name", title: null, description: "Choose a team member.", required: true },
    ],
  },
  { server: "ev", name: "simple-prompt", title: "Simple Prompt", description: "A prompt with no arguments", arguments: [] },
  { server: "py", name: "review", title: null, description: "Review a file", arguments: [{ name: "path", title: null, description: null, required: false }] },
];

const TEAMS: Record<string, string[]> = { Engineering: ["Alice", "Bob", "Charlie"], Sales: ["David", "Eve"] };

async function openChat() {
  const { backend, app } = setup();
  backend.prompts = PROMPTS;
  backend.completions = (_s, _p, argument, value, context) =>
    (argument === "department" ? Object.keys(TEAMS) : (TEAMS[context.department] ?? [])).filter((v) => v.startsWith(value));
  const r = render(ChatPane, {}, app);
  cleanups.push(r.destroy);
  await settle();
  return { backend, app, target: r.target };
}

function keydown(el: HTMLElement, key: string) {
  el.dispatchEvent(new KeyboardEvent("keydown", { key, bubbles: true, cancelable: true }));
}

function options(target: HTMLElement): string[] {
  return [...target.querySelectorAll<HTMLElement>("[data-testid=prompt-option]")].map((o) => o.dataset.key ?? "");
}

describe("prompt filtering", () => {
  test("matches name, title and description; prefix matches first", () => {
    expect(filterPrompts(PROMPTS, "").map((p) => p.name)).toEqual(["completable-prompt", "simple-prompt", "review"]);
    expect(filterPrompts(PROMPTS, "team").map((p) => p.name)).toEqual(["completable-prompt"]);
    expect(filterPrompts(PROMPTS, "py:").map((p) => p.name)).toEqual(["review"]);
    expect(filterPrompts(PROMPTS, "s").map((p) => p.name)).toEqual(["simple-prompt", "completable-prompt"]);
    expect(missingArguments(PROMPTS[0], { department: "Sales", name: " " })).toEqual(["name"]);
  });
});

describe("ChatPane prompts", () => {
  test("typing / lists the prompts, typing filters, Escape closes", async () => {
    const { target } = await openChat();
    const input = $(target, "chat-input") as HTMLTextAreaElement;
    type(input, "/");
    await settle();
    expect(options(target)).toEqual(["ev:completable-prompt", "ev:simple-prompt", "py:review"]);
    expect($(target, "prompt-picker").textContent).toContain("Team Management");
    expect($(target, "prompt-picker").textContent).toContain("First argument choice narrows values");
    type(input, "/rev");
    await settle();
    expect(options(target)).toEqual(["py:review"]);
    type(input, "/nothing-like-it");
    await settle();
    expect($(target, "prompt-picker-empty")).toBeTruthy();
    keydown(input, "Escape");
    await settle();
    expect(target.querySelector("[data-testid=prompt-picker]")).toBeNull();
  });

  test("a prompt with arguments opens a form that completes and sends the prompt", async () => {
    const { backend, target } = await openChat();
    $(target, "chat-prompts").click();
    await settle();
    const input = $(target, "chat-input") as HTMLTextAreaElement;
    expect(input.value).toBe("/");
    keydown(input, "Enter");
    await settle();
    const form = $(target, "prompt-form");
    expect(form.textContent).toContain("Team Management");
    expect(form.querySelectorAll("[data-testid=prompt-required]").length).toBe(2);
    expect(($(form, "prompt-send") as HTMLButtonElement).disabled).toBe(true);
    expect($(form, "prompt-missing").textContent).toContain("department, name");

    const dept = $(form, "prompt-arg-department") as HTMLInputElement;
    dept.dispatchEvent(new FocusEvent("focus"));
    type(dept, "E");
    await settle(250);
    expect(backend.calls).toContainEqual(["completePromptArgument", "ev", "completable-prompt", "department", "E", {}]);
    const suggestions = [...form.querySelectorAll("[data-testid=prompt-suggestion]")].map((b) => b.textContent);
    expect(suggestions).toEqual(["Engineering"]);
    (form.querySelector("[data-testid=prompt-suggestion]") as HTMLElement).click();
    await settle();
    expect(dept.value).toBe("Engineering");

    const name = $(form, "prompt-arg-name") as HTMLInputElement;
    name.dispatchEvent(new FocusEvent("focus"));
    await settle();
    // The department goes along as context: the server narrows the names.
    expect(backend.calls).toContainEqual(["completePromptArgument", "ev", "completable-prompt", "name", "", { department: "Engineering" }]);
    expect([...form.querySelectorAll("[data-testid=prompt-suggestion]")].map((b) => b.textContent)).toEqual(["Alice", "Bob", "Charlie"]);
    type(name, "Bo");
    await settle(250);
    expect([...form.querySelectorAll("[data-testid=prompt-suggestion]")].map((b) => b.textContent)).toEqual(["Bob"]);
    (form.querySelector("[data-testid=prompt-suggestion]") as HTMLElement).click();
    await settle();

    backend.promptOpening = () => [{ kind: "user", text: "Please promote Bob to the head of the Engineering team." }];
    $(form, "prompt-send").click();
    await settle();
    expect(backend.calls).toContainEqual(["chatSendPrompt", "ev", "completable-prompt", { department: "Engineering", name: "Bob" }]);
    expect(target.querySelector("[data-testid=prompt-form]")).toBeNull();
    expect($(target, "chat-user").textContent).toBe("Please promote Bob to the head of the Engineering team.");
    expect($(target, "chat-notice").textContent).toBe("Prompt Team Management from ev");
    expect($(target, "chat-stop")).toBeTruthy();
    backend.chatEmit({ type: "text_delta", text: "Done." });
    await settle();
    expect($(target, "chat-assistant").textContent).toBe("Done.");
  });

  test("a prompt without arguments is sent when chosen; errors are shown", async () => {
    const { backend, target } = await openChat();
    const input = $(target, "chat-input") as HTMLTextAreaElement;
    type(input, "/simple");
    await settle();
    (target.querySelector("[data-testid=prompt-option]") as HTMLElement).click();
    await settle();
    expect(backend.calls).toContainEqual(["chatSendPrompt", "ev", "simple-prompt", {}]);
    expect(input.value).toBe("");
  });
});
