// The WebDriver side of the desktop app's end-to-end tests: a minimal W3C client (plain
// fetch, classic protocol), starting tauri-driver (which starts WebKitWebDriver and the
// app), and looking at the processes the app leaves. Used by the `*.webdriver.test.mjs`
// files.
//
// Env: APP_BINARY (default target/debug/harness9-desktop), TAURI_DRIVER (default
// .deps/tauri-driver/bin/tauri-driver, then PATH).

import { spawn } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, readdirSync, readlinkSync, writeFileSync } from "node:fs";
import net from "node:net";
import path from "node:path";
import { ROOT } from "./serve.mjs";

export const SHOTS = path.join(ROOT, "out", "screenshots");
export const APP = path.resolve(process.env.APP_BINARY ?? path.join(ROOT, "target", "debug", "harness9-desktop"));
export const WAIT_MS = 30_000;
/** The repository's MCP Apps fixture server, found beside the app. */
export const APPS_FIXTURE = path.join(path.dirname(APP), "mcp-apps-fixture");

/** Fails at once, saying what to run, when there is no display or the app or the apps
 * fixture is not built; makes the screenshot folder. */
export function checkReady() {
  mkdirSync(SHOTS, { recursive: true });
  if (!process.env.DISPLAY && !process.env.WAYLAND_DISPLAY) throw new Error("no display: run this test under Xvfb");
  if (!existsSync(APP)) throw new Error(`${APP} is missing: build it with \`npm run build && cargo build -p harness9-desktop\``);
  if (!existsSync(APPS_FIXTURE)) throw new Error(`${APPS_FIXTURE} is missing: build it with \`cargo build -p harness9-fixtures\``);
}

export function driverBinary() {
  if (process.env.TAURI_DRIVER) return process.env.TAURI_DRIVER;
  const local = path.join(ROOT, ".deps", "tauri-driver", "bin", "tauri-driver");
  return existsSync(local) ? local : "tauri-driver";
}

export function everythingBinary() {
  const bin = process.env.H9_EVERYTHING_BIN ?? path.join(ROOT, ".deps", "node", "node_modules", ".bin", "mcp-server-everything");
  if (!existsSync(bin)) throw new Error(`${bin} is missing: run \`bash scripts/setup.sh\``);
  return bin;
}

export const ELEMENT = "element-6066-11e4-a52e-4f735466cecf";
export const KEY = { ctrl: "\uE009", end: "\uE010", enter: "\uE007", release: "\uE000" };

/** Makes the page paint a few frames (see `Session.screenshot`). */
const REPAINT_SCRIPT = `
  const dot = document.createElement("div");
  dot.style.cssText = "position:fixed;right:0;bottom:0;width:1px;height:1px;pointer-events:none;z-index:2147483647;opacity:0.01";
  document.documentElement.append(dot);
  let n = 0;
  const step = () => {
    dot.style.opacity = n % 2 ? "0.01" : "0.02";
    if (++n < 60) requestAnimationFrame(step);
    else dot.remove();
  };
  requestAnimationFrame(step);
`;

export class Session {
  constructor(base, id) {
    this.base = base;
    this.id = id;
  }

  static async create(base, capabilities) {
    const r = await wd(base, "POST", "/session", { capabilities: { alwaysMatch: capabilities } });
    return new Session(base, r.sessionId);
  }

  cmd(method, url, body) {
    return wd(this.base, method, `/session/${this.id}${url}`, body);
  }

  async find(css) {
    const r = await this.cmd("POST", "/element", { using: "css selector", value: css });
    return r[ELEMENT];
  }

  async findAll(css) {
    const r = await this.cmd("POST", "/elements", { using: "css selector", value: css });
    return r.map((e) => e[ELEMENT]);
  }

  /** Waits until `css` matches (and `check(el)` holds), returning the element. */
  async waitFor(css, what = css, check = async () => true, timeout = WAIT_MS) {
    const deadline = Date.now() + timeout;
    let last;
    for (;;) {
      try {
        const el = await this.find(css);
        if (await check(el)) return el;
      } catch (e) {
        last = e;
      }
      if (Date.now() > deadline) {
        await this.screenshot(`failure-${what.replace(/\W+/g, "-")}`).catch(() => {});
        throw new Error(`timed out after ${timeout} ms waiting for ${what}${last ? ` (${last.message})` : ""}`);
      }
      await sleep(150);
    }
  }

  async click(el) {
    try {
      return await this.cmd("POST", `/element/${el}/click`, {});
    } catch (e) {
      await this.screenshot("failure-click").catch(() => {});
      throw e;
    }
  }

  clear(el) {
    return this.cmd("POST", `/element/${el}/clear`, {});
  }

