// MCP Apps speed figures (a measurement, not a test), the app driven through WebDriver
// under Xvfb in its default rendering mode: a scripted model (anthropic-stub.mjs) calls
// basic-vanillajs's get-time in 20 turns of the chat, so the log holds 20 live views.
// Printed:
// - time from the call's result reaching its card (the core's `tool_call_end`) to the
//   view's `initialized` (`data-result-to-ready-ms`: 0 when the view was ready first; the
//   view opens as the call starts, in parallel with it: reading the ui:// resource from
//   the server, loading the document in the frame, the view's handshake), median and p90
//   over the 20, and from the call's start to `initialized` (`data-ready-ms`);
// - PSS of the app and its WebKit processes with 1 and with 10 live views;
// - the chat log scrolled from top to bottom over 2 s: requestAnimationFrame intervals,
//   median and 95th percentile;
// - whether views off screen are suspended: requestAnimationFrame callbacks and timer ticks
//   in 1 s inside the first view (scrolled out of sight), the last one (in sight), and the
//   last one while another panel of the app is shown (the chat hidden).
//
// Run: xvfb-run -a -s "-screen 0 1280x800x24" node ui/e2e/apps-figures.mjs
// (APP_BINARY for a release build; H9_APPS_BASIC_BIN as in apps.webdriver.test.mjs).

import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { ROOT } from "./serve.mjs";
import { APP, SHOTS, Session, appProcesses, sleep, startDriver } from "./wd.mjs";
import { startAnthropicStub } from "./anthropic-stub.mjs";

const PORT = Number(process.env.WEBDRIVER_PORT ?? 4452);
const VIEWS = 20;
const basic = process.env.H9_APPS_BASIC_BIN ?? path.join(ROOT, ".deps", "node", "node_modules", ".bin", "mcp-server-basic-vanillajs");
if (!existsSync(basic)) throw new Error(`${basic} is missing: run \`bash scripts/setup.sh\``);

/** PSS in MB of `pid` and its WebKit children. */
function pss(pid) {
  let kb = 0;
  for (const p of readdirSync("/proc").filter((x) => /^\d+$/.test(x))) {
    try {
      const stat = readFileSync(`/proc/${p}/stat`, "utf8");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      const name = readFileSync(`/proc/${p}/comm`, "utf8").trim();
      if (Number(p) !== pid && !(ppid === pid && /^WebKit/.test(name))) continue;
      const m = /^Pss:\s+(\d+)/m.exec(readFileSync(`/proc/${p}/smaps_rollup`, "utf8"));
      if (m) kb += Number(m[1]);
    } catch {
      // gone, or not ours to read
    }
  }
  return Math.round(kb / 1024);
}

const quantile = (xs, q) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(s.length * q))];
};

