// Quitting the real desktop app with live MCP Apps views (tauri-driver + WebKitWebDriver
// under Xvfb): each view gets its teardown request before the window goes, and the app
// still exits within a few seconds.
//
// A project with the apps fixture (crates/fixtures) serving ui/e2e/views/quitter.html as
// the view of its `show_file` tool: a view that, once live and again when asked to tear
// down, calls its server's app-only tool `record`, which appends a line to a file. That
// file outlives the app: it shows what each view heard before the app was gone. The window
// is closed as a user closes it (close-window.py: the window manager's WM_DELETE_WINDOW, or
// Ctrl+Q, the File > Quit accelerator), each run in an app of its own:
// - three views in the chat, the close button: each records `teardown app-closed`, the
//   app exits, its server with it;
// - one view in the tool panel, File > Quit: the same;
// - a view that never answers its teardown: the app exits anyway, once the view's time is up;
// - the window's page hangs as the app quits (it never says it is done): the app exits after
//   its own wait;
// - no view: the window closes at once.
// How long each took from the close to the process's end is printed.
//
// Env as apps.webdriver.test.mjs, plus WEBDRIVER_QUIT_PORT (default 4448).

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { ROOT } from "./serve.mjs";
import { APP, APPS_FIXTURE, checkReady, Session, alive, appProcesses, processesIn, sleep, startDriver } from "./wd.mjs";
import { startAnthropicStub } from "./anthropic-stub.mjs";

const PORT = Number(process.env.WEBDRIVER_QUIT_PORT ?? 4448);
const FIXTURE = APPS_FIXTURE;
const QUITTER = path.join(ROOT, "ui", "e2e", "views", "quitter.html");
const CLOSE_WINDOW = path.join(ROOT, "ui", "e2e", "close-window.py");
/** The longest the app may take to exit once its window is closed. */
const EXIT_MS = 6000;

let driver;
let project;
let record;
let model;

before(async () => {
  checkReady();
  const tmp = mkdtempSync(path.join(os.tmpdir(), "h9-quit-e2e-"));
  project = path.join(tmp, "project");
  mkdirSync(project);
  record = path.join(tmp, "record.log");
  const config = { mcpServers: { quit: { command: FIXTURE, env: { APPS_FIXTURE_VIEW: QUITTER, APPS_FIXTURE_RECORD: record } } } };
  writeFileSync(path.join(project, ".mcp.json"), JSON.stringify(config, null, 2) + "\n");
  model = await startAnthropicStub({ tool: "mcp__quit__show_file", trigger: /quitter/ });
  driver = await startDriver(PORT, {
    ...process.env,
    HARNESS9_DATA_DIR: path.join(tmp, "data"),
    HARNESS9_PROJECT: project,
    HARNESS9_PROVIDER: "anthropic",
    HARNESS9_MODEL: "stub-model",
    ANTHROPIC_BASE_URL: model.url,
    ANTHROPIC_API_KEY: "test",
    OPENAI_API_KEY: "",
    OPENAI_BASE_URL: "",
    XDG_DATA_HOME: path.join(tmp, "xdg-data"),
    XDG_CACHE_HOME: path.join(tmp, "xdg-cache"),
    XDG_CONFIG_HOME: path.join(tmp, "xdg-config"),
  });
});

after(async () => {
  for (const pid of appProcesses().filter(alive)) process.kill(pid, "SIGKILL");
  driver?.kill();
  await model?.close();
  if (project) {
    const deadline = Date.now() + 10_000;
    while (processesIn(project).length && Date.now() < deadline) await sleep(200);
    rmSync(path.dirname(project), { recursive: true, force: true });
  }
});

/** The lines the views recorded so far, split in words. */
function recorded() {
  return existsSync(record) ? readFileSync(record, "utf8").split("\n").filter(Boolean).map((l) => l.split(" ")) : [];
}

/**
 * Runs `body` with the app started on the project, its server trusted and connected, and
 * its tools allowed (the model's call of show_file, the views' calls of record); the
 * WebDriver session ends after it, passed or failed.
 */
async function withApp(body) {
  const session = await Session.create(`http://127.0.0.1:${PORT}`, { "tauri:options": { application: APP } });
  try {
    await body(await ready(session));
  } finally {
    await session.close().catch(() => {});
    // The next test starts an app of its own: none of this one may be left.
    const deadline = Date.now() + 10_000;
    while (appProcesses().some(alive) && Date.now() < deadline) await sleep(100);
    for (const pid of appProcesses().filter(alive)) process.kill(pid, "SIGKILL");
  }
}

/** Waits for the fixture server to connect (approving it when asked) and allows its tools. */

async function ready(session) {
  const deadline = Date.now() + 30_000;
  while ((await session.findAll("[data-testid=chip-quit][data-status=connected]")).length === 0) {
    const approve = await session.findAll("[data-testid=approve-all]");
    if (approve.length) await session.click(approve[0]).catch(() => {});
    if (Date.now() > deadline) throw new Error("the fixture server did not connect");
    await sleep(150);
  }
  await session.run("return window.__TAURI_INTERNALS__.invoke('set_permission', { tool: 'mcp__quit__*', permission: 'allow' })");
  const [pid] = appProcesses().filter(alive);
  assert.ok(pid, "the app's process");
  return { session, pid };
}

/** The names of the views that recorded `live` since `from` lines, once there are `n`. */
async function liveViews(n, from) {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const live = recorded().slice(from).filter((w) => w[0] === "live").map((w) => w[1]);
    if (live.length >= n) return live;
    if (Date.now() > deadline) throw new Error(`${live.length} of ${n} views recorded that they are live`);
    await sleep(100);
  }
}

/** Runs the fixture's `show_file` from its tool panel (with `args` as JSON when given)
 * until its view is live; the view's id, as it recorded it. */
