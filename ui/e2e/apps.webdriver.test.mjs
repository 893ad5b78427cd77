// MCP Apps views in the real desktop app (tauri-driver + WebKitWebDriver under Xvfb).
//
// A project with two servers: the official `@modelcontextprotocol/server-basic-vanillajs`
// example (stdio) and the apps fixture (crates/fixtures) serving the hostile page
// ui/e2e/views/hostile.html as its view.
// - basic: the view appears under the tool's result on its server's own origin, gets the
//   call's input and result, is resized by what it reports, follows the app's theme, a
//   click inside it calls a tool of its server, and closing it tears it down.
// - probe (ui/e2e/views/probe.html, the protocol by hand): full screen when it asks, Esc
//   returns inline and the view is told; a link waits for the user, who may refuse; its
//   server stops and the view is torn down.
// - chat: the scripted model (anthropic-stub.mjs) calls get-time; its card shows the view;
//   another conversation and back reopens the view with the stored result.
// - chat, probe: the model writes a call of the probe's tool slowly: its view opens while
//   the call is written and hears the partial input, the input, then the result; a denied
//   call is cancelled for its view; a restart of its server and leaving the conversation
//   tear the views down: each view hears why (`server-restarted`, `conversation-left`)
//   while its frame is still there, and then the frame is gone.
// - isolation: the hostile view tries every way to reach the app's commands (the script
//   message handler with every shape, parent/top, postMessage to the app window, fetch and
//   XHR to the IPC, navigation of top, popups, a form post, a frame of the app's origin,
//   navigating itself to the app's origin) and nothing reaches a command: the app logs
//   every command it runs (HARNESS9_COMMAND_LOG) and only the app's own origin appears.
//
// Env as webdriver.test.mjs, plus H9_APPS_BASIC_BIN (default
// .deps/node/node_modules/.bin/mcp-server-basic-vanillajs) and WEBDRIVER_APPS_PORT
// (default 4446).

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { ROOT } from "./serve.mjs";
import { APP, APPS_FIXTURE, checkReady, ELEMENT, Session, WAIT_MS, alive, appProcesses, processesIn, sleep, startDriver } from "./wd.mjs";
import { ANSWER, startAnthropicStub } from "./anthropic-stub.mjs";

const PORT = Number(process.env.WEBDRIVER_APPS_PORT ?? 4446);
const FIXTURE = APPS_FIXTURE;
const HOSTILE = path.join(ROOT, "ui", "e2e", "views", "hostile.html");
const PROBE = path.join(ROOT, "ui", "e2e", "views", "probe.html");
const MARKER = "hostile-marker-7f3a";
/** What the scripted model writes, slowly, as the probe tool's argument. */
const NOTE = "a note the model writes slowly, eight characters at a time";

function basicBinary() {
  const bin = process.env.H9_APPS_BASIC_BIN ?? path.join(ROOT, ".deps", "node", "node_modules", ".bin", "mcp-server-basic-vanillajs");
  if (!existsSync(bin)) throw new Error(`${bin} is missing: run \`bash scripts/setup.sh\``);
  return bin;
}

let driver;
let session;
let project;
let commandLog;
let model;

