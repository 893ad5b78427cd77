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
      any: "choice",
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
    Object.assign(fields(f.opts).deep, { value: true, set: true });
    if (f.tags.kind === "array") f.tags.items.push({ kind: "string", text: "a", set: true });
    if (f.any.kind === "choice") {
      Object.assign(f.any, { pick: 1, set: true });
      Object.assign(f.any.options[1], { text: "42" });
    }
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
    if (f.any.kind === "choice") Object.assign(f.any, { pick: 1, set: true, options: [f.any.options[0], { kind: "number", text: "x", set: true }] });
    expect(() => toArguments(schema, v)).toThrowError('any: "x" is not a number');
  });

  test("defaults fill the form", () => {
    const v = initialValue({ type: "object", properties: { p: { type: "string", default: "." }, n: { type: "number", default: 2 } } });
    expect(toArguments({ type: "object", properties: { p: { type: "string" }, n: { type: "number" } } }, v)).toEqual({ p: ".", n: 2 });
  });

  test("untouched optional objects and arrays are not sent, nor their required fields asked", () => {
    const s: Schema = {
      type: "object",
      properties: {
        q: { type: "string" },
        filter: { type: "object", properties: { field: { type: "string" }, exact: { type: "boolean" }, op: { enum: ["eq", "ne"] } }, required: ["field", "exact", "op"] },
        ids: { type: "array", items: { type: "integer" } },
        raw: { type: "object", description: "free-form" },
      },
      required: ["q"],
    };
    const v = initialValue(s);
    Object.assign(fields(v).q, { text: "x", set: true });
    expect(toArguments(s, v)).toEqual({ q: "x" });
    // Once the user fills part of the optional object, its required fields count.
    Object.assign(fields(fields(v).filter).exact, { value: true, set: true });
    expect(() => toArguments(s, v)).toThrowError(new FormError("filter.field", "is required"));
    Object.assign(fields(fields(v).filter).field, { text: "name", set: true });
    expect(toArguments(s, v)).toEqual({ q: "x", filter: { field: "name", exact: true, op: "eq" } });
  });

  test("allOf, nullable variants, choices and object defaults get real controls", () => {
    const s: Schema = {
      type: "object",
      properties: {
        base: { allOf: [{ type: "object", properties: { a: { type: "string" } }, required: ["a"] }, { properties: { b: { type: "integer" } } }] },
        maybe: { anyOf: [{ type: "integer" }, { type: "null" }], title: "Maybe", default: null },
        shape: {
          oneOf: [
            { title: "Circle", type: "object", properties: { r: { type: "number" } }, required: ["r"] },
            { title: "Square", type: "object", properties: { side: { type: "number" } }, required: ["side"] },
          ],
        },
        where: { type: "object", properties: { city: { type: "string" }, zoom: { type: "integer" } }, default: { city: "Oslo", zoom: 3 } },
      },
      required: ["base", "shape"],
    };
    expect(fieldKind(s.properties!.base)).toBe("object");
    expect(fieldKind(s.properties!.maybe)).toBe("integer");
    expect(fieldKind(s.properties!.shape)).toBe("choice");
    expect(typeLabel(s.properties!.shape)).toBe("Circle | Square");
    const v = initialValue(s);
    const f = fields(v);
    Object.assign(fields(f.base).a, { text: "A", set: true });
    const shape = f.shape;
    if (shape.kind !== "choice") throw new Error("not a choice");
    Object.assign(shape, { pick: 1, set: true });
    Object.assign(fields(shape.options[1]).side, { text: "2" });
    expect(toArguments(s, v)).toEqual({ base: { a: "A" }, shape: { side: 2 }, where: { city: "Oslo", zoom: 3 } });
  });

  test("type labels are short and readable", () => {
    expect(typeLabel({ type: "integer", minimum: 1 })).toBe("integer ≥ 1");
    expect(typeLabel({ type: "array", items: { type: "string" } })).toBe("string[]");
    expect(typeLabel({ enum: ["a", "b"] })).toBe('"a" | "b"');
  });
});
