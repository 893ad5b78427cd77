// One live view in the window: the link to its frame (transport.ts), the official host
// library's AppBridge for the protocol, and the core behind it. Every message a view sends
// is handed to the core (`request`), which checks it and says what to do; this module does
// only what needs the window: resize, display mode, the save dialog, the theme.
//
// Order (what the host owes the view): nothing before it said `initialized` (the transport
// holds it); then the input as the model writes it (`tool-input-partial`, the latest only,
// while the call's arguments are not final), the call's input once, then its result or its
// cancellation once; each waits here until the view is ready. The view may open before the
// call has its arguments or its result (`setPartial`, `setInput`, `setResult`). Teardown
// asks the view first (`ui/resource-teardown`, with a time limit) and then lets the frame go.

import { AppBridge } from "@modelcontextprotocol/ext-apps/app-bridge";
import type { McpUiHostCapabilities, McpUiHostContext } from "@modelcontextprotocol/ext-apps/app-bridge";
import type { JSONRPCMessage } from "@modelcontextprotocol/client";
import type { CallToolResult, JsonValue } from "../bindings";
import { FrameTransport, type FrameLink, type Refused } from "./transport";
import type { DisplayMode, DownloadOffer, ViewReply } from "./types";

/** How long a view has to answer its teardown before its frame goes anyway. */
export const TEARDOWN_TIMEOUT_MS = 1500;

/**
 * Notifications of one view waiting for the core at most; a view that sends more at once
 * loses the newest (the core would refuse such a flood anyway, and says so).
 */
export const MAX_WAITING_NOTIFICATIONS = 64;

/** The core's side of a view: every message it sends, checked and answered. */
export interface ViewBackend {
  request(viewId: string, method: string, params: unknown): Promise<ViewReply>;
}

/** What a view may ask of the window it is shown in. */
export interface ViewScreen {
  /** Resize the frame (already clamped by the core); `null` leaves a side as it is. */
  resize(width: number | null, height: number | null): void;
  /** Show the view in `mode`. */
  displayMode(mode: DisplayMode): void;
  /** Offer the files with the native save dialog; true when something was saved. */
  download(offer: DownloadOffer): Promise<boolean>;
  /** The `hostContext` now (theme, styles, dimensions, …; `toolInfo` comes from the core). */
  context(): McpUiHostContext;
  /** The view said it is initialized. */
  initialized?(): void;
}

export interface ViewSessionOptions {
  viewId: string;
  /** The server's view origin, e.g. `h9view://fs1a2b`. */
  origin: string;
  /** The window and the frame's window. */
  host: FrameLink["host"];
  frame: FrameLink["frame"];
  /** The call's arguments; `null` while the model is still writing them (see `setInput`). */
  arguments: JsonValue | null;
  backend: ViewBackend;
  screen: ViewScreen;
  teardownTimeoutMs?: number;
}

type Outcome = { result: CallToolResult } | { cancelled: string };

/** Method names, as the view sends them, of what AppBridge hands to each handler. */
const REQUESTS = {
  oncalltool: "tools/call",
  onreadresource: "resources/read",
  onlistresources: "resources/list",
  onlistresourcetemplates: "resources/templates/list",
  onlistprompts: "prompts/list",
  oncreatesamplingmessage: "sampling/createMessage",
  onmessage: "ui/message",
  onopenlink: "ui/open-link",
  ondownloadfile: "ui/download-file",
  onrequestdisplaymode: "ui/request-display-mode",
  onupdatemodelcontext: "ui/update-model-context",
} as const;

const NOTIFICATIONS = {
  sizechange: "ui/notifications/size-changed",
  loggingmessage: "notifications/message",
  requestteardown: "ui/notifications/request-teardown",
} as const;

/** The JSON-RPC error code a view hears for an error of the backend. */
export function rpcCode(e: unknown): number {
  const code = e && typeof e === "object" && "code" in e ? (e as { code: unknown }).code : null;
  switch (code) {
    case "invalid-arguments":
      return -32602;
    case "unsupported":
      return -32601;
    default:
      // The host refused or failed (the core's REFUSED).
      return -32000;
  }
}

