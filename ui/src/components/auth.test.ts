// Signing in to remote servers: the chip's button, the server panel's progress, account
// and Sign out, against the mock backend (happy-dom).

import { afterEach, describe, expect, test } from "vitest";
import { flushSync } from "svelte";
import StatusBar from "./StatusBar.svelte";
import ServerPanel from "./ServerPanel.svelte";
import type { ServerState, ServerStatus, SignedIn } from "../lib/bindings";
import { $, render, settle, setup } from "../test/render";

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

const ACCOUNT: SignedIn = { issuer: "https://auth.example.com", scopes: ["read", "write"], expiresAt: null, refreshable: true, keptIn: "the system keychain (Secret Service)" };

function remote(state: ServerState, signedIn: SignedIn | null = null): ServerStatus {
  return { name: "remote", transport: "http", scope: "project", target: "https://mcp.example.com/mcp", state, restart: null, heldTools: 0, signedIn };
}

const NEEDS_AUTH: ServerState = { status: "needs-auth", reason: "the server requires sign-in (HTTP 401)" };
const SIGNING_IN: ServerState = { status: "starting", phase: "signing-in" };
const CONNECTED: ServerState = { status: "connected", tools: 2, protocolVersion: "2025-11-25", serverName: "remote", serverVersion: "1", era: "legacy" };

const text = (el: Element) => el.textContent?.replace(/\s+/g, " ").trim();

describe("signing in from the status bar", () => {
  test("a needs-auth chip says so and has a Sign in button that calls the backend", async () => {
    const { app, backend } = setup();
    await app.init();
    const r = render(StatusBar, {}, app);
    cleanups.push(r.destroy);
    backend.pushStatus({ revision: 0, servers: [remote(NEEDS_AUTH)], configError: null });
    flushSync();
    expect(text($(r.target, "chip-remote"))).toBe("! remote needs sign-in");
    expect($(r.target, "chip-remote").title).toBe("remote: needs you to sign in (the server requires sign-in (HTTP 401))");
    $(r.target, "sign-in-remote").click();
    await settle();
    expect(backend.calls).toContainEqual(["signIn", "remote"]);
    // While the browser is open the button is gone; the core shows the signing-in phase.
    expect(r.target.querySelector("[data-testid=sign-in-remote]")).toBeNull();
    backend.pushStatus({ revision: 0, servers: [remote(SIGNING_IN)], configError: null });
    flushSync();
    expect(text($(r.target, "chip-remote"))).toBe("○ remote signing in");

    backend.finishSignIn?.();
    backend.pushStatus({ revision: 0, servers: [remote(CONNECTED, ACCOUNT)], configError: null });
    await settle();
    expect(app.notices.map((n) => [n.kind, n.text])).toEqual([["info", "Signed in to remote (https://auth.example.com)"]]);
    expect(text($(r.target, "chip-remote"))).toBe("● remote 2");
  });

  test("a failed sign-in is reported and the button comes back", async () => {
    const { app, backend } = setup();
    backend.signInResult = "the authorization server does not support PKCE with S256";
    await app.init();
    const r = render(StatusBar, {}, app);
    cleanups.push(r.destroy);
    backend.pushStatus({ revision: 0, servers: [remote(NEEDS_AUTH)], configError: null });
    flushSync();
    $(r.target, "sign-in-remote").click();
    await settle();
    backend.finishSignIn?.();
    await settle();
    expect(app.notices.map((n) => [n.kind, n.text])).toEqual([
      ["error", "Could not sign in to remote: the authorization server does not support PKCE with S256"],
    ]);
    expect($(r.target, "sign-in-remote").textContent).toBe("Sign in");
  });
});

describe("signing in from the server panel", () => {
  test("the reason, Sign in, progress while the browser is open, and Cancel stops the server", async () => {
    const { app, backend } = setup();
    backend.status = { revision: 0, servers: [remote(NEEDS_AUTH)], configError: null };
    await app.init();
    const r = render(ServerPanel, { name: "remote" }, app);
    cleanups.push(r.destroy);
    await settle();
    expect(text($(r.target, "needs-auth"))).toBe("Sign-in needed: the server requires sign-in (HTTP 401)");
    $(r.target, "panel-sign-in").click();
    await settle();
    expect(backend.calls).toContainEqual(["signIn", "remote"]);
    expect(text($(r.target, "signing-in"))).toBe("Waiting for you to sign in in the browser… Cancel");
    expect(r.target.querySelector("[data-testid=panel-sign-in]")).toBeNull();
    $(r.target, "sign-in-cancel").click();
    await settle();
    expect(backend.calls).toContainEqual(["stopServer", "remote"]);
    expect(r.target.querySelector("[data-testid=signing-in]")).toBeNull();
    // The cancelled sign-in ends without an error notice.
    backend.signInResult = "cancelled";
    backend.finishSignIn?.();
    await settle();
    expect(app.notices).toEqual([]);
  });

  test("the signing-in phase from the core shows the same progress", async () => {
    const { app, backend } = setup();
    backend.status = { revision: 0, servers: [remote(SIGNING_IN)], configError: null };
    await app.init();
    const r = render(ServerPanel, { name: "remote" }, app);
    cleanups.push(r.destroy);
    await settle();
    expect(text($(r.target, "signing-in"))).toBe("Waiting for you to sign in in the browser… Cancel");
  });

  test("once signed in: the issuer and Sign out", async () => {
    const { app, backend } = setup();
    backend.status = { revision: 0, servers: [remote(CONNECTED, { ...ACCOUNT, expiresAt: Math.floor((Date.now() + 45 * 60_000 + 30_000) / 1000) })], configError: null };
    await app.init();
    const r = render(ServerPanel, { name: "remote" }, app);
    cleanups.push(r.destroy);
    await settle();
    expect(text($(r.target, "signed-in"))).toBe("Signed in to https://auth.example.com · read write · expires in 45 min · renews itself");
    expect(text($(r.target, "kept-in"))).toBe("kept in the system keychain (Secret Service)");
    expect(r.target.querySelector("[data-testid=panel-sign-in]")).toBeNull();
    $(r.target, "sign-out").click();
    await settle();
    expect(backend.calls).toContainEqual(["signOut", "remote"]);
    expect(app.notices.map((n) => n.text)).toEqual(["Signed out of remote"]);
  });
});
