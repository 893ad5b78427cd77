// The app's state (Svelte 5 runes) over one Backend. Components read it and call its
// methods; nothing here knows whether the backend is Tauri or the test mock.

import { getContext, setContext } from "svelte";
import type {
  ApprovalRequest,
  ConfigText,
  Scope,
  HeldToolEntry,
  ProjectInfo,
  ServerStatus,
  StatusSnapshot,
  ToolEntry,
} from "./bindings";
import { BackendError, type Backend, type Unlisten } from "./backend/types";
import { ChatSession } from "./chat.svelte";
import { LEFT, LiveViews } from "./views/live";
import { TasksState } from "./tasks.svelte";

export type View = "tools" | "server" | "settings" | "chat" | "tasks";
export type Theme = "system" | "light" | "dark";

export interface Notice {
  id: number;
  kind: "error" | "info";
  text: string;
}

const THEME_KEY = "harness9.theme";
const CONTEXT_KEY = Symbol("harness9.app");

export class AppState {
  readonly backend: Backend;
  /** The agent chat of the open project. */
  readonly chat: ChatSession;
  /** The MCP Apps views shown in the window (torn down before what holds them goes). */
  readonly views = new LiveViews();
  /** The project's MCP tasks (the core's table, kept current). */
  readonly tasks: TasksState;

  project = $state<ProjectInfo | null>(null);
  /** True until the first answer about the open project. */
  loading = $state(true);
  recent = $state<string[]>([]);
  status = $state<StatusSnapshot>({ revision: 0, servers: [], configError: null });
  tools = $state.raw<ToolEntry[]>([]);
  /** Tools held back because they changed since they were pinned. */
  held = $state.raw<HeldToolEntry[]>([]);
  view = $state<View>("tools");
  /** The chat was shown in this project: it stays mounted from then on (hidden when another view shows). */
  chatOpened = $state(false);
  /** The server shown in the server view (and the tool list's filter). */
  selectedServer = $state<string | null>(null);
  /** The qualified name of the tool shown in the tool detail. */
  selectedTool = $state<string | null>(null);
  approvals = $state<ApprovalRequest[]>([]);
  approvalOpen = $state(false);
  notices = $state<Notice[]>([]);
  /** Servers with a sign-in under way from this window (the browser is open). */
  signingIn = $state<string[]>([]);
  theme = $state<Theme>("system");
  /** Set by the settings pane while it is open; Ctrl/Cmd+S calls it. */
  saveHandler: (() => void) | null = null;
  /**
   * The "Add server" dialog, when open: a search of the registries, a bundle's install
   * (`bundle`: its path) or an installed server's update (`update`: its name).
   */
  install = $state<{ bundle?: string; update?: string } | null>(null);
  /** The settings pane's text and what it was loaded from, kept while it is closed. */
  configDraft: { loaded: ConfigText; text: string; scope: Scope } | null = null;

  #dismissed = new Set<string>();
  /** Sign-ins the user cancelled: their outcome is not reported. */
  #cancelledSignIns = new Set<string>();
  #unlisten: Unlisten[] = [];
  #noticeId = 0;
  #toolsTimer: ReturnType<typeof setTimeout> | null = null;

  constructor(backend: Backend) {
    this.backend = backend;
    this.chat = new ChatSession(backend, this.views);
    this.tasks = new TasksState(backend);
    try {
      const t = globalThis.localStorage?.getItem(THEME_KEY);
      if (t === "light" || t === "dark" || t === "system") this.theme = t;
    } catch {
      // storage unavailable: keep the default
    }
  }

