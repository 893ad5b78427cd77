// Serves the built UI (ui/dist) on 127.0.0.1 with the fake backend (ui/e2e/page.ts, bundled
// here with Vite) answering its IPC before the app's bundle runs, and launches headless
// Chromium on it. Used by chromium.test.mjs.

import { createServer } from "node:http";
import { readFile } from "node:fs/promises";
import { existsSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const HERE = path.dirname(fileURLToPath(import.meta.url));
export const ROOT = path.resolve(HERE, "..", "..");
const DIST = path.join(ROOT, "ui", "dist");

const TYPES = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".png": "image/png",
  ".svg": "image/svg+xml",
  ".json": "application/json",
};

const INJECT = `<script type="module" src="/__fake.js"></script>`;

/** The fake backend and its IPC adapter as one browser module. */
async function bundleFake() {
  const { build } = await import("vite");
  const out = await build({
    configFile: false,
    logLevel: "warn",
    root: HERE,
    build: { write: false, minify: false, target: "es2022", lib: { entry: "page.ts", formats: ["es"], fileName: "fake" } },
  });
  return (Array.isArray(out) ? out[0] : out).output[0].code;
}

/** Starts the server; resolves to { url, close }. */
export async function serveUi() {
  if (!existsSync(path.join(DIST, "index.html"))) {
    throw new Error("ui/dist is missing: run `npm run build` first");
  }
  const fake = await bundleFake();
  const server = createServer(async (req, res) => {
    try {
      const url = new URL(req.url ?? "/", "http://x");
      if (url.pathname === "/__fake.js") {
        res.writeHead(200, { "content-type": TYPES[".js"] }).end(fake);
        return;
      }
      const file = path.join(DIST, url.pathname === "/" ? "index.html" : path.normalize(url.pathname));
      if (!file.startsWith(DIST)) {
        res.writeHead(403).end();
        return;
      }
      let body = await readFile(file);
      if (file.endsWith("index.html")) body = Buffer.from(body.toString().replace("<head>", `<head>${INJECT}`));
      res.writeHead(200, { "content-type": TYPES[path.extname(file)] ?? "application/octet-stream" });
      res.end(body);
    } catch {
      res.writeHead(404).end();
    }
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address();
  return { url: `http://127.0.0.1:${port}/`, close: () => new Promise((r) => server.close(r)) };
}

/** Headless Chromium from the system (Debian's `chromium` package). */
export async function launchChromium() {
  const { chromium } = await import("playwright-core");
  const executablePath = process.env.CHROMIUM_BIN ?? ["/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"].find((p) => existsSync(p));
  if (!executablePath) throw new Error("no Chromium found (install Debian's `chromium`, or set CHROMIUM_BIN)");
  return chromium.launch({
    executablePath,
    headless: true,
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-background-networking",
      "--no-first-run",
      "--disable-sync",
      "--disable-component-update",
      "--disable-dev-shm-usage",
    ],
  });
}
