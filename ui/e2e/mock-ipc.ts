// The fake backend at the IPC level, for the built UI in a plain browser: each command of
// src-tauri is answered by the Backend method it stands for, and each Backend event is
// emitted as the Tauri event src-tauri sends, so the real ui/src/lib/backend/tauri.ts is
// what runs in the page. This table is tauri.ts read backwards; the mapped types below make
// the compiler name any Backend method it lacks.

import { emit } from "@tauri-apps/api/event";
import { mockIPC } from "@tauri-apps/api/mocks";
import type { ProjectEvent } from "../src/lib/bindings";
import { BackendError, type Backend, type LogFollow } from "../src/lib/backend/types";
import { EVENTS } from "../src/lib/backend/tauri";

/** The arguments of an IPC call, as tauri.ts sends them (channels arrive as objects). */
type Args = Record<string, any>;
/** A channel argument: the fake calls `onmessage` where the core would send. */
type Channel<T> = { onmessage: (v: T) => void };

type EventMethod = { [M in keyof Backend]: M extends `on${Uppercase<string>}${string}` ? M : never }[keyof Backend];
type CommandMethod = Exclude<keyof Backend, EventMethod>;

const follows = new Map<number, LogFollow>();
let nextFollow = 0;

/** Backend method → [command name, how the command's arguments call it]. */
const COMMANDS: { [M in CommandMethod]: [string, (b: Backend, a: Args) => unknown] } = {
  currentProject: ["current_project", (b) => b.currentProject()],
  openProject: ["open_project", (b, a) => b.openProject(a.path)],
  pickFolder: ["pick_folder", (b) => b.pickFolder()],
  recentProjects: ["recent_projects", (b) => b.recentProjects()],
  reportPainted: ["report_painted", (b, a) => b.reportPainted(a.pageMs)],
  readyToQuit: ["quit_ready", (b) => b.readyToQuit()],

  getStatus: ["get_status", (b) => b.getStatus()],
  pendingApprovals: ["pending_approvals", (b) => b.pendingApprovals()],
  approve: ["approve", (b, a) => b.approve(a.servers, a.remember)],
  restartServer: ["restart_server", (b, a) => b.restartServer(a.server)],
  stopServer: ["stop_server", (b, a) => b.stopServer(a.server)],
  setServerDisabled: ["set_server_disabled", (b, a) => b.setServerDisabled(a.server, a.disabled)],
  serverEntry: ["server_entry", (b, a) => b.serverEntry(a.server)],
  signIn: ["sign_in", (b, a) => b.signIn(a.server)],
  signOut: ["sign_out", (b, a) => b.signOut(a.server)],
  followLog: [
    "follow_log",
    async (b, a) => {
      const f = await b.followLog(a.server, (l) => (a.channel as Channel<unknown>).onmessage(l));
      follows.set(++nextFollow, f);
      return { followId: nextFollow, lines: f.lines };
    },
  ],
  serverDetails: ["server_details", (b, a) => b.serverDetails(a.server)],
  setLogLevel: ["set_log_level", (b, a) => b.setLogLevel(a.server, a.level)],
  extraRoots: ["extra_roots", (b) => b.extraRoots()],
  addExtraRoot: ["add_extra_root", (b, a) => b.addExtraRoot(a.path)],
  removeExtraRoot: ["remove_extra_root", (b, a) => b.removeExtraRoot(a.path)],

  listTools: ["list_tools", (b) => b.listTools()],
  toolDetail: ["tool_detail", (b, a) => b.toolDetail(a.name)],
  heldTools: ["held_tools", (b) => b.heldTools()],
  acceptTools: ["accept_tools", (b, a) => b.acceptTools(a.server, a.tools)],
  callTool: ["call_tool", (b, a) => b.callTool(a.server, a.tool, a.arguments, (id) => (a.started as Channel<number>).onmessage(id))],
  cancelToolCall: ["cancel_tool_call", (b, a) => b.cancelToolCall(a.callId)],

  readConfig: ["read_config", (b, a) => b.readConfig(a.scope ?? undefined)],
  checkConfig: ["check_config", (b, a) => b.checkConfig(a.text)],
  editConfig: ["edit_config", (b, a) => b.editConfig(a.text, a.edit)],
  saveConfig: ["save_config", (b, a) => b.saveConfig(a.text, a.expectedHash, a.scope ?? undefined)],
  openConfigInEditor: ["open_config_in_editor", (b, a) => b.openConfigInEditor(a.scope ?? undefined)],
  importSources: ["import_sources", (b) => b.importSources()],
  importServers: ["import_servers", (b, a) => b.importServers(a.from, a.scope, a.onConflict, a.dryRun, a.confirmed)],

  chatState: ["chat_state", (b) => b.chatState()],
  chatNew: ["chat_new", (b) => b.chatNew()],
  chatConversations: ["chat_conversations", (b) => b.chatConversations()],
  chatOpen: ["chat_open", (b, a) => b.chatOpen(a.id)],
  chatSend: ["chat_send", (b, a) => b.chatSend(a.prompt, (e) => a.channel.onmessage(e), a.attachments)],
  chatStop: ["chat_stop", (b) => b.chatStop()],
  chatApprove: ["chat_approve", (b, a) => b.chatApprove(a.callId, a.decision)],
  openUrl: ["open_url", (b, a) => b.openUrl(a.url)],

  listPrompts: ["list_prompts", (b) => b.listPrompts()],
  completePromptArgument: [
    "complete_prompt_argument",
    (b, a) => b.completePromptArgument(a.server, a.prompt, a.argument, a.value, a.context),
  ],
  chatSendPrompt: ["chat_send_prompt", (b, a) => b.chatSendPrompt(a.server, a.name, a.arguments, (e) => a.channel.onmessage(e))],

  openView: ["open_view", (b, a) => b.openView(a.server, a.tool, a.call)],
  viewMessage: ["view_message", (b, a) => b.viewMessage(a.viewId, a.method, a.params)],
  closeView: ["close_view", (b, a) => b.closeView(a.viewId)],
  pendingMessages: ["pending_messages", (b) => b.pendingMessages()],
  sendPending: ["send_pending", (b, a) => b.sendPending(a.id, (e) => a.channel.onmessage(e))],
  discardPending: ["discard_pending", (b, a) => b.discardPending(a.id)],
  saveDownload: ["save_download", (b, a) => b.saveDownload(a.downloadId, a.names)],
  pendingAsks: ["pending_asks", (b) => b.pendingAsks()],
  answerAsk: ["answer_ask", (b, a) => b.answerAsk(a.id, a.answer)],
  samplingGrants: ["sampling_grants", (b) => b.samplingGrants()],
  revokeSampling: ["revoke_sampling", (b, a) => b.revokeSampling(a.server)],
  contextCost: ["context_cost", (b) => b.contextCost()],
  diagnostics: ["diagnostics", (b) => b.diagnostics()],
  aboutInfo: ["about_info", (b) => b.aboutInfo()],
  providerSettings: ["provider_settings", (b) => b.providerSettings()],
  saveProviderSettings: ["save_provider_settings", (b, a) => b.saveProviderSettings(a.change)],
  forgetProviderKey: ["forget_provider_key", (b, a) => b.forgetProviderKey(a.provider)],
  testProvider: ["test_provider", (b, a) => b.testProvider(a.change)],
  permissionRules: ["permission_rules", (b) => b.permissionRules()],
  setPermission: ["set_permission", (b, a) => b.setPermission(a.tool, a.permission)],

  listResources: ["list_resources", (b, a) => b.listResources(a.server)],
  readResource: ["read_resource", (b, a) => b.readResource(a.server, a.uri)],
  subscribeResource: ["subscribe_resource", (b, a) => b.subscribeResource(a.server, a.uri, a.on)],
  completeResource: [
    "complete_resource",
    (b, a) => b.completeResource(a.server, a.uriTemplate, a.variable, a.value, a.context),
  ],
  saveResource: ["save_resource", (b, a) => b.saveResource(a.server, a.uri)],

  searchServers: ["search_servers", (b, a) => b.searchServers(a.query, a.limit)],
  serverVersions: ["server_versions", (b, a) => b.serverVersions(a.registry, a.name)],
  planInstall: ["plan_install", (b, a) => b.planInstall(a.request)],
  planUpdate: ["plan_update", (b, a) => b.planUpdate(a.server)],
  pickBundle: ["pick_bundle", (b) => b.pickBundle()],
  planBundle: ["plan_bundle", (b, a) => b.planBundle(a.path, a.scope ?? null)],
  pickPath: ["pick_path", (b, a) => b.pickPath(a.directory)],
  openedBundle: ["opened_bundle", (b) => b.openedBundle()],
  previewInstall: ["preview_install", (b, a) => b.previewInstall(a.planId, a.answers)],
  commitInstall: ["commit_install", (b, a) => b.commitInstall(a.planId, a.answers, a.shown)],
  outdatedServers: ["outdated_servers", (b) => b.outdatedServers()],
  serverSecrets: ["server_secrets", (b, a) => b.serverSecrets(a.server)],
  setServerSecret: ["set_server_secret", (b, a) => b.setServerSecret(a.server, a.name, a.value)],
  removeServerSecret: ["remove_server_secret", (b, a) => b.removeServerSecret(a.server, a.name)],
  listTasks: ["list_tasks", (b) => b.listTasks()],
  cancelTask: ["cancel_task", (b, a) => b.cancelTask(a.server, a.taskId)],
  taskResult: ["task_result", (b, a) => b.taskResult(a.server, a.taskId)],
};

