// The project's MCP tasks as the window shows them: the core's table (fetched, then kept
// current from its events), the results of tasks that ended while the window watched, and
// a clock for the elapsed times of running tasks. The table and every decision about a
// task (its state, whether it can be cancelled) are the core's; this only folds events.

import type { CallToolResult, TaskEvent, TaskRecord, TaskState } from "./bindings";
import { BackendError, type Backend } from "./backend/types";

/** How each state reads (the core's words). */
export const STATE_WORDS: Record<TaskState, string> = {
  working: "working",
  input_required: "input required",
  cancel_requested: "cancel requested",
  completed: "completed",
  failed: "failed",
  cancelled: "cancelled",
  expired: "expired",
  lost: "lost",
};

/** Whether a task in this state has ended (it never changes again). */
export function isEnded(state: TaskState): boolean {
  switch (state) {
    case "working":
    case "input_required":
    case "cancel_requested":
      return false;
    case "completed":
    case "failed":
    case "cancelled":
    case "expired":
    case "lost":
      return true;
  }
}

/** A task's name in maps: its server and id. */
export function taskKey(t: { server: string; taskId: string }): string {
  return `${t.server}\u0000${t.taskId}`;
}

/** Newest first, as the core lists them. */
function newestFirst(a: TaskRecord, b: TaskRecord): number {
  return b.createdMs - a.createdMs || (a.taskId < b.taskId ? -1 : a.taskId > b.taskId ? 1 : 0);
}

/** The table after one event (a new array; records are replaced, never changed in place). */
export function applyTaskEvent(list: TaskRecord[], e: TaskEvent, nowMs: number): TaskRecord[] {
  switch (e.type) {
    case "started":
    case "ended": {
      const rest = list.filter((t) => taskKey(t) !== taskKey(e.task));
      return [...rest, e.task].sort(newestFirst);
    }
    case "status":
      return list.map((t) =>
        taskKey(t) === taskKey(e) && !isEnded(t.state) ? { ...t, state: e.state, message: e.message, updatedMs: nowMs } : t,
      );
  }
}

/** How long, shortly: `45 s`, `3 min 05 s`, `2 h 10 min`. */
export function duration(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min ${String(s % 60).padStart(2, "0")} s`;
  return `${Math.floor(s / 3600)} h ${String(Math.floor((s % 3600) / 60)).padStart(2, "0")} min`;
}

/** How long a task ran (until now while it runs). */
export function elapsed(t: TaskRecord, nowMs: number): number {
  return (isEnded(t.state) ? t.updatedMs : nowMs) - t.createdMs;
}

/** Ms left before a running task's time to live ends; null when unlimited or ended. */
export function ttlLeft(t: TaskRecord, nowMs: number): number | null {
  if (t.ttlMs === null || isEnded(t.state)) return null;
  return Math.max(0, t.createdMs + t.ttlMs - nowMs);
}

let lastStamp = 0;

/**
 * The order in which the window learned things (growing from 1): a chat call's end and its
 * task's end are compared by it, to tell a late result from one the call got in its turn.
 */
export function stamp(): number {
  return ++lastStamp;
}

/** How a task ended, as the window learned it. */
export interface TaskOutcome {
  result: CallToolResult | null;
  /** Why there is no result. */
  error: string | null;
  /** When the window learned it ({@link stamp}; 0 when fetched for an earlier run's task). */
  seen: number;
}

export class TasksState {
  readonly backend: Backend;
  /** The core's table, newest first. */
  list = $state.raw<TaskRecord[]>([]);
  /** Outcomes of ended tasks, by {@link taskKey}: from the end event, or fetched on demand. */
  outcomes = $state.raw<Record<string, TaskOutcome>>({});
  /** The clock elapsed times are drawn against; ticks each second while a task runs. */
  now = $state(Date.now());
  /** Tasks running (or waiting for the user, or asked to cancel). */
  running = $derived(this.list.filter((t) => !isEnded(t.state)).length);

  /** When the window heard of each task's start ({@link stamp}), by key. */
  #started = new Map<string, number>();
  #timer: ReturnType<typeof setInterval> | null = null;
  /** Bumped on reset: answers for an earlier project are dropped. */
  #generation = 0;

  constructor(backend: Backend) {
    this.backend = backend;
  }

  /** Fetches the table (at the start, when a project opens, after missed events). */
  async load(): Promise<void> {
    const gen = this.#generation;
    try {
      const list = await this.backend.listTasks();
      if (gen !== this.#generation) return;
      this.list = list;
      this.#clock();
    } catch (e) {
      if (!(e instanceof BackendError && e.code === "no-project")) throw e;
    }
  }

  /** One event of the core (`null`: some were missed, the table is fetched again). */
  apply(e: TaskEvent | null): void {
    if (e === null) {
      void this.load().catch(() => {});
      return;
    }
    this.now = Date.now();
    if (e.type === "started" && !this.#started.has(taskKey(e.task))) this.#started.set(taskKey(e.task), stamp());
    this.list = applyTaskEvent(this.list, e, this.now);
    if (e.type === "ended") {
      const error = e.result ? null : (e.task.error ?? `the task ended ${STATE_WORDS[e.task.state]} without a result`);
      this.outcomes = { ...this.outcomes, [taskKey(e.task)]: { result: e.result, error, seen: stamp() } };
    }
    this.#clock();
  }

  /** Another project opened: nothing of the old one stays. */
  reset(): void {
    this.#generation++;
    this.list = [];
    this.outcomes = {};
    this.#started.clear();
    this.#clock();
  }

  destroy(): void {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = null;
  }

  /** The task a chat's tool call started, if any. */
  forCall(callId: string, conversationId: string | null): TaskRecord | undefined {
    return this.list.find((t) => t.origin?.callId === callId && (conversationId === null || t.origin.conversationId === conversationId));
  }

  /**
   * The task a call made by hand started: one of its server and tool, not the chat's, that
   * the window heard start after `since` (a {@link stamp} taken as the call began).
   */
  startedSince(server: string, tool: string, since: number): TaskRecord | undefined {
    return this.list.find((t) => !t.origin && t.server === server && t.tool === tool && (this.#started.get(taskKey(t)) ?? 0) > since);
  }

  outcome(t: TaskRecord): TaskOutcome | undefined {
    return this.outcomes[taskKey(t)];
  }

  /** Cancels a running task; the text says what happened (the table follows from events). */
  async cancel(t: TaskRecord): Promise<string> {
    const outcome = await this.backend.cancelTask(t.server, t.taskId);
    return outcome === "cancelled"
      ? `Task ${t.taskId} cancelled`
      : `Cancel of task ${t.taskId} requested; it stops when the server gets to it`;
  }

  /** Fetches an ended task's result when the window did not see it end (an earlier run). */
  async fetchOutcome(t: TaskRecord): Promise<void> {
    if (this.outcome(t)) return;
    let outcome: TaskOutcome;
    try {
      outcome = { result: await this.backend.taskResult(t.server, t.taskId), error: null, seen: 0 };
    } catch (e) {
      outcome = { result: null, error: BackendError.from(e).message, seen: 0 };
    }
    this.outcomes = { ...this.outcomes, [taskKey(t)]: outcome };
  }

  /** Ticks the clock each second while a task runs, and not otherwise. */
  #clock(): void {
    if (this.running > 0 && !this.#timer) {
      this.#timer = setInterval(() => (this.now = Date.now()), 1000);
    } else if (this.running === 0 && this.#timer) {
      clearInterval(this.#timer);
      this.#timer = null;
    }
  }
}
