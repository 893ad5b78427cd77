// MCP tasks in the window against the mock backend (happy-dom): the table folded from the
// core's events, the tasks view (state, message, elapsed time, cancel, result), the count
// in the status bar, and the task of a chat's tool call (its status, then its late result).

import { afterEach, describe, expect, test } from "vitest";
import ChatPane from "./ChatPane.svelte";
import StatusBar from "./StatusBar.svelte";
import TasksPanel from "./TasksPanel.svelte";
import ToolDetail from "./ToolDetail.svelte";
import type { CallToolResult, TaskEvent, TaskRecord, ToolDetail as Detail, ToolEntry } from "../lib/bindings";
import { applyTaskEvent, duration, ttlLeft } from "../lib/tasks.svelte";
import { $, render, settle, setup, type } from "../test/render";

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

const T0 = 1_700_000_000_000;

function record(taskId: string, over: Partial<TaskRecord> = {}): TaskRecord {
  return {
    server: "everything",
    tool: "simulate-research-query",
    arguments: { topic: "tides" },
    taskId,
    era: "legacy",
    createdMs: T0,
    ttlMs: 300_000,
    state: "working",
    message: null,
    updatedMs: T0,
    local: true,
    canCancel: true,
    ...over,
  };
}

const answer: CallToolResult = { content: [{ type: "text", text: "Research report on tides" }], isError: false };

async function started() {
  const { backend, app } = setup();
  await app.init();
  cleanups.push(() => app.destroy());
  return { backend, app };
}

describe("the task table", () => {
  test("events start, change and end tasks, newest first; an ended task never changes again", () => {
    let list: TaskRecord[] = [];
    list = applyTaskEvent(list, { type: "started", task: record("a") }, T0);
    list = applyTaskEvent(list, { type: "started", task: record("b", { createdMs: T0 + 5 }) }, T0 + 5);
    expect(list.map((t) => t.taskId)).toEqual(["b", "a"]);
    list = applyTaskEvent(list, { type: "status", server: "everything", taskId: "a", state: "working", message: "step 2 of 4" }, T0 + 9);
    expect(list[1]).toMatchObject({ taskId: "a", message: "step 2 of 4", updatedMs: T0 + 9 });
    list = applyTaskEvent(list, { type: "ended", task: record("a", { state: "completed", updatedMs: T0 + 10 }), result: answer }, T0 + 10);
    list = applyTaskEvent(list, { type: "status", server: "everything", taskId: "a", state: "working", message: "late news" }, T0 + 11);
    expect(list[1]).toMatchObject({ taskId: "a", state: "completed", message: null });
  });

  test("times read shortly, and an ended task has no time left", () => {
    expect([duration(4_200), duration(185_000), duration(7_800_000)]).toEqual(["4 s", "3 min 05 s", "2 h 10 min"]);
    expect(ttlLeft(record("a"), T0 + 60_000)).toBe(240_000);
    expect(ttlLeft(record("a", { state: "cancelled" }), T0)).toBeNull();
    expect(ttlLeft(record("a", { ttlMs: null }), T0)).toBeNull();
  });
});

