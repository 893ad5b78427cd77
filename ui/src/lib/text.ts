// Positions in a text, for mapping validation messages onto the editor.

/** The offset of a 1-based line and column (clamped to the text). */
export function offsetOf(text: string, line: number, column: number): number {
  let offset = 0;
  for (let l = 1; l < line; l++) {
    const nl = text.indexOf("\n", offset);
    if (nl < 0) return text.length;
    offset = nl + 1;
  }
  const end = text.indexOf("\n", offset);
  const lineEnd = end < 0 ? text.length : end;
  return Math.min(lineEnd, offset + Math.max(0, column - 1));
}

/** Where a server's name is written as a key (after "mcpServers"), or the text's start. */
export function serverKeyRange(text: string, name: string): { from: number; to: number } {
  const key = JSON.stringify(name);
  const after = Math.max(0, text.indexOf('"mcpServers"'));
  const re = new RegExp(`${key.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}\\s*:`, "g");
  re.lastIndex = after;
  const m = re.exec(text);
  return m ? { from: m.index, to: m.index + key.length } : { from: 0, to: 0 };
}
