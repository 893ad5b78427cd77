// What WebKit's rendering mode does to MCP Apps views (a measurement, not a test): the app
// runs twice under Xvfb through WebDriver, without accelerated compositing (its default)
// and with it (`HARNESS9_WEBKIT_COMPOSITING=1`); each time a view that draws with WebGL and
// a 2D canvas (ui/e2e/views/webgl.html, served by the apps fixture) runs for 3 s. Printed:
// whether WebGL was there and its renderer, the pixel it drew, the frame intervals, and the
// memory (PSS) of the app's WebKit processes with that view open. Screenshots go to
// out/screenshots/webdriver-rendering-*.png.
//
// Run: xvfb-run -a -s "-screen 0 1280x800x24" node ui/e2e/apps-rendering.mjs

import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { ROOT } from "./serve.mjs";
import { APP, ELEMENT, SHOTS, Session, appProcesses, sleep, startDriver } from "./wd.mjs";

const PORT = Number(process.env.WEBDRIVER_PORT ?? 4450);
const FIXTURE = path.join(path.dirname(APP), "mcp-apps-fixture");
const VIEW = path.join(ROOT, "ui", "e2e", "views", "webgl.html");

/** The PSS in MB of the WebKit processes whose parent is the app. */
function webkitPss(appPid) {
  let kb = 0;
  for (const pid of readdirSync("/proc").filter((p) => /^\d+$/.test(p))) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      const name = readFileSync(`/proc/${pid}/comm`, "utf8").trim();
      if (ppid !== appPid || !/^WebKit/.test(name)) continue;
      const m = /^Pss:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/smaps_rollup`, "utf8"));
      if (m) kb += Number(m[1]);
    } catch {
      // gone, or not ours to read
    }
  }
  return Math.round(kb / 1024);
}

async function run(compositing) {
  const tmp = mkdtempSync(path.join(os.tmpdir(), "h9-rendering-"));
  const project = path.join(tmp, "project");
  mkdirSync(project);
  writeFileSync(path.join(project, ".mcp.json"), JSON.stringify({ mcpServers: { gl: { command: FIXTURE, env: { APPS_FIXTURE_VIEW: VIEW } } } }));
  const env = {
    ...process.env,
    HARNESS9_DATA_DIR: path.join(tmp, "data"),
    HARNESS9_PROJECT: project,
    HARNESS9_PROVIDER: "",
    XDG_DATA_HOME: path.join(tmp, "xdg-data"),
    XDG_CACHE_HOME: path.join(tmp, "xdg-cache"),
    XDG_CONFIG_HOME: path.join(tmp, "xdg-config"),
  };
  if (compositing) env.HARNESS9_WEBKIT_COMPOSITING = "1";
  const driver = await startDriver(PORT, env);
  const s = await Session.create(`http://127.0.0.1:${PORT}`, { "tauri:options": { application: APP } });
  try {
    await s.click(await s.waitFor("[data-testid=approve-all]", "the approval"));
    await sleep(1500);
    const before = webkitPss(appProcesses()[0]);
    await s.click(await s.waitFor("[data-testid=chip-gl][data-status=connected]", "the server"));
    await s.click(await s.waitFor('[data-tool="mcp__gl__show_file"]', "the tool"));
    await s.click(await s.waitFor("[data-testid=run-tool]", "Run"));
    const frame = await s.waitFor("[data-testid=view][data-server=gl][data-live='1'] [data-testid=view-frame]", "the view");
    await s.enterFrame(frame);
    await s.waitFor("#status", "the drawing", async (el) => (await s.text(el)) === "done", 20_000);
    const r = JSON.parse(await s.run("return document.body.dataset.results"));
    await s.leaveFrames();
    await s.run("arguments[0].scrollIntoView({ block: 'start' })", { [ELEMENT]: await s.find("[data-testid=view][data-server=gl]") });
    await s.screenshot(`rendering-${compositing ? "compositing" : "default"}`);
    const after = webkitPss(appProcesses()[0]);
    return { mode: compositing ? "compositing" : "no compositing (default)", ...r, webkitPssMB: { before, withView: after } };
  } finally {
    await s.close().catch(() => {});
    driver.kill();
    await sleep(500);
    rmSync(tmp, { recursive: true, force: true });
  }
}

mkdirSync(SHOTS, { recursive: true });
for (const compositing of [false, true]) console.log(JSON.stringify(await run(compositing)));
