import { describe, expect, test } from "vitest";
import { parseInline, parseMarkdown, safeHref } from "./markdown";

describe("chat markdown", () => {
  test("blocks: paragraphs, headings, lists, fences (unclosed too), quotes", () => {
    const md = "# Title\n\nSome text\nmore\n\n- a\n- **b**\n\n1. one\n2. two\n\n> said\n\n```rust\nfn main() {}\n```\n\n```\nstreaming";
    expect(parseMarkdown(md)).toEqual([
      { t: "h", level: 1, c: [{ t: "text", v: "Title" }] },
      { t: "p", c: [{ t: "text", v: "Some text\nmore" }] },
      { t: "list", ordered: false, start: 1, items: [[{ t: "text", v: "a" }], [{ t: "strong", c: [{ t: "text", v: "b" }] }]] },
      { t: "list", ordered: true, start: 1, items: [[{ t: "text", v: "one" }], [{ t: "text", v: "two" }]] },
      { t: "quote", c: [{ t: "text", v: "said" }] },
      { t: "pre", lang: "rust", v: "fn main() {}" },
      { t: "pre", lang: "", v: "streaming" },
    ]);
  });

  test("inline: code, bold, italics, links", () => {
    expect(parseInline("use `x*y*` and **bold _it_** or *em* see [docs](https://example.com/a?b=1)")).toEqual([
      { t: "text", v: "use " },
      { t: "code", v: "x*y*" },
      { t: "text", v: " and " },
      { t: "strong", c: [{ t: "text", v: "bold " }, { t: "em", c: [{ t: "text", v: "it" }] }] },
      { t: "text", v: " or " },
      { t: "em", c: [{ t: "text", v: "em" }] },
      { t: "text", v: " see " },
      { t: "link", href: "https://example.com/a?b=1", c: [{ t: "text", v: "docs" }] },
    ]);
  });

  test("only http(s) links become links; other schemes stay text", () => {
    expect(safeHref("javascript:alert(1)")).toBeNull();
    expect(safeHref("data:text/html,<script>")).toBeNull();
    expect(safeHref("file:///etc/passwd")).toBeNull();
    expect(safeHref("relative/path")).toBeNull();
    expect(safeHref("http://localhost:8080/x")).toBe("http://localhost:8080/x");
    expect(parseInline("[x](javascript:alert(1))")).toEqual([{ t: "text", v: "[x](javascript:alert(1))" }]);
  });

  test("HTML is plain text to the parser", () => {
    expect(parseMarkdown('<script>alert(1)</script> <img src=x onerror="alert(2)">')).toEqual([
      { t: "p", c: [{ t: "text", v: '<script>alert(1)</script> <img src=x onerror="alert(2)">' }] },
    ]);
  });
});
