// The chat pane's state: the project's conversation as entries (prompts, streamed answers,
// tool cards, notices), folded from the engine's events. One per open project.

import type {
  ResourceRef,
  CallView,
  PendingMessage,
  CallStatus,
  ChatDecision,
  ChatEvent,
  ChatItem,
  ChatState,
  ConversationSummary,
  JsonValue,
  PromptEntry,
  ToolView,
} from "./bindings";
import { BackendError, type Backend } from "./backend/types";
import { LEFT, type LiveViews } from "./views/live";
import { stamp } from "./tasks.svelte";

/** A tool call as its card shows it. */
export interface ToolCard {
  kind: "tool";
  id: number;
  callId: string;
  name: string;
  arguments: unknown;
  /** `writing` (the model writes its arguments), `running`, `approval` (waiting for the user), or how it ended. */
  status: "writing" | "running" | "approval" | CallStatus;
  readOnly: boolean;
  output: string | null;
  error: string | null;
  durationMs: number | null;
  progress: string | null;
  /** The view its tool has (MCP Apps), known as the call starts (or while it is written). */
  viewTool: ToolView | null;
  /** The arguments so far, while the model is still writing them (status `writing`). */
  partial: JsonValue | null;
  /** The call's interactive view (MCP Apps), once it returned a result. */
  view: CallView | null;
  /**
   * When the window learned how the call ended (a `stamp()`; 0 for a call of the saved
   * history, null while it runs): an MCP task of the call that ends after this gives its
   * late result, one that ended before it gave the call its result.
   */
  ended: number | null;
}

export type ChatEntry =
  | { kind: "user"; id: number; text: string; attachments?: ResourceRef[]; fromView?: string }
  | { kind: "assistant"; id: number; text: string }
  | ToolCard
  | { kind: "notice"; id: number; text: string; tone: "info" | "error" };

export class ChatSession {
  readonly backend: Backend;
  entries = $state<ChatEntry[]>([]);
  running = $state(false);
  /** Set once `chatState` answered. */
  loaded = $state(false);
  provider = $state<string | null>(null);
  model = $state<string | null>(null);
  /** Why the chat cannot run (no provider configured). */
  error = $state<string | null>(null);
  /** The provider is being retried: what the engine said. */
  retry = $state<string | null>(null);

  #id = 0;
  /** Bumped on reset so that events of an old project's turn are dropped. */
  #generation = 0;

  /** The views shown (those of the conversation left are torn down first). */
  readonly #views: LiveViews | null;

  constructor(backend: Backend, views: LiveViews | null = null) {
    this.backend = backend;
    this.#views = views;
  }

