// Desktop figures: how soon the window paints with 20 configured servers, and the idle
// memory of the app and its WebKit processes. Needs a display (run under Xvfb):
//
//   xvfb-run -a -s "-screen 0 1280x800x24" node ui/e2e/figures.mjs [--binary PATH] [--runs N]
//   xvfb-run -a -s "-screen 0 1280x800x24" node ui/e2e/figures.mjs --memory [--profile debug]
//
// --memory: the app with 20 servers holding 10,000 tools in all (`mcp-fixture`, 500 synthetic
// tools each, approved through the CLI's own approval prompt) against an empty Tauri 2 window
// (src-tauri/examples/empty-window.rs, the same Tauri build showing a blank page), as Tauri
// makes it (WebKit's accelerated compositing on: the target's comparison) and, like for
// like, drawing as the app does by default (compositing off), launched in turns, PSS of each
// one's app and WebKit processes (the process reaper included) after it settled; writes
// out/desktop-memory.json. Build first: `cargo build --release -p harness9-desktop --bins
// --example empty-window && cargo build --release --bin harness9 && cargo build --release -p harness9-fixtures --bin mcp-fixture`.
//
// Each run launches the binary on a temporary project of 20 stdio servers (harness9's own
// `mcp serve`, approved in a private data folder, so they all start behind the window),
// reads the app's "window painted N ms after launch" line, waits until every server is up
// and the app is idle, then sums the memory of the process tree. Prints a JSON summary and
// writes it to out/desktop-figures.json.

import { spawn, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { ROOT } from "./serve.mjs";

const args = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : dflt;
};
const PROFILE = opt("--profile", "release");
const BINARY = path.resolve(opt("--binary", path.join(ROOT, "target", PROFILE, "harness9-desktop")));
const RUNS = Number(opt("--runs", args.includes("--memory") ? "3" : "5"));
const SERVERS = Number(opt("--servers", "20"));
const IDLE_WAIT_MS = 8000;
const TOOLS = Number(opt("--tools", "10000"));

if (!process.env.DISPLAY && !process.env.WAYLAND_DISPLAY) {
  console.error("figures: no display; run under xvfb-run -a");
  process.exit(2);
}

/** The binaries of the profile measured (the app's servers run `harness9` from here). */
const BIN_DIR = path.join(ROOT, "target", PROFILE);

/**
 * Approves every server of `project` through the CLI's own prompt (`mcp list` asks on a
 * terminal; `script` gives it one, and "a" approves for good), into the data folder `data`.
 */
function approveAll(project, data) {
  const r = spawnSync("script", ["-qec", `${path.join(BIN_DIR, "harness9")} mcp list --project ${project}`, "/dev/null"], {
    input: "a\n",
    env: { ...process.env, HARNESS9_DATA_DIR: data },
    encoding: "utf8",
    timeout: 120_000,
  });
  const approvals = JSON.parse(readFileSync(path.join(data, "approvals.json"), "utf8"));
  if (Object.keys(approvals.projects ?? {}).length === 0) throw new Error(`the servers were not approved:\n${r.stdout}${r.stderr}`);
}

function makeProject() {
  const tmp = mkdtempSync(path.join(os.tmpdir(), "h9-figures-"));
  const project = path.join(tmp, "project");
  const data = path.join(tmp, "data");
  mkdirSync(project);
  mkdirSync(data);
  const servers = {};
  for (let i = 0; i < SERVERS; i++) servers[`s${String(i).padStart(2, "0")}`] = { command: path.join(BIN_DIR, "harness9"), args: ["mcp", "serve", "--project", "."] };
  writeFileSync(path.join(project, ".mcp.json"), JSON.stringify({ mcpServers: servers }, null, 2));
  writeFileSync(path.join(project, "README.md"), "figures project\n");
  approveAll(project, data);
  return { tmp, project, data };
}

function children() {
  const map = new Map();
  for (const pid of readdirSync("/proc").filter((p) => /^\d+$/.test(p))) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      if (!map.has(ppid)) map.set(ppid, []);
      map.get(ppid).push(Number(pid));
    } catch {
      // gone
    }
  }
  return map;
}

function tree(root) {
  const kids = children();
  const out = [];
  const walk = (pid) => {
    out.push(pid);
    for (const k of kids.get(pid) ?? []) walk(k);
  };
  walk(root);
  return out;
}

function memory(pid) {
  const comm = readFileSync(`/proc/${pid}/comm`, "utf8").trim();
  const kb = (file, key) => {
    const m = new RegExp(`^${key}:\\s+(\\d+) kB`, "m").exec(readFileSync(`/proc/${pid}/${file}`, "utf8"));
    return m ? Number(m[1]) : 0;
  };
  return { pid, comm, rssKb: kb("status", "VmRSS"), pssKb: kb("smaps_rollup", "Pss") };
}