/** An error AppBridge answers the view with, keeping the code. */
class ViewRpcError extends Error {
  readonly code: number;
  constructor(e: unknown) {
    super(e instanceof Error ? e.message : e && typeof e === "object" && "message" in e ? String((e as { message: unknown }).message) : String(e));
    this.code = rpcCode(e);
  }
}

export class ViewSession {
  readonly viewId: string;
  readonly transport: FrameTransport;
  /** Messages the link refused (wrong source, origin or shape). */
  readonly refused: Refused[] = [];
  #opts: ViewSessionOptions;
  #bridge: AppBridge | null = null;
  #toolInfo: McpUiHostContext["toolInfo"];
  #early: JSONRPCMessage[] = [];
  #initializing = false;
  #input: JsonValue | null;
  /** The view said `initialized` (through the bridge). */
  #initialized = false;
  #inputSent = false;
  /** The latest partial input not yet sent. */
  #partial: JsonValue | null = null;
  #outcome: Outcome | null = null;
  #outcomeSent = false;
  #closed = false;
  /**
   * The view's notifications (`initialized` first), handed to the core one after another.
   * Each invoke is its own request, and two in flight may reach the core in either order:
   * a request the view sends right after `initialized` would be refused as early. So every
   * message waits until the notifications before it are with the core.
   */
  #noted: Promise<unknown> = Promise.resolve();
  /** Notifications in `#noted` not yet with the core. */
  #waiting = 0;

  constructor(opts: ViewSessionOptions) {
    this.#opts = opts;
    this.#input = opts.arguments ?? null;
    this.viewId = opts.viewId;
    this.transport = new FrameTransport({ host: opts.host, frame: opts.frame, origin: opts.origin });
    this.transport.onrefused = (r) => this.refused.push(r);
  }

  /** Starts listening to the frame (before it loads). */
  async start(): Promise<void> {
    this.transport.onmessage = (m) => void this.#beforeInitialize(m);
    await this.transport.start();
  }

  /** Whether the view said it is initialized. */
  get live(): boolean {
    return this.transport.ready && !this.#closed;
  }

