import { Dict, Schema } from 'koishi'
import { withNullType } from './nullable'
import { JSONSchema } from '../types'
import { defaultOf, isRequired, jsonType, lazyInner, pickDescription, toJSONValue } from './schemastery'

export { isRequired, isSchemastery, pickDescription } from './schemastery'

/*
 * Schemastery → draft-07 JSON Schema, for the `parameters` of a tool
 * declaration (DESIGN.md "ToolDefinition": `args` is a Schemastery schema)
 * and for the argument validator in `validate.ts`. What the Schemastery
 * internals mean is in `schemastery.ts`.
 */

/** Options of {@link toJSONSchema}. */
export interface JSONSchemaOptions {
  /** Preferred locale(s) for descriptions, best first. */
  locale?: string | string[]
  /** Locales tried after `locale` (then the `''` text, then the first one). */
  fallback?: string[]
  /** Emit `description`s; default `true`. The validator turns this off. */
  descriptions?: boolean
  /**
   * Let optional object properties also accept `null`, as Schemastery does
   * (null counts as missing). Default `false`; the validator turns it on so
   * ajv never rejects what Schemastery accepts.
   */
  nullable?: boolean
  /**
   * Keep hidden object fields (`.hidden()`), which the model is not shown
   * but Schemastery still takes and checks. Default `false`; the validator
   * turns it on.
   */
  hidden?: boolean
}

interface Context {
  locales: string[]
  descriptions: boolean
  nullable: boolean
  hidden: boolean
  /** Lazy schemas being expanded, to cut recursion. */
  stack: Set<Schema>
}

/**
 * Converts a Schemastery schema into a draft-07 JSON Schema.
 *
 * Shapes: object → `{ type: 'object', properties, required? }`; dict →
 * `additionalProperties` (+ `propertyNames`); array → `items`; tuple →
 * `items: [...]` + `minItems`/`maxItems`; union of consts → `enum`; other
 * unions → `anyOf`; intersect of objects → one merged object; transform and
 * lazy → their inner schema; `any` → `{}`; `never` → `{ not: {} }`;
 * `is(...)` and `function()` (not expressible in JSON) → `{}` alone and left
 * out of unions. Hidden object fields are omitted (unless `hidden`). Never emits `undefined`
 * values or keywords draft-07 does not know.
 *
 * The result is freshly built on every call; callers that convert often
 * should cache it (see `ArgumentSchema.jsonSchema`). Never throws for the
 * built-in types; unknown extension types become `{}`.
 */
export function toJSONSchema(schema: Schema, options: JSONSchemaOptions = {}): JSONSchema {
  const ctx: Context = {
    locales: [...toArray(options.locale), ...(options.fallback ?? [])],
    descriptions: options.descriptions ?? true,
    nullable: options.nullable ?? false,
    hidden: options.hidden ?? false,
    stack: new Set(),
  }
  return convert(schema, ctx)
}

function toArray(value: string | string[] | undefined): string[] {
  if (!value) return []
  return Array.isArray(value) ? value : [value]
}

function convert(schema: Schema | undefined, ctx: Context): JSONSchema {
  if (!schema) return {}
  const result = convertType(schema, ctx)
  applyMeta(result, schema, ctx)
  return result
}

function convertType(schema: Schema, ctx: Context): JSONSchema {
  const { meta } = schema
  switch (schema.type) {
    case 'any': return {}
    case 'never': return { not: {} }
    case 'const': return constSchema(schema.value)
    case 'boolean': return { type: 'boolean' }
    case 'string': return stringSchema(meta)
    case 'number': return numberSchema(meta)
    case 'bitset': return {
      type: 'array',
      items: { type: 'string', enum: Object.keys(schema.bits ?? {}) },
      uniqueItems: true,
    }
    case 'array': return arraySchema(schema, ctx)
    case 'tuple': return tupleSchema(schema, ctx)
    case 'dict': return dictSchema(schema, ctx)
    case 'object': return objectSchema(schema, ctx)
    case 'union': return unionSchema(schema, ctx)
    case 'intersect': return intersectSchema(schema, ctx)
    case 'transform': return convert(schema.inner, ctx)
    case 'lazy': {
      if (ctx.stack.has(schema)) return {}
      ctx.stack.add(schema)
      try {
        return convert(lazyInner(schema), ctx)
      } finally {
        ctx.stack.delete(schema)
      }
    }
    // `is`, `function` and unknown extension types cannot be said in JSON Schema.
    default: return {}
  }
}

