// The registry search box's logic (a search after a quiet time, pages, answers kept a short
// while, an older answer never replacing a newer one) and the install form's values.

import { afterEach, beforeEach, describe, expect, test, vi } from "vitest";
import { MockBackend } from "./backend/mock";
import type { SearchHit } from "./bindings";
import { planWith, variable } from "../test/plans";
import { PAGE_SIZE, RegistrySearch, SEARCH_DELAY_MS, answersOf, fieldType, initialValues, missingValues, rangeText, registryLabel } from "./registry.svelte";

const REG = "http://127.0.0.1:9/";

function hits(n: number, prefix = "io.example.acme/server"): SearchHit[] {
  return Array.from({ length: n }, (_, i) => ({
    registry: REG,
    name: `${prefix}-${i}`,
    title: null,
    description: `Server ${i}`,
    version: "1.0.0",
    runs: ["npx"],
    status: "active",
  }));
}

function searches(b: MockBackend) {
  return b.calls.filter((c) => c[0] === "searchServers");
}

beforeEach(() => vi.useFakeTimers());
afterEach(() => vi.useRealTimers());

describe("the registry search", () => {
  test("asks once, after the quiet time following the last keystroke", async () => {
    const b = new MockBackend();
    b.registryHits = [...hits(3), ...hits(2, "io.example.other/git")];
    const s = new RegistrySearch(b);
    for (const q of ["g", "gi", "git"]) {
      s.type(q);
      await vi.advanceTimersByTimeAsync(SEARCH_DELAY_MS - 10);
    }
    expect(searches(b)).toEqual([]);
    await vi.advanceTimersByTimeAsync(10);
    expect(searches(b)).toEqual([["searchServers", "git", PAGE_SIZE]]);
    expect(s.shownQuery).toBe("git");
    expect(s.results?.hits.map((h) => h.name)).toEqual(["io.example.other/git-0", "io.example.other/git-1"]);
    expect(s.hasMore).toBe(false);
  });

  test("an answer for an older query never replaces a newer one", async () => {
    const b = new MockBackend();
    b.registryHits = [...hits(2, "alpha"), ...hits(2, "beta")];
    let open!: () => void;
    b.searchGate = new Promise((r) => (open = r));
    const s = new RegistrySearch(b);
    s.type("alpha");
    await vi.advanceTimersByTimeAsync(SEARCH_DELAY_MS);
    b.searchGate = null;
    s.type("beta");
    await vi.advanceTimersByTimeAsync(SEARCH_DELAY_MS);
    expect(s.shownQuery).toBe("beta");
    open();
    await vi.advanceTimersByTimeAsync(0);
    expect(s.shownQuery).toBe("beta");
    expect(s.results?.hits.map((h) => h.name)).toEqual(["beta-0", "beta-1"]);
    expect(s.loading).toBe(false);
  });

  test("more asks for the next page; a query typed again is shown from what was kept", async () => {
    const b = new MockBackend();
    b.registryHits = hits(PAGE_SIZE + 5);
    const s = new RegistrySearch(b);
    s.type("acme");
    await vi.advanceTimersByTimeAsync(SEARCH_DELAY_MS);
    expect(s.results?.hits).toHaveLength(PAGE_SIZE);
    expect(s.hasMore).toBe(true);
    await s.more();
    expect(searches(b).at(-1)).toEqual(["searchServers", "acme", 2 * PAGE_SIZE]);
    expect(s.results?.hits).toHaveLength(PAGE_SIZE + 5);
    expect(s.hasMore).toBe(false);

    s.type("other");
    await vi.advanceTimersByTimeAsync(SEARCH_DELAY_MS);
    const asked = searches(b).length;
    s.type("acme");
    await vi.advanceTimersByTimeAsync(SEARCH_DELAY_MS);
    expect(searches(b)).toHaveLength(asked);
    expect(s.shownQuery).toBe("acme");
    expect(s.results?.hits).toHaveLength(PAGE_SIZE);
  });

  test("an answer from kept results (a registry unreachable) is shown with its note and asked again next time", async () => {
    const b = new MockBackend();
    b.registryHits = hits(1);
    b.searchNotes = ["registry unreachable (http://127.0.0.1:9); showing results from 3 h ago"];
    const s = new RegistrySearch(b);
    s.type("acme");
    await vi.advanceTimersByTimeAsync(SEARCH_DELAY_MS);
    expect(s.results?.notes).toEqual(b.searchNotes);
    s.type("acm");
    await vi.advanceTimersByTimeAsync(SEARCH_DELAY_MS);
    s.type("acme");
    await vi.advanceTimersByTimeAsync(SEARCH_DELAY_MS);
    expect(searches(b).map((c) => c[1])).toEqual(["acme", "acm", "acme"]);
  });

  test("a failed search shows the core's message", async () => {
    const b = new MockBackend();
    b.fail.searchServers = new (await import("./backend/types")).BackendError("not-configured", "no MCP registry is configured");
    const s = new RegistrySearch(b);
    s.type("x");
    await vi.advanceTimersByTimeAsync(SEARCH_DELAY_MS);
    expect(s.error?.message).toBe("no MCP registry is configured");
    expect(s.results).toBeNull();
  });

  test("results are labelled with their registry's host", () => {
    expect(registryLabel("https://registry.example/")).toBe("registry.example");
    expect(registryLabel("http://127.0.0.1:8080/corp")).toBe("127.0.0.1:8080/corp");
    expect(registryLabel("not a url")).toBe("not a url");
  });
});

describe("the install form's values", () => {
  const vars = [
    variable("API_KEY", { required: true, secret: true }),
    variable("REGION", { required: true, default: "eu" }),
    variable("UNITS", { choices: ["metric", "imperial"] }),
    variable("VERBOSE", { format: "boolean" }),
    variable("CITY", { required: true }),
  ];

  test("defaults are filled, earlier values offered again, secrets start empty", () => {
    const p = planWith(vars, { values: { CITY: "Oslo" } });
    expect(initialValues(p)).toEqual({ API_KEY: "", REGION: "eu", UNITS: "", VERBOSE: "false", CITY: "Oslo" });
    expect(vars.map(fieldType)).toEqual(["password", "text", "select", "checkbox", "text"]);
  });

  test("a number's declared bounds are shown beside its name", () => {
    expect(rangeText(variable("PORT", { format: "number", min: 1, max: 65535 }))).toBe(" · 1 to 65535");
    expect(rangeText(variable("N", { format: "number", min: 0 }))).toBe(" · at least 0");
    expect(rangeText(variable("N", { format: "number", max: 10 }))).toBe(" · at most 10");
    expect(rangeText(variable("CITY"))).toBe("");
  });

  test("required values without a value are missing, unless a secret is kept", () => {
    const p = planWith(vars);
    const v = initialValues(p);
    expect(missingValues(p, v)).toEqual(["API_KEY", "CITY"]);
    expect(missingValues(planWith(vars, { keptSecrets: ["API_KEY"] }), v)).toEqual(["CITY"]);
    expect(missingValues(p, { ...v, API_KEY: "k", CITY: "  " })).toEqual(["CITY"]);
  });

  test("only values typed are sent", () => {
    expect(answersOf({ API_KEY: "", REGION: "eu", CITY: "Oslo" })).toEqual({ REGION: "eu", CITY: "Oslo" });
  });
});