  /** Until `ui/initialize` is answered: the core answers it, then AppBridge takes over. */
  async #beforeInitialize(message: JSONRPCMessage) {
    if (this.#bridge) return;
    if (!("method" in message) || message.method !== "ui/initialize" || !("id" in message) || this.#initializing) {
      this.#early.push(message);
      return;
    }
    this.#initializing = true;
    let reply: ViewReply;
    try {
      reply = await this.#opts.backend.request(this.viewId, message.method, message.params ?? {});
    } catch (e) {
      this.#initializing = false;
      await this.transport.send({
        jsonrpc: "2.0",
        id: message.id,
        error: { code: rpcCode(e), message: new ViewRpcError(e).message },
      });
      return;
    }
    if (this.#closed) return;
    const answer = reply.kind === "answer" ? (reply.result as Record<string, unknown>) : {};
    this.#toolInfo = (answer.hostContext as McpUiHostContext | undefined)?.toolInfo;
    const bridge = new AppBridge(
      null,
      (answer.hostInfo as { name: string; version: string }) ?? { name: "harness9", version: "0" },
      (answer.hostCapabilities as McpUiHostCapabilities) ?? {},
      { hostContext: this.#context() },
    );
    this.#wire(bridge);
    this.#bridge = bridge;
    await bridge.connect(this.transport);
    const deliver = this.transport.onmessage;
    deliver?.(message);
    for (const m of this.#early.splice(0)) deliver?.(m);
  }

  #context(): McpUiHostContext {
    return { ...this.#opts.screen.context(), ...(this.#toolInfo ? { toolInfo: this.#toolInfo } : {}) };
  }

    /** Hands one message to the core and does what its answer says; the JSON-RPC result. */
  async #forward(method: string, params: unknown): Promise<Record<string, unknown>> {
    let reply: ViewReply;
    try {
      await this.#noted;
      reply = await this.#opts.backend.request(this.viewId, method, params ?? {});
    } catch (e) {
      throw new ViewRpcError(e);
    }
    switch (reply.kind) {
      case "answer":
        return (reply.result ?? {}) as Record<string, unknown>;
      case "noted":
        return {};
      case "resize":
        this.#opts.screen.resize(reply.width, reply.height);
        return {};
      case "displayMode":
        this.#opts.screen.displayMode(reply.mode);
        this.refreshContext();
        return { mode: reply.mode };
      case "download":
        return (await this.#opts.screen.download(reply.offer)) ? {} : { isError: true };
    }
  }

  /** Hands one notification to the core after those before it (at most [`MAX_WAITING_NOTIFICATIONS`] wait). */
  #note(method: string, params: unknown) {
    if (this.#waiting >= MAX_WAITING_NOTIFICATIONS) return;
    this.#waiting++;
    this.#noted = this.#forward(method, params)
      .catch(() => {})
      .finally(() => this.#waiting--);
  }

  #wire(bridge: AppBridge) {
    const b = bridge as unknown as Record<string, unknown>;
    for (const [setter, method] of Object.entries(REQUESTS)) {
      b[setter] = (params: unknown) => this.#forward(method, params);
    }
    for (const [event, method] of Object.entries(NOTIFICATIONS)) {
      bridge.addEventListener(event as keyof typeof NOTIFICATIONS, (params: unknown) => this.#note(method, params));
    }
    bridge.addEventListener("initialized", (params) => {
      // The transport lets host messages out from now on; input first, then the outcome.
      this.#note("ui/notifications/initialized", params);
      this.#opts.screen.initialized?.();
      this.#initialized = true;
      this.#flush();
    });
  }

  /** Sends what the view is owed, in order, once it is ready. */
  #flush() {
    const bridge = this.#bridge;
    if (!bridge || this.#closed || !this.#initialized) return;
    if (!this.#inputSent && this.#input !== null) {
      this.#inputSent = true;
      this.#partial = null;
      void bridge.sendToolInput({ arguments: (this.#input ?? {}) as Record<string, unknown> });
    } else if (!this.#inputSent && this.#partial !== null) {
      const partial = this.#partial;
      this.#partial = null;
      void bridge.sendToolInputPartial({ arguments: partial as Record<string, unknown> });
    }
    // The outcome follows the input (a call that never got its arguments is only cancelled).
    if (this.#outcome && !this.#outcomeSent && (this.#inputSent || "cancelled" in this.#outcome)) {
      this.#outcomeSent = true;
      const o = this.#outcome;
      if ("result" in o) void bridge.sendToolResult(o.result as Parameters<AppBridge["sendToolResult"]>[0]);
      else void bridge.sendToolCancelled({ reason: o.cancelled });
    }
  }

  /** The model is still writing the call's arguments: what it wrote so far (the view gets the latest once it is ready, until the input is final). */
  setPartial(args: JsonValue) {
    if (this.#inputSent || this.#input !== null) return;
    this.#partial = args;
    this.#flush();
  }

  /** The call's arguments are final: the view gets them once, when it is ready. */
  setInput(args: JsonValue) {
    if (this.#input !== null) return;
    this.#input = args ?? {};
    this.#flush();
  }

  /** The call finished: the view gets the result once it is ready. */
  setResult(result: CallToolResult) {
    if (this.#outcome) return;
    this.#outcome = { result };
    this.#flush();
  }

  /** The call was cancelled: the view is told once it is ready. */
  setCancelled(reason: string) {
    if (this.#outcome) return;
    this.#outcome = { cancelled: reason };
    this.#flush();
  }

  /** The window's surroundings changed (theme, size, mode): the view gets what changed. */
  refreshContext() {
    if (this.#bridge && !this.#closed) this.#bridge.setHostContext(this.#context());
  }

  /** Asks the view to tear down (when it is live, with a time limit), then closes the link. */
  async teardown(reason = "closed"): Promise<void> {
    if (this.#closed) return;
    const bridge = this.#bridge;
    if (bridge && this.transport.ready) {
      const limit = this.#opts.teardownTimeoutMs ?? TEARDOWN_TIMEOUT_MS;
      let timer: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([
        bridge.teardownResource({ reason } as Parameters<AppBridge["teardownResource"]>[0]).catch(() => {}),
        new Promise((r) => (timer = setTimeout(r, limit))),
      ]);
      clearTimeout(timer);
    }
    this.close();
  }

  /** Forgets the view at once (its frame is already gone). */
  close() {
    if (this.#closed) return;
    this.#closed = true;
    void this.#bridge?.close().catch(() => {});
    void this.transport.close();
  }
}