  /** Subscribes to the backend's events and loads the open project, if any. */
  async init(): Promise<void> {
    const b = this.backend;
    this.#unlisten.push(
      await b.onStatus((s) => this.#setStatus(s)),
      await b.onToolsChanged(() => this.#scheduleTools()),
      await b.onProjectChanged((p) => void this.#projectOpened(p)),
      await b.onTasks((e) => this.tasks.apply(e)),
      await b.onQuitting(() => void this.quit()),
    );
    void b.recentProjects().then((r) => (this.recent = r), () => {});
    try {
      const p = await b.currentProject();
      if (p) await this.#projectOpened(p);
    } catch (e) {
      this.notify(e);
    } finally {
      this.loading = false;
    }
  }

  destroy(): void {
    for (const u of this.#unlisten.splice(0)) u();
    if (this.#toolsTimer) clearTimeout(this.#toolsTimer);
    this.tasks.destroy();
  }

  async #projectOpened(p: ProjectInfo): Promise<void> {
    const changed = this.project?.path !== p.path;
    this.project = p;
    this.loading = false;
    if (changed) {
      this.#revision = -1;
      this.#dismissed.clear();
      this.configDraft = null;
      this.selectedServer = null;
      this.selectedTool = null;
      this.view = "tools";
      this.chatOpened = false;
      this.tools = [];
      this.chat.reset();
      this.tasks.reset();
    }
    try {
      const [status] = await Promise.all([this.backend.getStatus(), this.refreshTools(), this.tasks.load()]);
      this.#setStatus(status);
    } catch (e) {
      this.notify(e);
    }
    void this.backend.recentProjects().then((r) => (this.recent = r), () => {});
  }

  /** The revision of the status shown (each project counts from its start). */
  #revision = -1;

  #setStatus(s: StatusSnapshot): void {
    // A status fetched before a newer one was pushed is dropped.
    if (s.revision < this.#revision) return;
    this.#revision = s.revision;
    this.status = s;
    const waiting = s.servers.filter((x) => x.state.status === "awaiting-approval");
    const fresh = waiting.filter((x) => !this.#dismissed.has(x.name));
    if (fresh.length > 0 && !this.approvalOpen) void this.showApprovals();
    if (waiting.length === 0 && this.approvalOpen) this.approvalOpen = false;
  }

  #scheduleTools(): void {
    if (this.#toolsTimer) return;
    this.#toolsTimer = setTimeout(() => {
      this.#toolsTimer = null;
      void this.refreshTools();
    }, 30);
  }

  async refreshTools(): Promise<void> {
    try {
      const [tools, held] = await Promise.all([this.backend.listTools(), this.backend.heldTools()]);
      this.tools = tools;
      this.held = held;
    } catch (e) {
      if (!(e instanceof BackendError && e.code === "no-project")) this.notify(e);
    }
  }

  /** Accepts one held tool: the backend pins its new definition and gives it to the model. */
  async acceptTool(server: string, tool: string): Promise<void> {
    try {
      await this.backend.acceptTools(server, [tool]);
    } catch (e) {
      this.notify(e);
    }
    await this.refreshTools();
  }

  server(name: string): ServerStatus | undefined {
    return this.status.servers.find((s) => s.name === name);
  }

  // ---- navigation -------------------------------------------------------------------

  /** Counts navigations: only the latest one asked for is carried out. */
  #navigation = 0;

  /**
   * Changes what the main panel shows. Every such change takes the tool panel's open tool
   * away, with the view of a call run there by hand: when there is one, it is asked to tear
   * down first (with its time limit), and the change follows.
   */
  #navigate(change: () => void): void {
    const n = ++this.#navigation;
    const manual = (v: { conversationId: string | null }) => v.conversationId === null;
    if (!this.views.some(manual)) {
      change();
      return;
    }
    void this.views.leave(manual, LEFT.panel).then(() => {
      if (n === this.#navigation) change();
    });
  }

  showServer(name: string): void {
    this.#navigate(() => {
      this.selectedServer = name;
      this.selectedTool = null;
      this.view = "server";
    });
  }