/** Commands of src-tauri that are no Backend method of their own. */
const EXTRA: Record<string, (a: Args) => unknown> = {
  unfollow_log: (a) => {
    follows.get(a.followId)?.stop();
    follows.delete(a.followId);
  },
};

/** Backend event → [event name, tagged with the open project (a ProjectEvent)?]. */
const EVENT_NAMES: { [M in EventMethod]: [string, boolean] } = {
  onAsks: [EVENTS.asks, true],
  onStatus: [EVENTS.status, true],
  onToolsChanged: [EVENTS.toolsChanged, true],
  onConfigChanged: [EVENTS.configChanged, true],
  onResources: [EVENTS.resources, true],
  onViews: [EVENTS.views, true],
  onTasks: [EVENTS.tasks, true],
  onProjectChanged: [EVENTS.projectChanged, false],
  onMenu: [EVENTS.menu, false],
  onBundle: [EVENTS.bundle, false],
  onQuitting: [EVENTS.quitting, false],
};

/**
 * Answers the page's IPC from `backend` and forwards its events, those of the open project
 * tagged with `project`; returns the IPC handler. Synchronous, so that it is in place before
 * the app's first call.
 */
export function install(backend: Backend, project: string): (cmd: string, args?: Args) => Promise<unknown> {
  const byCommand = new Map<string, (a: Args) => unknown>(Object.entries(EXTRA));
  for (const [cmd, run] of Object.values(COMMANDS) as [string, (b: Backend, a: Args) => unknown][]) {
    byCommand.set(cmd, (a) => run(backend, a));
  }
  const handle = async (cmd: string, args?: Args) => {
    const run = byCommand.get(cmd);
    if (!run) throw { code: "internal", message: `the fake backend has no command ${cmd}` };
    try {
      return (await run(args ?? {})) ?? null;
    } catch (e) {
      // What crosses the bridge is `{ code, message }`, never an Error.
      const err = BackendError.from(e);
      throw { code: err.code, message: err.message };
    }
  };
  mockIPC(handle, { shouldMockEvents: true });

  for (const [method, [event, tagged]] of Object.entries(EVENT_NAMES) as [EventMethod, [string, boolean]][]) {
    const forward = (payload: unknown) => {
      const tag: ProjectEvent<unknown> = { project, session: 1, payload };
      void emit(event, tagged ? tag : payload);
    };
    // Each `on*` takes a callback of its own payload type; here they all go to `forward`.
    void (backend[method] as (cb: (v: unknown) => void) => Promise<unknown>).call(backend, (v?: unknown) => forward(v ?? null));
  }
  return handle;
}