describe("the tasks view and the status bar", () => {
  test("the status bar counts running tasks and opens the view; the view shows state, message and elapsed time, cancels and shows a result", async () => {
    const { backend, app } = await started();
    const bar = render(StatusBar, {}, app);
    cleanups.push(bar.destroy);
    expect(bar.target.querySelector("[data-testid=tasks-running]")).toBeNull();

    backend.taskEvents.emit({ type: "started", task: record("t1") });
    backend.taskEvents.emit({ type: "started", task: record("t2", { createdMs: T0 + 1, tool: "slow", canCancel: false }) });
    backend.taskEvents.emit({ type: "status", server: "everything", taskId: "t1", state: "working", message: "Gathering sources" });
    await settle();
    expect($(bar.target, "tasks-running").textContent?.trim()).toBe("2 tasks running");
    $(bar.target, "tasks-running").click();
    await settle();
    expect(app.view).toBe("tasks");

    const panel = render(TasksPanel, {}, app);
    cleanups.push(panel.destroy);
    app.tasks.now = T0 + 65_000;
    await settle();
    const rows = () => [...panel.target.querySelectorAll<HTMLElement>("[data-testid=task-row]")];
    expect(rows().map((r) => r.dataset.task)).toEqual(["t2", "t1"]);
    const t1 = rows()[1];
    expect($(t1, "task-state").textContent).toBe("working");
    expect($(t1, "task-message").textContent).toBe("Gathering sources");
    expect($(t1, "task-elapsed").textContent).toBe("1 min 05 s");
    // A server that takes no cancel requests gets no Cancel button.
    expect(rows()[0].querySelector("[data-testid=task-cancel]")).toBeNull();

    $(t1, "task-cancel").click();
    await settle();
    expect(backend.calls).toContainEqual(["cancelTask", "everything", "t1"]);
    expect(app.notices.map((n) => n.text)).toContain("Task t1 cancelled");
    backend.taskEvents.emit({ type: "ended", task: record("t1", { state: "cancelled", updatedMs: T0 + 66_000, error: "task t1 was cancelled" }), result: null });
    backend.taskEvents.emit({ type: "ended", task: record("t2", { state: "completed", tool: "slow", createdMs: T0 + 1, updatedMs: T0 + 70_001, canCancel: false }), result: answer });
    await settle();
    expect(bar.target.querySelector("[data-testid=tasks-running]")).toBeNull();
    expect(rows()[1].dataset.state).toBe("cancelled");
    expect($(rows()[1], "task-error").textContent).toBe("task t1 was cancelled");
    expect(rows()[1].querySelector("[data-testid=task-cancel]")).toBeNull();

    $(rows()[0], "task-toggle-result").click();
    await settle();
    expect($(rows()[0], "tool-result").textContent).toContain("Research report on tides");
    expect($(rows()[0], "task-elapsed").textContent).toBe("1 min 10 s");
    // Seen ending here: the result came with the event, not from the server.
    expect(backend.calls.some((c) => c[0] === "taskResult")).toBe(false);
  });

  test("a task that ended in an earlier run gets its result from the backend, or says why not", async () => {
    const { backend, app } = setup();
    backend.tasks = [record("old", { state: "completed", updatedMs: T0 + 3000 }), record("lost", { state: "lost", createdMs: T0 - 1 })];
    backend.taskResults["everything/old"] = answer;
    await app.init();
    cleanups.push(() => app.destroy());
    const panel = render(TasksPanel, {}, app);
    cleanups.push(panel.destroy);
    await settle();
    const rows = [...panel.target.querySelectorAll<HTMLElement>("[data-testid=task-row]")];
    $(rows[0], "task-toggle-result").click();
    $(rows[1], "task-toggle-result").click();
    await settle();
    expect($(rows[0], "tool-result").textContent).toContain("Research report on tides");
    expect($(rows[1], "tool-error").textContent).toContain("there is no task lost");
  });

  test("missed events fetch the table again", async () => {
    const { backend, app } = await started();
    backend.tasks = [record("x")];
    backend.taskEvents.emit(null);
    await settle();
    expect(app.tasks.list.map((t) => t.taskId)).toEqual(["x"]);
    expect(app.tasks.running).toBe(1);
  });
});

