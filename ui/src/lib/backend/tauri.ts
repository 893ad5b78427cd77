// The real backend: the ONLY module that imports @tauri-apps/*. Every method is one
// command or event of src-tauri (names in src-tauri/src/commands.rs and bridge.rs).

import { Channel, invoke } from "@tauri-apps/api/core";
import { listen } from "@tauri-apps/api/event";
import type {
  AboutInfo,
  ContextSummary,
  ApprovalRequest,
  ApproveOutcome,
  AskView,
  ChatEvent,
  ChatItem,
  ChatState,
  Completion,
  ConfigChange,
  ProjectEvent,
  ConfigCheck,
  ConfigEdit,
  ConfigText,
  ConnectionCheck,
  FoundSource,
  ImportPlan,
  Installed,
  OutdatedReport,
  PlanView,
  SearchResults,
  ServerSecretsView,
  ConversationSummary,
  HeldToolEntry,
  LogFollowDto,
  LogLine,
  MenuAction,
  PermissionRule,
  ProjectInfo,
  PromptEntry,
  ProviderView,
  SurfaceEvent,
  ResourceListing,
  ReadPreview,
  ServerDetails,
  ServerEntry,
  SignedIn,
  StatusSnapshot,
  ToolDetail,
  ToolEntry,
  TimedResult,
  PendingMessage,
  ViewEvent,
  ViewOpened,
  ViewReply,
  CallToolResult,
  CancelOutcome,
  TaskEvent,
  TaskRecord,
} from "../bindings";
import { BackendError, type Backend, type LogFollow, type Unlisten } from "./types";

/** Event names emitted by src-tauri/src/bridge.rs (`events`). */
export const EVENTS = {
  status: "mcp-status",
  toolsChanged: "tools-changed",
  configChanged: "config-changed",
  projectChanged: "project-changed",
  menu: "menu",
  asks: "asks-changed",
  resources: "resources-changed",
  views: "views",
  bundle: "bundle-opened",
  tasks: "tasks-changed",
  quitting: "quitting",
} as const;

async function call<T>(cmd: string, args?: Record<string, unknown>): Promise<T> {
  try {
    return await invoke<T>(cmd, args);
  } catch (e) {
    throw BackendError.from(e);
  }
}

async function on<T>(event: string, cb: (payload: T) => void): Promise<Unlisten> {
  return listen<T>(event, (e) => cb(e.payload));
}

/** The newest project session whose events arrived; an older one's are dropped. */
let latestSession = 0;

/** Listens to an event of the open project ({@link ProjectEvent}), never an earlier one's. */
async function onProject<T>(event: string, cb: (payload: T) => void): Promise<Unlisten> {
  return listen<ProjectEvent<T>>(event, (e) => {
    if (e.payload.session < latestSession) return;
    latestSession = e.payload.session;
    cb(e.payload.payload);
  });
}

