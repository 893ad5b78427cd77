// The "Add server" dialog against the mock backend: search, pick, the plan's exact entry
// and its form (secrets as password fields, required marked, defaults filled), the install
// naming the digest of the entry shown; a bundle picked; an update's old and new entry; an
// entry's secrets shown as set or not, never their values.

import { afterEach, describe, expect, test } from "vitest";
import AddServer from "./AddServer.svelte";
import ServerSecrets from "./ServerSecrets.svelte";
import ServerUpdates from "./ServerUpdates.svelte";
import { $, render, settle, setup, type } from "../test/render";
import type { PlanView } from "../lib/bindings";
import { SEARCH_DELAY_MS } from "../lib/registry.svelte";
import { planWith, variable } from "../test/plans";

const cleanups: (() => void)[] = [];

/** Lets the dialog work until `ok` holds (each round lets timers of up to 50 ms run). */
async function until(ok: () => boolean, rounds = 100) {
  for (let i = 0; i < rounds && !ok(); i++) await settle(50);
  expect(ok()).toBe(true);
}
afterEach(() => {
  while (cleanups.length) cleanups.pop()!();
});

const REG = "http://127.0.0.1:9/";

const VARS = [variable("API_KEY", { required: true, secret: true, description: "Your key" }), variable("REGION", { required: true, default: "eu" })];

function view(over: Partial<PlanView["plan"]> = {}): PlanView {
  return { id: 7, plan: planWith(VARS, over), missing: ["API_KEY"] };
}

