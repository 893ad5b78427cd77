// The "Add server" flow's state: a search over the configured registries as the user types
// (asked after a quiet time, page by page with "more", answers kept for a short while so a
// search typed again shows at once, an answer for an older query dropped), and the form of
// an install plan (defaults filled, required values marked, secrets kept apart).
//
// What the registries hold, which hit wins, what the entry is and whether a value fits are
// the core's: this only asks and shows.

import type { InstallPlan, PlanVariable, SearchResults } from "./bindings";
import { BackendError, type Backend } from "./backend/types";

/** Quiet time after a keystroke before the registries are asked. */
export const SEARCH_DELAY_MS = 150;
/** Results per page ("more" asks for this many more). */
export const PAGE_SIZE = 20;
/** How long an answer is shown again without asking (the core keeps them longer, on disk). */
export const KEEP_MS = 60_000;
/** Most answers kept. */
export const KEEP_MAX = 64;

type Clock = () => number;

/** A search box over the registries. */
export class RegistrySearch {
  /** The query the results are for (or will be, once asked). */
  query = $state("");
  /** How many results are asked for. */
  limit = $state(PAGE_SIZE);
  results = $state<SearchResults | null>(null);
  /** The query `results` answer. */
  shownQuery = $state<string | null>(null);
  loading = $state(false);
  error = $state<BackendError | null>(null);
  /** When the last answer came, and when the keystroke that led to it was typed (ms). */
  lastTiming = $state<{ typedAt: number; shownAt: number } | null>(null);

  readonly #backend: Backend;
  readonly #delay: number;
  readonly #now: Clock;
  #timer: ReturnType<typeof setTimeout> | null = null;
  #seq = 0;
  #typedAt = 0;
  #kept = new Map<string, { at: number; results: SearchResults }>();

  constructor(backend: Backend, delayMs = SEARCH_DELAY_MS, now: Clock = () => performance.now()) {
    this.#backend = backend;
    this.#delay = delayMs;
    this.#now = now;
  }

  /** Whether a next page may exist (the last answer filled the page asked for). */
  get hasMore(): boolean {
    return this.results !== null && this.results.hits.length >= this.limit;
  }

  /** The user typed: the search runs after the quiet time, from the first page. */
  type(query: string) {
    this.query = query;
    this.limit = PAGE_SIZE;
    this.#typedAt = this.#now();
    this.#seq++;
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = setTimeout(() => {
      this.#timer = null;
      void this.#run();
    }, this.#delay);
  }

  /** Asks for the next page at once. */
  more(): Promise<void> {
    this.limit += PAGE_SIZE;
    this.#typedAt = this.#now();
    return this.#run();
  }

  /** Runs the current query now (the first search when the view opens). */
  now(): Promise<void> {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
    this.#typedAt = this.#now();
    return this.#run();
  }

  /** Stops a pending search (the view closed). */
  dispose() {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
    this.#seq++;
  }

  #key(query: string, limit: number) {
    return `${limit}\n${query.trim()}`;
  }

  async #run() {
    const query = this.query;
    const limit = this.limit;
    const key = this.#key(query, limit);
    const seq = ++this.#seq;
    const kept = this.#kept.get(key);
    if (kept && this.#now() - kept.at < KEEP_MS) {
      this.#show(query, kept.results);
      return;
    }
    this.loading = true;
    try {
      const results = await this.#backend.searchServers(query.trim(), limit);
      this.#keep(key, results);
      if (seq === this.#seq) this.#show(query, results);
    } catch (e) {
      if (seq === this.#seq) {
        this.error = BackendError.from(e);
        this.results = null;
        this.shownQuery = query;
      }
    } finally {
      if (seq === this.#seq) this.loading = false;
    }
  }

  #show(query: string, results: SearchResults) {
    this.results = results;
    this.shownQuery = query;
    this.error = null;
    this.loading = false;
    this.lastTiming = { typedAt: this.#typedAt, shownAt: this.#now() };
  }

  #keep(key: string, results: SearchResults) {
    // Only answers that reached every registry are kept: one that used old answers or
    // failed is asked again next time.
    if (results.problems.length || results.notes.length) return;
    this.#kept.delete(key);
    this.#kept.set(key, { at: this.#now(), results });
    while (this.#kept.size > KEEP_MAX) {
      const oldest = this.#kept.keys().next().value;
      if (oldest === undefined) break;
      this.#kept.delete(oldest);
    }
  }
}

/** The label of a registry for a result: its host (and path), without the scheme. */
export function registryLabel(url: string): string {
  try {
    const u = new URL(url);
    const path = u.pathname === "/" ? "" : u.pathname;
    return `${u.host}${path}`;
  } catch {
    return url;
  }
}

/** How a variable is asked: a password field for secrets, a choice, a checkbox or text. */
export type FieldType = "password" | "select" | "checkbox" | "number" | "path" | "paths" | "text";

export function fieldType(v: PlanVariable): FieldType {
  if (v.secret) return "password";
  if (v.choices.length) return "select";
  if (v.format === "directory" || v.format === "file") return v.multiple ? "paths" : "path";
  if (v.format === "boolean") return "checkbox";
  if (v.format === "number") return "number";
  return "text";
}

/** The bounds a number variable declares, as shown beside its name ("" when none). */
export function rangeText(v: PlanVariable): string {
  const min = v.min ?? null;
  const max = v.max ?? null;
  if (min !== null && max !== null) return ` · ${min} to ${max}`;
  if (min !== null) return ` · at least ${min}`;
  if (max !== null) return ` · at most ${max}`;
  return "";
}

/**
 * The values a form starts with: each plain variable's value from the plan (given at an
 * earlier install) or its default; secrets start empty (a kept one stays unless typed).
 */
export function initialValues(plan: InstallPlan): Record<string, string> {
  const out: Record<string, string> = {};
  for (const v of plan.variables) {
    if (v.secret) out[v.name] = "";
    else out[v.name] = plan.values[v.name] ?? v.default ?? (v.format === "boolean" ? "false" : "");
  }
  return out;
}

/** What is sent: the values typed, without empty ones (an empty secret keeps the kept one). */
export function answersOf(values: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(values)) if (v !== "") out[k] = v;
  return out;
}

/** The required variables with no value typed, default or kept secret. */
export function missingValues(plan: InstallPlan, values: Record<string, string>): string[] {
  return plan.variables
    .filter((v) => v.required)
    .filter((v) => !(values[v.name] ?? "").trim())
    .filter((v) => !(v.secret && plan.keptSecrets.includes(v.name)))
    .filter((v) => !(v.default ?? "").trim())
    .map((v) => v.name);
}

/** How a plan's package or remote runs, in words. */
export function runsAs(plan: InstallPlan): string {
  const p = plan.source.package;
  return p ? `${p} package` : "remote";
}
