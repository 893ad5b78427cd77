// The real desktop app (target/debug/harness9-desktop) driven through tauri-driver and
// WebKitWebDriver on a display (run under Xvfb: `xvfb-run -a node --test ...`).
//
// It opens a temporary copy of examples/demo with a private data folder, approves the
// demo server, sees its green chip with the tool count, opens it, runs a tool, adds a
// server in the settings pane and sees its chip, then types invalid JSON and checks that
// the error is shown and the file on disk is unchanged; last, in the chat, a scripted model
// (anthropic-stub.mjs) asks for mcp__demo__list_dir, the call is approved on its card, and
// the card and the streamed answer show. Screenshots of each state go to
// out/screenshots/webdriver-*.png. The WebDriver client is plain fetch (W3C classic).
//
// Env: APP_BINARY (default target/debug/harness9-desktop), TAURI_DRIVER (default
// .deps/tauri-driver/bin/tauri-driver, then PATH), WEBDRIVER_PORT (default 4444).

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, readlinkSync, rmSync, writeFileSync } from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { ROOT } from "./serve.mjs";
import { ANSWER, startAnthropicStub } from "./anthropic-stub.mjs";

const SHOTS = path.join(ROOT, "out", "screenshots");
const APP = path.resolve(process.env.APP_BINARY ?? path.join(ROOT, "target", "debug", "harness9-desktop"));
const PORT = Number(process.env.WEBDRIVER_PORT ?? 4444);
const NATIVE_PORT = PORT + 1;
const WAIT_MS = 30_000;

function driverBinary() {
  if (process.env.TAURI_DRIVER) return process.env.TAURI_DRIVER;
  const local = path.join(ROOT, ".deps", "tauri-driver", "bin", "tauri-driver");
  return existsSync(local) ? local : "tauri-driver";
}

// ---- a minimal W3C WebDriver client --------------------------------------------------

const ELEMENT = "element-6066-11e4-a52e-4f735466cecf";
const KEY = { ctrl: "\uE009", end: "\uE010", enter: "\uE007", release: "\uE000" };

class Session {
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

  async screenshot(name) {
    const png = await this.cmd("GET", "/screenshot");
    writeFileSync(path.join(SHOTS, `webdriver-${name}.png`), Buffer.from(png, "base64"));
  }

  close() {
    return wd(this.base, "DELETE", `/session/${this.id}`);
  }
}