describe("the Add server dialog", () => {
  test("search, pick, fill the form, install exactly the entry shown", async () => {
    const { app, backend } = setup();
    await app.init();
    backend.registryHits = [
      { registry: REG, name: "io.github.acme/weather", title: "Weather", description: "Forecasts", version: "1.2.0", runs: ["npx", "https://weather.example/mcp"], status: "active" },
      { registry: "http://127.0.0.1:10/", name: "io.github.acme/tides", title: null, description: "Tides", version: "0.3.0", runs: ["uvx"], status: "active" },
    ];
    backend.versions["io.github.acme/weather"] = ["1.2.0", "1.1.0"];
    backend.installPlan = view();
    // The core fills the plan: here, the entry with the values in and a digest of its own.
    backend.preview = (a) => ({
      id: 7,
      plan: planWith(VARS, {
        entry: { command: "npx", args: ["-y", "weather@1.2.0"], env: { API_KEY: "${input:API_KEY}", REGION: a.REGION ?? "eu" } },
        digest: `d-${a.API_KEY ? "k" : ""}-${a.REGION}`,
      }),
      missing: a.API_KEY ? [] : ["API_KEY"],
    });
    app.install = {};
    const r = render(AddServer, {}, app);
    cleanups.push(r.destroy);
    await settle();
    // The dialog opens with every server listed, each labelled with its registry.
    expect(r.target.querySelectorAll("[data-testid=registry-hit]")).toHaveLength(2);
    type($(r.target, "registry-search") as HTMLInputElement, "weather");
    await settle(SEARCH_DELAY_MS + 20);
    const found = [...r.target.querySelectorAll<HTMLElement>("[data-testid=registry-hit]")];
    expect(found.map((h) => h.dataset.name)).toEqual(["io.github.acme/weather"]);
    expect(found[0].textContent).toContain("from 127.0.0.1:9");
    found[0].click();
    await settle(20);
    expect(backend.calls).toContainEqual([
      "planInstall",
      { name: "io.github.acme/weather", version: null, localName: null, scope: "local", choice: { kind: "auto" }, registry: REG },
    ]);
    expect($(r.target, "details-description").textContent).toBe("Forecasts");
    const versions = [...($(r.target, "details-version") as HTMLSelectElement).options].map((o) => o.textContent);
    expect(versions).toEqual(["latest (1.2.0)", "1.1.0"]);
    const ways = [...($(r.target, "details-way") as HTMLSelectElement).options].map((o) => o.value);
    expect(ways).toEqual(["auto", "npm", "remote"]);

    const key = r.target.querySelector<HTMLInputElement>("[data-field=API_KEY]")!;
    expect(key.type).toBe("password");
    expect(r.target.querySelector<HTMLInputElement>("[data-field=REGION]")!.value).toBe("eu");
    expect(r.target.querySelectorAll(".req")).toHaveLength(2);
    expect($(r.target, "install-missing").textContent).toContain("API_KEY");
    expect(($(r.target, "install-confirm") as HTMLButtonElement).disabled).toBe(true);

    type(key, "sk-secret");
    const button = $(r.target, "install-confirm") as HTMLButtonElement;
    await until(() => !button.disabled);
    expect($(r.target, "install-env").textContent).toContain("API_KEY=${input:API_KEY}");
    expect(r.target.textContent).not.toContain("sk-secret");
    button.click();
    await settle();
    expect(backend.calls).toContainEqual(["commitInstall", 7, { API_KEY: "sk-secret", REGION: "eu" }, "d-k-eu"]);
    expect(app.install).toBeNull();
    expect(app.notices.at(-1)?.text).toMatch(/Installed weather in \/data\/local.json; API_KEY kept in/);
  });

  test("the scope chosen is asked for, and a plan the core refuses shows why", async () => {
    const { app, backend } = setup();
    await app.init();
    backend.registryHits = [{ registry: REG, name: "io.github.acme/weather", title: null, description: "", version: "1.2.0", runs: ["npx"], status: null }];
    backend.installPlan = view();
    app.install = {};
    const r = render(AddServer, {}, app);
    cleanups.push(r.destroy);
    await settle();
    $(r.target, "registry-hit").click();
    await settle(20);
    backend.installPlan = null;
    $(r.target, "install-scope-user").click();
    await settle(20);
    expect(backend.calls.filter((c) => c[0] === "planInstall").map((c) => (c[1] as { scope: string }).scope)).toEqual(["local", "user"]);
    expect($(r.target, "install-plan-error").textContent).toContain("no server named");
  });

  test("a bundle picked is planned; the core's answer is shown", async () => {
    const { app, backend } = setup();
    await app.init();
    backend.pickedBundle = "/home/user/Downloads/files.mcpb";
    app.install = {};
    const r = render(AddServer, {}, app);
    cleanups.push(r.destroy);
    await settle();
    $(r.target, "bundle-pick").click();
    await settle(20);
    expect(backend.calls).toContainEqual(["planBundle", "/home/user/Downloads/files.mcpb", "user"]);
    expect($(r.target, "bundle-path").textContent).toBe("/home/user/Downloads/files.mcpb");
    expect($(r.target, "install-plan-error").textContent).toContain("not supported");
  });

  test("a bundle's plan: what it declares and needs, its scopes, a folder picked for a path value", async () => {
    const { app, backend } = setup();
    await app.init();
    backend.installPlan = {
      id: 3,
      plan: planWith([variable("roots", { kind: "argument", required: true, format: "directory", multiple: true })], {
        name: "files",
        scope: "user",
        source: { registry: "", name: "files", version: "0.2.0", title: "Files", description: "Reads files", repository: null, website: null, package: "mcpb" },
        bundle: {
          file: "/home/user/Downloads/files.mcpb",
          sha256: "ab",
          dir: "/data/bundles/files-0.2.0",
          manifestVersion: "0.3",
          serverType: "node",
          author: "Ada",
          authorEmail: null,
          authorUrl: null,
          tools: [{ name: "read", description: null }],
          toolsGenerated: false,
          prompts: [],
          promptsGenerated: false,
          compatibility: { platforms: ["linux"], platform: "linux", platformOk: true, runtimes: [{ name: "node", program: "node", wanted: ">=18", found: "22.1.0", ok: true }] },
          signed: false,
          files: 4,
          unpackedBytes: 4096,
        },
      }),
      missing: ["roots"],
    };
    backend.pickedPath = "/home/user/notes";
    app.install = { bundle: "/home/user/Downloads/files.mcpb" };
    const r = render(AddServer, {}, app);
    cleanups.push(r.destroy);
    await settle(20);
    expect($(r.target, "bundle-title").textContent).toContain("Files 0.2.0");
    const facts = $(r.target, "bundle-facts").textContent!;
    expect(facts).toContain("By Ada · node server · not signed");
    expect(facts).toContain("Tools: read");
    expect(facts).toContain("node >=18 (found 22.1.0)");
    expect([...r.target.querySelectorAll("[data-testid^=bundle-scope-]")].map((b) => b.textContent)).toEqual(["Local", "User"]);
    $(r.target, "pick-path-roots").click();
    await settle();
    expect(backend.calls).toContainEqual(["pickPath", true]);
    expect((r.target.querySelector("[data-field=roots]") as HTMLTextAreaElement).value).toBe("/home/user/notes");
    $(r.target, "bundle-scope-local").click();
    await settle();
    expect(backend.calls).toContainEqual(["planBundle", "/home/user/Downloads/files.mcpb", "local"]);
  });

  test("an update shows the old and the new entry and writes only when approved", async () => {
    const { app, backend } = setup();
    await app.init();
    backend.installPlan = {
      id: 9,
      plan: planWith([], {
        target: "npx -y weather@1.3.0",
        replaces: { entry: {}, target: "npx -y weather@1.2.0", version: "1.2.0" },
        source: { registry: REG, name: "io.github.acme/weather", version: "1.3.0", title: null, description: "", repository: null, website: null, package: "npm" },
        digest: "d9",
      }),
      missing: [],
    };
    app.install = { update: "weather" };
    const r = render(AddServer, {}, app);
    cleanups.push(r.destroy);
    await settle(20);
    expect(backend.calls).toContainEqual(["planUpdate", "weather"]);
    expect($(r.target, "install-old-target").textContent).toBe("- npx -y weather@1.2.0");
    expect($(r.target, "install-target").textContent).toBe("+ npx -y weather@1.3.0");
    expect(r.target.textContent).toContain("1.2.0 → 1.3.0");
    expect(backend.calls.some((c) => c[0] === "commitInstall")).toBe(false);
    expect($(r.target, "install-confirm").textContent).toBe("Update");
    await until(() => !($(r.target, "install-confirm") as HTMLButtonElement).disabled);
    $(r.target, "install-confirm").click();
    await settle();
    expect(backend.calls).toContainEqual(["commitInstall", 9, {}, "d9"]);
  });
});

