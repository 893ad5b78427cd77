// The model provider section and the tool permission rules of the settings pane, against
// the mock backend: the key is handed to the backend once and never shown back.

import { afterEach, describe, expect, test } from "vitest";
import { flushSync } from "svelte";
import ProviderSettings from "./ProviderSettings.svelte";
import PermissionRules from "./PermissionRules.svelte";
import { $, render, settle, setup, type } from "../test/render";

const cleanups: (() => void)[] = [];
afterEach(() => {
  while (cleanups.length) cleanups.pop()!();
});

function choose(el: HTMLElement, value: string) {
  (el as HTMLSelectElement).value = value;
  el.dispatchEvent(new Event("change", { bubbles: true }));
  flushSync();
}

function check(el: HTMLElement) {
  (el as HTMLInputElement).checked = true;
  el.dispatchEvent(new Event("change", { bubbles: true }));
  flushSync();
}

describe("provider settings", () => {
  test("a key typed for the keychain is saved, never shown back, and the connection is tested", async () => {
    const { app, backend } = setup();
    await app.init();
    const r = render(ProviderSettings, {}, app);
    cleanups.push(r.destroy);
    await settle();
    expect($(r.target, "key-state").textContent).toContain("missing");
    choose($(r.target, "provider-kind"), "openai");
    expect(($(r.target, "provider-env-var") as HTMLInputElement).value).toBe("OPENAI_API_KEY");
    type($(r.target, "provider-model") as HTMLInputElement, "gpt-x");
    type($(r.target, "provider-url") as HTMLInputElement, "http://localhost:11434/v1");
    check($(r.target, "key-source-keychain"));
    const keyInput = $(r.target, "provider-key") as HTMLInputElement;
    expect(keyInput.type).toBe("password");
    type(keyInput, "sk-typed-secret");
    $(r.target, "provider-save").click();
    await settle();
    expect(backend.calls).toContainEqual([
      "saveProviderSettings",
      {
        provider: "openai",
        model: "gpt-x",
        baseUrl: "http://localhost:11434/v1",
        keySource: { type: "keychain" },
        apiKey: "<key>",
      },
    ]);
    expect($(r.target, "key-state").textContent).toContain("set in keychain");
    expect($(r.target, "provider-saved").textContent).toContain("next message");
    // The field is empty again and the page holds the key nowhere.
    expect(($(r.target, "provider-key") as HTMLInputElement).value).toBe("");
    expect(r.target.innerHTML).not.toContain("sk-typed-secret");

    backend.connection = { ok: false, message: "the key was refused (401: invalid x-api-key); check the API key", elapsedMs: 30 };
    $(r.target, "provider-test").click();
    await settle();
    expect($(r.target, "provider-check").textContent).toContain("✗ the key was refused (401");
    expect(backend.calls.filter((c) => c[0] === "testProvider")).toHaveLength(1);

    $(r.target, "provider-forget").click();
    await settle();
    expect(backend.calls).toContainEqual(["forgetProviderKey", "openai"]);
    expect($(r.target, "key-state").textContent).toContain("missing");
  });

  test("a key from an environment variable says which", async () => {
    const { app, backend } = setup();
    backend.provider = { ...backend.provider, key: { state: "env", var: "ANTHROPIC_API_KEY" }, keyText: "from $ANTHROPIC_API_KEY", overriddenBy: ["HARNESS9_MODEL"] };
    await app.init();
    const r = render(ProviderSettings, {}, app);
    cleanups.push(r.destroy);
    await settle();
    expect($(r.target, "key-state").textContent).toContain("from $ANTHROPIC_API_KEY");
    expect($(r.target, "provider-overridden").textContent).toContain("HARNESS9_MODEL");
    expect(r.target.querySelector('[data-testid="provider-key"]')).toBeNull();
  });
});

describe("permission rules", () => {
  test("listed, changed, revoked and added", async () => {
    const { app, backend } = setup();
    backend.rules = [
      { tool: "mcp__ev__rm", permission: "allow" },
      { tool: "mcp__fs__*", permission: "deny" },
    ];
    await app.init();
    const r = render(PermissionRules, {}, app);
    cleanups.push(r.destroy);
    await settle();
    const shown = () =>
      [...r.target.querySelectorAll('[data-testid="permission-rule"]')].map(
        (li) => `${li.querySelector(".mono")!.textContent} ${(li.querySelector("select") as HTMLSelectElement).value}`,
      );
    expect(shown()).toEqual(["mcp__ev__rm allow", "mcp__fs__* deny"]);
    choose(r.target.querySelector('[aria-label="Decision for mcp__ev__rm"]') as HTMLElement, "ask");
    await settle();
    expect(backend.calls).toContainEqual(["setPermission", "mcp__ev__rm", "ask"]);
    expect(shown()).toEqual(["mcp__ev__rm ask", "mcp__fs__* deny"]);
    (r.target.querySelector('[aria-label="Revoke mcp__fs__*"]') as HTMLButtonElement).click();
    await settle();
    expect(shown()).toEqual(["mcp__ev__rm ask"]);
    type($(r.target, "rule-tool") as HTMLInputElement, "mcp__git__*");
    choose($(r.target, "rule-decision"), "deny");
    $(r.target, "rule-add").click();
    await settle();
    expect(backend.calls).toContainEqual(["setPermission", "mcp__git__*", "deny"]);
    expect(shown()).toEqual(["mcp__ev__rm ask", "mcp__git__* deny"]);
    expect(($(r.target, "rule-tool") as HTMLInputElement).value).toBe("");
  });
});
