// Context cost in the server panel, Copy diagnostics and the About box (happy-dom, mock backend).

import { afterEach, describe, expect, test, vi } from "vitest";
import ServerPanel from "./ServerPanel.svelte";
import SupportTools from "./SupportTools.svelte";
import type { ServerStatus } from "../lib/bindings";
import { $, render, settle, setup } from "../test/render";

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
  vi.unstubAllGlobals();
});

const DEMO: ServerStatus = {
  name: "demo",
  transport: "stdio",
  scope: "project",
  target: "demo",
  state: { status: "connected", tools: 3, protocolVersion: "2025-11-25", serverName: "srv", serverVersion: "1", era: "legacy" },
  restart: null,
  heldTools: 0,
  signedIn: null,
};

const text = (el: Element) => el.textContent?.replace(/\s+/g, " ").trim();

describe("context cost", () => {
  test("the server panel shows its tokens, the total and the tool-search warning", async () => {
    const { app, backend } = setup();
    backend.status = { revision: 0, servers: [DEMO], configError: null };
    backend.context = {
      servers: { demo: { tools: 3, tokens: 458 } },
      totalTokens: 25_000,
      warning: "MCP tool definitions take about 25000 tokens: tool search takes over",
    };
    await app.init();
    const r = render(ServerPanel, { name: "demo" }, app);
    cleanups.push(r.destroy);
    await settle();
    expect(text($(r.target, "context-cost"))).toBe("~458 tokens (all servers: ~25000)");
    expect(text($(r.target, "context-warning"))).toBe("MCP tool definitions take about 25000 tokens: tool search takes over");
  });
});

describe("help in the settings pane", () => {
  test("Copy diagnostics puts the backend's report on the clipboard", async () => {
    const { app, backend } = setup();
    const writeText = vi.fn(async (_: string) => {});
    vi.stubGlobal("navigator", { ...navigator, clipboard: { writeText } });
    await app.init();
    const r = render(SupportTools, {}, app);
    cleanups.push(r.destroy);
    $(r.target, "copy-diagnostics").click();
    await settle();
    expect(backend.calls).toContainEqual(["diagnostics"]);
    expect(writeText).toHaveBeenCalledWith(backend.diagnosticsText);
    expect(text($(r.target, "diagnostics-note"))).toBe("Diagnostics copied to the clipboard.");
  });

  test("without a clipboard the text is shown to copy by hand", async () => {
    const { app, backend } = setup();
    vi.stubGlobal("navigator", { ...navigator, clipboard: { writeText: () => Promise.reject(new Error("denied")) } });
    await app.init();
    const r = render(SupportTools, {}, app);
    cleanups.push(r.destroy);
    $(r.target, "copy-diagnostics").click();
    await settle();
    expect(($(r.target, "diagnostics-text") as HTMLTextAreaElement).value).toBe(backend.diagnosticsText);
  });

  test("About shows the version and where things live; Close closes it", async () => {
    const { app } = setup();
    await app.init();
    const r = render(SupportTools, {}, app);
    cleanups.push(r.destroy);
    $(r.target, "open-about").click();
    await settle();
    const dialog = document.querySelector('[data-testid="about-dialog"]') as HTMLElement;
    expect(text(dialog.querySelector("h2")!)).toBe("harness9 0.0.0-mock");
    expect(text($(dialog, "about-places"))).toBe("Project servers (.mcp.json) /mock/project/.mcp.json");
    $(dialog, "about-close").click();
    await settle();
    expect(document.querySelector('[data-testid="about-dialog"]')).toBeNull();
  });
});