describe("updates and secrets in the settings", () => {
  test("a badge counts the servers with a newer version; Update opens its plan", async () => {
    const { app, backend } = setup();
    await app.init();
    backend.outdated = {
      outdated: [{ server: "weather", scope: "local", registry: REG, name: "io.github.acme/weather", installed: "1.2.0", latest: "1.3.0" }],
      checked: 2,
      problems: [],
      notes: [],
    };
    const r = render(ServerUpdates, {}, app);
    cleanups.push(r.destroy);
    await settle();
    expect($(r.target, "updates-badge").textContent).toBe("1");
    expect($(r.target, "server-update").textContent).toContain("1.2.0 → 1.3.0");
    $(r.target, "update-open-weather").click();
    expect(app.install).toEqual({ update: "weather" });
  });

  test("an entry's secrets show as set or not, are changed through a password field, and removed", async () => {
    const { app, backend } = setup();
    await app.init();
    backend.secretStates.weather = { scope: "local", secrets: [{ name: "API_KEY", set: true }, { name: "OTHER", set: false }] };
    const dl = document.createElement("dl");
    const r = render(ServerSecrets, { name: "weather" }, app);
    cleanups.push(r.destroy);
    dl.append(r.target);
    await settle();
    const rows = [...r.target.querySelectorAll<HTMLElement>("[data-testid=server-secret]")];
    expect(rows.map((x) => [x.dataset.name, x.dataset.set])).toEqual([
      ["API_KEY", "true"],
      ["OTHER", "false"],
    ]);
    rows[1].querySelector<HTMLElement>("[data-testid=secret-change]")!.click();
    await settle();
    const field = $(r.target, "secret-value") as HTMLInputElement;
    expect(field.type).toBe("password");
    type(field, "v2");
    $(r.target, "secret-save").click();
    await settle();
    expect(backend.calls).toContainEqual(["setServerSecret", "weather", "OTHER", "(a value)"]);
    expect(r.target.querySelector<HTMLElement>("[data-name=OTHER]")!.dataset.set).toBe("true");
    r.target.querySelector<HTMLElement>("[data-name=API_KEY] [data-testid=secret-remove]")!.click();
    await settle();
    expect(backend.calls).toContainEqual(["removeServerSecret", "weather", "API_KEY"]);
    expect(r.target.querySelector<HTMLElement>("[data-name=API_KEY]")!.dataset.set).toBe("false");
  });
});