const tmp = mkdtempSync(path.join(os.tmpdir(), "h9-apps-figures-"));
const project = path.join(tmp, "project");
mkdirSync(project);
mkdirSync(SHOTS, { recursive: true });
writeFileSync(path.join(project, ".mcp.json"), JSON.stringify({ mcpServers: { basic: { command: basic, args: ["--stdio"] } } }));
const model = await startAnthropicStub({ tool: "mcp__basic__get-time", trigger: /server time/ });
const driver = await startDriver(PORT, {
  ...process.env,
  HARNESS9_DATA_DIR: path.join(tmp, "data"),
  HARNESS9_PROJECT: project,
  HARNESS9_PROVIDER: "anthropic",
  HARNESS9_MODEL: "stub-model",
  ANTHROPIC_BASE_URL: model.url,
  ANTHROPIC_API_KEY: "test",
  XDG_DATA_HOME: path.join(tmp, "xdg-data"),
  XDG_CACHE_HOME: path.join(tmp, "xdg-cache"),
  XDG_CONFIG_HOME: path.join(tmp, "xdg-config"),
});
const s = await Session.create(`http://127.0.0.1:${PORT}`, { "tauri:options": { application: APP } });
try {
  await s.click(await s.waitFor("[data-testid=approve-all]", "the approval"));
  await s.waitFor("[data-testid=chip-basic][data-status=connected]", "basic to connect");
  const app = appProcesses()[0];
  await s.click(await s.find("[data-testid=nav-chat]"));
  const memory = {};
  for (let i = 1; i <= VIEWS; i++) {
    const input = await s.waitFor("[data-testid=chat-input]", "the input");
    await s.type(input, `What is the server time? (${i})\uE007`);
    if (i === 1) await s.click(await s.waitFor("[data-testid=approve-always]", "the approval of get-time"));
    await s.waitFor("[data-testid=chat-send]", "the end of the turn");
    await s.waitFor(`[data-testid=tool-card]:nth-of-type(n) [data-testid=view][data-result-to-ready-ms]`, "a live view");
    for (let t = 0; t < 100 && (await s.findAll("[data-testid=view][data-result-to-ready-ms]")).length < i; t++) await sleep(100);
    if (i === 1 || i === 10) {
      await sleep(2000);
      memory[`${i} view${i > 1 ? "s" : ""}`] = pss(app);
    }
  }
  const ready = await s.run("return [...document.querySelectorAll('[data-testid=view][data-result-to-ready-ms]')].map((v) => Number(v.dataset.resultToReadyMs))");
  const fromStart = await s.run("return [...document.querySelectorAll('[data-testid=view][data-ready-ms]')].map((v) => Number(v.dataset.readyMs))");
  const scroll = await s.cmd("POST", "/execute/async", {
    script: `const done = arguments[0];
      const log = document.querySelector("[data-testid=chat-log]");
      log.scrollTop = 0;
      const times = [];
      const start = performance.now();
      const step = (ts) => {
        times.push(ts);
        const k = Math.min(1, (ts - start) / 2000);
        log.scrollTop = k * (log.scrollHeight - log.clientHeight);
        if (k < 1) requestAnimationFrame(step);
        else done(times.slice(1).map((t, i) => t - times[i]));
      };
      requestAnimationFrame(step);`,
    args: [],
  });
  await s.screenshot("apps-figures");

  // Off screen: animation frames and timer ticks in 1 s inside a view.
  const ticks = async (frame) => {
    await s.enterFrame(frame);
    const r = await s.cmd("POST", "/execute/async", {
      script: `const done = arguments[0]; let frames = 0, timers = 0;
        const f = () => { frames++; requestAnimationFrame(f); }; requestAnimationFrame(f);
        const t = setInterval(() => timers++, 50);
        setTimeout(() => { clearInterval(t); done({ frames, timers }); }, 1000);`,
      args: [],
    });
    await s.leaveFrames();
    return r;
  };
  const frames = await s.findAll("[data-testid=view-frame]");
  const offScreen = {
    firstScrolledOut: await ticks(frames[0]),
    lastInSight: await ticks(frames.at(-1)),
  };
  await s.click(await s.find("[data-testid=nav-tools]"));
  await sleep(500);
  offScreen.lastWithChatHidden = await ticks(frames.at(-1));
  await s.click(await s.find("[data-testid=nav-chat]"));
  const figures = {
    binary: APP,
    views: ready.length,
    resultToInitializedMs: { median: quantile(ready, 0.5), p90: quantile(ready, 0.9), all: ready },
    callStartToInitializedMs: { median: quantile(fromStart, 0.5), p90: quantile(fromStart, 0.9), all: fromStart },
    offScreenIn1s: offScreen,
    pssMb: memory,
    scroll20Views: { frames: scroll.length, medianMs: Math.round(quantile(scroll, 0.5) * 10) / 10, p95Ms: Math.round(quantile(scroll, 0.95) * 10) / 10 },
  };
  console.log(JSON.stringify(figures, null, 2));
  writeFileSync(path.join(ROOT, "out", "apps-figures.json"), JSON.stringify(figures, null, 2) + "\n");
} finally {
  await s.close().catch(() => {});
  driver.kill();
  await model.close();
  rmSync(tmp, { recursive: true, force: true });
}
