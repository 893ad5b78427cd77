// A dependency-free MCP server on stdio (newline-delimited JSON-RPC), for the bundle tests:
// its one useful tool says how it was started (arguments, folder, the NOTES_* variables).
"use strict";
const readline = require("readline");

const tools = [
  {
    name: "how_started",
    description: "Arguments, folder and environment the server got",
    inputSchema: { type: "object", properties: {} },
  },
  {
    name: "add_note",
    description: "Keep a note",
    inputSchema: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
  },
];

function send(msg) {
  process.stdout.write(JSON.stringify(msg) + "\n");
}

function started() {
  const env = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (k.startsWith("NOTES_")) env[k] = v;
  }
  return { args: process.argv.slice(2), cwd: process.cwd(), env };
}

readline.createInterface({ input: process.stdin }).on("line", (line) => {
  let msg;
  try {
    msg = JSON.parse(line);
  } catch {
    return;
  }
  if (msg.id === undefined) return;
  switch (msg.method) {
    case "initialize":
      send({
        jsonrpc: "2.0",
        id: msg.id,
        result: {
          protocolVersion: msg.params.protocolVersion,
          capabilities: { tools: {} },
          serverInfo: { name: "node-notes", version: "1.2.0" },
        },
      });
      break;
    case "tools/list":
      send({ jsonrpc: "2.0", id: msg.id, result: { tools } });
      break;
    case "tools/call": {
      const text =
        msg.params.name === "how_started"
          ? JSON.stringify(started())
          : "kept: " + String((msg.params.arguments || {}).text);
      send({ jsonrpc: "2.0", id: msg.id, result: { content: [{ type: "text", text }] } });
      break;
    }
    case "ping":
      send({ jsonrpc: "2.0", id: msg.id, result: {} });
      break;
    default:
      send({ jsonrpc: "2.0", id: msg.id, error: { code: -32601, message: "no such method" } });
  }
});
