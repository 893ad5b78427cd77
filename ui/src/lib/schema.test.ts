import { describe, expect, test } from "vitest";
import { FormError, fieldKind, initialValue, toArguments, typeLabel, type FormValue, type Schema } from "./schema";

const schema: Schema = {
  type: "object",
  properties: {
    name: { type: "string" },
    count: { type: "integer", minimum: 1 },
    ratio: { type: "number" },
    verbose: { type: "boolean" },
    mode: { enum: ["fast", "slow"] },
    opts: { type: "object", properties: { deep: { type: "boolean" }, tag: { type: "string" } }, required: ["deep"] },
    tags: { type: "array", items: { type: "string" } },
    any: { oneOf: [{ type: "string" }, { type: "number" }] },
  },
  required: ["name", "count"],
};

function fields(v: FormValue): Record<string, FormValue> {
  if (v.kind !== "object") throw new Error("not an object");
  return v.fields;
}

describe("schema forms", () => {
  test("each schema gets its control", () => {
    const kinds = Object.fromEntries(Object.entries(schema.properties!).map(([k, s]) => [k, fieldKind(s)]));
    expect(kinds).toEqual({
      name: "string",
      count: "integer",
      ratio: "number",
      verbose: "boolean",
      mode: "enum",
      opts: "object",
      tags: "array",
      any: "json",
    });
    expect(fieldKind({ type: ["string", "null"] })).toBe("string");
    expect(fieldKind({ type: "object" })).toBe("json");
  });

  test("unset optional fields are left out; nested values are built", () => {
    const v = initialValue(schema);
    const f = fields(v);
    Object.assign(f.name, { text: "x", set: true });
    Object.assign(f.count, { text: "3" });
    Object.assign(f.mode, { text: "1", set: true });
    Object.assign(fields(f.opts).deep, { value: true });
    if (f.tags.kind === "array") f.tags.items.push({ kind: "string", text: "a", set: true });
    Object.assign(f.any, { text: "42" });
    expect(toArguments(schema, v)).toEqual({ name: "x", count: 3, mode: "slow", opts: { deep: true }, tags: ["a"], any: 42 });
  });

  test("missing required values and bad numbers name the field", () => {
    const v = initialValue(schema);
    expect(() => toArguments(schema, v)).toThrowError(new FormError("name", "is required"));
    const f = fields(v);
    Object.assign(f.name, { text: "", set: true });
    Object.assign(f.count, { text: "2.5" });
    expect(() => toArguments(schema, v)).toThrowError('count: "2.5" is not a whole number');
    Object.assign(f.count, { text: "2" });
    Object.assign(f.any, { text: "{nope" });
    expect(() => toArguments(schema, v)).toThrowError(/^any: is not valid JSON/);
  });

  test("defaults fill the form", () => {
    const v = initialValue({ type: "object", properties: { p: { type: "string", default: "." }, n: { type: "number", default: 2 } } });
    expect(toArguments({ type: "object", properties: { p: { type: "string" }, n: { type: "number" } } }, v)).toEqual({ p: ".", n: 2 });
  });

  test("type labels are short and readable", () => {
    expect(typeLabel({ type: "integer", minimum: 1 })).toBe("integer ≥ 1");
    expect(typeLabel({ type: "array", items: { type: "string" } })).toBe("string[]");
    expect(typeLabel({ enum: ["a", "b"] })).toBe('"a" | "b"');
  });
});