before(async () => {
  checkReady();
  const tmp = mkdtempSync(path.join(os.tmpdir(), "h9-apps-e2e-"));
  project = path.join(tmp, "project");
  mkdirSync(project);
  commandLog = path.join(tmp, "commands.log");
  const config = {
    mcpServers: {
      basic: { command: basicBinary(), args: ["--stdio"] },
      apps: { command: FIXTURE, env: { APPS_FIXTURE_VIEW: HOSTILE } },
      probe: { command: FIXTURE, env: { APPS_FIXTURE_VIEW: PROBE } },
    },
  };
  writeFileSync(path.join(project, ".mcp.json"), JSON.stringify(config, null, 2) + "\n");
  // The chat's scripted model asks for basic's get-time when asked for the time.
  model = await startAnthropicStub({
    tool: "mcp__basic__get-time",
    trigger: /server time/,
    slow: [{ trigger: /probe note/, tool: "mcp__probe__show_file", input: { note: NOTE }, piece: 8, everyMs: 250 }],
  });
  driver = await startDriver(PORT, {
    ...process.env,
    HARNESS9_DATA_DIR: path.join(tmp, "data"),
    HARNESS9_PROJECT: project,
    HARNESS9_COMMAND_LOG: commandLog,
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
  session = await Session.create(`http://127.0.0.1:${PORT}`, { "tauri:options": { application: APP } });
});

after(async () => {
  const apps = appProcesses();
  await session?.close().catch(() => {});
  let deadline = Date.now() + 10_000;
  while (apps.some(alive) && Date.now() < deadline) await sleep(200);
  for (const pid of apps.filter(alive)) process.kill(pid, "SIGKILL");
  driver?.kill();
  await model?.close();
  if (project) {
    deadline = Date.now() + 10_000;
    while (processesIn(project).length && Date.now() < deadline) await sleep(200);
    rmSync(path.dirname(project), { recursive: true, force: true });
  }
});

/** Opens `server`'s tool `tool` in the tool panel and runs it. */
async function runTool(server, tool) {
  await session.leaveFrames();
  await session.click(await session.waitFor(`[data-testid=chip-${server}][data-status=connected]`, `${server} to connect`));
  await session.waitFor("[data-testid=server-panel]", "the server panel");
  await session.click(await session.waitFor(`[data-tool="mcp__${server}__${tool}"]`, `the tool ${tool}`));
  await session.click(await session.waitFor("[data-testid=run-tool]", "the Run button"));
}

/** The frame of `server`'s live view, once it said it is initialized. */
async function liveView(server) {
  await session.waitFor(`[data-testid=view][data-server=${server}][data-live="1"]`, `the view of ${server} to be live`);
  return session.find(`[data-testid=view][data-server=${server}] [data-testid=view-frame]`);
}

/** Scrolls `server`'s live view into sight and switches into its frame (for clicks inside). */
async function enterView(server) {
  await session.leaveFrames();
  const view = await session.find(`[data-testid=view][data-server=${server}]`);
  // Until it stays put: the card above may still grow after the view came, and a click at
  // where the frame was lands outside it.
  let last = null;
  for (let i = 0; i < 30; i++) {
    await session.run("arguments[0].scrollIntoView({ block: 'start' })", { [ELEMENT]: view });
    await sleep(150);
    const top = await session.run("return Math.round(arguments[0].getBoundingClientRect().top)", { [ELEMENT]: view });
    if (top === last) break;
    last = top;
  }
  await session.enterFrame(await liveView(server));
}

async function frameHeight(frame) {
  return session.run("return arguments[0].getBoundingClientRect().height", { [ELEMENT]: frame });
}

/**
 * Answers an ask of a view for a tool call with "Allow once" if one comes before `done()`
 * holds (at most `ms`: a loaded machine may take seconds to show the ask).
 */
async function allowIfAsked(done, ms = WAIT_MS) {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    const dialogs = await session.findAll("[data-testid=ask-dialog] [data-testid=ask-approve]");
    if (dialogs.length) {
      await session.click(dialogs[0]);
      return true;
    }
    if (await done()) return false;
    await sleep(150);
  }
  return false;
}

function commandLines() {
  return existsSync(commandLog)
    ? readFileSync(commandLog, "utf8")
        .split("\n")
        .filter(Boolean)
        .map((l) => {
          const [verdict, command, origin] = l.split(" ");
          return { verdict, command, origin };
        })
    : [];
}

describe("MCP Apps views in the desktop app", () => {
  test("basic-vanillajs: the view shows input and result, resizes, follows the theme, calls its server, and tears down", async () => {
    await session.click(await session.waitFor("[data-testid=approve-all]", "the approval of the servers"));
    await runTool("basic", "get-time");
    const frame = await liveView("basic");
    assert.match(await session.attr(frame, "data-origin"), /^h9view:\/\/[a-z0-9]+$/);
    assert.equal(await session.attr(frame, "sandbox"), "allow-scripts allow-same-origin allow-forms");
    // The view reported its size: the frame is no longer the first 160 px.
    const deadline = Date.now() + 10_000;
    let height = await frameHeight(frame);
    while (height === 160 && Date.now() < deadline) {
      await sleep(100);
      height = await frameHeight(frame);
    }
    assert.notEqual(height, 160, "the view's size-changed was applied");
    assert.ok(height > 24 && height <= 2000, `height ${height}`);

    await session.enterFrame(frame);
    const time = await session.waitFor("#server-time", "the result in the view", async (el) => !/Loading/.test(await session.text(el)));
    const first = await session.text(time);
    assert.match(first, /\d/);
    assert.equal(await session.run("return location.origin"), await session.run("return location.protocol + '//' + location.host"));
    const nav = await session.run(
      "const n = performance.getEntriesByType('navigation')[0]; return n && { served: n.responseEnd - n.requestStart, loaded: n.loadEventEnd - n.startTime, bytes: document.documentElement.outerHTML.length }",
    );
    console.log(`basic-vanillajs view document: served in ${nav?.served?.toFixed(1)} ms, loaded in ${nav?.loaded?.toFixed(1)} ms (${nav?.bytes} characters)`);
    const viewTheme = await session.run("return document.documentElement.getAttribute('data-theme')");
    await session.leaveFrames();
    const appTheme = await session.run("return document.documentElement.dataset.theme");
    assert.equal(viewTheme, appTheme);
    await session.screenshot("apps-1-basic");

    // The theme follows the app.
    const other = appTheme === "dark" ? "light" : "dark";
    await session.click(await session.find(`[data-testid=theme] option[value=${other}]`));
    await session.enterFrame(await liveView("basic"));
    const until = Date.now() + 15_000;
    let now = await session.run("return document.documentElement.getAttribute('data-theme')");
    while (now !== other && Date.now() < until) {
      await sleep(100);
      now = await session.run("return document.documentElement.getAttribute('data-theme')");
    }
    assert.equal(now, other, "the view's theme follows the app");

    // A click inside the view calls get-time on its own server.
    await session.leaveFrames();
    const view = await session.find("[data-testid=view][data-server=basic]");
    await session.run("arguments[0].scrollIntoView({ block: 'start' })", { [ELEMENT]: view });
    await session.enterFrame(await liveView("basic"));
    const button = await session.find("#get-time-btn");
    await session.run("arguments[0].scrollIntoView({ block: 'center' })", { [ELEMENT]: button });
    await sleep(300);
    await session.click(button);
    await session.leaveFrames();
    await allowIfAsked(async () => {
      await session.enterFrame(await liveView("basic"));
      const now = await session.text(await session.find("#server-time"));
      await session.leaveFrames();
      return now !== first;
    });
    await session.enterFrame(await liveView("basic"));
    await session.waitFor("#server-time", "the new time", async (el) => (await session.text(el)) !== first);
    await session.leaveFrames();
    await session.screenshot("apps-2-basic-dark");

    // A message from the view waits, marked as the view's, until sent or discarded.
    await session.enterFrame(await liveView("basic"));
    await session.click(await session.find("#send-message-btn"));
    await session.leaveFrames();
    const pending = await session.waitFor("[data-testid=view][data-server=basic] [data-testid=pending-message]", "the view's pending message");
    assert.match(await session.text(pending), /From the view of get-time \(basic\), not sent yet: This is message text\./);
    await session.screenshot("apps-3-pending-message");
    await session.click(await session.find("[data-testid=pending-discard]"));
    for (let i = 0; i < 30 && (await session.findAll("[data-testid=pending-message]")).length; i++) await sleep(100);
    assert.equal((await session.findAll("[data-testid=pending-message]")).length, 0);

    // Close: the view gets its teardown request, then the frame is gone.
    await session.click(await session.find("[data-testid=view][data-server=basic] [data-testid=view-close]"));
    await session.waitFor("[data-testid=view][data-server=basic] [data-testid=view-ended]", "the view closed");
    assert.equal((await session.findAll("[data-testid=view][data-server=basic] [data-testid=view-frame]")).length, 0);
  });

  test("full screen when the view asks, Esc returns; a link waits for the user", async () => {
    await runTool("probe", "show_file");
    const view = "[data-testid=view][data-server=probe]";
    await enterView("probe");
    await session.waitFor("#context", "the first host context", async (el) => (await session.text(el)) === "inline");
    await session.click(await session.find("#fullscreen"));
    await session.waitFor("#mode", "full screen granted", async (el) => (await session.text(el)) === "fullscreen");
    await session.waitFor("#context", "the context in full screen", async (el) => (await session.text(el)) === "fullscreen");
    await session.leaveFrames();
    const full = await session.waitFor(`${view}[data-mode=fullscreen]`, "the view in full screen");
    const [w, h] = await session.run("const r = arguments[0].getBoundingClientRect(); return [r.width, r.height]", { [ELEMENT]: full });
    const [ww, wh] = await session.run("return [window.innerWidth, window.innerHeight]");
    assert.ok(w === ww && h === wh, `full screen covers the window: ${w}x${h} of ${ww}x${wh}`);
    await session.screenshot("apps-6-fullscreen");
    // Esc (in the app: keys typed in the view stay in the view) returns inline, and the view
    // is told.
    await session.type(await session.find(`${view} [data-testid=view-exit-fullscreen]`), "\uE00C");
    await session.waitFor(`${view}[data-mode=inline]`, "the view inline again");
    await session.enterFrame(await liveView("probe"));
    await session.waitFor("#context", "the view told it is inline", async (el) => (await session.text(el)) === "inline");

    // A link: the user sees its host first and may refuse; the view hears the refusal.
    await enterView("probe");
    await session.click(await session.find("#open-link"));
    await session.leaveFrames();
    const domain = await session.waitFor("[data-testid=ask-dialog] [data-testid=ask-domain]", "the link's ask");
    assert.equal(await session.text(domain), "example.com");
    await session.click(await session.find("[data-testid=ask-dialog] [data-testid=ask-decline]"));
    await session.enterFrame(await liveView("probe"));
    await session.waitFor("#link", "the refusal in the view", async (el) => (await session.text(el)) === "refused");
    await session.leaveFrames();

    // Its server stops: the core tears the view down and its frame goes (with the tool's
    // panel, as the tool is gone); the server's log says so.
    await session.click(await session.find("[data-testid=server-panel] [data-testid=stop]"));
    await session.waitFor("[data-testid=server-panel]", "the teardown in the server's log", async (el) => /closed: its server stopped/.test(await session.text(el)));
    for (let i = 0; i < 50 && (await session.findAll(`${view} [data-testid=view-frame]`)).length; i++) await sleep(100);
    assert.equal((await session.findAll(`${view} [data-testid=view-frame]`)).length, 0);
  });

  test("chat: the model's call shows its view on the card; a reopened conversation opens it again", async () => {
    await session.leaveFrames();
    await session.click(await session.find("[data-testid=nav-chat]"));
    const input = await session.waitFor("[data-testid=chat-input]", "the chat input");
    await session.type(input, "What is the server time?\uE007");
    const approve = await session.waitFor("[data-testid=approve-once]", "the approval of the model's call");
    await session.click(approve);
    const card = "[data-testid=tool-card][data-tool=mcp__basic__get-time]";
    await session.waitFor(`${card} [data-testid=view][data-live="1"]`, "the view on the card");
    await session.waitForLast("[data-testid=chat-assistant]", "the answer", async (el) => (await session.text(el)) === ANSWER.join("").replaceAll("**", "").trim());
    await session.enterFrame(await session.find(`${card} [data-testid=view-frame]`));
    await session.waitFor("#server-time", "the result in the chat's view", async (el) => /\d{4}-\d\d-\d\dT/.test(await session.text(el)));
    await session.leaveFrames();
    await session.screenshot("apps-5-chat-view");

    // Another conversation: the view goes; the earlier one reopened: the view comes back live.
    await session.click(await session.find("[data-testid=chat-new]"));
    await session.waitFor("[data-testid=chat-log]", "an empty log", async () => (await session.findAll(card)).length === 0);
    await session.click(await session.find("[data-testid=chat-history] summary"));
    const earlier = await session.waitFor("[data-testid=chat-conversation]:not([disabled])", "the earlier conversation", async (el) =>
      /server time/.test(await session.text(el)),
    );
    await session.click(earlier);
    await session.waitFor(`${card} [data-testid=view][data-live="1"]`, "the view reopened with the conversation");
    await session.enterFrame(await session.find(`${card} [data-testid=view-frame]`));
    await session.waitFor("#server-time", "the stored result in the reopened view", async (el) => /\d{4}-\d\d-\d\dT/.test(await session.text(el)));
    await session.leaveFrames();
  });

  test("chat: a view opens while its call is written, hears the input as it grows, and hears why it goes before its frame does", async () => {
    await session.leaveFrames();
    const probe = "[data-testid=tool-card][data-tool=mcp__probe__show_file]";
    // The probe server was stopped by an earlier test.
    await session.run("return window.__TAURI_INTERNALS__.invoke('restart_server', { server: 'probe' })");
    await session.waitFor("[data-testid=chip-probe][data-status=connected]", "probe to connect again");
    await session.click(await session.find("[data-testid=nav-chat]"));
    await session.click(await session.waitFor("[data-testid=chat-new]", "New conversation"));
    const input = await session.waitFor("[data-testid=chat-input]", "the chat input");
    await session.type(input, "Show the probe note\uE007");
    // The card and its view come while the model still writes the call (the partial input
    // the view hears below proves it was live before the call was complete).
    await session.waitFor(`${probe}[data-status=writing] [data-testid=view]`, "the card and view while the call is written");
    await session.click(await session.waitFor(`${probe} [data-testid=approve-once]`, "the approval of the call"));
    await session.waitFor(`${probe}[data-status=ok]`, "the call's result");
    const frame = await session.find(`${probe} [data-testid=view-frame]`);
    await session.enterFrame(frame);
    const log = await session.waitFor("#log", "the result in the probe", async (el) => /result/.test(await session.text(el)));
    const lines = JSON.parse(await session.attr(log, "data-lines"));
    await session.leaveFrames();
    const partials = lines.filter((l) => l.startsWith("partial "));
    assert.ok(partials.length >= 1, `partial input while the call was written: ${lines.join(" | ")}`);
    for (const p of partials) assert.ok(NOTE.startsWith(JSON.parse(p.slice(8)).note ?? ""), p);
    assert.deepEqual(lines.slice(partials.length), [`input ${JSON.stringify({ note: NOTE })}`, "result"]);
    assert.equal(lines.slice(0, partials.length).join(), partials.join(), "partial input only before the input");

    // A denied call: its view hears that it was cancelled.
    await session.type(await session.find("[data-testid=chat-input]"), "The probe note again\uE007");
    await session.waitForLast(`${probe} [data-testid=view][data-live="1"]`, "the second view", async () => true);
    await session.click(await session.waitFor(`${probe}[data-status=approval] [data-testid=approve-deny]`, "the second approval"));
    await session.waitForLast(`${probe}[data-status=denied]`, "the denial", async () => true);
    const second = (await session.findAll(`${probe} [data-testid=view-frame]`)).at(-1);
    await session.enterFrame(second);
    await session.waitFor("#log", "the cancellation in the view", async (el) => /cancelled denied by the user/.test(await session.text(el)));
    await session.leaveFrames();
    await session.waitFor("[data-testid=chat-send]", "the end of the turn");
    await session.screenshot("apps-7-probe-chat");

    /** Triggers `script` in the app's window, then reads, inside `frame` (still there), why the view is told it goes. */
    async function heardTeardown(frameEl, script) {
      await session.run(script);
      await session.enterFrame(frameEl);
      const why = await session.waitFor("#teardown", "the teardown request in the view", async (el) => (await session.text(el)) !== "-", 3000);
      const reason = await session.text(why);
      await session.leaveFrames();
      return reason;
    }

    // A restart of the server: each view hears it is a restart, then its frame goes.
    const frames = await session.findAll(`${probe} [data-testid=view-frame]`);
    assert.equal(frames.length, 2);
    assert.equal(await heardTeardown(frames[0], "window.__TAURI_INTERNALS__.invoke('restart_server', { server: 'probe' }); return 1"), "server-restarted");
    for (let i = 0; i < 50 && (await session.findAll(`${probe} [data-testid=view-frame]`)).length; i++) await sleep(100);
    assert.equal((await session.findAll(`${probe} [data-testid=view-frame]`)).length, 0, "the frames are gone after the teardown");
    const ended = await session.findAll(`${probe} [data-testid=view-ended]`);
    assert.equal(ended.length, 2);
    assert.match(await session.text(ended[0]), /its server restarted/);

    // Leaving the conversation: the view hears it, then its frame goes with the card.
    await session.waitFor("[data-testid=chip-probe][data-status=connected]", "probe to connect again");
    await session.click(await session.find(`${probe} [data-testid=view-ended] button`));
    await session.waitFor(`${probe} [data-testid=view][data-live="1"]`, "the view opened again");
    const again = await session.find(`${probe} [data-testid=view-frame]`);
    assert.equal(await heardTeardown(again, "document.querySelector('[data-testid=chat-new]').click(); return 1"), "conversation-left");
    for (let i = 0; i < 50 && (await session.findAll(probe)).length; i++) await sleep(100);
    assert.equal((await session.findAll(probe)).length, 0, "the card and its frame are gone");
  });

  test("isolation: a hostile view reaches no command, whatever it tries", async () => {
    const before = commandLines().length;
    await runTool("apps", "show_file");
    const frame = await session.waitFor("[data-testid=view][data-server=apps] [data-testid=view-frame]", "the hostile view");
    await session.enterFrame(frame);
    await session.waitFor("#status", "the hostile view to finish", async (el) => (await session.text(el)) === "done", 20_000);
    const r = JSON.parse(await session.run("return document.body.dataset.results"));
    await session.leaveFrames();
    await session.screenshot("apps-4-hostile");
    console.log("hostile view:", JSON.stringify(r));

    assert.match(r.origin, /^h9view:\/\/[a-z0-9]+$/);
    // No script message handler, no Tauri globals, in the view.
    assert.equal(r.handler, "undefined");
    assert.equal(r.windowIpc, "undefined");
    assert.equal(r.internals, "undefined");
    assert.equal(r.tauri, "undefined");
    assert.equal(r.post, "no handler");
    // The app's window is another origin.
    for (const k of ["parentInternals", "topDocument", "parentHref", "parentInvoke"]) assert.match(r[k], /^threw/, `${k}: ${r[k]}`);
    // The IPC protocol and the app's origin cannot be fetched.
    for (const k of ["fetchIpc", "fetchIpcHttp", "fetchApp"]) assert.match(r[k], /^failed/, `${k}: ${r[k]}`);
    // No top navigation, no popup, no frame of the app.
    assert.match(r.topNavigate, /^threw/);
    assert.equal(r.openApp, "null");
    assert.equal(r.openWeb, "null");
    // A frame of the app's origin is blocked (what loads instead is an empty document of
    // the view's own origin).
    assert.match(r.nestedApp, /^(blocked|loaded about:blank undefined|loaded, not readable)/, r.nestedApp);
    // By the rules, a view reaches only its own server's tools visible to views.
    assert.equal(r.initialize, "answered");
    assert.equal(r.callModelOnly, "error -32000");
    assert.equal(r.callOtherServer, "error -32000");

    // The view navigates itself to the app's origin: the frame stays on its own origin.
    await session.enterFrame(await session.find("[data-testid=view][data-server=apps] [data-testid=view-frame]"));
    await session.run("location.href = 'tauri://localhost/index.html'; return 1");
    await session.leaveFrames();
    await sleep(1500);
    const reach = await session.run(
      "const f = document.querySelector('[data-testid=view][data-server=apps] [data-testid=view-frame]'); try { return 'readable ' + f.contentWindow.location.href } catch (e) { return 'cross-origin' }",
    );
    assert.equal(reach, "cross-origin");
    // The app still works.
    await session.waitFor("[data-testid=chip-apps][data-status=connected]", "the app to keep working");

    // Nothing but the app's own document reached a command, and nothing the view posted
    // reached Tauri's IPC handler.
    const lines = commandLines().slice(before);
    assert.ok(lines.length > 0, "the app's own commands are logged");
    assert.deepEqual(
      lines.filter((l) => l.verdict !== "admitted" || l.origin !== "tauri://localhost"),
      [],
      "a command from another origin",
    );
    assert.deepEqual(lines.filter((l) => l.command === "open_url"), []);
    assert.doesNotMatch(driver.stderrText, /__TAURI_INVOKE_KEY__/);
    assert.doesNotMatch(driver.stderrText, new RegExp(MARKER));
  });
});
