// A small Markdown reader for the chat: model and tool text become a tree of plain data
// that Markdown.svelte renders with text interpolation only (never as HTML), so nothing
// in the text can add elements, attributes or scripts. Supported: fenced code blocks,
// headings, bullet and numbered lists, block quotes, paragraphs; inline code, bold,
// italics and links (http and https only; anything else stays text).

export type Inline =
  | { t: "text"; v: string }
  | { t: "code"; v: string }
  | { t: "strong"; c: Inline[] }
  | { t: "em"; c: Inline[] }
  | { t: "link"; href: string; c: Inline[] };

export type Block =
  | { t: "p"; c: Inline[] }
  | { t: "h"; level: number; c: Inline[] }
  | { t: "pre"; lang: string; v: string }
  | { t: "list"; ordered: boolean; start: number; items: Inline[][] }
  | { t: "quote"; c: Inline[] };

/** The URL when it is an absolute http(s) link, else null. */
export function safeHref(href: string): string | null {
  let u: URL;
  try {
    u = new URL(href);
  } catch {
    return null;
  }
  return u.protocol === "http:" || u.protocol === "https:" ? u.href : null;
}

const FENCE = /^\s*(```|~~~)\s*([\w+-]*)\s*$/;
const HEADING = /^(#{1,6})\s+(.*)$/;
const BULLET = /^\s*[-*+]\s+(.*)$/;
const NUMBERED = /^\s*(\d{1,9})[.)]\s+(.*)$/;
const QUOTE = /^\s*>\s?(.*)$/;

export function parseMarkdown(src: string): Block[] {
  const lines = src.replace(/\r\n?/g, "\n").split("\n");
  const out: Block[] = [];
  let para: string[] = [];
  const flush = () => {
    if (para.length) out.push({ t: "p", c: parseInline(para.join("\n")) });
    para = [];
  };
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    const fence = FENCE.exec(line);
    if (fence) {
      flush();
      const body: string[] = [];
      // An unclosed fence (a streaming answer) runs to the end.
      for (i++; i < lines.length && lines[i].trim() !== fence[1]; i++) {
        body.push(lines[i]);
      }
      out.push({ t: "pre", lang: fence[2], v: body.join("\n") });
      continue;
    }
    if (!line.trim()) {
      flush();
      continue;
    }
    const h = HEADING.exec(line);
    if (h) {
      flush();
      out.push({ t: "h", level: h[1].length, c: parseInline(h[2]) });
      continue;
    }
    const b = BULLET.exec(line);
    const n = b ? null : NUMBERED.exec(line);
    if (b || n) {
      flush();
      const ordered = !!n;
      const prev = out[out.length - 1];
      const item = parseInline(b ? b[1] : n![2]);
      if (prev?.t === "list" && prev.ordered === ordered && lines[i - 1]?.trim()) prev.items.push(item);
      else out.push({ t: "list", ordered, start: n ? Number(n[1]) : 1, items: [item] });
      continue;
    }
    const q = QUOTE.exec(line);
    if (q) {
      flush();
      out.push({ t: "quote", c: parseInline(q[1]) });
      continue;
    }
    para.push(line);
  }
  flush();
  return out;
}

// `code`, **bold**, [text](url), *em* or _em_, in that order of precedence.
const INLINE = /`([^`\n]+)`|\*\*([^*]+?)\*\*|\[([^\]\n]+)\]\(([^()\s]+)\)|\*([^*\s](?:[^*]*?[^*\s])?)\*|\b_([^_\s](?:[^_]*?[^_\s])?)_\b/;

export function parseInline(s: string): Inline[] {
  const out: Inline[] = [];
  const text = (v: string) => {
    if (!v) return;
    const last = out[out.length - 1];
    if (last?.t === "text") last.v += v;
    else out.push({ t: "text", v });
  };
  let rest = s;
  for (;;) {
    const m = INLINE.exec(rest);
    if (!m) break;
    text(rest.slice(0, m.index));
    if (m[1] !== undefined) out.push({ t: "code", v: m[1] });
    else if (m[2] !== undefined) out.push({ t: "strong", c: parseInline(m[2]) });
    else if (m[3] !== undefined) {
      const href = safeHref(m[4]);
      if (href) out.push({ t: "link", href, c: parseInline(m[3]) });
      else text(m[0]);
    } else out.push({ t: "em", c: parseInline(m[5] ?? m[6]) });
    rest = rest.slice(m.index + m[0].length);
  }
  text(rest);
  return out;
}
