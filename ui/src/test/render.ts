// Mounting components in happy-dom against the mock backend.

import { flushSync, mount, tick, unmount, type Component } from "svelte";
import { AppState, appContext } from "../lib/app.svelte";
import { MockBackend } from "../lib/backend/mock";

export function setup(): { backend: MockBackend; app: AppState } {
  const backend = new MockBackend();
  return { backend, app: new AppState(backend) };
}

export function render<P extends Record<string, unknown>>(
  component: Component<P>,
  props: P,
  app: AppState,
): { target: HTMLElement; destroy: () => void } {
  const target = document.createElement("div");
  document.body.append(target);
  const instance = mount(component, { target, props, context: appContext(app) });
  flushSync();
  return {
    target,
    destroy: () => {
      void unmount(instance);
      target.remove();
    },
  };
}

/** Lets promises, timers (up to `ms`) and Svelte's updates run. */
export async function settle(ms = 0): Promise<void> {
  await tick();
  await new Promise((r) => setTimeout(r, ms));
  await tick();
  flushSync();
}

export function $(root: ParentNode, testid: string): HTMLElement {
  const el = root.querySelector<HTMLElement>(`[data-testid="${testid}"]`);
  if (!el) throw new Error(`no element with data-testid="${testid}"`);
  return el;
}

export function type(el: HTMLInputElement | HTMLTextAreaElement, value: string): void {
  el.value = value;
  el.dispatchEvent(new Event("input", { bubbles: true }));
  flushSync();
}
