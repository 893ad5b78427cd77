// Resources in the UI: a filter index that stays fast with tens of thousands of resources
// (lower-cased once per list, one `includes` pass per keystroke), the fuzzy ranking of the
// chat's `@` picker, and the variables of an RFC 6570 URI template with their expansion.

import type { ResourceEntry } from "./bindings";

export interface ResourceIndex {
  resources: ResourceEntry[];
  haystacks: string[];
}

export function buildResourceIndex(resources: ResourceEntry[]): ResourceIndex {
  const haystacks = new Array<string>(resources.length);
  for (let i = 0; i < resources.length; i++) {
    const r = resources[i];
    haystacks[i] = `${r.name} ${r.title ?? ""} ${r.uri} ${r.mimeType ?? ""} ${r.description ?? ""}`.toLowerCase();
  }
  return { resources, haystacks };
}

/** The resources that match every whitespace-separated term of `query`, in list order. */
export function filterResources(index: ResourceIndex, query: string): ResourceEntry[] {
  const terms = query.toLowerCase().split(/\s+/).filter(Boolean);
  if (terms.length === 0) return index.resources;
  const out: ResourceEntry[] = [];
  const { resources, haystacks } = index;
  outer: for (let i = 0; i < resources.length; i++) {
    const h = haystacks[i];
    for (const t of terms) if (!h.includes(t)) continue outer;
    out.push(resources[i]);
  }
  return out;
}

/**
 * A fuzzy match (every query character in order, case-insensitive): null when it does not
 * match, else a score that favours consecutive characters and an early start.
 */
export function fuzzyScore(hay: string, query: string): number | null {
  const h = hay.toLowerCase();
  let score = 0;
  let at = 0;
  let last = -2;
  let first = true;
  for (const q of query.toLowerCase()) {
    if (/\s/.test(q)) continue;
    const found = h.indexOf(q, at);
    if (found < 0) return null;
    score += found === last + 1 ? 8 : 1;
    if (first) score -= Math.min(found, 20);
    first = false;
    last = found;
    at = found + 1;
  }
  return score;
}

/** The resources for the `@` picker: best fuzzy matches of server, name and URI first. */
export function pickResources(all: ResourceEntry[], query: string, limit = 50): ResourceEntry[] {
  const scored: { r: ResourceEntry; s: number; i: number }[] = [];
  all.forEach((r, i) => {
    const s = fuzzyScore(`${r.server} ${r.title ?? r.name} ${r.uri}`, query);
    if (s !== null) scored.push({ r, s, i });
  });
  scored.sort((a, b) => b.s - a.s || a.i - b.i);
  return scored.slice(0, limit).map((x) => x.r);
}

/** "1.2 kB" and the like; "" when unknown. */
export function formatSize(bytes: number | null | undefined): string {
  if (bytes === null || bytes === undefined) return "";
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} kB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

/** The variable names of a URI template, in order, each once (`{a}`, `{+a}`, `{?a,b}`…). */
export function templateVariables(template: string): string[] {
  const out: string[] = [];
  for (const m of template.matchAll(/\{([^}]*)\}/g)) {
    const body = m[1].replace(/^[+#./;?&]/, "");
    for (const part of body.split(",")) {
      const name = part.replace(/\*$/, "").replace(/:\d+$/, "").trim();
      if (name && !out.includes(name)) out.push(name);
    }
  }
  return out;
}

/** Expands a URI template with string values (RFC 6570 levels 1–3, no explode). */
export function expandTemplate(template: string, values: Record<string, string>): string {
  return template.replace(/\{([^}]*)\}/g, (_, body: string) => {
    const op = /^[+#./;?&]/.test(body) ? body[0] : "";
    const names = (op ? body.slice(1) : body).split(",").map((n) => n.replace(/\*$/, "").replace(/:\d+$/, "").trim());
    const reserved = op === "+" || op === "#";
    const enc = (v: string) => (reserved ? encodeURI(v) : encodeURIComponent(v));
    const defined = names.filter((n) => values[n] !== undefined && values[n] !== "");
    if (defined.length === 0) return "";
    switch (op) {
      case "?":
      case "&":
        return op + defined.map((n) => `${n}=${enc(values[n])}`).join("&");
      case ";":
        return defined.map((n) => `;${n}=${enc(values[n])}`).join("");
      case ".":
      case "/":
        return defined.map((n) => op + enc(values[n])).join("");
      case "#":
        return "#" + defined.map((n) => enc(values[n])).join(",");
      default:
        return defined.map((n) => enc(values[n])).join(",");
    }
  });
}
