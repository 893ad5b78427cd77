// The chat's prompt picker: the prompts of the connected servers filtered as the user types
// after `/`, and the form of a chosen prompt whose fields ask the server for completions
// (debounced, with the other filled fields as context; an answer for an old value is
// dropped).

import type { PromptEntry } from "./bindings";
import { BackendError, type Backend } from "./backend/types";

/** How long the form waits after a keystroke before asking the server for completions. */
export const COMPLETE_DELAY_MS = 200;

/** Most suggestions shown under a field. */
export const MAX_SUGGESTIONS = 8;

/** `server:name`, as the picker and the TUI's slash command name a prompt. */
export function promptKey(p: PromptEntry): string {
  return `${p.server}:${p.name}`;
}

/**
 * The prompts matching every whitespace-separated term of `query` (case-insensitive) in
 * `server:name`, title or description; those whose `server:name` starts with the query first.
 */
export function filterPrompts(prompts: PromptEntry[], query: string): PromptEntry[] {
  const q = query.trim().toLowerCase();
  const terms = q.split(/\s+/).filter(Boolean);
  const hits = prompts.filter((p) => {
    const hay = `${promptKey(p)} ${p.title ?? ""} ${p.description ?? ""}`.toLowerCase();
    return terms.every((t) => hay.includes(t));
  });
  const starts = (p: PromptEntry) => (promptKey(p).toLowerCase().startsWith(q) || p.name.toLowerCase().startsWith(q) ? 0 : 1);
  return hits.map((p, i) => ({ p, i })).sort((a, b) => starts(a.p) - starts(b.p) || a.i - b.i).map((x) => x.p);
}

/** The required arguments `values` leaves empty. */
export function missingArguments(p: PromptEntry, values: Record<string, string>): string[] {
  return p.arguments.filter((a) => a.required && !(values[a.name] ?? "").trim()).map((a) => a.name);
}

/** The form of one chosen prompt. */
export class PromptForm {
  readonly prompt: PromptEntry;
  values = $state<Record<string, string>>({});
  /** Suggestions per argument, for the field being typed in. */
  suggestions = $state<Record<string, string[]>>({});
  /** Why completion failed for a field, if it did. */
  errors = $state<Record<string, string>>({});
  readonly #backend: Backend;
  readonly #delay: number;
  #timers = new Map<string, ReturnType<typeof setTimeout>>();

  constructor(backend: Backend, prompt: PromptEntry, delayMs = COMPLETE_DELAY_MS) {
    this.#backend = backend;
    this.prompt = prompt;
    this.#delay = delayMs;
    this.values = Object.fromEntries(prompt.arguments.map((a) => [a.name, ""]));
  }

  get missing(): string[] {
    return missingArguments(this.prompt, this.values);
  }

  /** A keystroke in a field: keeps the value and asks for completions after a pause. */
  input(name: string, value: string): void {
    this.values[name] = value;
    const t = this.#timers.get(name);
    if (t) clearTimeout(t);
    this.#timers.set(
      name,
      setTimeout(() => {
        this.#timers.delete(name);
        void this.complete(name);
      }, this.#delay),
    );
  }

  /** Asks the server for values of `name` now (also on focus of an empty field). */
  async complete(name: string): Promise<void> {
    const value = this.values[name] ?? "";
    const context = Object.fromEntries(Object.entries(this.values).filter(([k, v]) => k !== name && v !== ""));
    try {
      const c = await this.#backend.completePromptArgument(this.prompt.server, this.prompt.name, name, value, context);
      if ((this.values[name] ?? "") !== value) return;
      this.suggestions[name] = c.values.filter((v) => v !== value).slice(0, MAX_SUGGESTIONS);
      delete this.errors[name];
    } catch (e) {
      if ((this.values[name] ?? "") !== value) return;
      this.suggestions[name] = [];
      this.errors[name] = BackendError.from(e).message;
    }
  }

  /** Takes a suggestion. */
  choose(name: string, value: string): void {
    const t = this.#timers.get(name);
    if (t) clearTimeout(t);
    this.#timers.delete(name);
    this.values[name] = value;
    this.suggestions[name] = [];
  }

  /** Stops pending completions (the form is closing). */
  dispose(): void {
    for (const t of this.#timers.values()) clearTimeout(t);
    this.#timers.clear();
  }
}