function group(comm) {
  if (comm.startsWith("harness9-deskt") || comm === "empty-window") return "app";
  if (comm.startsWith("WebKitWebProces")) return "webkitWeb";
  if (comm.startsWith("WebKitNetworkPr")) return "webkitNetwork";
  if (comm === "harness9" || comm === "mcp-fixture") return "mcpServers";
  return "other";
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function run() {
  const { tmp, project, data } = makeProject();
  const started = Date.now();
  const child = spawn(BINARY, [project], {
    env: {
      ...process.env,
      HARNESS9_DATA_DIR: data,
      HARNESS9_REPORT_STARTUP: "1",
      XDG_DATA_HOME: path.join(tmp, "xdg-data"),
      XDG_CACHE_HOME: path.join(tmp, "xdg-cache"),
      XDG_CONFIG_HOME: path.join(tmp, "xdg-config"),
    },
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  const painted = new Promise((resolve, reject) => {
    child.stderr.on("data", (d) => {
      stderr += d;
      const m = /window painted (\d+) ms after launch.*/.exec(stderr);
      if (m) {
        if (process.env.FIGURES_VERBOSE) console.error(m[0]);
        resolve(Number(m[1]));
      }
    });
    child.on("exit", (code) => reject(new Error(`the app exited (${code}) before painting:\n${stderr}`)));
    setTimeout(() => reject(new Error(`no paint within 30 s:\n${stderr}`)), 30_000);
  });
  const paintedMs = await painted;
  // All servers connected: 20 `harness9 mcp serve` children of the app.
  const deadline = Date.now() + 30_000;
  let servers = 0;
  while (Date.now() < deadline) {
    servers = count(child.pid, "harness9");
    if (servers >= SERVERS) break;
    await sleep(200);
  }
  const allUpMs = Date.now() - started;
  await sleep(IDLE_WAIT_MS);
  const sums = measure(child.pid).groups;
  child.kill("SIGTERM");
  await new Promise((r) => child.on("exit", r));
  rmSync(tmp, { recursive: true, force: true });
  return { paintedMs, serversRunning: servers, allServersUpMs: allUpMs, memory: sums };
}

/** The PSS of a process tree by group (app, WebKit processes, servers), in MB. */
function measure(root) {
  const sums = {};
  for (const pid of tree(root)) {
    let p;
    try {
      p = memory(pid);
    } catch {
      continue;
    }
    const g = group(p.comm);
    sums[g] ??= { processes: 0, rssMb: 0, pssMb: 0 };
    sums[g].processes++;
    sums[g].rssMb += p.rssKb / 1024;
    sums[g].pssMb += p.pssKb / 1024;
  }
  for (const g of Object.values(sums)) {
    g.rssMb = Math.round(g.rssMb);
    g.pssMb = Math.round(g.pssMb);
  }
  // What the comparison counts: the window's processes, not the servers it runs.
  const windowPssMb = ["app", "webkitWeb", "webkitNetwork"].reduce((t, g) => t + (sums[g]?.pssMb ?? 0), 0);
  return { windowPssMb, groups: sums };
}

/** A project of 20 fixture servers with 10,000 tools in all, approved by the CLI itself. */
function memoryProject() {
  const tmp = mkdtempSync(path.join(os.tmpdir(), "h9-memory-"));
  const project = path.join(tmp, "project");
  const data = path.join(tmp, "data");
  mkdirSync(project);
  mkdirSync(data);
  const fixture = path.join(BIN_DIR, "mcp-fixture");
  const servers = {};
  for (let i = 0; i < SERVERS; i++) {
    servers[`s${String(i).padStart(2, "0")}`] = { command: fixture, env: { REFSERVER_TOOLS: String(Math.round(TOOLS / SERVERS)) } };
  }
  writeFileSync(path.join(project, ".mcp.json"), JSON.stringify({ mcpServers: servers }, null, 2));
  approveAll(project, data);
  return { tmp, project, data };
}

async function settledMemory(binary, argv, env, ready) {
  const merged = { ...process.env, ...env };
  for (const [k, v] of Object.entries(merged)) if (v === undefined) delete merged[k];
  const child = spawn(binary, argv, { env: merged, stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  child.stderr.on("data", (d) => (stderr += d));
  const deadline = Date.now() + 120_000;
  while (!ready(child.pid)) {
    if (Date.now() > deadline || child.exitCode !== null) {
      child.kill("SIGKILL");
      throw new Error(`${path.basename(binary)} did not get ready:\n${stderr}`);
    }
    await sleep(250);
  }
  await sleep(IDLE_WAIT_MS);
  const m = measure(child.pid);
  // FIGURES_SMAPS=DIR keeps each measured app process's memory map, to see where it goes.
  if (process.env.FIGURES_SMAPS) {
    mkdirSync(process.env.FIGURES_SMAPS, { recursive: true });
    writeFileSync(path.join(process.env.FIGURES_SMAPS, `${path.basename(binary)}.smaps`), readFileSync(`/proc/${child.pid}/smaps`));
  }
  child.kill("SIGTERM");
  await new Promise((r) => (child.exitCode !== null ? r() : child.on("exit", r)));
  return m;
}

const count = (root, comm) =>
  tree(root).filter((p) => {
    try {
      return readFileSync(`/proc/${p}/comm`, "utf8").trim() === comm;
    } catch {
      return false;
    }
  }).length;

async function memoryFigures() {
  const empty = path.join(BIN_DIR, "examples", "empty-window");
  const { tmp, project, data } = memoryProject();
  const xdg = (t) => ({
    XDG_DATA_HOME: path.join(t, "xdg-data"),
    XDG_CACHE_HOME: path.join(t, "xdg-cache"),
    XDG_CONFIG_HOME: path.join(t, "xdg-config"),
  });
  const app = [];
  const baseline = [];
  const baselineSame = [];
  const webViewUp = (pid) => count(pid, "WebKitWebProces") > 0;
  for (let i = 0; i < RUNS; i++) {
    // An empty window as Tauri makes it (WebKit's accelerated compositing on), and one
    // drawing as the app does by default (compositing off): the like-for-like comparison.
    baseline.push(await settledMemory(empty, [], { ...xdg(tmp), WEBKIT_DISABLE_COMPOSITING_MODE: undefined }, webViewUp));
    baselineSame.push(await settledMemory(empty, [], { ...xdg(tmp), WEBKIT_DISABLE_COMPOSITING_MODE: "1" }, webViewUp));
    app.push(
      await settledMemory(BINARY, [project], { HARNESS9_DATA_DIR: data, ...xdg(tmp) }, (pid) => count(pid, "mcp-fixture") >= SERVERS && count(pid, "WebKitWebProces") > 0),
    );
  }
  // WebKit's helpers may still be writing their caches for a moment after the window went.
  try {
    rmSync(tmp, { recursive: true, force: true, maxRetries: 10, retryDelay: 200 });
  } catch (e) {
    console.error(`figures: could not remove ${tmp}: ${e.message}`);
  }
  const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const appMb = median(app.map((m) => m.windowPssMb));
  const emptyMb = median(baseline.map((m) => m.windowPssMb));
  const emptySameMb = median(baselineSame.map((m) => m.windowPssMb));
  const summary = {
    profile: PROFILE,
    servers: SERVERS,
    tools: TOOLS,
    runs: RUNS,
    appPssMb: appMb,
    emptyWindowPssMb: emptyMb,
    ratio: Math.round((appMb / emptyMb) * 100) / 100,
    target: 1.15,
    emptyWindowSameRenderingPssMb: emptySameMb,
    ratioSameRendering: Math.round((appMb / emptySameMb) * 100) / 100,
    appLastRun: app.at(-1).groups,
    emptyWindowLastRun: baseline.at(-1).groups,
    emptyWindowSameRenderingLastRun: baselineSame.at(-1).groups,
  };
  mkdirSync(path.join(ROOT, "out"), { recursive: true });
  writeFileSync(path.join(ROOT, "out", "desktop-memory.json"), JSON.stringify(summary, null, 2) + "\n");
  console.log(JSON.stringify(summary, null, 2));
}

if (args.includes("--memory")) {
  await memoryFigures();
  process.exit(0);
}

const runs = [];
for (let i = 0; i < RUNS; i++) runs.push(await run());
const paints = runs.map((r) => r.paintedMs).sort((a, b) => a - b);
const summary = {
  binary: path.relative(ROOT, BINARY),
  servers: SERVERS,
  runs: RUNS,
  paintedMs: { first: runs[0].paintedMs, median: paints[Math.floor(paints.length / 2)], worst: paints.at(-1) },
  allServersUpMs: runs.map((r) => r.allServersUpMs),
  idleMemoryLastRun: runs.at(-1).memory,
};
mkdirSync(path.join(ROOT, "out"), { recursive: true });
writeFileSync(path.join(ROOT, "out", "desktop-figures.json"), JSON.stringify(summary, null, 2) + "\n");
console.log(JSON.stringify(summary, null, 2));