export const tauriBackend: Backend = {
  currentProject: () => call<ProjectInfo | null>("current_project"),
  openProject: (path) => call<ProjectInfo>("open_project", { path }),
  pickFolder: () => call<string | null>("pick_folder"),
  recentProjects: () => call<string[]>("recent_projects"),
  reportPainted: (pageMs) => call<number>("report_painted", { pageMs }),
  onQuitting: (cb) => on<null>(EVENTS.quitting, () => cb()),
  readyToQuit: () => call<void>("quit_ready"),

  getStatus: () => call<StatusSnapshot>("get_status"),
  pendingApprovals: () => call<ApprovalRequest[]>("pending_approvals"),
  approve: (servers, remember) => call<ApproveOutcome>("approve", { servers, remember }),
  restartServer: (server) => call<void>("restart_server", { server }),
  stopServer: (server) => call<void>("stop_server", { server }),
  setServerDisabled: (server, disabled) => call<void>("set_server_disabled", { server, disabled }),
  serverEntry: (server) => call<ServerEntry | null>("server_entry", { server }),
  signIn: (server) => call<SignedIn>("sign_in", { server }),
  signOut: (server) => call<boolean>("sign_out", { server }),
  async followLog(server, onLine): Promise<LogFollow> {
    const channel = new Channel<LogLine>();
    channel.onmessage = onLine;
    const r = await call<LogFollowDto>("follow_log", { server, channel });
    return {
      lines: r.lines,
      stop: () => void call<void>("unfollow_log", { followId: r.followId }).catch(() => {}),
    };
  },

  serverDetails: (server) => call<ServerDetails | null>("server_details", { server }),
  setLogLevel: (server, level) => call<void>("set_log_level", { server, level }),
  extraRoots: () => call<string[]>("extra_roots"),
  addExtraRoot: (path) => call<string[]>("add_extra_root", { path }),
  removeExtraRoot: (path) => call<string[]>("remove_extra_root", { path }),

  listTools: () => call<ToolEntry[]>("list_tools"),
  toolDetail: (name) => call<ToolDetail | null>("tool_detail", { name }),
  heldTools: () => call<HeldToolEntry[]>("held_tools"),
  acceptTools: (server, tools) => call<HeldToolEntry[]>("accept_tools", { server, tools }),
  callTool: (server, tool, args, started) => {
    const channel = new Channel<number>();
    channel.onmessage = started;
    return call<TimedResult>("call_tool", { server, tool, arguments: args, started: channel });
  },
  cancelToolCall: (callId) => call<void>("cancel_tool_call", { callId }),

  readConfig: (scope) => call<ConfigText>("read_config", { scope: scope ?? null }),
  checkConfig: (text) => call<ConfigCheck>("check_config", { text }),
  editConfig: (text, edit: ConfigEdit) => call<string>("edit_config", { text, edit }),
  saveConfig: (text, expectedHash, scope) => call<ConfigText>("save_config", { text, expectedHash, scope: scope ?? null }),
  openConfigInEditor: (scope) => call<void>("open_config_in_editor", { scope: scope ?? null }),
  importSources: () => call<FoundSource[]>("import_sources"),
  importServers: (from, scope, onConflict, dryRun, confirmed) =>
    call<ImportPlan>("import_servers", { from, scope, onConflict, dryRun, confirmed: confirmed ?? null }),

  chatState: () => call<ChatState>("chat_state"),
  chatNew: () => call<ChatState>("chat_new"),
  chatConversations: () => call<ConversationSummary[]>("chat_conversations"),
  chatOpen: (id) => call<ChatState>("chat_open", { id }),
  async chatSend(prompt, onEvent, attachments) {
    const channel = new Channel<ChatEvent>();
    channel.onmessage = onEvent;
    await call<void>("chat_send", { prompt, channel, ...(attachments?.length ? { attachments } : {}) });
  },
  chatStop: () => call<void>("chat_stop"),
  chatApprove: (callId, decision) => call<boolean>("chat_approve", { callId, decision }),
  openUrl: (url) => call<void>("open_url", { url }),

  listPrompts: () => call<PromptEntry[]>("list_prompts"),
  completePromptArgument: (server, prompt, argument, value, context) =>
    call<Completion>("complete_prompt_argument", { server, prompt, argument, value, context }),
  async chatSendPrompt(server, name, args, onEvent) {
    const channel = new Channel<ChatEvent>();
    channel.onmessage = onEvent;
    return call<ChatItem[]>("chat_send_prompt", { server, name, arguments: args, channel });
  },

  openView: (server, tool, viewCall) => call<ViewOpened>("open_view", { server, tool, call: viewCall }),
  viewMessage: (viewId, method, params) => call<ViewReply>("view_message", { viewId, method, params: params ?? null }),
  closeView: (viewId) => call<boolean>("close_view", { viewId }),
  pendingMessages: () => call<PendingMessage[]>("pending_messages"),
  async sendPending(id, onEvent) {
    const channel = new Channel<ChatEvent>();
    channel.onmessage = onEvent;
    await call<void>("send_pending", { id, channel });
  },
  discardPending: (id) => call<boolean>("discard_pending", { id }),
  saveDownload: (downloadId, names) => call<boolean>("save_download", { downloadId, names }),
  onViews: (cb) => onProject<ViewEvent>(EVENTS.views, cb),

  pendingAsks: () => call<AskView[]>("pending_asks"),
  answerAsk: (id, answer) => call<Record<string, string>>("answer_ask", { id, answer }),
  samplingGrants: () => call<string[]>("sampling_grants"),
  revokeSampling: (server) => call<boolean>("revoke_sampling", { server }),
  onAsks: (cb) => onProject<AskView[]>(EVENTS.asks, cb),
  onStatus: (cb) => onProject<StatusSnapshot>(EVENTS.status, cb),
  onToolsChanged: (cb) => onProject<null>(EVENTS.toolsChanged, () => cb()),
  onConfigChanged: (cb) => onProject<ConfigChange>(EVENTS.configChanged, cb),
  onProjectChanged: (cb) => on<ProjectInfo>(EVENTS.projectChanged, cb),
  onMenu: (cb) => on<MenuAction>(EVENTS.menu, cb),

  listResources: (server) => call<ResourceListing>("list_resources", { server }),
  readResource: (server, uri) => call<ReadPreview>("read_resource", { server, uri }),
  subscribeResource: (server, uri, on) => call<void>("subscribe_resource", { server, uri, on }),
  completeResource: (server, uriTemplate, variable, value, context) =>
    call<Completion>("complete_resource", { server, uriTemplate, variable, value, context }),
  saveResource: (server, uri) => call<string>("save_resource", { server, uri }),
  onResources: (cb) => onProject<SurfaceEvent>(EVENTS.resources, cb),

  contextCost: () => call<ContextSummary>("context_cost"),
  diagnostics: () => call<string>("diagnostics"),
  aboutInfo: () => call<AboutInfo>("about_info"),
  providerSettings: () => call<ProviderView>("provider_settings"),
  saveProviderSettings: (change) => call<ProviderView>("save_provider_settings", { change }),
  forgetProviderKey: (provider) => call<ProviderView>("forget_provider_key", { provider }),
  testProvider: (change) => call<ConnectionCheck>("test_provider", { change }),
  listTasks: () => call<TaskRecord[]>("list_tasks"),
  cancelTask: (server, taskId) => call<CancelOutcome>("cancel_task", { server, taskId }),
  taskResult: (server, taskId) => call<CallToolResult>("task_result", { server, taskId }),
  onTasks: (cb) => onProject<TaskEvent | null>(EVENTS.tasks, cb),
  permissionRules: () => call<PermissionRule[]>("permission_rules"),
  setPermission: (tool, permission) => call<PermissionRule[]>("set_permission", { tool, permission }),

  searchServers: (query, limit) => call<SearchResults>("search_servers", { query, limit }),
  serverVersions: (registry, name) => call<string[]>("server_versions", { registry, name }),
  planInstall: (request) => call<PlanView>("plan_install", { request }),
  planUpdate: (server) => call<PlanView>("plan_update", { server }),
  pickBundle: () => call<string | null>("pick_bundle"),
  planBundle: (path, scope) => call<PlanView>("plan_bundle", { path, scope }),
  pickPath: (directory) => call<string | null>("pick_path", { directory }),
  openedBundle: () => call<string | null>("opened_bundle"),
  previewInstall: (planId, answers) => call<PlanView>("preview_install", { planId, answers }),
  commitInstall: (planId, answers, shown) => call<Installed>("commit_install", { planId, answers, shown }),
  outdatedServers: () => call<OutdatedReport>("outdated_servers"),
  serverSecrets: (server) => call<ServerSecretsView>("server_secrets", { server }),
  setServerSecret: (server, name, value) => call<void>("set_server_secret", { server, name, value }),
  removeServerSecret: (server, name) => call<boolean>("remove_server_secret", { server, name }),
  onBundle: (cb) => on<string>(EVENTS.bundle, cb),
};
