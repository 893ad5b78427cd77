// A tool's JSON Schema as a form: which control each property gets, its initial value,
// and the arguments object built from the form's values. `allOf` parts are merged,
// `anyOf`/`oneOf` become a choice of variant (or, with one variant beside `null`, that
// variant), nullable types their non-null type. Local `$ref`s arrive resolved by the core;
// anything the form still cannot show (a recursive `$ref`, mixed types, ...) becomes a raw
// JSON field. Optional fields the user left alone are not sent, objects and arrays
// included; the required fields of an optional object count only once it is filled.

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

export type FieldKind = "string" | "number" | "integer" | "boolean" | "enum" | "object" | "array" | "choice" | "json";

function isSchema(v: unknown): v is Schema {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** The variants of an `anyOf`/`oneOf`, without the `null` one. */
function variants(schema: Schema): { list: Schema[]; nullable: boolean } | null {
  const raw = (schema.oneOf ?? schema.anyOf) as unknown;
  if (!Array.isArray(raw)) return null;
  const all = raw.filter(isSchema);
  const list = all.filter((v) => v.type !== "null");
  return { list, nullable: list.length < all.length };
}

/**
 * The schema as the form reads it: `allOf` parts merged into one, an `anyOf`/`oneOf` of one
 * variant beside `null` replaced by that variant (its title, description and default kept).
 */
export function normalize(schema: Schema | undefined): Schema {
  if (!isSchema(schema)) return {};
  let s = schema;
  if (Array.isArray(s.allOf)) {
    const { allOf, ...rest } = s;
    const merged: Schema = { ...rest };
    for (const part of (allOf as unknown[]).filter(isSchema).map(normalize)) {
      for (const [k, v] of Object.entries(part)) {
        if (k === "properties") merged.properties = { ...(v as Record<string, Schema>), ...merged.properties };
        else if (k === "required") merged.required = [...new Set([...(merged.required ?? []), ...(v as string[])])];
        else if (!(k in merged)) merged[k] = v;
      }
    }
    s = merged;
  }
  const v = variants(s);
  if (v && v.list.length === 1) {
    const { oneOf: _o, anyOf: _a, ...rest } = s;
    return normalize({ ...v.list[0], ...rest });
  }
  return s;
}

/** The readable name of a variant of a choice. */
export function variantLabel(schema: Schema, i: number): string {
  if (typeof schema.title === "string" && schema.title) return schema.title;
  if (schema.const !== undefined) return JSON.stringify(schema.const);
  const label = typeLabel(schema);
  return label === "any" ? `option ${i + 1}` : label;
}

/** The variants a choice field offers. */
export function choiceVariants(schema: Schema | undefined): Schema[] {
  return variants(normalize(schema))?.list.map(normalize) ?? [];
}

/** The control for a schema. */
export function fieldKind(raw: Schema | undefined): FieldKind {
  if (!isSchema(raw)) return "json";
  const schema = normalize(raw);
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return "enum";
  const v = variants(schema);
  if (v) return v.list.length > 1 ? "choice" : "json";
  if (schema.$ref || schema.allOf) return "json";
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
  | { kind: "choice"; pick: number; options: FormValue[]; set: boolean }
  | { kind: "json"; text: string; set: boolean };

/**
 * Whether the user filled a field (or its schema gave it a default): what decides whether
 * an optional field is sent. An object is filled when any of its fields is.
 */
export function isFilled(value: FormValue): boolean {
  switch (value.kind) {
    case "string":
      return value.set || value.text !== "";
    case "number":
    case "integer":
      return value.text.trim() !== "";
    case "enum":
    case "boolean":
    case "choice":
      return value.set;
    case "object":
      return Object.values(value.fields).some(isFilled);
    case "array":
      return value.items.length > 0;
    case "json":
      return value.set || (value.text.trim() !== "" && value.text.trim() !== "{}");
  }
}

export function initialValue(raw: Schema | undefined, required = true): FormValue {
  const kind = fieldKind(raw);
  const s = normalize(raw);
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
      return { kind, text: pick >= 0 ? String(pick) : "", set: i >= 0 };
    }
    case "boolean":
      return { kind, value: d === true, set: typeof d === "boolean" };
    case "object": {
      const req = new Set(s.required ?? []);
      const given = isSchema(d) ? (d as Record<string, Json>) : {};
      const fields: Record<string, FormValue> = {};
      for (const [k, sub] of Object.entries(s.properties ?? {})) {
        // The object's default fills its fields (a field's own default gives way to it).
        const own = k in given && isSchema(sub) ? { ...sub, default: given[k] } : sub;
        fields[k] = initialValue(own, req.has(k));
      }
      return { kind, fields };
    }
    case "choice": {
      const list = choiceVariants(s);
      const options = list.map((v) => initialValue(v, true));
      const match = d !== undefined ? list.findIndex((v) => fitsType(v, d)) : -1;
      if (match >= 0) options[match] = fromJson(list[match], d as Json);
      return { kind, pick: match >= 0 ? match : required ? 0 : -1, options, set: match >= 0 };
    }
    case "array":
      return {
        kind,
        items: Array.isArray(d) ? d.map((v) => fromJson(s.items as Schema, v)) : [],
      };
    case "json":
      return {
        kind,
        text: d !== undefined ? JSON.stringify(d, null, 2) : required && isObjectSchema(s) ? "{}" : "",
        set: d !== undefined,
      };
  }
}

/** Whether a value has a variant's type (to pick the variant a default belongs to). */
function fitsType(schema: Schema, v: unknown): boolean {
  if (schema.const !== undefined) return JSON.stringify(schema.const) === JSON.stringify(v);
  const t = Array.isArray(schema.type) ? schema.type : [schema.type];
  const actual = v === null ? "null" : Array.isArray(v) ? "array" : typeof v === "number" && Number.isInteger(v) ? "integer" : typeof v;
  return t.some((x) => x === actual || (x === "number" && actual === "integer") || (x === undefined && actual === "object" && !!schema.properties));
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
    case "enum": {
      const i = (normalize(schema).enum ?? []).findIndex((e) => JSON.stringify(e) === JSON.stringify(v));
      return i >= 0 ? { ...base, text: String(i), set: true } : { kind: "json", text: JSON.stringify(v, null, 2), set: true };
    }
    case "object":
      return isSchema(v) ? initialValue({ ...normalize(schema), default: v }, true) : { kind: "json", text: JSON.stringify(v, null, 2), set: true };
    case "array":
      return Array.isArray(v) ? { kind: "array", items: v.map((x) => fromJson(normalize(schema).items as Schema, x)) } : { kind: "json", text: JSON.stringify(v, null, 2), set: true };
    default:
      return { kind: "json", text: JSON.stringify(v, null, 2), set: true };
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
  const s = normalize(schema);
  if (!required && !isFilled(value)) return undefined;
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
    case "choice": {
      const variant = choiceVariants(s)[value.pick];
      const chosen = value.options[value.pick];
      if (!variant || !chosen) {
        if (required) throw new FormError(path, "is required: pick one of its kinds");
        return undefined;
      }
      return toArguments(variant, chosen, path, true);
    }
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
export function typeLabel(raw: Schema | undefined): string {
  if (!isSchema(raw)) return "any";
  const schema = normalize(raw);
  const v = variants(schema);
  if (v && v.list.length > 1) {
    const labels = v.list.map((x, i) => variantLabel(normalize(x), i));
    return [...labels, ...(v.nullable ? ["null"] : [])].join(" | ");
  }
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
