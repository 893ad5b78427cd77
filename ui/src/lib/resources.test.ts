import { describe, expect, test } from "vitest";
import type { ResourceEntry } from "./bindings";
import { buildResourceIndex, expandTemplate, filterResources, formatSize, pickResources, templateVariables } from "./resources";

const res = (server: string, uri: string, name: string): ResourceEntry => ({
  server,
  uri,
  name,
  title: null,
  description: null,
  mimeType: "text/plain",
  size: null,
});

describe("resources", () => {
  const all = [res("everything", "demo://resource/static/document/1", "Resource 1"), res("files", "file:///README.md", "README")];

  test("the filter needs every term", () => {
    const ix = buildResourceIndex(all);
    expect(filterResources(ix, "readme file").map((r) => r.name)).toEqual(["README"]);
    expect(filterResources(ix, "").length).toBe(2);
    expect(filterResources(ix, "nothing here")).toEqual([]);
  });

  test("the picker is fuzzy over server, name and URI", () => {
    expect(pickResources(all, "evres1").map((r) => r.name)).toEqual(["Resource 1"]);
    expect(pickResources(all, "rdme")[0].name).toBe("README");
    expect(pickResources(all, "zzz")).toEqual([]);
  });

  test("template variables and expansion", () => {
    expect(templateVariables("demo://resource/{id}/{+path}{?q,lang}")).toEqual(["id", "path", "q", "lang"]);
    expect(expandTemplate("demo://resource/dynamic/text/{id}", { id: "7" })).toBe("demo://resource/dynamic/text/7");
    expect(expandTemplate("x://{a}{?q,r}", { a: "a b", q: "1" })).toBe("x://a%20b?q=1");
    expect(expandTemplate("x://{+p}", { p: "a/b" })).toBe("x://a/b");
  });

  test("sizes", () => {
    expect(formatSize(null)).toBe("");
    expect(formatSize(512)).toBe("512 B");
    expect(formatSize(2048)).toBe("2.0 kB");
  });
});