async function viewFromToolPanel(session, from, args) {
  await session.click(await session.waitFor("[data-testid=chip-quit][data-status=connected]", "quit to connect"));
  await session.click(await session.waitFor('[data-tool="mcp__quit__show_file"]', "the tool show_file"));
  if (args) {
    await session.click(await session.waitFor("[data-testid=raw-toggle]", "Edit as JSON"));
    const field = await session.waitFor("[data-testid=raw-args]", "the arguments as JSON");
    await session.clear(field);
    await session.type(field, args);
  }
  await session.click(await session.waitFor("[data-testid=run-tool]", "the Run button"));
  await session.waitFor('[data-testid=view][data-server=quit][data-live="1"]', "the view to be live");
  return liveViews(1, from);
}

/** Closes the window as a user does (`keys`: Ctrl+Q instead of the close button); resolves to the ms until the process is gone. */
async function closeAndTime(pid, { keys = false } = {}) {
  const started = performance.now();
  const reached = execFileSync("python3", [CLOSE_WINDOW, ...(keys ? ["--keys"] : []), String(pid)], { encoding: "utf8" }).trim();
  assert.equal(reached, "1", "one window of the app to close");
  while (alive(pid) && performance.now() - started < EXIT_MS + 4000) await sleep(20);
  const ms = Math.round(performance.now() - started);
  assert.ok(!alive(pid), `the app is still running ${ms} ms after its window was closed`);
  return ms;
}

/** No server process of the project outlives the app (for a short while at most). */
async function serversGone() {
  const deadline = Date.now() + 5000;
  while (processesIn(project).length && Date.now() < deadline) await sleep(100);
  assert.deepEqual(processesIn(project), [], "server processes outlived the app");
}

describe("quitting with live MCP Apps views", () => {
  test("the close button: three views in the chat each hear `app-closed` before the app exits", () =>
    withApp(async ({ session, pid }) => {
      const from = recorded().length;
      await session.click(await session.find("[data-testid=nav-chat]"));
      const card = "[data-testid=tool-card][data-tool=mcp__quit__show_file]";
      for (let i = 1; i <= 3; i++) {
        await session.type(await session.waitFor("[data-testid=chat-input]", "the chat input"), `Show the quitter ${i}\uE007`);
        await session.waitFor(card, `view ${i} to be live`, async () => (await session.findAll(`${card} [data-testid=view][data-live="1"]`)).length === i);
        await session.waitFor("[data-testid=chat-send]", `the end of turn ${i}`);
      }
      const live = await liveViews(3, from);
      await session.screenshot("quit-1-three-views");

      const ms = await closeAndTime(pid);
      console.log(`quit with 3 live views (close button): the app was gone ${ms} ms after the close`);
      const heard = recorded().slice(from).filter((w) => w[0] === "teardown");
      assert.deepEqual(heard.map((w) => w[1]), ["app-closed", "app-closed", "app-closed"], "each view heard why it goes");
      assert.deepEqual(heard.map((w) => w[2]).sort(), [...live].sort(), "every live view heard it");
      assert.ok(ms < EXIT_MS, `the app exited ${ms} ms after its window was closed`);
      await serversGone();
    }));

  test("File > Quit (Ctrl+Q): the view in the tool panel hears `app-closed` before the app exits", () =>
    withApp(async ({ session, pid }) => {
      const from = recorded().length;
      const live = await viewFromToolPanel(session, from);

      const ms = await closeAndTime(pid, { keys: true });
      console.log(`quit with 1 live view (File > Quit): the app was gone ${ms} ms after Ctrl+Q`);
      const heard = recorded().slice(from).filter((w) => w[0] === "teardown");
      assert.deepEqual(heard, [["teardown", "app-closed", live[0]]]);
      assert.ok(ms < EXIT_MS, `the app exited ${ms} ms after Ctrl+Q`);
      await serversGone();
    }));

  test("a view that never answers its teardown does not keep the app", () =>
    withApp(async ({ session, pid }) => {
      const from = recorded().length;
      await viewFromToolPanel(session, from, '{"note": "silent"}');

      const ms = await closeAndTime(pid);
      console.log(`quit with 1 view that never answers (close button): the app was gone ${ms} ms after the close`);
      assert.deepEqual(recorded().slice(from).filter((w) => w[0] === "teardown").map((w) => w[1]), ["app-closed"], "the view was asked");
      assert.ok(ms < EXIT_MS, `the app exited ${ms} ms after its window was closed`);
      await serversGone();
    }));

  test("a window that hangs does not keep the app: it exits after its own wait", () =>
    withApp(async ({ session, pid }) => {
      const from = recorded().length;
      await viewFromToolPanel(session, from);
      // The app's page hangs (busy for 20 s) as soon as it hears that the app quits: it
      // never tells the backend it is done.
      await session.run(
        "const i = window.__TAURI_INTERNALS__; return i.invoke('plugin:event|listen', { event: 'quitting', target: { kind: 'Any' }, handler: i.transformCallback(() => { const end = Date.now() + 20000; while (Date.now() < end); }) })",
      );

      const ms = await closeAndTime(pid);
      console.log(`quit with the window's page hung (close button): the app was gone ${ms} ms after the close`);
      assert.ok(ms < EXIT_MS, `the app exited ${ms} ms after its window was closed`);
      await serversGone();
    }));

  test("no view: the window closes at once", () =>
    withApp(async ({ pid }) => {
      const from = recorded().length;
      const ms = await closeAndTime(pid);
      console.log(`quit with no view (close button): the app was gone ${ms} ms after the close`);
      assert.deepEqual(recorded().slice(from), []);
      assert.ok(ms < EXIT_MS, `the app exited ${ms} ms after its window was closed`);
      await serversGone();
    }));
});
