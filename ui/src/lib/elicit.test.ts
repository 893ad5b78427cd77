// The elicitation form: each field type, defaults, validation messages and the fallback.

import { describe, expect, test } from "vitest";
import { buildContent, elicitFields, fallbackText, initialValues, parseFallback } from "./elicit";

const SCHEMA = {
  type: "object",
  properties: {
    name: { type: "string", title: "Your name", minLength: 2, default: "Ada" },
    email: { type: "string", format: "email" },
    site: { type: "string", format: "uri" },
    born: { type: "string", format: "date" },
    meet: { type: "string", format: "date-time" },
    height: { type: "number", minimum: 0.5, maximum: 2.5 },
    age: { type: "integer", minimum: 0, maximum: 150, default: 36 },
    agree: { type: "boolean", default: true },
    color: { type: "string", enum: ["r", "g"], enumNames: ["Red", "Green"] },
    size: { type: "string", oneOf: [{ const: "s", title: "Small" }, { const: "l", title: "Large" }], default: "l" },
    tags: { type: "array", items: { anyOf: [{ const: "a", title: "Alpha" }, { const: "b", title: "Beta" }] }, maxItems: 1 },
    langs: { type: "array", items: { type: "string", enum: ["en", "fr"] }, default: ["fr"] },
  },
  required: ["name", "email", "age", "color"],
};

describe("the elicitation form", () => {
  const fields = elicitFields(SCHEMA)!;

  test("every property becomes a field of its kind, with titles and required marks", () => {
    expect(fields.map((f) => [f.name, f.kind, f.label, f.required])).toEqual([
      ["name", "string", "Your name", true],
      ["email", "string", "email", true],
      ["site", "string", "site", false],
      ["born", "string", "born", false],
      ["meet", "string", "meet", false],
      ["height", "number", "height", false],
      ["age", "integer", "age", true],
      ["agree", "boolean", "agree", false],
      ["color", "enum", "color", true],
      ["size", "enum", "size", false],
      ["tags", "multi", "tags", false],
      ["langs", "multi", "langs", false],
    ]);
    const size = fields.find((f) => f.name === "size")!;
    expect(size.kind === "enum" && size.choices).toEqual([
      { value: "s", label: "Small" },
      { value: "l", label: "Large" },
    ]);
    const color = fields.find((f) => f.name === "color")!;
    expect(color.kind === "enum" && color.choices.map((c) => c.label)).toEqual(["Red", "Green"]);
    const tags = fields.find((f) => f.name === "tags")!;
    expect(tags.kind === "multi" && tags.choices.map((c) => c.label)).toEqual(["Alpha", "Beta"]);
  });

  test("defaults are pre-filled", () => {
    expect(initialValues(SCHEMA, fields)).toEqual({
      name: "Ada", email: "", site: "", born: "", meet: "", height: "", age: "36",
      agree: true, color: "", size: "l", tags: [], langs: ["fr"],
    });
  });

  test("an untouched form names what is missing; a filled one gives typed content", () => {
    const values = initialValues(SCHEMA, fields);
    expect(buildContent(fields, values).errors).toEqual({ email: "Required", color: "Choose one" });
    Object.assign(values, { email: "ada@example.com", color: "g", height: "1.7", tags: ["b"], meet: "2026-01-31T09:30:00Z" });
    expect(buildContent(fields, values)).toEqual({
      content: {
        name: "Ada", email: "ada@example.com", meet: "2026-01-31T09:30:00Z", height: 1.7, age: 36,
        agree: true, color: "g", size: "l", tags: ["b"], langs: ["fr"],
      },
      errors: {},
    });
  });

  test("each kind says what is wrong with a value", () => {
    const values = {
      ...initialValues(SCHEMA, fields),
      name: "A", email: "ada", site: "example", born: "31/01/2026", meet: "tomorrow",
      height: "3", age: "3.5", color: "x", tags: ["a", "b"],
    };
    expect(buildContent(fields, values).errors).toEqual({
      name: "At least 2 characters",
      email: "Enter an email address, like ada@example.com",
      site: "Enter a full URL, like https://example.com",
      born: "Enter a date as YYYY-MM-DD",
      meet: "Enter a date and time as YYYY-MM-DDTHH:MM:SSZ",
      height: "At most 2.5",
      age: "Enter a whole number",
      color: "Choose one of the options",
      tags: "Choose at most 1",
    });
    expect(buildContent(fields, { ...values, age: "-1" }).errors.age).toBe("At least 0");
    expect(buildContent(fields, { ...values, height: "tall" }).errors.height).toBe("Enter a number");
  });

  test("a schema the form cannot show falls back to JSON, pre-filled with its defaults", () => {
    const nested = { type: "object", properties: { who: { type: "object", properties: {} }, n: { type: "integer", default: 3 } } };
    for (const bad of [nested, { type: "array" }, null, "x", { properties: { a: { type: "string", format: "ipv4" } } }, { properties: { a: { enum: [1, 2] } } }, { properties: { a: { type: "string", enum: [] } } }, { properties: 3 }]) {
      expect(elicitFields(bad)).toBeNull();
    }
    expect(JSON.parse(fallbackText(nested))).toEqual({ n: 3 });
    expect(fallbackText(null)).toBe("{}");
    expect(parseFallback('{"who": {"a": 1}}')).toEqual({ content: { who: { a: 1 } } });
    expect(parseFallback("[1]")).toEqual({ error: 'The answer must be one JSON object, like {"name": "Ada"}' });
    expect("error" in parseFallback("{")).toBe(true);
  });

  test("an empty object schema is an empty form", () => {
    expect(elicitFields({ type: "object", properties: {} })).toEqual([]);
    expect(elicitFields({ type: "object" })).toEqual([]);
  });
});