  showTools(): void {
    this.#navigate(() => {
      this.selectedServer = null;
      this.view = "tools";
    });
  }

  showSettings(): void {
    this.#navigate(() => (this.view = "settings"));
  }

  showTasks(): void {
    this.#navigate(() => (this.view = "tasks"));
  }

  showChat(): void {
    this.#navigate(() => {
      this.chatOpened = true;
      this.view = "chat";
    });
  }

  /** Shows tool `name` in the tool panel (`null` closes the tool). */
  selectTool(name: string | null): void {
    if (name === this.selectedTool) return;
    this.#navigate(() => (this.selectedTool = name));
  }

  /** Opens the "Add server" dialog (a bundle's install or a server's update, if given). */
  openInstall(what: { bundle?: string; update?: string } = {}): void {
    if (!this.project) {
      this.notify("Open a project folder first: a server is installed into a project's settings.");
      return;
    }
    this.install = what;
  }

  /** Esc: close the innermost open thing (the settings view is not a panel: it stays). */
  closeTop(): boolean {
    if (this.install) {
      this.install = null;
      return true;
    }
    if (this.approvalOpen) {
      this.dismissApprovals();
      return true;
    }
    if (this.selectedTool) {
      this.selectTool(null);
      return true;
    }
    if (this.view === "server" || this.view === "tasks") {
      this.showTools();
      return true;
    }
    return false;
  }

  setTheme(t: Theme): void {
    this.theme = t;
    try {
      globalThis.localStorage?.setItem(THEME_KEY, t);
    } catch {
      // not persisted
    }
  }

  // ---- projects -------------------------------------------------------------------

  async openFolder(): Promise<void> {
    try {
      const path = await this.backend.pickFolder();
      if (path) await this.openProject(path);
    } catch (e) {
      this.notify(e);
    }
  }

  async openProject(path: string): Promise<void> {
    try {
      // The project's views hear that they go, then their frames go, before it closes.
      if (path !== this.project?.path) await this.views.leave(() => true, LEFT.project);
      const p = await this.backend.openProject(path);
      await this.#projectOpened(p);
    } catch (e) {
      this.notify(e);
    }
  }

  /**
   * The app is closing: every view hears it and answers (all at once, bounded: `leaveAll`),
   * then the backend closes the window.
   */
  async quit(): Promise<void> {
    await this.views.leaveAll(LEFT.quit);
    await this.backend.readyToQuit().catch(() => {});
  }

  // ---- approvals ------------------------------------------------------------------

  async showApprovals(): Promise<void> {
    try {
      this.approvals = await this.backend.pendingApprovals();
      this.approvalOpen = this.approvals.length > 0;
    } catch (e) {
      this.notify(e);
    }
  }

  /** Approves the requests shown; any that changed meanwhile are shown again, refreshed. */
  async approve(shown: ApprovalRequest[], remember: boolean): Promise<void> {
    this.approvalOpen = false;
    try {
      const picks = shown.map((a) => ({ name: a.name, fingerprint: a.fingerprint }));
      const outcome = await this.backend.approve(picks, remember);
      if (outcome.stale.length > 0) await this.showApprovals();
    } catch (e) {
      this.notify(e);
    }
  }

  dismissApprovals(): void {
    for (const a of this.approvals) this.#dismissed.add(a.name);
    this.approvalOpen = false;
  }

  // ---- server actions -------------------------------------------------------------

  async serverAction(
    action: "restart" | "stop" | "enable" | "disable",
    name: string,
  ): Promise<void> {
    const b = this.backend;
    try {
      switch (action) {
        case "restart":
          return await b.restartServer(name);
        case "stop":
          return await b.stopServer(name);
        case "enable":
          return await b.setServerDisabled(name, false);
        case "disable":
          return await b.setServerDisabled(name, true);
      }
    } catch (e) {
      this.notify(e);
    }
  }

  // ---- signing in to remote servers ---------------------------------------------

  /** Whether the server waits for the user to sign in in the browser. */
  isSigningIn(name: string): boolean {
    const st = this.server(name)?.state;
    return this.signingIn.includes(name) || (st?.status === "starting" && st.phase === "signing-in");
  }

  /** Signs in to a remote server: the backend opens the browser and waits for the user. */
  async signIn(name: string): Promise<void> {
    if (this.signingIn.includes(name)) return;
    this.#cancelledSignIns.delete(name);
    this.signingIn = [...this.signingIn, name];
    try {
      const who = await this.backend.signIn(name);
      if (!this.#cancelledSignIns.has(name)) this.notify(`Signed in to ${name} (${who.issuer})`, "info");
    } catch (e) {
      if (!this.#cancelledSignIns.has(name)) this.notify(`Could not sign in to ${name}: ${BackendError.from(e).message}`);
    } finally {
      this.#cancelledSignIns.delete(name);
      this.signingIn = this.signingIn.filter((n) => n !== name);
    }
  }

  /** Cancels a sign-in under way: stops the server (which ends the wait for the browser). */
  async cancelSignIn(name: string): Promise<void> {
    if (this.signingIn.includes(name)) this.#cancelledSignIns.add(name);
    this.signingIn = this.signingIn.filter((n) => n !== name);
    await this.serverAction("stop", name);
  }

  async signOut(name: string): Promise<void> {
    try {
      const had = await this.backend.signOut(name);
      this.notify(had ? `Signed out of ${name}` : `No sign-in was kept for ${name}`, "info");
    } catch (e) {
      this.notify(e);
    }
  }

  // ---- notices --------------------------------------------------------------------

  notify(e: unknown, kind: Notice["kind"] = "error"): void {
    const text = typeof e === "string" ? e : BackendError.from(e).message;
    const id = ++this.#noticeId;
    this.notices = [...this.notices, { id, kind, text }];
    setTimeout(() => this.dismissNotice(id), kind === "error" ? 10000 : 4000);
  }

  dismissNotice(id: number): void {
    this.notices = this.notices.filter((n) => n.id !== id);
  }
}

export function provideApp(app: AppState): void {
  setContext(CONTEXT_KEY, app);
}

export function useApp(): AppState {
  const app = getContext<AppState | undefined>(CONTEXT_KEY);
  if (!app) throw new Error("AppState missing: call provideApp() in a parent component");
  return app;
}

/** The context map for `mount(Component, { context })` in tests. */
export function appContext(app: AppState): Map<unknown, unknown> {
  return new Map([[CONTEXT_KEY, app]]);
}
