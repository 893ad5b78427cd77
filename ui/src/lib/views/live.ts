// The views shown in the window, so that whatever takes them away (leaving a conversation,
// opening another project, quitting the app) first asks each one to tear down
// (`ui/resource-teardown`, with its time limit) and only then lets its frame go. A view's
// frame registers here while it is open and leaves when it is gone.

/**
 * The longest quitting waits for the views to answer, all of them at once (each also has
 * its own limit, `TEARDOWN_TIMEOUT_MS`). The backend waits a little longer for the window
 * (`QUIT_WAIT` in src-tauri/src/quit.rs, 3 s) before it closes anyway.
 */
export const QUIT_TEARDOWN_MS = 2000;

/** One open view, as its frame registers it. */
export interface LiveView {
  viewId: string;
  /** The conversation of its call; `null` for a call made by hand (the tool panel). */
  conversationId: string | null;
  /** Asks the view to tear down (with the time limit), then removes its frame. */
  tearDown(reason: string, message: string): Promise<void>;
}

/** Why views go when the window takes them away, as `ui/resource-teardown` says it. */
export const LEFT = {
  conversation: { reason: "conversation-left", message: "its conversation was left" },
  project: { reason: "project-closed", message: "the project was closed" },
  /** The tool panel's tool was closed, or another panel shown. */
  panel: { reason: "closed", message: "its tool's panel was closed" },
  /** The window was closed, or the app quit. */
  quit: { reason: "app-closed", message: "the app is closing" },
} as const;

export class LiveViews {
  #views = new Map<string, LiveView>();

  /** Registers a view; the function returned unregisters it. */
  add(view: LiveView): () => void {
    this.#views.set(view.viewId, view);
    return () => {
      if (this.#views.get(view.viewId) === view) this.#views.delete(view.viewId);
    };
  }

  get size(): number {
    return this.#views.size;
  }

  /** Whether a registered view passes `which`. */
  some(which: (v: LiveView) => boolean): boolean {
    return [...this.#views.values()].some(which);
  }

  /**
   * Tears down every view `which` picks, all at once; resolves when each one answered its
   * teardown or ran out of time, and its frame is gone.
   */
  async leave(which: (v: LiveView) => boolean, why: { reason: string; message: string }): Promise<void> {
    const going = [...this.#views.values()].filter(which);
    await Promise.all(
      going.map((v) => {
        // A view already asked is asked once: a second leave waits for the same answer.
        let done = this.#going.get(v);
        if (!done) {
          done = v.tearDown(why.reason, why.message).catch(() => {});
          this.#going.set(v, done);
          void done.then(() => this.#going.delete(v));
        }
        return done;
      }),
    );
  }

  /**
   * Tears every view down at once, waiting at most `limitMs` in all (quitting: the window
   * goes whether or not a view answers). True when every view answered or ran out of its
   * own time within the limit.
   */
  async leaveAll(why: { reason: string; message: string }, limitMs = QUIT_TEARDOWN_MS): Promise<boolean> {
    if (this.#views.size === 0) return true;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<false>((r) => (timer = setTimeout(() => r(false), limitMs)));
    const done = await Promise.race([this.leave(() => true, why).then(() => true as const), late]);
    clearTimeout(timer);
    return done;
  }

  #going = new Map<LiveView, Promise<void>>();
}
