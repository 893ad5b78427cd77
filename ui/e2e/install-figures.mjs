// Figures of the "Add server" search in the real window: how long after the last keystroke
// the results of a query are on screen (painted), the search's quiet time included, against
// our registry fixture on loopback. Needs a display (run under Xvfb):
//
//   xvfb-run -a -s "-screen 0 1280x800x24" node ui/e2e/install-figures.mjs [--runs N] [--gap MS]
//
// Build first: `npm run build && cargo build -p harness9-desktop && cargo build -p
// harness9-fixtures --bin mcp-registry-fixture` (APP_BINARY picks another build).
//
// The fixture serves the registry's seed records and 500 of ours, in pages of 20. Each query
// is typed a character at a time (`--gap` ms apart, as a person types); the time runs from
// the last keystroke to the next frame painted after the list shows that query's answer.
// - cold: a query nobody asked before, in a fresh data folder (the registry is asked);
// - warm: the same query typed again in the same dialog (the window's kept answer);
// - warm (core): typed again in a new dialog (the core's kept answer on disk).
// Prints a summary and writes out/install-figures.json.

import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { ROOT } from "./serve.mjs";
import { APP, Session, startDriver } from "./wd.mjs";
import { startRegistry } from "./registry-fixture.mjs";

const args = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : dflt;
};
const RUNS = Number(opt("--runs", "8"));
const GAP_MS = Number(opt("--gap", "60"));
const PORT = Number(process.env.WEBDRIVER_PORT ?? 4460);

if (!process.env.DISPLAY && !process.env.WAYLAND_DISPLAY) {
  console.error("install-figures: no display; run under xvfb-run -a");
  process.exit(2);
}

/** 500 records of ours: `io.example.tools/alpha-000` … with a few words each. */
const WORDS = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet"];
const RECORDS = Array.from({ length: 500 }, (_, i) => ({
  name: `io.example.tools/${WORDS[i % WORDS.length]}-${String(i).padStart(3, "0")}`,
  description: `Synthetic server ${i} for the search figures`,
  version: "1.0.0",
  packages: [{ registryType: "npm", identifier: `@example/${WORDS[i % WORDS.length]}-${i}`, version: "1.0.0", transport: { type: "stdio" } }],
}));

/**
 * Runs in the page: types `query` a character at a time, then waits for the list to show
 * its answer and for the next painted frame; returns ms from the last keystroke and the
 * number of results shown.
 */
async function typeAndWait({ query, gapMs }) {
  const input = document.querySelector("[data-testid=registry-search]");
  const list = () => document.querySelector("[data-testid=registry-results]");
  input.focus();
  const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
  let last = 0;
  for (let i = 1; i <= query.length; i++) {
    input.value = query.slice(0, i);
    input.dispatchEvent(new Event("input", { bubbles: true }));
    last = performance.now();
    if (i < query.length) await sleep(gapMs);
  }
  await new Promise((resolve) => {
    const check = () => {
      const l = list();
      if (l && l.dataset.query === query && l.getAttribute("aria-busy") !== "true") resolve();
      else setTimeout(check, 1);
    };
    check();
  });
  await new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)));
  return { ms: performance.now() - last, hits: list().querySelectorAll("[data-testid=registry-hit]").length };
}

const SCRIPT = `const done = arguments[arguments.length - 1];
(${typeAndWait.toString()})(arguments[0]).then(done, (e) => done({ error: String(e) }));`;

function stats(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return { median: +s[Math.floor(s.length / 2)].toFixed(1), worst: +s.at(-1).toFixed(1), runs: s.length };
}

const tmp = mkdtempSync(path.join(os.tmpdir(), "h9-install-figures-"));
const project = path.join(tmp, "project");
const data = path.join(tmp, "data");
mkdirSync(project);
mkdirSync(data);
writeFileSync(path.join(project, ".mcp.json"), JSON.stringify({ mcpServers: {} }));
const registry = await startRegistry(path.join(tmp, "records.json"), RECORDS, 20);
const driver = await startDriver(PORT, {
  ...process.env,
  HARNESS9_DATA_DIR: data,
  HARNESS9_PROJECT: project,
  HARNESS9_REGISTRY: registry.url,
  XDG_DATA_HOME: path.join(tmp, "xdg-data"),
  XDG_CACHE_HOME: path.join(tmp, "xdg-cache"),
  XDG_CONFIG_HOME: path.join(tmp, "xdg-config"),
});
let session;
try {
  session = await Session.create(`http://127.0.0.1:${PORT}`, { "tauri:options": { application: APP } });
  const openDialog = async () => {
    if ((await session.findAll("[data-testid=add-server-dialog]")).length) {
      await session.click(await session.find("[data-testid=add-server-close]"));
    }
    await session.click(await session.waitFor("[data-testid=nav-settings]", "the settings entry"));
    await session.click(await session.waitFor("[data-testid=install-open]", "the Add server button"));
    await session.waitFor("[data-testid=registry-results][data-query='']", "the first listing", undefined, 30_000);
  };
  const measure = async (query, empty = false) => {
    const r = await session.cmd("POST", "/execute/async", { script: SCRIPT, args: [{ query, gapMs: GAP_MS }] });
    if (r.error) throw new Error(r.error);
    if (r.hits === 0 && !empty) throw new Error(`no results for ${query}`);
    return r.ms;
  };
  await openDialog();
  const queries = Array.from({ length: RUNS }, (_, i) => `${WORDS[i % WORDS.length]}-${String(i).padStart(3, "0").slice(0, 2)}`);
  const cold = [];
  const warm = [];
  for (const q of queries) cold.push(await measure(q));
  for (const q of queries) {
    await measure("zz-other", true);
    warm.push(await measure(q));
  }
  const warmCore = [];
  for (const q of queries) {
    await openDialog();
    warmCore.push(await measure(q));
  }
  const figures = {
    engine: "WebKitGTK",
    binary: path.relative(ROOT, APP),
    keystrokeGapMs: GAP_MS,
    quietTimeMs: 150,
    lastKeystrokeToPaintedMs: { cold: stats(cold), warm: stats(warm), warmCore: stats(warmCore) },
  };
  mkdirSync(path.join(ROOT, "out"), { recursive: true });
  writeFileSync(path.join(ROOT, "out", "install-figures.json"), JSON.stringify(figures, null, 2) + "\n");
  console.log(JSON.stringify(figures, null, 2));
} finally {
  await session?.close().catch(() => {});
  driver.kill();
  registry.stop();
  rmSync(tmp, { recursive: true, force: true });
}
