// Positions in a text, for mapping validation messages onto the editor.

/**
 * The offset (in UTF-16 units, as the editor counts) of a 1-based line and column, the
 * column counted in characters as the core reports it (clamped to the line).
 */
export function offsetOf(text: string, line: number, column: number): number {
  let offset = 0;
  for (let l = 1; l < line; l++) {
    const nl = text.indexOf("\n", offset);
    if (nl < 0) return text.length;
    offset = nl + 1;
  }
  const end = text.indexOf("\n", offset);
  const lineEnd = end < 0 ? text.length : end;
  for (let c = 1; c < column && offset < lineEnd; c++) {
    const code = text.charCodeAt(offset);
    offset += code >= 0xd800 && code <= 0xdbff && offset + 1 < lineEnd ? 2 : 1;
  }
  return offset;
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
