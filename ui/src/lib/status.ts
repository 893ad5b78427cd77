// How a server's state is shown: the chip's mark, tone and label, the same everywhere.

import type { Scope, ServerStatus } from "./bindings";

export type Tone = "ok" | "warn" | "err" | "off" | "ask";

export interface ChipInfo {
  mark: string;
  tone: Tone;
  /** Short text after the name: tool count, phase, "failed", ... */
  label: string;
  /** One sentence for tooltips and screen readers. */
  title: string;
}

const PHASES: Record<string, string> = {
  spawning: "spawning",
  initializing: "initializing",
  "listing-tools": "listing tools",
  "signing-in": "signing in",
};

export function chipInfo(s: ServerStatus): ChipInfo {
  const st = s.state;
  switch (st.status) {
    case "connected": {
      const n = st.tools;
      const tools = `${n} tool${n === 1 ? "" : "s"}`;
      const held = s.heldTools > 0 ? `${s.heldTools} changed` : "";
      return {
        mark: "●",
        tone: "ok",
        label: held ? `${n} · ${held}` : String(n),
        title: `${s.name}: connected, ${tools}${st.serverName ? ` (${st.serverName} ${st.serverVersion})` : ""}${held ? `; ${held} since accepted, held back (review them in the tool list)` : ""}`,
      };
    }
    case "starting": {
      const phase = PHASES[st.phase] ?? st.phase;
      const title =
        st.phase === "signing-in"
          ? `${s.name}: waiting for you to sign in in the browser`
          : `${s.name}: starting (${phase})`;
      return { mark: "○", tone: "warn", label: phase, title };
    }
    case "failed": {
      const r = s.restart;
      const retry =
        r && r.retryInMs !== null
          ? `restarting in ${Math.round(r.retryInMs / 1000)} s (${r.attempt}/${r.maxAttempts})`
          : r?.gaveUp
            ? `gave up after ${r.attempt} restarts`
            : "";
      return {
        mark: "✗",
        tone: "err",
        label: retry ? "restarting" : "failed",
        title: `${s.name}: failed: ${st.reason}${retry ? ` (${retry})` : ""}`,
      };
    }
    case "disabled":
      return { mark: "⊘", tone: "off", label: "disabled", title: `${s.name}: disabled in .mcp.json` };
    case "awaiting-approval":
      return { mark: "?", tone: "ask", label: "approve", title: `${s.name}: waiting for your approval` };
    case "needs-auth":
      return { mark: "!", tone: "ask", label: "needs sign-in", title: `${s.name}: needs you to sign in (${st.reason})` };
    case "stopped":
      return { mark: "■", tone: "off", label: "stopped", title: `${s.name}: stopped` };
  }
}

/** "3 of 4 connected · 52 tools" */
export function summary(servers: ServerStatus[]): string {
  let connected = 0;
  let tools = 0;
  for (const s of servers) {
    if (s.state.status === "connected") {
      connected++;
      tools += s.state.tools;
    }
  }
  return `${connected} of ${servers.length} connected · ${tools} tool${tools === 1 ? "" : "s"}`;
}

/** What each config scope means, for tooltips. */
export const SCOPE_HINTS: Record<Scope, string> = {
  local: "Local scope: only you, only this project (kept outside the project)",
  project: "Project scope: .mcp.json, shared through the repository",
  user: "User scope: only you, every project",
};
