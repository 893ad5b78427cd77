// tauri.ts and the fake's IPC adapter (ui/e2e/mock-ipc.ts) are each other's inverse: every
// Backend method called through tauri.ts reaches the same MockBackend method with the same
// arguments, and every event comes out of tauri.ts as it went in. This keeps the command
// and argument names of the two in step.

import { afterAll, describe, expect, test } from "vitest";
import { clearMocks } from "@tauri-apps/api/mocks";
import { install } from "../../../e2e/mock-ipc";
import { MockBackend } from "./mock";
import { tauriBackend } from "./tauri";
import type { Backend } from "./types";

const fake = new MockBackend();
const seen: unknown[][] = [];
// Records every method the adapter calls, with its arguments, before the fake answers.
const spy = new Proxy(fake, {
  get(target, key, receiver) {
    const v = Reflect.get(target, key, receiver);
    if (typeof v !== "function" || typeof key !== "string") return v;
    return (...args: unknown[]) => {
      seen.push([key, ...args]);
      return v.apply(target, args);
    };
  },
});
install(spy, fake.project!.path);
afterAll(() => clearMocks());

type Method = keyof Backend;
const methods = Object.keys(tauriBackend) as Method[];
/** Arguments by method: a placeholder string per parameter unless set here. */
const ARGS: Partial<Record<Method, unknown[]>> = {
  approve: [[{ name: "demo", fingerprint: "fp" }], true],
  setServerDisabled: ["demo", false],
  acceptTools: ["demo", ["t"]],
  callTool: ["demo", "t", { a: 1 }, () => {}],
  followLog: ["demo", () => {}],
  chatSend: ["hi", () => {}, [{ server: "demo", uri: "file:///a" }]],
  chatSendPrompt: ["demo", "p", { x: "1" }, () => {}],
  completePromptArgument: ["demo", "p", "x", "1", { y: "2" }],
  completeResource: ["demo", "t://{id}", "id", "1", { y: "2" }],
  subscribeResource: ["demo", "file:///a", true],
  cancelToolCall: [7],
  reportPainted: [12],
  answerAsk: [3, { action: "decline" }],
  sendPending: [4, () => {}],
  saveConfig: ["{}", "h0", "user"],
  editConfig: ["{}", { op: "removeServer", name: "demo" }],
  searchServers: ["git", 20],
  planBundle: ["/tmp/x.mcpb", "local"],
  pickPath: [true],
  previewInstall: [1, { A: "1" }],
  commitInstall: [1, { A: "1" }, "d0"],
};

describe("tauri.ts over the fake's IPC adapter", () => {
  test("every command reaches the fake's method of the same name with the same arguments", async () => {
    const sent: unknown[][] = [];
    const reached: unknown[][] = [];
    for (const m of methods.filter((m) => !/^on[A-Z]/.test(m))) {
      const args = ARGS[m] ?? Array.from({ length: (tauriBackend[m] as (...a: unknown[]) => unknown).length }, (_, i) => `arg${i}`);
      seen.length = 0;
      const answered = (tauriBackend[m] as (...a: unknown[]) => Promise<unknown>)(...args).catch(() => {});
      // A sign-in waits for the browser: look once the call is in.
      await Promise.race([answered, new Promise((r) => setTimeout(r, 20))]);
      fake.finishSignIn?.();
      // Callbacks cross as channels: the fake gets a function of the adapter's.
      sent.push([m, ...args.map((a) => (typeof a === "function" ? expect.any(Function) : a))]);
      reached.push(seen[0] ?? [m, "(nothing reached the fake)"]);
    }
    expect(reached).toEqual(sent);
  });

  test("every event arrives as it was sent, the project's unwrapped", async () => {
    const got: unknown[] = [];
    for (const m of methods.filter((m) => /^on[A-Z]/.test(m))) await (tauriBackend[m] as (cb: (v?: unknown) => void) => Promise<unknown>)((v) => got.push([m, v ?? null]));
    const status = { revision: 1, servers: [], configError: null };
    fake.statusEvents.emit(status);
    fake.toolEvents.emit(null);
    fake.configEvents.emit({ revision: 2, hash: "h2" });
    fake.projectEvents.emit(fake.project!);
    fake.menuEvents.emit("settings");
    fake.askEvents.emit([]);
    fake.resourceEvents.emit({ type: "listing-changed", server: "demo" });
    fake.bundleEvents.emit("/tmp/x.mcpb");
    fake.quitEvents.emit(null);
    await new Promise((r) => setTimeout(r, 10));
    expect(got).toEqual([
      ["onStatus", status],
      ["onToolsChanged", null],
      ["onConfigChanged", { revision: 2, hash: "h2" }],
      ["onProjectChanged", fake.project],
      ["onMenu", "settings"],
      ["onAsks", []],
      ["onResources", { type: "listing-changed", server: "demo" }],
      ["onBundle", "/tmp/x.mcpb"],
      ["onQuitting", null],
    ]);
  });
});
