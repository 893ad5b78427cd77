import { describe, expect, test } from "vitest";
import { buildIndex, filterTools } from "./filter";
import { manyTools } from "./backend/mock";

describe("filterTools", () => {
  const tools = manyTools(100, 4);
  const index = buildIndex(tools);

  test("matches every term, case-insensitively, in list order", () => {
    const hits = filterTools(index, "SEARCH tool_1", null).map((i) => tools[i].tool);
    expect(hits).toEqual(["tool_12_search", "tool_17_search"]);
  });

  test("limits to one server and matches descriptions", () => {
    const hits = filterTools(index, "number 93", "srv1").map((i) => tools[i].name);
    expect(hits).toEqual(["mcp__srv1__tool_93_list"]);
  });

  test("an empty query lists everything of the server", () => {
    expect(filterTools(index, "  ", "srv0")).toHaveLength(25);
    expect(filterTools(index, "", null)).toHaveLength(100);
  });

  test("filtering 10,000 tools takes well under the 50 ms keystroke budget", () => {
    const big = buildIndex(manyTools(10_000));
    const t0 = performance.now();
    for (const q of ["s", "se", "sea", "sear", "search", "search 7"]) filterTools(big, q, null);
    const perKeystroke = (performance.now() - t0) / 6;
    expect(perKeystroke).toBeLessThan(20);
  });
});
