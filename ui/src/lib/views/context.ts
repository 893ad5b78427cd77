// What the window tells a view about itself (`hostContext`, besides `toolInfo`, which the
// core gives): theme, the app's colours and fonts under the spec's variable names, display
// modes, the room the view has, locale, time zone and platform.

import type { McpUiDisplayMode, McpUiHostContext, McpUiStyles } from "@modelcontextprotocol/ext-apps/app-bridge";

/** The widest and tallest an inline view may grow (CSS pixels). */
export const MAX_INLINE_WIDTH = 1200;
export const MAX_INLINE_HEIGHT = 2000;

/** The display modes the window offers (the core offers the same, `HOST_DISPLAY_MODES`). */
export const HOST_DISPLAY_MODES: McpUiDisplayMode[] = ["inline", "fullscreen"];

/** The spec's variable names, each from one of the app's own variables (app.css). */
const FROM_APP: Partial<Record<keyof McpUiStyles, string>> = {
  "--color-background-primary": "--bg-panel",
  "--color-background-secondary": "--bg",
  "--color-background-tertiary": "--bg-sunken",
  "--color-background-info": "--bg-active",
  "--color-background-danger": "--err-bg",
  "--color-background-warning": "--warn-bg",
  "--color-text-primary": "--fg",
  "--color-text-secondary": "--fg-muted",
  "--color-text-tertiary": "--off",
  "--color-text-inverse": "--accent-fg",
  "--color-text-info": "--accent",
  "--color-text-danger": "--err",
  "--color-text-success": "--ok",
  "--color-text-warning": "--warn",
  "--color-border-primary": "--border",
  "--color-border-secondary": "--border",
  "--color-border-danger": "--err",
  "--color-ring-primary": "--accent",
  "--font-sans": "--font",
  "--font-mono": "--mono",
  "--border-radius-sm": "--radius",
  "--border-radius-md": "--radius",
  "--shadow-md": "--shadow",
};

/** Fixed values of the app's look that have no variable of their own. */
const FIXED: Partial<Record<keyof McpUiStyles, string>> = {
  "--font-text-sm-size": "13px",
  "--font-text-md-size": "14px",
  "--font-weight-normal": "400",
  "--font-weight-bold": "600",
  "--border-width-regular": "1px",
};

/** The app's styles as the spec's variables, read from the document's computed style. */
export function styleVariables(read: (name: string) => string): McpUiStyles {
  const out: Record<string, string> = { ...FIXED };
  for (const [name, from] of Object.entries(FROM_APP)) {
    const value = read(from as string).trim();
    if (value) out[name] = value;
  }
  return out as McpUiStyles;
}

export interface Surroundings {
  theme: "light" | "dark";
  /** Reads one CSS variable of the app (`getComputedStyle(root).getPropertyValue`). */
  read: (name: string) => string;
  displayMode: McpUiDisplayMode;
  /** The display modes the view said it supports. */
  viewModes?: McpUiDisplayMode[];
  /** The room the view has now: its width, and the most it may grow in height. */
  width: number;
  maxHeight: number;
  locale: string;
  timeZone: string;
  userAgent: string;
  touch: boolean;
}

/** The whole `hostContext` the window gives a view (without `toolInfo`). */
export function hostContext(s: Surroundings): McpUiHostContext {
  const available = s.viewModes ? HOST_DISPLAY_MODES.filter((m) => s.viewModes!.includes(m)) : HOST_DISPLAY_MODES;
  return {
    theme: s.theme,
    styles: { variables: styleVariables(s.read), css: { fonts: "" } },
    displayMode: s.displayMode,
    availableDisplayModes: available.includes("inline") ? available : ["inline", ...available],
    containerDimensions:
      s.displayMode === "fullscreen"
        ? { width: Math.round(s.width), height: Math.round(s.maxHeight) }
        : { width: Math.round(s.width), maxHeight: Math.round(s.maxHeight) },
    locale: s.locale,
    timeZone: s.timeZone,
    userAgent: s.userAgent,
    platform: "desktop",
    deviceCapabilities: { touch: s.touch, hover: true },
    safeAreaInsets: { top: 0, right: 0, bottom: 0, left: 0 },
  };
}

/** The surroundings in this window now. */
export function currentSurroundings(
  doc: Document,
  over: Pick<Surroundings, "displayMode" | "viewModes" | "width" | "maxHeight">,
): Surroundings {
  const root = doc.documentElement;
  const style = doc.defaultView?.getComputedStyle(root);
  const dark = root.dataset.theme === "dark" || (root.dataset.theme !== "light" && style?.colorScheme === "dark");
  const nav = doc.defaultView?.navigator;
  return {
    theme: dark ? "dark" : "light",
    read: (name) => style?.getPropertyValue(name) ?? "",
    locale: nav?.language ?? "en",
    timeZone: Intl.DateTimeFormat().resolvedOptions().timeZone,
    userAgent: `harness9/${nav?.userAgent ?? ""}`,
    touch: (nav?.maxTouchPoints ?? 0) > 0,
    ...over,
  };
}
