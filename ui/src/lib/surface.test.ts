import { describe, expect, it } from "vitest";
import { hintRows, loadable, pickIcon, toolMarks } from "./surface";
import type { ToolEntry } from "./bindings";

describe("icons", () => {
  it("load only data: (the backend fetched and checked them)", () => {
    expect(loadable("https://example.com/a.png")).toBe(false);
    expect(loadable("DATA:image/png;base64,AA")).toBe(true);
    expect(loadable("http://example.com/a.png")).toBe(false);
    expect(loadable("file:///etc/passwd")).toBe(false);
    expect(loadable("javascript:alert(1)")).toBe(false);
    expect(loadable("https")).toBe(false);
  });
  it("pick a theme-less icon first, never an unsafe one", () => {
    expect(pickIcon([{ src: "http://x/a.png", mimeType: null, theme: null }])).toBeNull();
    expect(pickIcon([{ src: "https://x/a.png", mimeType: null, theme: null }])).toBeNull();
    const dark = { src: "data:image/png;base64,BB", mimeType: null, theme: "dark" };
    const plain = { src: "data:image/png;base64,AA", mimeType: null, theme: null };
    expect(pickIcon([dark, plain])).toEqual(plain);
    expect(pickIcon([dark])).toEqual(dark);
  });
});

describe("hints", () => {
  it("show defaults and that destructiveHint means nothing for a read-only tool", () => {
    const rows = hintRows({
      readOnlyHint: true,
      destructiveHint: true,
      idempotentHint: null,
      openWorldHint: false,
      readOnly: true,
      destructive: false,
      idempotent: false,
      openWorld: false,
      marks: ["read-only"],
    });
    expect(rows.map((r) => [r.name, r.value, r.defaulted, r.ignored])).toEqual([
      ["readOnlyHint", true, false, false],
      ["destructiveHint", false, false, true],
      ["idempotentHint", false, true, false],
      ["openWorldHint", false, false, false],
    ]);
  });
  it("fall back to readOnly for tools without marks", () => {
    const t = { readOnly: true } as ToolEntry;
    expect(toolMarks(t)).toEqual(["read-only"]);
  });
});
