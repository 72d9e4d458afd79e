import { Dict, Schema } from 'koishi'

/*
 * What a Schemastery schema means, as the converter and the validator need
 * it: required-ness, defaults, descriptions, lazy expansion.
 *
 * Schemastery 3.18 facts this file relies on (verified by experiment):
 * - `Schema.object/dict` get `meta.default = {}`, `array/tuple` get `[]`,
 *   `bitset` gets `0` at construction; these automatic defaults are not emitted.
 * - `.i18n()` turns `meta.description` into a dict keyed by locale, with the
 *   earlier `.description()` text under `''`; it also walks into children.
 * - `Schema.union(['a', 'b'])` holds `const` members marked `required`.
 * - `natural()` is `number().step(1).min(0)`; `percent()` is
 *   `number().step(0.01).min(0).max(1)`; `date()` and `regExp()` are unions
 *   of `is(Date | RegExp)` and a transform of a string with role
 *   `datetime` / `regexp`.
 * - Objects keep unknown keys (non-strict resolve), so no
 *   `additionalProperties: false` is emitted.
 * - A missing or null optional value is accepted (the default is used).
 * - An array's `min` is not checked when the item schema has a default.
 */

const kSchema = Symbol.for('schemastery')

/** Whether `value` is a Schemastery schema (any copy of the library). */
export function isSchemastery(value: unknown): value is Schema {
  return typeof value === 'function' && !!(value as any)[kSchema]
}

/**
 * Picks the description text for the locales, best first: each locale
 * exactly, then its language (`zh-TW` → `zh`, `zh-*`); after all of them the
 * `''` text (from `.description()`), then the first non-empty one. A plain
 * string is returned as is. Returns `undefined` when there is no text.
 */
export function pickDescription(desc: string | Dict<string> | undefined, locales: string[]): string | undefined {
  if (typeof desc === 'string') return desc || undefined
  if (!desc || typeof desc !== 'object') return undefined
  const keys = Object.keys(desc).filter((key) => typeof desc[key] === 'string' && desc[key])
  if (!keys.length) return undefined
  for (const locale of locales) {
    if (keys.includes(locale)) return desc[locale]
    const base = locale.split('-')[0]
    if (!base) continue
    const match = keys.find((key) => key === base || key.startsWith(base + '-'))
    if (match) return desc[match]
  }
  if (keys.includes('')) return desc['']
  return desc[keys[0]]
}

/** Expands a lazy schema the way Schemastery's resolver does. */
export function lazyInner(schema: Schema): Schema {
  if (!isSchemastery(schema.inner)) {
    schema.inner = schema.builder!()
    schema.inner!.meta = { ...schema.meta, ...schema.inner!.meta }
  }
  return schema.inner!
}

/** The JSON Schema type name of a JSON value; `undefined` for functions and the like. */
export function jsonType(value: unknown): string | undefined {
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'array'
  switch (typeof value) {
    case 'string': return 'string'
    case 'number': return 'number'
    case 'boolean': return 'boolean'
    case 'object': return 'object'
  }
}

/**
 * Whether a key must be given: it is marked `.required()`, or its default
 * (e.g. the automatic `{}` of an object) lacks a required key inside, so
 * Schemastery would reject the default itself.
 */
export function isRequired(schema: Schema, depth = 0): boolean {
  if (schema.meta.required) return true
  if (depth > 16) return false
  let current: Schema | undefined = schema
  let fallback = schema.meta.default
  while (current?.type === 'intersect' && (fallback === undefined || fallback === null)) {
    current = current.list?.[0]
    fallback = current?.meta.default
  }
  if (fallback === undefined || fallback === null) return false
  return rejects(schema, fallback, depth + 1)
}

function rejects(schema: Schema | undefined, value: any, depth: number): boolean {
  if (!schema || depth > 16) return false
  switch (schema.type) {
    case 'object': {
      if (!value || typeof value !== 'object') return false
      for (const key in schema.dict ?? {}) {
        const child = value[key]
        if ((child === undefined || child === null) && isRequired(schema.dict![key], depth + 1)) return true
      }
      return false
    }
    case 'intersect': return (schema.list ?? []).some((member) => rejects(member, value, depth + 1))
    case 'transform': return rejects(schema.inner, value, depth + 1)
    case 'lazy': return rejects(lazyInner(schema), value, depth + 1)
    default: return false
  }
}

/** The default worth declaring: JSON-safe, not the automatic empty container. */
export function defaultOf(schema: Schema): unknown {
  const value: any = schema.meta.default
  if (value === undefined || value === null) return
  switch (schema.type) {
    case 'object':
    case 'dict':
      if (isEmptyObject(value)) return
      break
    case 'array':
    case 'tuple':
      if (Array.isArray(value) && !value.length) return
      break
    case 'bitset': {
      if (typeof value !== 'number') return toJSONValue(value)
      if (!value) return
      return Object.keys(schema.bits ?? {}).filter((key) => value & schema.bits![key])
    }
  }
  return toJSONValue(value)
}

function isEmptyObject(value: unknown) {
  return !!value && typeof value === 'object' && !Array.isArray(value) && !Object.keys(value).length
}

/** A JSON copy of a value (dates become ISO strings); `undefined` when it has none. */
export function toJSONValue(value: unknown): unknown {
  if (value === undefined || typeof value === 'function' || typeof value === 'symbol') return
  if (typeof value === 'string' || typeof value === 'boolean') return value
  if (typeof value === 'number') return Number.isFinite(value) ? value : undefined
  try {
    const text = JSON.stringify(value)
    return text === undefined ? undefined : JSON.parse(text)
  } catch {
    return undefined
  }
}