  /** The views of the chat's calls hear that their conversation is left, then go. */
  async #leaveViews(): Promise<void> {
    await this.#views?.leave((v) => v.conversationId !== null, LEFT.conversation);
  }

  reset(): void {
    this.#generation++;
    this.entries = [];
    this.running = false;
    this.loaded = false;
    this.provider = this.model = this.error = this.retry = null;
  }

  async load(): Promise<void> {
    const gen = this.#generation;
    try {
      const s = await this.backend.chatState();
      if (gen === this.#generation) this.#apply(s);
    } catch (e) {
      if (gen === this.#generation) this.#note(BackendError.from(e).message, "error");
    }
  }

  /** The project's saved conversations (filled by `listConversations`). */
  conversations = $state<ConversationSummary[]>([]);
  conversationId = $state<string | null>(null);

  async listConversations(): Promise<void> {
    try {
      this.conversations = await this.backend.chatConversations();
    } catch (e) {
      this.#note(BackendError.from(e).message, "error");
    }
  }

  /** Reopens a saved conversation with its history. */
  async openConversation(id: string): Promise<void> {
    try {
      if (id !== this.conversationId) await this.#leaveViews();
      this.#apply(await this.backend.chatOpen(id));
    } catch (e) {
      this.#note(BackendError.from(e).message, "error");
    }
  }

  async newConversation(): Promise<void> {
    try {
      await this.#leaveViews();
      this.#apply(await this.backend.chatNew());
    } catch (e) {
      this.#note(BackendError.from(e).message, "error");
    }
  }

  #apply(s: ChatState): void {
    this.provider = s.provider;
    this.model = s.model;
    this.error = s.error;
    this.running = s.busy;
    this.conversationId = s.conversationId;
    const entries: ChatEntry[] = [];
    for (const h of s.history) {
      const last = entries[entries.length - 1];
      if (h.kind === "attachment" && last?.kind === "user") {
        (last.attachments ??= []).push({ server: h.server, uri: h.uri });
      } else entries.push(this.#fromHistory(h));
    }
    this.entries = entries;
    // Calls of the running turn that wait for the user (the core keeps them).
    for (const p of s.pending) {
      const card = this.#card(p.callId) ?? this.#newCard(p.callId, p.name, p.arguments);
      card.status = "approval";
      card.readOnly = p.readOnly;
    }
    this.loaded = true;
  }

  #fromHistory(h: ChatItem): ChatEntry {
    const id = ++this.#id;
    switch (h.kind) {
      case "user":
      case "assistant":
        return { kind: h.kind, id, text: h.text };
      case "notice":
        return { kind: "notice", id, text: h.text, tone: "info" };
      case "attachment":
        return { kind: "notice", id, text: `attached ${h.uri} (${h.server})`, tone: "info" };
      case "tool":
        return {
          kind: "tool",
          id,
          callId: h.callId,
          name: h.name,
          arguments: h.arguments,
          status: h.output === null ? "cancelled" : h.isError ? "error" : "ok",
          readOnly: false,
          output: h.output,
          error: null,
          durationMs: null,
          progress: null,
          viewTool: null,
          partial: null,
          view: h.view ?? null,
          ended: 0,
        };
    }
  }

  #note(text: string, tone: "info" | "error"): void {
    this.entries.push({ kind: "notice", id: ++this.#id, text, tone });
  }

  async send(prompt: string, attachments: ResourceRef[] = []): Promise<boolean> {
    const text = prompt.trim();
    if (!text || this.running) return false;
    const gen = this.#generation;
    this.entries.push({ kind: "user", id: ++this.#id, text, ...(attachments.length ? { attachments } : {}) });
    this.running = true;
    this.retry = null;
    try {
      await this.backend.chatSend(
        text,
        (e) => {
          if (gen === this.#generation) this.#onEvent(e);
        },
        attachments.length ? attachments : undefined,
      );
      return true;
    } catch (e) {
      if (gen !== this.#generation) return false;
      this.running = false;
      const err = BackendError.from(e);
      if (err.code === "not-configured") this.error = err.message;
      else this.#note(err.message, "error");
      return false;
    }
  }

  /**
   * Sends a message an MCP Apps view put in the chat (the user pressed Send): it joins the
   * log as the user's, marked as coming from the view, and the turn runs as for a typed one.
   */
  async sendPending(message: PendingMessage): Promise<boolean> {
    if (this.running) return false;
    const gen = this.#generation;
    this.entries.push({ kind: "user", id: ++this.#id, text: message.text, fromView: `${message.tool} (${message.server})` });
    this.running = true;
    this.retry = null;
    try {
      await this.backend.sendPending(message.id, (e) => {
        if (gen === this.#generation) this.#onEvent(e);
      });
      return true;
    } catch (e) {
      if (gen !== this.#generation) return false;
      this.running = false;
      this.#note(BackendError.from(e).message, "error");
      return false;
    }
  }

  /**
   * Starts a turn with a server's prompt: the messages it opened with join the log, then
   * the answer streams as for a typed message. False (and a note) when it did not start.
   */
  async sendPrompt(prompt: PromptEntry, args: Record<string, string>): Promise<boolean> {
    if (this.running) return false;
    const gen = this.#generation;
    this.running = true;
    this.retry = null;
    const filled = Object.fromEntries(Object.entries(args).filter(([, v]) => v !== ""));
    // Events may arrive before the call returns: the note is in place first (so the answer
    // starts an entry of its own), and the opening goes right after it, before those events.
    const note: ChatEntry = { kind: "notice", id: ++this.#id, text: `Prompt ${prompt.title ?? prompt.name} from ${prompt.server}`, tone: "info" };
    this.entries.push(note);
    const start = this.entries.length;
    try {
      const opening = await this.backend.chatSendPrompt(prompt.server, prompt.name, filled, (e) => {
        if (gen === this.#generation) this.#onEvent(e);
      });
      if (gen !== this.#generation) return false;
      this.entries.splice(start, 0, ...opening.map((h) => this.#fromHistory(h)));
      return true;
    } catch (e) {
      if (gen !== this.#generation) return false;
      this.running = false;
      this.entries = this.entries.filter((x) => x.id !== note.id);
      const err = BackendError.from(e);
      if (err.code === "not-configured") this.error = err.message;
      else this.#note(err.message, "error");
      return false;
    }
  }

  async stop(): Promise<void> {
    try {
      await this.backend.chatStop();
    } catch (e) {
      this.#note(BackendError.from(e).message, "error");
    }
  }

  async approve(callId: string, decision: ChatDecision): Promise<void> {
    const card = this.#card(callId);
    if (card) card.status = decision === "deny" ? "denied" : "running";
    try {
      await this.backend.chatApprove(callId, decision);
    } catch (e) {
      this.#note(BackendError.from(e).message, "error");
    }
  }

  #card(callId: string): ToolCard | undefined {
    for (let i = this.entries.length - 1; i >= 0; i--) {
      const e = this.entries[i];
      if (e.kind === "tool" && e.callId === callId) return e;
    }
    return undefined;
  }

  #newCard(callId: string, name: string, args: unknown, status: ToolCard["status"] = "running"): ToolCard {
    this.entries.push({
      kind: "tool",
      id: ++this.#id,
      callId,
      name,
      arguments: args,
      status,
      readOnly: false,
      output: null,
      error: null,
      durationMs: null,
      progress: null,
      viewTool: null,
      partial: null,
      view: null,
      ended: null,
    });
    return this.entries[this.entries.length - 1] as ToolCard;
  }

  #onEvent(e: ChatEvent): void {
    switch (e.type) {
      case "turn_start":
        this.provider = e.provider;
        this.model = e.model;
        this.error = null;
        break;
      case "model_request":
        this.retry = null;
        break;
      case "retry":
        this.retry = `${e.reason}; retrying in ${Math.round(e.delayMs / 100) / 10} s (attempt ${e.attempt})`;
        break;
      case "text_delta": {
        const last = this.entries[this.entries.length - 1];
        if (last?.kind === "assistant") last.text += e.text;
        else this.entries.push({ kind: "assistant", id: ++this.#id, text: e.text });
        break;
      }
      case "tool_input_partial": {
        // A call whose tool has a view, still being written: its card (and view) open now.
        const card = this.#card(e.callId) ?? this.#newCard(e.callId, e.name, {}, "writing");
        if (card.status === "writing") {
          card.partial = e.arguments;
          card.viewTool = e.view;
        }
        break;
      }
      case "tool_call_start": {
        const card = this.#card(e.callId) ?? this.#newCard(e.callId, e.name, e.arguments);
        card.status = "running";
        card.arguments = e.arguments;
        card.partial = null;
        card.viewTool = e.view ?? card.viewTool;
        break;
      }
      case "approval_request": {
        const card = this.#card(e.callId) ?? this.#newCard(e.callId, e.name, e.arguments);
        card.status = "approval";
        card.readOnly = e.readOnly;
        break;
      }
      case "tool_call_progress": {
        const card = this.#card(e.callId);
        if (card) {
          const of = e.total !== null ? ` of ${e.total}` : "";
          card.progress = `${e.progress}${of}${e.message ? `: ${e.message}` : ""}`;
        }
        break;
      }
      case "tool_call_end": {
        const card = this.#card(e.callId) ?? this.#newCard(e.callId, e.name, e.arguments);
        card.status = e.status;
        card.output = e.output;
        card.error = e.error;
        card.durationMs = e.durationMs;
        card.progress = null;
        card.view = e.view ?? null;
        card.ended = stamp();
        break;
      }
      case "notice":
        this.#note(e.message, "info");
        break;
      case "turn_end":
        this.running = false;
        this.retry = null;
        // Calls the model never finished writing (its answer failed or was stopped).
        for (const x of this.entries) {
          if (x.kind === "tool" && x.status === "writing") {
            x.status = "cancelled";
            x.error = "the model's answer ended before this call was complete";
          }
        }
        if (e.outcome.status === "stopped") this.#note("Stopped.", "info");
        else if (e.outcome.status === "failed") this.#note(e.outcome.error, "error");
        else if (e.outcome.status === "cut_off") this.#note(capitalize(e.outcome.notice), "error");
        break;
    }
  }
}

/** The text with its first letter in upper case (the core's messages start in lower case). */
function capitalize(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
