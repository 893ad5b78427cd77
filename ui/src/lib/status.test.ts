import { describe, expect, test } from "vitest";
import type { ServerState, ServerStatus } from "./bindings";
import { chipInfo, summary } from "./status";

const server = (state: ServerState, restart: ServerStatus["restart"] = null): ServerStatus => ({
  name: "s",
  transport: "stdio",
  scope: "project",
  target: "s",
  state,
  restart,
  heldTools: 0,
  signedIn: null,
});

describe("chips", () => {
  test("every state has its mark and tone", () => {
    const got = [
      server({ status: "connected", tools: 4, protocolVersion: "2025-11-25", serverName: "x", serverVersion: "1", era: "legacy" }),
      server({ status: "starting", phase: "listing-tools" }),
      server({ status: "failed", reason: "boom", stderrTail: "" }),
      server({ status: "disabled" }),
      server({ status: "awaiting-approval" }),
      server({ status: "stopped" }),
    ].map((s) => {
      const c = chipInfo(s);
      return [c.mark, c.tone, c.label];
    });
    expect(got).toEqual([
      ["●", "ok", "4"],
      ["○", "warn", "listing tools"],
      ["✗", "err", "failed"],
      ["⊘", "off", "disabled"],
      ["?", "ask", "approve"],
      ["■", "off", "stopped"],
    ]);
  });

  test("a server waiting for sign-in asks, and says why", () => {
    const c = chipInfo(server({ status: "needs-auth", reason: "no token yet" }));
    expect([c.mark, c.tone, c.label, c.title]).toEqual(["!", "ask", "needs sign-in", "s: needs you to sign in (no token yet)"]);
    const w = chipInfo(server({ status: "starting", phase: "signing-in" }));
    expect([w.mark, w.tone, w.label, w.title]).toEqual(["○", "warn", "signing in", "s: waiting for you to sign in in the browser"]);
  });

  test("a crashed server shows its restart attempts", () => {
    const c = chipInfo(server({ status: "failed", reason: "exited", stderrTail: "" }, { attempt: 2, maxAttempts: 3, retryInMs: 2000, gaveUp: false }));
    expect(c.label).toBe("restarting");
    expect(c.title).toBe("s: failed: exited (restarting in 2 s (2/3))");
  });

  test("a server with held tools hints how many changed", () => {
    const c = chipInfo({ ...server({ status: "connected", tools: 3, protocolVersion: "", serverName: "", serverVersion: "", era: "legacy" }), heldTools: 2 });
    expect(c.label).toBe("3 · 2 changed");
    expect(c.title).toBe("s: connected, 3 tools; 2 changed since accepted, held back (review them in the tool list)");
  });

  test("summary counts connected servers and their tools", () => {
    expect(
      summary([
        server({ status: "connected", tools: 1, protocolVersion: "", serverName: "", serverVersion: "", era: "legacy" }),
        server({ status: "stopped" }),
      ]),
    ).toBe("1 of 2 connected · 1 tool");
  });
});