  /** Waits until the last element matching `css` passes `check`, returning it. */
  async waitForLast(css, what, check) {
    const deadline = Date.now() + WAIT_MS;
    for (;;) {
      const last = (await this.findAll(css)).at(-1);
      if (last && (await check(last).catch(() => false))) return last;
      if (Date.now() > deadline) {
        await this.screenshot(`failure-${what.replace(/\W+/g, "-")}`).catch(() => {});
        throw new Error(`timed out after ${WAIT_MS} ms waiting for ${what}`);
      }
      await sleep(150);
    }
  }

  type(el, text) {
    return this.cmd("POST", `/element/${el}/value`, { text });
  }

  /** The element's text content (WebKit's rendered-text algorithm skips some clipped spans). */
  async text(el) {
    const t = await this.run("return arguments[0].textContent", { [ELEMENT]: el });
    return t.replace(/\s+/g, " ").trim();
  }

  attr(el, name) {
    return this.cmd("GET", `/element/${el}/attribute/${name}`);
  }

  enabled(el) {
    return this.cmd("GET", `/element/${el}/enabled`);
  }

  run(script, ...args) {
    return this.cmd("POST", "/execute/sync", { script, args });
  }

  /**
   * Saves a screenshot. Without WebKit's accelerated compositing (the app's default)
   * WebKitWebDriver takes the next painted frame, and a page that changes nothing never
   * paints one: a dot nobody sees changes for a few frames first.
   */
  async screenshot(name) {
    await this.run(REPAINT_SCRIPT);
    const png = await this.cmd("GET", "/screenshot");
    writeFileSync(path.join(SHOTS, `webdriver-${name}.png`), Buffer.from(png, "base64"));
  }

  /** Switches into the frame element `el` (WebKitWebDriver enters cross-origin frames). */
  enterFrame(el) {
    return this.cmd("POST", "/frame", { id: { [ELEMENT]: el } });
  }

  /** Back to the app's own document. */
  leaveFrames() {
    return this.cmd("POST", "/frame", { id: null });
  }

  close() {
    return wd(this.base, "DELETE", `/session/${this.id}`);
  }
}

export async function wd(base, method, url, body) {
  const res = await fetch(base + url, {
    method,
    headers: body ? { "content-type": "application/json" } : {},
    body: body ? JSON.stringify(body) : undefined,
  });
  const json = await res.json().catch(() => ({}));
  if (!res.ok || json.value?.error) {
    throw new Error(`${method} ${url}: ${json.value?.error ?? res.status} ${json.value?.message ?? ""}`.trim());
  }
  return json.value;
}

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

export function portOpen(port) {
  return new Promise((resolve) => {
    const s = net.connect({ port, host: "127.0.0.1" }, () => {
      s.destroy();
      resolve(true);
    });
    s.on("error", () => resolve(false));
  });
}

/** Processes running in `dir` (the project's servers run there). */
export function processesIn(dir) {
  const out = [];
  for (const pid of readdirSync("/proc").filter((p) => /^\d+$/.test(p))) {
    try {
      if (readlinkSync(`/proc/${pid}/cwd`) !== dir) continue;
      out.push(`${pid}: ${readFileSync(`/proc/${pid}/cmdline`, "utf8").replaceAll("\0", " ").trim()}`);
    } catch {
      // gone, or not ours to read
    }
  }
  return out;
}

/** Pids of running copies of the app under test. */
export function appProcesses() {
  return readdirSync("/proc")
    .filter((p) => /^\d+$/.test(p))
    .filter((pid) => {
      try {
        return readlinkSync(`/proc/${pid}/exe`) === APP;
      } catch {
        return false;
      }
    })
    .map(Number);
}

export function alive(pid) {
  try {
    // A zombie is gone for our purposes.
    return !/\) Z /.test(readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return false;
  }
}

/**
 * Starts tauri-driver on `port` (WebKitWebDriver on `port + 1`) with `env`, waits until
 * both listen, and returns the process; `stderrText` holds what it (and the app) printed.
 */
export async function startDriver(port, env) {
  const driver = spawn(driverBinary(), ["--port", String(port), "--native-port", String(port + 1)], {
    env,
    stdio: ["ignore", "inherit", "pipe"],
  });
  // The app's stderr comes through the driver: echoed, and kept for the tests to read.
  driver.stderrText = "";
  driver.stderr.on("data", (chunk) => {
    process.stderr.write(chunk);
    driver.stderrText += chunk.toString();
  });
  // tauri-driver listens before WebKitWebDriver does: wait for both ports.
  const deadline = Date.now() + 20_000;
  while (!((await portOpen(port)) && (await portOpen(port + 1)))) {
    if (Date.now() > deadline) {
      driver.kill();
      throw new Error("tauri-driver or WebKitWebDriver did not start listening");
    }
    await sleep(100);
  }
  return driver;
}
