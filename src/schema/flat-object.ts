import { Dict, Schema } from 'koishi'

/*
 * Most tools take a flat object of strings, numbers, booleans and choices
 * between literals. For those, once ajv has validated the arguments against
 * the JSON Schema (src/schema/validate.ts), running the Schemastery schema
 * again only applies defaults, and costs about as much as the rest of the
 * call pipeline's own work together (bench/pipeline.ts). This module
 * recognises such schemas and applies their defaults exactly as Schemastery
 * would; anything it cannot promise to do the same way is left to
 * Schemastery.
 */

/** One property of a flat object: whether it is required and its default (a string, number or boolean). */
interface FlatProperty {
  key: string
  required: boolean
  fallback?: string | number | boolean
}

function isPrimitive(value: unknown): value is string | number | boolean {
  return typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean'
}

/**
 * Whether every check Schemastery makes on a value of `schema` is also
 * made by ajv on the JSON Schema we emit for it: no pattern (ajv runs
 * patterns with RE2, which accepts what it cannot compile), no string
 * length (ajv counts code points, Schemastery UTF-16 units), no step other
 * than 1 (emitted as `integer`), no `loose` fallback.
 */
function checkedByAjv(schema: Schema): boolean {
  const meta = schema.meta ?? {}
  if (meta.loose) return false
  switch (schema.type) {
    case 'string':
      return !meta.pattern && meta.min === undefined && meta.max === undefined
    case 'number':
      return meta.step === undefined || (meta.step === 1 && (meta.min === undefined || Number.isInteger(meta.min)))
    case 'boolean':
      return true
    case 'union':
      return !!schema.list?.length && schema.list.every((item) => item.type === 'const' && isPrimitive(item.value) && !item.meta?.loose)
    default:
      return false
  }
}

/**
 * For a Schemastery object whose properties are all strings, numbers,
 * booleans or unions of literals, with defaults that are strings, numbers
 * or booleans, a function giving what the schema would return for a value
 * that ajv has already accepted: a new object with the properties in
 * schema order, a missing or null property replaced by its default, null
 * kept when it has none, then the other keys. It returns undefined where
 * Schemastery must judge the value itself (a required property missing or
 * null: its error names it). `flatObject` returns undefined for any other
 * schema.
 */
export function flatObject(schema: Schema): ((value: Dict) => Dict | undefined) | undefined {
  if (schema?.type !== 'object' || schema.meta?.loose || !schema.dict) return
  const properties: FlatProperty[] = []
  for (const [key, inner] of Object.entries(schema.dict as Dict<Schema>)) {
    if (!checkedByAjv(inner)) return
    const fallback = inner.meta?.default
    if (fallback !== undefined && fallback !== null) {
      if (!isPrimitive(fallback)) return
      // A default the schema itself refuses is Schemastery's error to report.
      try {
        inner(fallback)
      } catch {
        return
      }
    }
    properties.push({ key, required: !!inner.meta?.required, fallback: fallback ?? undefined })
  }
  return (value) => {
    const result: Dict = {}
    for (const { key, required, fallback } of properties) {
      let item = value[key]
      if (item === undefined || item === null) {
        if (required) return
        if (fallback !== undefined) item = fallback
      }
      if ((item !== undefined && item !== null) || key in value) result[key] = item
    }
    for (const key in value) {
      if (!(key in result)) result[key] = value[key]
    }
    return result
  }
}
