// Tool filtering that stays fast with tens of thousands of tools: the searchable text of
// every tool is lower-cased once per tool list, and a keystroke is one pass of `includes`.

import type { ToolEntry } from "./bindings";

export interface ToolIndex {
  tools: ToolEntry[];
  /** Lower-cased "qualified-name raw-name title description" per tool. */
  haystacks: string[];
}

export function buildIndex(tools: ToolEntry[]): ToolIndex {
  const haystacks = new Array<string>(tools.length);
  for (let i = 0; i < tools.length; i++) {
    const t = tools[i];
    haystacks[i] = `${t.name} ${t.tool} ${t.title ?? ""} ${t.description}`.toLowerCase();
  }
  return { tools, haystacks };
}

/**
 * Indices of the tools that match every whitespace-separated term of `query`
 * (case-insensitive), optionally only those of one server, in list order.
 */
export function filterTools(index: ToolIndex, query: string, server: string | null): number[] {
  const terms = query.toLowerCase().split(/\s+/).filter(Boolean);
  const out: number[] = [];
  const { tools, haystacks } = index;
  outer: for (let i = 0; i < tools.length; i++) {
    if (server !== null && tools[i].server !== server) continue;
    const h = haystacks[i];
    for (const t of terms) if (!h.includes(t)) continue outer;
    out.push(i);
  }
  return out;
}