describe("a chat call that runs as a task", () => {
  async function turn() {
    const { backend, app } = await started();
    const r = render(ChatPane, {}, app);
    cleanups.push(r.destroy);
    await settle();
    type($(r.target, "chat-input") as HTMLTextAreaElement, "research tides");
    $(r.target, "chat-send").click();
    await settle();
    backend.chatEmit({ type: "tool_call_start", callId: "c-1", name: "mcp__everything__simulate-research-query", arguments: { topic: "tides" } });
    return { backend, app, target: r.target };
  }
  const origin = { conversationId: "c1", callId: "c-1", name: "mcp__everything__simulate-research-query" };
  const ended: TaskEvent = { type: "ended", task: record("t9", { state: "completed", origin, updatedMs: T0 + 4000 }), result: answer };

  test("shows its status live, then its late result without reopening", async () => {
    const { backend, target } = await turn();
    backend.taskEvents.emit({ type: "started", task: record("t9", { origin }) });
    backend.taskEvents.emit({ type: "status", server: "everything", taskId: "t9", state: "working", message: "Analyzing" });
    await settle();
    expect($(target, "tool-card-task").textContent).toContain("working — Analyzing");
    // The turn's wait ends: the model hears the call still runs.
    backend.chatEmit({
      type: "tool_call_end",
      callId: "c-1",
      name: "mcp__everything__simulate-research-query",
      arguments: { topic: "tides" },
      status: "ok",
      durationMs: 800,
      error: null,
      output: 'This call is still running on the MCP server "everything" as task t9',
      spilled: null,
    });
    await settle();
    expect($(target, "tool-card-status").textContent).toBe("running as a task");
    expect(target.querySelector("[data-testid=tool-card-late]")).toBeNull();
    backend.taskEvents.emit(ended);
    await settle();
    expect($(target, "tool-card-task").dataset.state).toBe("completed");
    expect($(target, "tool-card-status").textContent).toBe("ok");
    expect($(target, "tool-card-late").textContent).toContain("Research report on tides");
    expect($(target, "tool-card-late").textContent).toContain("goes to the model with your next message");
  });

  test("a task that ended within the turn gave the call its result: no late result", async () => {
    const { backend, target } = await turn();
    backend.taskEvents.emit({ type: "started", task: record("t9", { origin }) });
    backend.taskEvents.emit(ended);
    await settle();
    backend.chatEmit({
      type: "tool_call_end",
      callId: "c-1",
      name: "mcp__everything__simulate-research-query",
      arguments: { topic: "tides" },
      status: "ok",
      durationMs: 4000,
      error: null,
      output: "Research report on tides",
      spilled: null,
    });
    await settle();
    expect($(target, "tool-card-task").textContent).toContain("completed");
    expect(target.querySelector("[data-testid=tool-card-late]")).toBeNull();
  });
});

describe("a call made by hand that runs as a task", () => {
  const tool: ToolEntry & Detail = {
    name: "mcp__everything__simulate-research-query",
    server: "everything",
    tool: "simulate-research-query",
    description: "Research",
    readOnly: false,
    title: null,
    marks: [],
    icons: [],
    hasView: false,
    appOnly: false,
    inputSchema: { type: "object", properties: { topic: { type: "string" } } },
    hints: {
      readOnlyHint: null,
      destructiveHint: null,
      idempotentHint: null,
      openWorldHint: null,
      readOnly: false,
      destructive: false,
      idempotent: false,
      openWorld: false,
      marks: [],
    },
  };

  test("shows its task, and goes on when the tool's view closes; a plain call is cancelled", async () => {
    const { backend, app } = await started();
    app.status = {
      revision: 0,
      servers: [
        {
          name: "everything",
          transport: "stdio",
          scope: "project",
          target: "everything",
          state: { status: "connected", tools: 1, protocolVersion: "2025-11-25", serverName: "e", serverVersion: "1", era: "legacy" },
          restart: null,
          heldTools: 0,
          signedIn: null,
        },
      ],
      configError: null,
    };
    backend.toolGate = new Promise(() => {});
    // A task of the same tool that was running before this call is not this call's.
    backend.taskEvents.emit({ type: "started", task: record("earlier") });
    const r = render(ToolDetail, { tool, detail: tool }, app);
    $(r.target, "run-tool").click();
    await settle();
    expect(r.target.querySelector("[data-testid=tool-task]")).toBeNull();
    backend.taskEvents.emit({ type: "started", task: record("mine", { createdMs: T0 + 1 }) });
    backend.taskEvents.emit({ type: "status", server: "everything", taskId: "mine", state: "working", message: "Gathering sources..." });
    await settle();
    expect($(r.target, "tool-task").textContent).toContain("Runs as task mine: working — Gathering sources...");
    r.destroy();
    expect(backend.calls.some((c) => c[0] === "cancelToolCall")).toBe(false);

    // Once its task ended, closing cancels as for any call (nothing is left to go on).
    backend.taskEvents.emit({ type: "ended", task: record("mine", { createdMs: T0 + 1, state: "completed" }), result: answer });
    const again = render(ToolDetail, { tool, detail: tool }, app);
    $(again.target, "run-tool").click();
    await settle();
    again.destroy();
    expect(backend.calls.at(-1)?.[0]).toBe("cancelToolCall");
  });
});
