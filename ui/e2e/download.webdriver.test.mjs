// A view's download in the real desktop app (tauri-driver + WebKitWebDriver under Xvfb),
// through the native save dialog the user sees.
//
// A project with the apps fixture (crates/fixtures) serving ui/e2e/views/downloader.html as
// the view of its `show_file` tool: a view that, when clicked, offers `report.bin` (every
// byte value, then UTF-8 text, as a base64 blob) with `ui/download-file`. The app shows
// GTK's save dialog, a top-level window of its own process; x11-keys.py finds it, focuses
// it, and types as a user does (XTest key events):
// - saved: Ctrl+A, a full path, Return: the file at that path holds exactly the bytes the
//   view offered, nothing else is written, and the view hears `{}` (saved);
// - cancelled: Esc: nothing is written, and the view hears `{"isError":true}` (not saved).
// One app for both; how long the dialog took to come and to go is printed.
//
// Env as apps.webdriver.test.mjs, plus WEBDRIVER_DOWNLOAD_PORT (default 4454).

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { ROOT } from "./serve.mjs";
import { APP, APPS_FIXTURE, checkReady, ELEMENT, Session, alive, appProcesses, processesIn, sleep, startDriver } from "./wd.mjs";

const PORT = Number(process.env.WEBDRIVER_DOWNLOAD_PORT ?? 4454);
const FIXTURE = APPS_FIXTURE;
const DOWNLOADER = path.join(ROOT, "ui", "e2e", "views", "downloader.html");
const KEYS = path.join(ROOT, "ui", "e2e", "x11-keys.py");
/** The title of GTK's save dialog (the app gives it none of its own). */
const SAVE_DIALOG = "^Save File$";

let driver;
let session;
let tmp;
let saves;
let pid;

before(async () => {
  checkReady();
  if (!process.env.DISPLAY) throw new Error("no X display: run this test under Xvfb (the save dialog is driven through X11)");
  // Lowercase letters, digits and `-` only: the path is typed key by key into the dialog.
  tmp = path.join(os.tmpdir(), `h9-download-e2e-${randomBytes(4).toString("hex")}`);
  const project = path.join(tmp, "project");
  saves = path.join(tmp, "saves");
  mkdirSync(project, { recursive: true });
  mkdirSync(saves);
  const config = { mcpServers: { files: { command: FIXTURE, env: { APPS_FIXTURE_VIEW: DOWNLOADER } } } };
  writeFileSync(path.join(project, ".mcp.json"), JSON.stringify(config, null, 2) + "\n");
  driver = await startDriver(PORT, {
    ...process.env,
    HARNESS9_DATA_DIR: path.join(tmp, "data"),
    HARNESS9_PROJECT: project,
    OPENAI_API_KEY: "",
    OPENAI_BASE_URL: "",
    ANTHROPIC_API_KEY: "",
    XDG_DATA_HOME: path.join(tmp, "xdg-data"),
    XDG_CACHE_HOME: path.join(tmp, "xdg-cache"),
    XDG_CONFIG_HOME: path.join(tmp, "xdg-config"),
  });
  session = await Session.create(`http://127.0.0.1:${PORT}`, { "tauri:options": { application: APP } });
  [pid] = appProcesses().filter(alive);
  assert.ok(pid, "the app's process");
});

after(async () => {
  const apps = appProcesses();
  await session?.close().catch(() => {});
  let deadline = Date.now() + 10_000;
  while (apps.some(alive) && Date.now() < deadline) await sleep(200);
  for (const p of apps.filter(alive)) process.kill(p, "SIGKILL");
  driver?.kill();
  if (tmp) {
    deadline = Date.now() + 10_000;
    while (processesIn(path.join(tmp, "project")).length && Date.now() < deadline) await sleep(200);
    rmSync(tmp, { recursive: true, force: true });
  }
});

/** Every file under `dir`, relative to it. */
function filesUnder(dir) {
  return readdirSync(dir, { recursive: true }).sort();
}

/**
 * Clicks the view's Download button and answers the save dialog it brings with `steps`
 * (x11-keys.py's); returns what the script measured and what the view was answered.
 */
async function download(n, steps) {
  await session.leaveFrames();
  // In sight first: a click lands where the button is on the screen.
  const view = await session.find("[data-testid=view][data-server=files]");
  await session.run("arguments[0].scrollIntoView({ block: 'start' })", { [ELEMENT]: view });
  await session.enterFrame(await session.find("[data-testid=view][data-server=files] [data-testid=view-frame]"));
  await session.click(await session.find("#download"));
  const { stdout } = await promisify(execFile)("python3", [KEYS, String(pid), SAVE_DIALOG, ...steps], { encoding: "utf8" }).catch((e) => {
    throw new Error(`the save dialog: ${e.stdout || e.message}`);
  });
  const dialog = JSON.parse(stdout);
  const answer = await session.waitFor("#answer", `the view's answer to offer ${n}`, async (el) => (await session.attr(el, "data-n")) === String(n));
  const heard = JSON.parse(await session.text(answer));
  const offered = Buffer.from(await session.attr(await session.find("#offered"), "data-blob"), "base64");
  await session.leaveFrames();
  return { dialog, heard, offered };
}

describe("a view's download goes through the native save dialog", () => {
  test("saved: the path typed in the dialog gets exactly the view's bytes, and the view hears it was saved", async () => {
    const started = performance.now();
    await session.click(await session.waitFor("[data-testid=approve-all]", "the approval of the server"));
    await session.click(await session.waitFor("[data-testid=chip-files][data-status=connected]", "files to connect"));
    await session.click(await session.waitFor('[data-tool="mcp__files__show_file"]', "the tool show_file"));
    await session.click(await session.waitFor("[data-testid=run-tool]", "the Run button"));
    await session.waitFor('[data-testid=view][data-server=files][data-live="1"]', "the view to be live");

    const target = path.join(saves, "report-copy.bin");
    const { dialog, heard, offered } = await download(1, ["ctrl+a", `text=${target}`, "Return"]);
    console.log(`save dialog "${dialog.title}": waited for ${dialog.waitedMs} ms, gone ${dialog.goneMs} ms after Return`);
    assert.deepEqual(heard, {}, "the view hears the file was saved");
    assert.deepEqual(filesUnder(saves), ["report-copy.bin"], "only the file picked is written");
    assert.deepEqual([...offered.subarray(0, 256)], [...Array(256).keys()], "the view offered every byte value");
    const written = readFileSync(target);
    assert.ok(written.equals(offered), `the file holds the view's ${offered.length} bytes (it has ${written.length})`);
    // The server's log says what the view offered.
    const log = await session.text(await session.find("[data-testid=server-panel]"));
    assert.ok(log.includes(`offers report.bin (${offered.length} bytes) for download`), log);
    await session.screenshot("download-1-saved");
    console.log(`download saved through the dialog: ${Math.round(performance.now() - started)} ms from the app's first screen`);
  });

  test("cancelled: Esc in the dialog writes nothing, and the view hears it was not saved", async () => {
    const started = performance.now();
    const before = filesUnder(saves);
    const { dialog, heard } = await download(2, ["Escape"]);
    console.log(`save dialog "${dialog.title}": waited for ${dialog.waitedMs} ms, gone ${dialog.goneMs} ms after Esc`);
    assert.deepEqual(heard, { isError: true }, "the view hears nothing was saved");
    assert.deepEqual(filesUnder(saves), before, "nothing is written");
    console.log(`download cancelled in the dialog: ${Math.round(performance.now() - started)} ms`);
  });
});
