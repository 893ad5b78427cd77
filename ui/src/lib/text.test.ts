import { describe, expect, it } from "vitest";
import { offsetOf } from "./text";

describe("offsetOf", () => {
  it("counts a column in characters, whatever their size in the editor", () => {
    const text = '{\n  "é😀": 1, x}';
    // The core reports the stray x at line 2, column 12 (characters); the editor's
    // offset counts the emoji as two units.
    expect(text[offsetOf(text, 2, 12)]).toBe("x");
    expect(offsetOf(text, 1, 1)).toBe(0);
    // Clamped to the line and to the text.
    expect(offsetOf(text, 1, 99)).toBe(1);
    expect(offsetOf(text, 9, 1)).toBe(text.length);
  });
});
