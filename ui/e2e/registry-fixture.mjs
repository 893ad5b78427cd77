// Our MCP registry fixture (`mcp-registry-fixture`, crates/fixtures: the registry's read API
// on loopback, serving real records of the registry's seed data and the test's own) for the
// desktop tests and figures.

import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import path from "node:path";
import readline from "node:readline";
import { APP } from "./wd.mjs";

/** Where the test's remote servers "are": nothing listens there, so they fail fast. */
export const REMOTE = "http://127.0.0.1:9";

/**
 * A server of the test's own in two versions: a remote whose URL changes between them,
 * with a secret required header and a plain one with a default.
 */
export const FORECAST = ["1.0.0", "2.0.0"].map((version) => ({
  name: "io.example.weather/forecast",
  title: "Forecast",
  description: "Weather forecasts for a place",
  repository: { url: "https://example.invalid/forecast", source: "github" },
  version,
  remotes: [
    {
      type: "streamable-http",
      url: `${REMOTE}/v${version[0]}/mcp`,
      headers: [
        { name: "X-Api-Key", description: "Your forecast key", isRequired: true, isSecret: true },
        { name: "X-Region", description: "Where", isRequired: true, default: "eu" },
      ],
    },
  ],
}));

/** The fixture binary, beside the app under test (built by `cargo build -p harness9-fixtures`). */
export const REGISTRY_BINARY = path.join(path.dirname(APP), "mcp-registry-fixture");

/**
 * Starts the fixture with the seed records and `records` (written to `file`), in pages of
 * `pageSize`; resolves with its URL and a stop function.
 */
export async function startRegistry(file, records = [], pageSize = 20) {
  writeFileSync(file, JSON.stringify(records));
  const child = spawn(REGISTRY_BINARY, ["--records", file, "--page-size", String(pageSize)], { stdio: ["ignore", "pipe", "inherit"] });
  const url = await new Promise((resolve, reject) => {
    child.once("error", reject);
    child.once("exit", (code) => reject(new Error(`mcp-registry-fixture exited (${code}) before printing its URL`)));
    readline.createInterface({ input: child.stdout }).once("line", (l) => resolve(l.trim()));
  });
  return { url, base: REMOTE, stop: () => child.kill() };
}