function constSchema(value: unknown): JSONSchema {
  const type = jsonType(value)
  if (type === 'null') return { type: 'null' }
  const json = toJSONValue(value)
  if (json === undefined) return {}
  if (type === 'string' || type === 'number' || type === 'boolean') return { type, const: json }
  return { const: json }
}

const formats: Dict<string> = { datetime: 'date-time', date: 'date', time: 'time', regexp: 'regex' }

function stringSchema(meta: Schema['meta']): JSONSchema {
  const result: JSONSchema = { type: 'string' }
  if (Number.isFinite(meta.min) && meta.min! > 0) result.minLength = Math.ceil(meta.min!)
  if (Number.isFinite(meta.max) && meta.max! >= 0) result.maxLength = Math.floor(meta.max!)
  // Flags other than g/u/d change what matches; JSON Schema has no flags, so
  // such a pattern is left to Schemastery rather than declared wrongly.
  if (meta.pattern?.source && !/[imsy]/.test(meta.pattern.flags ?? '')) {
    result.pattern = meta.pattern.source
  }
  const format = meta.role && formats[meta.role]
  if (format) result.format = format
  return result
}

function numberSchema(meta: Schema['meta']): JSONSchema {
  const result: JSONSchema = { type: 'number' }
  const { step, min, max } = meta
  // Schemastery checks `(value - (min ?? 0)) % step === 0`.
  if (step && Number.isInteger(step) && (min === undefined || Number.isInteger(min))) {
    result.type = 'integer'
    if (step > 1 && (min ?? 0) % step === 0) result.multipleOf = step
  }
  if (Number.isFinite(min)) result.minimum = min
  if (Number.isFinite(max)) result.maximum = max
  return result
}

function arraySchema(schema: Schema, ctx: Context): JSONSchema {
  const { meta, inner } = schema
  const result: JSONSchema = { type: 'array', items: convert(inner, ctx) }
  // Schemastery skips the `min` check when the item schema has a default.
  const skipMin = inner && inner.meta.default !== undefined && inner.meta.default !== null
  if (!skipMin && Number.isFinite(meta.min) && meta.min! > 0) result.minItems = Math.ceil(meta.min!)
  if (Number.isFinite(meta.max) && meta.max! >= 0) result.maxItems = Math.floor(meta.max!)
  return result
}

function tupleSchema(schema: Schema, ctx: Context): JSONSchema {
  const list = schema.list ?? []
  let minItems = 0
  list.forEach((item, index) => {
    if (isRequired(item)) minItems = index + 1
  })
  const result: JSONSchema = { type: 'array', items: list.map((item) => convert(item, ctx)) }
  if (minItems) result.minItems = minItems
  result.maxItems = list.length
  return result
}

function dictSchema(schema: Schema, ctx: Context): JSONSchema {
  const result: JSONSchema = { type: 'object', additionalProperties: convert(schema.inner, ctx) }
  const key = schema.sKey
  if (key && !(key.type === 'string' && !key.meta.pattern && key.meta.min === undefined && key.meta.max === undefined)) {
    const names = convert(key, { ...ctx, descriptions: false })
    delete names.description
    delete names.default
    if (Object.keys(names).length) result.propertyNames = names
  }
  return result
}

function objectSchema(schema: Schema, ctx: Context): JSONSchema {
  const properties: Dict<JSONSchema> = {}
  const required: string[] = []
  for (const key in schema.dict ?? {}) {
    const child = schema.dict![key]
    if (!child || (child.meta.hidden && !ctx.hidden)) continue
    let property = convert(child, ctx)
    if (isRequired(child)) {
      required.push(key)
    } else if (ctx.nullable) {
      property = nullable(property)
    }
    properties[key] = property
  }
  const result: JSONSchema = { type: 'object', properties }
  if (required.length) result.required = required
  return result
}

