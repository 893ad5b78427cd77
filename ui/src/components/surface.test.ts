// Titles, icons, tool annotations, the logging level select and the extra roots, against
// the mock backend.

import { afterEach, describe, expect, test } from "vitest";
import ServerPanel from "./ServerPanel.svelte";
import ToolDetail from "./ToolDetail.svelte";
import ExtraRoots from "./ExtraRoots.svelte";
import type { StatusSnapshot } from "../lib/bindings";
import type { FullTool } from "../lib/backend/mock";
import { $, render, settle, setup, type } from "../test/render";
import { BackendError } from "../lib/backend/types";

const cleanups: (() => void)[] = [];
afterEach(() => {
  while (cleanups.length) cleanups.pop()!();
});

const CONNECTED: StatusSnapshot = {
  revision: 0,
  servers: [
    {
      name: "ev",
      transport: "stdio",
      scope: "project",
      target: "everything stdio",
      state: { status: "connected", tools: 1, protocolVersion: "2025-11-25", serverName: "everything", serverVersion: "2", era: "legacy" },
      restart: null,
      heldTools: 0,
      signedIn: null,
    },
  ],
  configError: null,
};

const RM: FullTool = {
  name: "mcp__ev__rm",
  server: "ev",
  tool: "rm",
  description: "Removes a file.",
  inputSchema: { type: "object" },
  readOnly: false,
  title: "Remove a file",
  hasView: false,
  appOnly: false,
  hints: {
    readOnlyHint: null,
    destructiveHint: true,
    idempotentHint: null,
    openWorldHint: false,
    readOnly: false,
    destructive: true,
    idempotent: false,
    openWorld: false,
    marks: ["destructive"],
  },
  marks: ["destructive"],
  icons: [
    { src: "javascript:alert(1)", mimeType: null, theme: null },
    { src: "https://example.com/raw.png", mimeType: "image/png", theme: null },
    { src: "data:image/png;base64,iVBORw0KGgo=", mimeType: "image/png", theme: null },
  ],
};

describe("server details", () => {
  test("title and icon beside the name; the level select sets and shows the level", async () => {
    const { app, backend } = setup();
    backend.status = CONNECTED;
    backend.details.ev = {
      name: "ev",
      title: "Everything Demo",
      icons: [{ src: "data:image/png;base64,AAAA", mimeType: "image/png", theme: null }],
      logging: true,
      logLevel: null,
    };
    await app.init();
    const r = render(ServerPanel, { name: "ev" }, app);
    cleanups.push(r.destroy);
    await settle();
    expect($(r.target, "server-title").textContent).toBe("Everything Demo");
    expect(($(r.target, "icon") as HTMLImageElement).getAttribute("src")).toBe("data:image/png;base64,AAAA");
    const select = $(r.target, "log-level") as HTMLSelectElement;
    expect(select.value).toBe("");
    select.value = "warning";
    select.dispatchEvent(new Event("change", { bubbles: true }));
    await settle();
    expect(backend.calls).toContainEqual(["setLogLevel", "ev", "warning"]);
    expect(($(r.target, "log-level") as HTMLSelectElement).value).toBe("warning");
  });

  test("no level select for a server without logging", async () => {
    const { app, backend } = setup();
    backend.status = CONNECTED;
    backend.details.ev = { name: "ev", title: null, icons: [], logging: false, logLevel: null };
    await app.init();
    const r = render(ServerPanel, { name: "ev" }, app);
    cleanups.push(r.destroy);
    await settle();
    expect(r.target.querySelector('[data-testid="log-level"]')).toBeNull();
    expect(r.target.querySelector('[data-testid="server-title"]')).toBeNull();
  });
});

describe("tool annotations", () => {
  test("the four hints with defaults, the title, and only a safe icon", async () => {
    const { app, backend } = setup();
    backend.status = CONNECTED;
    backend.tools = [RM];
    await app.init();
    const r = render(ToolDetail, { tool: RM, detail: RM }, app);
    cleanups.push(r.destroy);
    expect($(r.target, "tool-title").textContent).toBe("Remove a file");
    expect($(r.target, "hint-readOnlyHint").textContent).toBe("no · not set, the default");
    expect($(r.target, "hint-destructiveHint").textContent).toBe("yes");
    expect($(r.target, "hint-idempotentHint").textContent).toBe("no · not set, the default");
    expect($(r.target, "hint-openWorldHint").textContent).toBe("no");
    expect($(r.target, "destructive-note").textContent).toContain("asks you before each call");
    const imgs = [...r.target.querySelectorAll("img")].map((i) => i.getAttribute("src"));
    // Only what the backend handed over as data; never a URL the window would fetch.
    expect(imgs).toEqual(["data:image/png;base64,iVBORw0KGgo="]);
  });
});

describe("extra roots", () => {
  test("listed, added by path, refused with the backend's words, removed", async () => {
    const { app, backend } = setup();
    backend.roots = ["/home/user/lib"];
    await app.init();
    const r = render(ExtraRoots, {}, app);
    cleanups.push(r.destroy);
    await settle();
    const roots = () => [...r.target.querySelectorAll('[data-testid="extra-root"] .mono')].map((e) => e.textContent);
    expect(roots()).toEqual(["/home/user/lib"]);
    type($(r.target, "root-path") as HTMLInputElement, "/home/user/docs");
    $(r.target, "root-add").click();
    await settle();
    expect(roots()).toEqual(["/home/user/lib", "/home/user/docs"]);
    expect(($(r.target, "root-path") as HTMLInputElement).value).toBe("");
    type($(r.target, "root-path") as HTMLInputElement, "/home/user/docs");
    backend.fail.addExtraRoot = new BackendError("invalid-config", "/home/user/docs is already an extra root");
    $(r.target, "root-add").click();
    await settle();
    expect($(r.target, "root-error").textContent).toBe("/home/user/docs is already an extra root");
    (r.target.querySelector('[aria-label="Remove /home/user/lib"]') as HTMLButtonElement).click();
    await settle();
    expect(roots()).toEqual(["/home/user/docs"]);
    expect(backend.calls).toContainEqual(["removeExtraRoot", "/home/user/lib"]);
  });
});
