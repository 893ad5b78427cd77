// Pure helpers for what servers say about themselves and their tools: icons (only data:
// URLs the backend fetched and checked ever load), tool annotations as rows, and the
// logging levels.

import type { Icon, LogLevel, ToolEntry, ToolHints } from "./bindings";

/** Every logging level, lowest first (the order of `logging/setLevel`). */
export const LOG_LEVELS: LogLevel[] = ["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"];

/**
 * Whether an icon may be shown: `data:` only. The backend fetches and checks every icon and
 * hands it over as data; the window's CSP allows no network image either.
 */
export function loadable(src: string): boolean {
  const scheme = src.trim().split(":", 1)[0].toLowerCase();
  return src.includes(":") && scheme === "data";
}

/** The icon to show (a theme-less one first), or null. */
export function pickIcon(icons: Icon[] | null | undefined): Icon | null {
  const ok = (icons ?? []).filter((i) => loadable(i.src));
  return ok.find((i) => !i.theme) ?? ok[0] ?? null;
}

/** Marks for a tool row: what the server's hints say (a bare default says nothing). */
export function toolMarks(t: ToolEntry): string[] {
  return t.marks ?? (t.readOnly ? ["read-only"] : []);
}

export interface HintRow {
  name: string;
  value: boolean;
  /** The server did not set it: the spec's default applies. */
  defaulted: boolean;
  /** Set but meaningless (destructiveHint on a read-only tool). */
  ignored: boolean;
}

/** The four annotations as rows, with the spec's defaults. */
export function hintRows(h: ToolHints): HintRow[] {
  return [
    { name: "readOnlyHint", value: h.readOnly, defaulted: h.readOnlyHint === null, ignored: false },
    { name: "destructiveHint", value: h.destructive, defaulted: h.destructiveHint === null, ignored: h.readOnly },
    { name: "idempotentHint", value: h.idempotent, defaulted: h.idempotentHint === null, ignored: false },
    { name: "openWorldHint", value: h.openWorld, defaulted: h.openWorldHint === null, ignored: false },
  ];
}
