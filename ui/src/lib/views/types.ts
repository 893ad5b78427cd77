// The core's view types as they cross the bridge (generated into ../bindings once the
// core exports them; kept here in the meantime).

import type { CallToolResult, JsonValue } from "../bindings";

export type DisplayMode = "inline" | "fullscreen" | "pip";

export type ViewReply =
  | { kind: "answer"; result: JsonValue }
  | { kind: "noted" }
  | { kind: "resize"; width: number | null; height: number | null }
  | { kind: "displayMode"; mode: DisplayMode }
  | { kind: "download"; offer: DownloadOffer };

export type DownloadOffer = { downloadId: string; files: Array<DownloadFile> };
export type DownloadFile = { name: string; mimeType: string | null; size: number };

export type ViewCall = {
  conversationId: string | null;
  callId: string;
  arguments: JsonValue;
  result: CallToolResult | null;
};
