// A tool's JSON Schema as a form: which control each property gets, its initial value,
// and the arguments object built from the form's values. Anything the form cannot show
// (oneOf, $ref, mixed types, ...) becomes a raw JSON field.

export type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

export interface Schema {
  type?: string | string[];
  title?: string;
  description?: string;
  enum?: Json[];
  const?: Json;
  default?: Json;
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema | Schema[];
  minimum?: number;
  maximum?: number;
  format?: string;
  [k: string]: unknown;
}

export type FieldKind = "string" | "number" | "integer" | "boolean" | "enum" | "object" | "array" | "json";

/** The control for a schema. */
export function fieldKind(schema: Schema | undefined): FieldKind {
  if (!schema || typeof schema !== "object") return "json";
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return "enum";
  if (schema.oneOf || schema.anyOf || schema.allOf || schema.$ref) return "json";
  let t = schema.type;
  if (Array.isArray(t)) {
    const nonNull = t.filter((x) => x !== "null");
    if (nonNull.length !== 1) return "json";
    t = nonNull[0];
  }
  switch (t) {
    case "string":
    case "number":
    case "integer":
    case "boolean":
      return t;
    case "object":
      return schema.properties ? "object" : "json";
    case "array":
      return schema.items && !Array.isArray(schema.items) ? "array" : "json";
    case undefined:
      return schema.properties ? "object" : "json";
    default:
      return "json";
  }
}

/**
 * The form's value for a field. Scalars hold what the control holds (strings for text and
 * numbers, so a half-typed number is kept), objects hold their fields, arrays their items,
 * and "json" fields their raw text.
 */
export type FormValue =
  | { kind: "string" | "number" | "integer" | "enum"; text: string; set: boolean }
  | { kind: "boolean"; value: boolean; set: boolean }
  | { kind: "object"; fields: Record<string, FormValue> }
  | { kind: "array"; items: FormValue[] }
  | { kind: "json"; text: string };

export function initialValue(schema: Schema | undefined, required = true): FormValue {
  const kind = fieldKind(schema);
  const s = schema ?? {};
  const d = s.default;
  switch (kind) {
    case "string":
      return { kind, text: typeof d === "string" ? d : "", set: typeof d === "string" };
    case "number":
    case "integer":
      return { kind, text: typeof d === "number" ? String(d) : "", set: typeof d === "number" };
    case "enum": {
      const values = s.enum ?? [];
      const i = d !== undefined ? values.findIndex((v) => JSON.stringify(v) === JSON.stringify(d)) : -1;
      const pick = i >= 0 ? i : required ? 0 : -1;
      return { kind, text: pick >= 0 ? String(pick) : "", set: pick >= 0 };
    }
    case "boolean":
      return { kind, value: d === true, set: typeof d === "boolean" || required };
    case "object": {
      const req = new Set(s.required ?? []);
      const fields: Record<string, FormValue> = {};
      for (const [k, sub] of Object.entries(s.properties ?? {})) fields[k] = initialValue(sub, req.has(k));
      return { kind, fields };
    }
    case "array":
      return {
        kind,
        items: Array.isArray(d) ? d.map((v) => fromJson(s.items as Schema, v)) : [],
      };
    case "json":
      return { kind, text: d !== undefined ? JSON.stringify(d, null, 2) : required && isObjectSchema(s) ? "{}" : "" };
  }
}

function isObjectSchema(s: Schema): boolean {
  return s.type === "object";
}

/** A form value holding an existing JSON value (array items from a default). */
function fromJson(schema: Schema | undefined, v: Json): FormValue {
  const base = initialValue(schema, true);
  switch (base.kind) {
    case "string":
      return { ...base, text: typeof v === "string" ? v : String(v), set: true };
    case "number":
    case "integer":
      return { ...base, text: String(v), set: true };
    case "boolean":
      return { ...base, value: v === true, set: true };
    default:
      return { kind: "json", text: JSON.stringify(v, null, 2) };
  }
}

export class FormError extends Error {
  constructor(
    readonly path: string,
    message: string,
  ) {
    super(path ? `${path}: ${message}` : message);
  }
}

/**
 * The arguments object for a form; unset optional fields are left out. Throws a FormError
 * naming the field for a missing required value or text that is not a number / JSON.
 */
export function toArguments(schema: Schema | undefined, value: FormValue, path = "", required = true): Json | undefined {
  const s = schema ?? {};
  switch (value.kind) {
    case "string":
      if (value.text === "" && !value.set) {
        if (required) throw new FormError(path, "is required");
        return undefined;
      }
      return value.text;
    case "number":
    case "integer": {
      const t = value.text.trim();
      if (t === "") {
        if (required) throw new FormError(path, "is required");
        return undefined;
      }
      const n = Number(t);
      if (!Number.isFinite(n)) throw new FormError(path, `"${t}" is not a number`);
      if (value.kind === "integer" && !Number.isInteger(n)) throw new FormError(path, `"${t}" is not a whole number`);
      return n;
    }
    case "enum": {
      if (value.text === "") {
        if (required) throw new FormError(path, "is required");
        return undefined;
      }
      return (s.enum ?? [])[Number(value.text)] ?? null;
    }
    case "boolean":
      return value.set || required ? value.value : undefined;
    case "object": {
      const out: Record<string, Json> = {};
      const req = new Set(s.required ?? []);
      for (const [k, v] of Object.entries(value.fields)) {
        const sub = toArguments(s.properties?.[k], v, path ? `${path}.${k}` : k, req.has(k));
        if (sub !== undefined) out[k] = sub;
      }
      return out;
    }
    case "array":
      return value.items.map((it, i) => {
        const v = toArguments(s.items as Schema, it, `${path}[${i}]`, true);
        return v === undefined ? null : v;
      });
    case "json": {
      const t = value.text.trim();
      if (t === "") {
        if (required && path !== "") throw new FormError(path, "is required");
        return path === "" ? {} : undefined;
      }
      try {
        return JSON.parse(t) as Json;
      } catch (e) {
        throw new FormError(path, `is not valid JSON (${(e as Error).message})`);
      }
    }
  }
}

/** A short readable type for a schema, like `string`, `integer ≥ 1`, `"a" | "b"`, `string[]`. */
export function typeLabel(schema: Schema | undefined): string {
  if (!schema) return "any";
  if (Array.isArray(schema.enum)) return schema.enum.map((v) => JSON.stringify(v)).join(" | ");
  if (schema.const !== undefined) return JSON.stringify(schema.const);
  const t = Array.isArray(schema.type) ? schema.type.join(" | ") : schema.type;
  if (t === "array" && schema.items && !Array.isArray(schema.items)) return `${typeLabel(schema.items)}[]`;
  let label = t ?? (schema.properties ? "object" : schema.oneOf ? "oneOf" : schema.anyOf ? "anyOf" : "any");
  if (typeof schema.minimum === "number") label += ` ≥ ${schema.minimum}`;
  if (typeof schema.maximum === "number") label += ` ≤ ${schema.maximum}`;
  if (schema.format) label += ` (${schema.format})`;
  return label;
}
