// A scripted model for the WebDriver test: a local HTTP server speaking the Anthropic
// Messages API's streaming wire format (POST /v1/messages, server-sent events). A turn that
// asks about the project folder gets a tool call first (mcp__demo__list_dir with {}; both
// can be set); a
// request that carries the tool's result gets ANSWER streamed in a few pieces. A request
// without tools (a server's sampling request, a connection test) gets SAMPLED; any other turn
// gets NOTED. A key other than KEY is refused with the API's own 401 (and not recorded); the
// other requests are recorded. `slow` adds calls whose arguments are written slowly: a message
// matching one's trigger gets that tool call, its arguments' JSON streamed in pieces of
// `piece` characters `everyMs` apart (as a model writing a long argument).

import { createServer } from "node:http";

export const ANSWER = ["The project folder holds ", "**README.md** ", "and more."];
export const SAMPLED = "A haiku from the stub model.";
export const NOTED = "Noted.";
/** The only key the stub takes. */
export const KEY = "test";

/** The text of a message's content (a string or blocks). */
const textOf = (content) => (typeof content === "string" ? content : (content ?? []).map((b) => b.text ?? "").join(""));

function sse(res, events, everyMs = 0) {
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
  const line = (e) => `event: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`;
  if (!everyMs) {
    for (const e of events) res.write(line(e));
    res.end();
    return;
  }
  // Argument pieces one at a time, the rest at once.
  const queue = [...events];
  const next = () => {
    while (queue.length) {
      const e = queue.shift();
      res.write(line(e));
      if (e.delta?.type === "input_json_delta") return void setTimeout(next, everyMs);
    }
    res.end();
  };
  next();
}

function reply(blocks, stop) {
  const out = [
    {
      type: "message_start",
      message: { id: "msg_stub", type: "message", role: "assistant", model: "stub-model", content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 20, output_tokens: 1 } },
    },
  ];
  blocks.forEach((b, index) => {
    if (b.text) {
      out.push({ type: "content_block_start", index, content_block: { type: "text", text: "" } });
      for (const text of b.text) out.push({ type: "content_block_delta", index, delta: { type: "text_delta", text } });
    } else {
      out.push({ type: "content_block_start", index, content_block: { type: "tool_use", id: b.id, name: b.name, input: {} } });
      const json = JSON.stringify(b.input);
      const size = b.piece ?? json.length - 1;
      out.push({ type: "content_block_delta", index, delta: { type: "input_json_delta", partial_json: json.slice(0, 1) } });
      for (let at = 1; at < json.length; at += size) {
        out.push({ type: "content_block_delta", index, delta: { type: "input_json_delta", partial_json: json.slice(at, at + size) } });
      }
    }
    out.push({ type: "content_block_stop", index });
  });
  out.push({ type: "message_delta", delta: { stop_reason: stop, stop_sequence: null }, usage: { output_tokens: 12 } });
  out.push({ type: "message_stop" });
  return out;
}

/**
 * Starts the stub; resolves to { url, requests, close }. `tool` and `trigger`: the tool it
 * asks for, and the words of the user's message that make it ask (the demo server's
 * list_dir for a question about the project folder, unless given).
 */
export async function startAnthropicStub({ tool = "mcp__demo__list_dir", trigger = /project folder/, slow = [] } = {}) {
  const requests = [];
  const server = createServer((req, res) => {
    let body = "";
    req.on("data", (c) => (body += c));
    req.on("end", () => {
      if (req.method !== "POST" || req.url !== "/v1/messages") {
        res.writeHead(404, { "content-type": "application/json" }).end('{"type":"error","error":{"type":"not_found_error","message":"not found"}}');
        return;
      }
      const key = req.headers["x-api-key"];
      if (key !== undefined && key !== KEY) {
        res
          .writeHead(401, { "content-type": "application/json" })
          .end('{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}');
        return;
      }
      const request = JSON.parse(body);
      requests.push(request);
      const last = request.messages.at(-1);
      const answered = Array.isArray(last?.content) && last.content.some((b) => b.type === "tool_result");
      if (answered) sse(res, reply([{ text: ANSWER }], "end_turn"));
      else if (!request.tools?.length) sse(res, reply([{ text: [SAMPLED] }], "end_turn"));
      else if (slow.some((c) => c.trigger.test(textOf(last?.content)))) {
        const c = slow.find((x) => x.trigger.test(textOf(last?.content)));
        sse(res, reply([{ id: `toolu_${requests.length}`, name: c.tool, input: c.input, piece: c.piece }], "tool_use"), c.everyMs);
      } else if (!trigger.test(textOf(last?.content))) sse(res, reply([{ text: [NOTED] }], "end_turn"));
      else sse(res, reply([{ text: ["Let me look."] }, { id: `toolu_${requests.length}`, name: tool, input: {} }], "tool_use"));
    });
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    requests,
    close: () => new Promise((r) => server.close(r)),
  };
}