/** Adds `null` to what a schema accepts (Schemastery treats null as missing). */
function nullable(schema: JSONSchema): JSONSchema {
  if (!Object.keys(schema).length) return schema
  const typed = withNullType(schema)
  if (typed) return typed
  const plainAnyOf = Object.keys(schema).every((key) => key === 'anyOf' || key === 'description' || key === 'default')
  if (Array.isArray(schema.anyOf) && plainAnyOf) {
    return { ...schema, anyOf: [...schema.anyOf, { type: 'null' }] }
  }
  return { anyOf: [schema, { type: 'null' }] }
}

/** Members a union can actually hold in JSON, nested unions flattened. */
function unionMembers(schema: Schema): Schema[] {
  const result: Schema[] = []
  for (const member of schema.list ?? []) {
    if (member.type === 'is' || member.type === 'function') continue
    const plain = member.meta.description === undefined && member.meta.default === undefined
    if (member.type === 'union' && plain) {
      result.push(...unionMembers(member))
    } else {
      result.push(member)
    }
  }
  return result
}

function unionSchema(schema: Schema, ctx: Context): JSONSchema {
  const members = unionMembers(schema)
  if (!members.length || members.some((member) => member.type === 'any')) return {}
  const alternatives: JSONSchema[] = []
  let consts: Schema[] | undefined
  for (const member of members) {
    if (member.type === 'const' && member.value !== null && jsonType(member.value) !== undefined) {
      if (!consts) {
        consts = []
        alternatives.push({}) // placeholder, filled below
      }
      consts.push(member)
    } else {
      alternatives.push(convert(member, ctx))
    }
  }
  if (consts) {
    const enumSchema = enumOf(consts, ctx)
    alternatives[alternatives.findIndex((item) => !Object.keys(item).length)] = enumSchema
  }
  return alternatives.length === 1 ? alternatives[0] : { anyOf: alternatives }
}

function enumOf(members: Schema[], ctx: Context): JSONSchema {
  const values: unknown[] = []
  const seen = new Set<string>()
  const notes: string[] = []
  for (const member of members) {
    const value = toJSONValue(member.value)
    const key = JSON.stringify(value)
    if (seen.has(key)) continue
    seen.add(key)
    values.push(value)
    const text = ctx.descriptions && pickDescription(member.meta.description, ctx.locales)
    if (text) notes.push(`${key}: ${text}`)
  }
  const types = new Set(values.map(jsonType))
  const type = types.size === 1 ? [...types][0] : undefined
  const result: JSONSchema = values.length === 1 ? { const: values[0] } : { enum: values }
  if (type === 'string' || type === 'number' || type === 'boolean') return withNotes({ type, ...result }, notes)
  return withNotes(result, notes)
}

/** Const member descriptions (radio labels in Koishi) become a list the model can read. */
function withNotes(schema: JSONSchema, notes: string[]): JSONSchema {
  if (notes.length) schema.description = notes.join('; ')
  return schema
}

const mergeable = new Set(['type', 'properties', 'required', 'description', 'default'])

function intersectSchema(schema: Schema, ctx: Context): JSONSchema {
  const parts = (schema.list ?? []).map((member) => convert(member, ctx)).filter((part) => Object.keys(part).length)
  const properties: Dict<JSONSchema> = {}
  const required: string[] = []
  const rest: JSONSchema[] = []
  let objects = 0
  for (const part of parts) {
    if (part.type !== 'object' || !Object.keys(part).every((key) => mergeable.has(key))) {
      rest.push(part)
      continue
    }
    objects += 1
    for (const key in part.properties ?? {}) {
      const next = part.properties[key]
      const prev = properties[key]
      if (prev && JSON.stringify(prev) !== JSON.stringify(next)) {
        properties[key] = { allOf: [prev, next] }
      } else {
        properties[key] = next
      }
    }
    for (const key of part.required ?? []) {
      if (!required.includes(key)) required.push(key)
    }
  }
  if (!objects) {
    if (!rest.length) return {}
    return rest.length === 1 ? rest[0] : { allOf: rest }
  }
  const result: JSONSchema = { type: 'object', properties }
  if (required.length) result.required = required
  if (rest.length) result.allOf = rest
  return result
}

function applyMeta(result: JSONSchema, schema: Schema, ctx: Context) {
  const { meta } = schema
  if (ctx.descriptions) {
    const text = pickDescription(meta.description, ctx.locales)
    if (text) result.description = result.description && schema.type === 'union' ? `${text} (${result.description})` : text
  }
  const value = defaultOf(schema)
  if (value !== undefined) result.default = value
}

