// The postMessage link between the window and ONE view frame, with the checks that are
// the host's (the library's PostMessageTransport checks only the source window and posts
// to "*"):
// - a message counts only when it comes from that frame's window (`event.source`) AND from
//   that server's view origin (`event.origin`), and is a JSON-RPC 2.0 object;
// - what goes out is posted to that exact origin, never "*";
// - before the view said `ui/notifications/initialized`, only answers to its requests go
//   out; whatever else the host sends waits, in order, and leaves right after.

import type { JSONRPCMessage, Transport, TransportSendOptions } from "@modelcontextprotocol/client";

/** The method a view sends once it is ready for the host's messages. */
export const INITIALIZED = "ui/notifications/initialized";

/** Where a frame's messages come from: the window (`message` events) and the frame. */
export interface FrameLink {
  /** The window whose `message` events carry the frame's posts. */
  host: Pick<Window, "addEventListener" | "removeEventListener">;
  /** The frame's window now (null once the frame is gone). */
  frame(): MessageEventSource | null;
  /** The origin of the frame's server, e.g. `h9view://fs1a2b`. */
  origin: string;
}

/** A message the link refused, and why (for the log and the tests). */
export interface Refused {
  why: "source" | "origin" | "shape";
  origin: string;
}

function isJsonRpc(data: unknown): data is JSONRPCMessage {
  if (typeof data !== "object" || data === null || Array.isArray(data)) return false;
  const m = data as Record<string, unknown>;
  if (m.jsonrpc !== "2.0") return false;
  const hasId = typeof m.id === "string" || typeof m.id === "number";
  if (typeof m.method === "string") return m.params === undefined || (typeof m.params === "object" && m.params !== null);
  return hasId && ("result" in m || "error" in m);
}

/** True for an answer to a request (a result or an error), which may go out at any time. */
function isAnswer(m: JSONRPCMessage): boolean {
  return !("method" in m);
}

export class FrameTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: <T extends JSONRPCMessage>(message: T) => void;
  /** Told of every message refused (tests and the log). */
  onrefused?: (r: Refused) => void;

  #link: FrameLink;
  #ready = false;
  #held: JSONRPCMessage[] = [];
  #closed = false;
  #listener = (event: MessageEvent) => this.#receive(event);

  constructor(link: FrameLink) {
    this.#link = link;
  }

  /** Whether the view said it is initialized. */
  get ready(): boolean {
    return this.#ready;
  }

  async start(): Promise<void> {
    this.#link.host.addEventListener("message", this.#listener as EventListener);
  }

  #receive(event: MessageEvent) {
    if (this.#closed) return;
    const frame = this.#link.frame();
    if (!frame || event.source !== frame) {
      // Messages of other frames (other views, the app's own) are not ours: say nothing
      // unless they claim this view's origin.
      if (event.origin === this.#link.origin) this.onrefused?.({ why: "source", origin: event.origin });
      return;
    }
    if (event.origin !== this.#link.origin) {
      this.onrefused?.({ why: "origin", origin: event.origin });
      return;
    }
    if (!isJsonRpc(event.data)) {
      this.onrefused?.({ why: "shape", origin: event.origin });
      return;
    }
    const message = event.data;
    this.onmessage?.(message);
    if ("method" in message && message.method === INITIALIZED && !("id" in message) && !this.#ready) {
      this.#ready = true;
      const held = this.#held;
      this.#held = [];
      for (const m of held) this.#post(m);
    }
  }

  async send(message: JSONRPCMessage, _options?: TransportSendOptions): Promise<void> {
    if (this.#closed) return;
    if (!this.#ready && !isAnswer(message)) {
      this.#held.push(message);
      return;
    }
    this.#post(message);
  }

  #post(message: JSONRPCMessage) {
    const frame = this.#link.frame() as Window | null;
    // Plain JSON (what the app holds may be reactive proxies, which cannot be cloned), to
    // the exact origin: were the frame navigated elsewhere, the engine drops the message.
    frame?.postMessage(JSON.parse(JSON.stringify(message)), this.#link.origin);
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#held = [];
    this.#link.host.removeEventListener("message", this.#listener as EventListener);
    this.onclose?.();
  }
}