async function wd(base, method, url, body) {
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

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function portOpen(port) {
  return new Promise((resolve) => {
    const s = net.connect({ port, host: "127.0.0.1" }, () => {
      s.destroy();
      resolve(true);
    });
    s.on("error", () => resolve(false));
  });
}

/** Processes running in `dir` (the project's servers run there). */
function processesIn(dir) {
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

// ---- the test --------------------------------------------------------------------------

let driver;
let session;
let project;
let data;
let model;

before(async () => {
  mkdirSync(SHOTS, { recursive: true });
  if (!process.env.DISPLAY && !process.env.WAYLAND_DISPLAY) {
    throw new Error("no display: run this test under Xvfb (xvfb-run -a node --test ui/e2e/webdriver.test.mjs)");
  }
  if (!existsSync(APP)) throw new Error(`${APP} is missing: build it with \`npm run build && cargo build -p harness9-desktop -p harness9 --bins\``);
  if (!existsSync(path.join(path.dirname(APP), "harness9"))) {
    throw new Error("the harness9 binary must sit beside the app (the demo project runs `harness9 mcp serve`)");
  }
  const tmp = mkdtempSync(path.join(os.tmpdir(), "h9-e2e-"));
  project = path.join(tmp, "demo");
  data = path.join(tmp, "data");
  cpSync(path.join(ROOT, "examples", "demo"), project, { recursive: true });
  mkdirSync(data);
  model = await startAnthropicStub();

  driver = spawn(driverBinary(), ["--port", String(PORT), "--native-port", String(NATIVE_PORT)], {
    env: {
      ...process.env,
      HARNESS9_DATA_DIR: data,
      HARNESS9_PROJECT: project,
      HARNESS9_REPORT_STARTUP: "1",
      // The chat talks to the scripted model (ui/e2e/anthropic-stub.mjs).
      HARNESS9_PROVIDER: "anthropic",
      HARNESS9_MODEL: "stub-model",
      ANTHROPIC_BASE_URL: model.url,
      ANTHROPIC_API_KEY: "test",
      OPENAI_API_KEY: "",
      OPENAI_BASE_URL: "",
      // WebKit's storage (the theme setting) stays out of the user's folders too.
      XDG_DATA_HOME: path.join(tmp, "xdg-data"),
      XDG_CACHE_HOME: path.join(tmp, "xdg-cache"),
      XDG_CONFIG_HOME: path.join(tmp, "xdg-config"),
    },
    stdio: ["ignore", "inherit", "inherit"],
  });
  // tauri-driver listens before WebKitWebDriver does: wait for both ports.
  const deadline = Date.now() + 20_000;
  while (!((await portOpen(PORT)) && (await portOpen(NATIVE_PORT)))) {
    if (Date.now() > deadline) throw new Error("tauri-driver or WebKitWebDriver did not start listening");
    await sleep(100);
  }
  session = await Session.create(`http://127.0.0.1:${PORT}`, { "tauri:options": { application: APP } });
});

after(async () => {
  await session?.close().catch(() => {});
  driver?.kill();
  await model?.close();
  if (project) {
    // The app stops its servers when it quits.
    const deadline = Date.now() + 10_000;
    while (processesIn(project).length && Date.now() < deadline) await sleep(200);
    const left = processesIn(project);
    rmSync(path.dirname(project), { recursive: true, force: true });
    assert.deepEqual(left, [], "server processes outlived the app by 10 s");
  }
});

describe("the desktop app on examples/demo", () => {
  let tools = 0;

  test("approve, see the green chip with the tool count, open it, see the tools", async () => {
    const dialog = await session.waitFor("[data-testid=approval-dialog]", "the approval dialog");
    assert.match(await session.text(dialog), /harness9 mcp serve --project \./);
    await session.screenshot("1-approval");
    await session.click(await session.find("[data-testid=approve-all]"));

    const chip = await session.waitFor("[data-testid=chip-demo][data-status=connected]", "the demo server to connect");
    const label = await session.text(chip);
    const m = /demo\s+(\d+)/.exec(label);
    assert.ok(m, `chip text: ${label}`);
    tools = Number(m[1]);
    assert.ok(tools >= 3, `the demo server lists ${tools} tools`);
    await session.screenshot("2-connected");

    await session.click(chip);
    await session.waitFor("[data-testid=server-panel]", "the server panel");
    const rows = await session.findAll("[data-testid=tool-row]");
    assert.equal(rows.length, tools);
    const names = await Promise.all(rows.map((r) => session.attr(r, "data-tool")));
    assert.ok(names.includes("mcp__demo__search_text"), names.join(", "));
    // The approval went to the private data folder, not the user's.
    assert.match(readFileSync(path.join(data, "approvals.json"), "utf8"), /"demo"/);
  });

  test("run a tool and see its result", async () => {
    await session.click(await session.find("[data-tool=mcp__demo__search_text]"));
    const pattern = await session.waitFor("[data-field=pattern]", "the tool form");
    await session.type(pattern, "harness9");
    await session.click(await session.find("[data-testid=run-tool]"));
    const result = await session.waitFor("[data-testid=tool-duration]", "the tool result");
    assert.match(await session.text(result), /\d+(\.\d)? ms/);
    const text = await session.text(await session.find("[data-testid=tool-result]"));
    assert.match(text, /README\.md/);
    assert.doesNotMatch(text, /reported an error/);
    await session.screenshot("3-tool-result");
  });

  test("the sign-in commands are granted and answer with a code (a local server cannot sign in)", async () => {
    const invoke = (cmd) =>
      session.run(
        `return window.__TAURI_INTERNALS__.invoke(arguments[0], { server: "demo" }).then((v) => ({ ok: v }), (e) => ({ err: e }))`,
        cmd,
      );
    const signIn = await invoke("sign_in");
    assert.equal(signIn.err?.code, "sign-in-failed", JSON.stringify(signIn));
    const signOut = await invoke("sign_out");
    assert.ok(typeof signOut.ok === "boolean" || typeof signOut.err?.code === "string", JSON.stringify(signOut));
    // A local server offers no Sign in.
    assert.equal((await session.findAll("[data-testid=panel-sign-in], [data-testid^=sign-in-]")).length, 0);
  });

  test("add a server in the settings pane, save, see its chip", async () => {
    await session.click(await session.find("[data-testid=nav-settings]"));
    await session.waitFor("[data-testid=config-ok]", "the config to validate");
    await session.click(await session.find("[data-testid=add-server]"));
    await session.type(await session.waitFor("[data-testid=form-name]"), "second");
    await session.type(await session.find("[data-testid=form-command]"), "harness9");
    await session.type(await session.find("[data-testid=form-args]"), ["mcp", "serve", "--project", "."].join(KEY.enter));
    await session.click(await session.find("[data-testid=form-submit]"));
    await session.waitFor("[data-testid=dirty]", "the editor to hold the new server");
    await session.screenshot("4-settings-added");
    await session.click(await session.find("[data-testid=save-config]"));

    await session.waitFor("[data-testid=chip-second]", "the new server's chip");
    const saved = JSON.parse(readFileSync(path.join(project, ".mcp.json"), "utf8"));
    assert.deepEqual(saved.mcpServers.second, { command: "harness9", args: ["mcp", "serve", "--project", "."] });
    assert.deepEqual(Object.keys(saved.mcpServers), ["demo", "second"]);
    // A new server asks for approval; once approved it connects. The demo server was not restarted.
    await session.click(await session.waitFor("[data-testid=approve-all]", "the approval of the new server"));
    await session.waitFor("[data-testid=chip-second][data-status=connected]", "the new server to connect");
    await session.waitFor("[data-testid=chip-demo][data-status=connected]", "the demo server still connected");
    await session.screenshot("5-second-server");
  });

  test("invalid JSON shows the error and leaves the file on disk unchanged", async () => {
    const before = readFileSync(path.join(project, ".mcp.json"), "utf8");
    const editor = await session.find(".cm-content");
    await session.click(editor);
    await session.type(editor, `${KEY.ctrl}${KEY.end}${KEY.release}`);
    await session.type(editor, "oops");
    const problem = await session.waitFor("[data-testid=config-problem]", "the JSON error");
    assert.match(await session.text(problem), /Line \d+, column \d+: invalid JSON/);
    assert.equal(await session.enabled(await session.find("[data-testid=save-config]")), false);
    await session.type(editor, `${KEY.ctrl}s${KEY.release}`);
    await session.waitFor("[data-testid=save-error]", "the refusal to save");
    await session.screenshot("6-invalid-json");
    await sleep(500); // a watcher reload, if one were wrongly triggered, would show now
    assert.equal(readFileSync(path.join(project, ".mcp.json"), "utf8"), before);
    const chips = await session.findAll("[data-testid^=chip-]");
    assert.equal(chips.length, 2);
  });

  test("dark theme", async () => {
    await session.run(`
      const s = document.querySelector("[data-testid=theme]");
      s.value = "dark";
      s.dispatchEvent(new Event("change", { bubbles: true }));
    `);
    await session.click(await session.find("[data-testid=chip-demo]"));
    await session.click(await session.waitFor("[data-tool=mcp__demo__read_file]"));
    await session.type(await session.waitFor("[data-field=path]"), "README.md");
    await session.click(await session.find("[data-testid=run-tool]"));
    await session.waitFor("[data-testid=tool-duration]", "the read_file result");
    assert.equal(await session.run("return document.documentElement.dataset.theme"), "dark");
    await session.screenshot("7-dark");
  });

  test("chat: the model asks for a tool, approve it, see its card and the streamed answer", async () => {
    await session.click(await session.find("[data-testid=nav-chat]"));
    await session.waitFor("[data-testid=chat-provider]", "the provider", async (el) => /anthropic · stub-model/.test(await session.text(el)));
    // Enter sends (a notice toast of the settings test may still cover the Send button).
    await session.type(await session.find("[data-testid=chat-input]"), `What is in the project folder?${KEY.enter}`);

    const card = await session.waitFor("[data-testid=tool-card][data-status=approval]", "the approval card");
    assert.match(await session.text(card), /mcp__demo__list_dir/);
    await session.waitFor("[data-testid=chat-stop]", "the Stop button");
    await session.screenshot("8-chat-approval");
    await session.click(await session.find("[data-testid=approve-once]"));

    await session.waitFor("[data-testid=tool-card][data-status=ok]", "the tool call to end ok");
    assert.match(await session.text(await session.find("[data-testid=tool-card-output]")), /README\.md/);
    assert.match(await session.text(await session.find("[data-testid=tool-card-duration]")), /\d+(\.\d)? ms/);
    await session.waitFor("[data-testid=chat-send]", "the end of the turn");
    const answers = await session.findAll("[data-testid=chat-assistant]");
    const last = answers.at(-1);
    assert.equal(await session.text(last), ANSWER.join("").replaceAll("**", "").trim());
    assert.equal(await session.run("return arguments[0].querySelector('strong')?.textContent", { [ELEMENT]: last }), "README.md");
    await session.screenshot("9-chat-answer");

    // The model got the tool definitions, then the tool's result.
    assert.equal(model.requests.length, 2);
    assert.ok(model.requests[0].tools.some((t) => t.name === "mcp__demo__list_dir"));
    const result = model.requests[1].messages.at(-1).content.find((b) => b.type === "tool_result");
    assert.match(JSON.stringify(result.content), /README\.md/);
  });
});
