import { JSONSchema } from '../types'
import { withNullType } from '../schema/nullable'
import { appendNotes, cloneSchema, constraintNotes, hasRefs, inlineRefs, isObject } from './schema-utils'

/*
 * OpenAI strict function schemas ("Structured Outputs", used by function
 * tools with `strict: true`). The rules, from
 * https://platform.openai.com/docs/guides/structured-outputs#supported-schemas
 * and https://platform.openai.com/docs/guides/function-calling#strict-mode:
 *
 * - the root is an object, not `anyOf`;
 * - `additionalProperties: false` must be set in every object;
 * - every key of `properties` is listed in `required`; an optional field is
 *   emulated by allowing `null` ("denote optional fields by adding null as
 *   a type option");
 * - supported types: string, number, boolean, integer, object, array, enum,
 *   anyOf; supported keywords besides the structure: string `pattern` and
 *   `format` (date-time, time, date, duration, email, hostname, ipv4, ipv6,
 *   uuid), number `multipleOf` / `maximum` / `exclusiveMaximum` / `minimum`
 *   / `exclusiveMinimum`, array `minItems` / `maxItems`; `$ref` / `$defs`;
 * - not supported: composition `allOf`, `not`, `if` / `then` / `else`,
 *   `dependentRequired`, `dependentSchemas`, and, in objects,
 *   `patternProperties` (any other keyword, e.g. `default`, `minLength`,
 *   `uniqueItems`, is rejected as "not permitted");
 * - at most 10 levels of nesting and 5000 object properties; at most 1000
 *   enum values in total.
 *
 * The official SDK applies the same structural rewrite
 * (openai-python `lib/_pydantic.py`, `_ensure_strict_json_schema`). A
 * schema that cannot be expressed this way (a dictionary with free keys, a
 * tuple, `not`, `{}` "any value", …) is reported, and the dialect sends
 * that tool non-strict instead.
 */

/** String formats strict mode accepts. */
export const strictFormats = new Set(['date-time', 'time', 'date', 'duration', 'email', 'hostname', 'ipv4', 'ipv6', 'uuid'])

/** Keywords strict mode accepts, besides the structural ones handled below. */
const keptKeywords = new Set([
  'type', 'description', 'title', 'enum', 'const', 'anyOf',
  'pattern', 'format', 'multipleOf', 'maximum', 'exclusiveMaximum', 'minimum', 'exclusiveMinimum',
  'minItems', 'maxItems',
])

/** Keywords that change what is valid and cannot be dropped or rewritten safely. */
const blocking = ['not', 'if', 'then', 'else', 'dependentRequired', 'dependentSchemas', 'dependencies', 'patternProperties', 'prefixItems', 'additionalItems', 'contains', 'unevaluatedProperties', 'unevaluatedItems']

const structural = new Set(['properties', 'required', 'additionalProperties', 'items', 'allOf', 'oneOf'])

/** Limits from the "Supported schemas" section. */
export const strictLimits = { depth: 10, properties: 5000, enumValues: 1000 }

/** The outcome of {@link toStrictSchema}. */
export type StrictSchemaResult = { ok: true; schema: JSONSchema } | { ok: false; reason: string }

class NotStrict extends Error {}

interface Counter {
  properties: number
  enumValues: number
}

/**
 * Converts a tool's parameters to a strict-mode schema: a fresh copy (the
 * input may be frozen and shared). Never throws: a schema strict mode cannot
 * express gives `{ ok: false, reason }`.
 */
export function toStrictSchema(parameters: JSONSchema): StrictSchemaResult {
  try {
    let schema = cloneSchema(parameters ?? {})
    if (hasRefs(schema)) {
      schema = inlineRefs(schema, (ref) => {
        throw new NotStrict(`the reference ${ref} cannot be resolved or is recursive`)
      })
    }
    delete schema.$schema
    if (schema.type === undefined && isObject(schema.properties)) schema.type = 'object'
    if (schema.type !== 'object') throw new NotStrict('the root of the parameters is not an object')
    const counter: Counter = { properties: 0, enumValues: 0 }
    const result = convert(schema, 1, counter)
    if (counter.properties > strictLimits.properties) throw new NotStrict(`more than ${strictLimits.properties} properties`)
    if (counter.enumValues > strictLimits.enumValues) throw new NotStrict(`more than ${strictLimits.enumValues} enum values`)
    return { ok: true, schema: result }
  } catch (error) {
    if (error instanceof NotStrict) return { ok: false, reason: error.message }
    return { ok: false, reason: String(error?.message ?? error) }
  }
}

function convert(input: JSONSchema, depth: number, counter: Counter): JSONSchema {
  if (!isObject(input)) throw new NotStrict('a schema is not an object')
  if (depth > strictLimits.depth) throw new NotStrict(`nesting deeper than ${strictLimits.depth} levels`)
  for (const key of blocking) {
    if (key in input) throw new NotStrict(`the keyword "${key}" is not supported`)
  }
  let schema = input
  if (Array.isArray(schema.allOf)) schema = mergeAllOf(schema)
  if (Array.isArray(schema.oneOf)) {
    // Exactly-one becomes at-least-one; our own validator still checks oneOf.
    const { oneOf, ...rest } = schema
    schema = { ...rest, anyOf: [...(rest.anyOf ?? []), ...oneOf] }
  }
  if (Array.isArray(schema.type) && schema.type.filter((type: string) => type !== 'null').length > 1) {
    schema = splitTypes(schema)
  }
  if (Array.isArray(schema.items)) throw new NotStrict('tuples (an items list) are not supported')

  const result: JSONSchema = {}
  const notes: string[] = []
  for (const [key, value] of Object.entries(schema)) {
    if (structural.has(key)) continue
    if (key === 'format' && !strictFormats.has(value)) {
      notes.push(constraintNotes.format(value, schema))
    } else if (keptKeywords.has(key)) {
      result[key] = key === 'anyOf' ? value.map((member: JSONSchema) => convert(member, depth, counter)) : value
      if (key === 'enum' && Array.isArray(value)) counter.enumValues += value.length
    } else if (constraintNotes[key]) {
      const note = constraintNotes[key](value, schema)
      if (note && !(key === 'default' && value === null)) notes.push(note)
    }
  }
  const types = Array.isArray(schema.type) ? schema.type : [schema.type]
  const isObjectType = types.includes('object') || (schema.type === undefined && isObject(schema.properties))
  if (isObjectType) {
    if (schema.additionalProperties !== undefined && schema.additionalProperties !== false) {
      throw new NotStrict('an object with free keys (additionalProperties) is not supported')
    }
    const properties: JSONSchema = {}
    const required = new Set<string>(Array.isArray(schema.required) ? schema.required : [])
    for (const [name, property] of Object.entries((schema.properties ?? {}) as JSONSchema)) {
      counter.properties += 1
      const converted = convert(property, depth + 1, counter)
      properties[name] = required.has(name) ? converted : nullable(converted)
    }
    result.type ??= 'object'
    result.properties = properties
    result.required = Object.keys(properties)
    result.additionalProperties = false
  }
  if (types.includes('array')) {
    if (!isObject(schema.items)) throw new NotStrict('an array without an item schema is not supported')
    result.items = convert(schema.items, depth + 1, counter)
  }
  if (result.type === undefined && !result.anyOf && !result.enum && !('const' in result)) {
    throw new NotStrict('a schema without a type ("any value") is not supported')
  }
  appendNotes(result, notes)
  return result
}

/** `allOf` of objects merged into one object; anything else cannot be expressed. */
function mergeAllOf(schema: JSONSchema): JSONSchema {
  const { allOf, ...rest } = schema
  const merged: JSONSchema = { ...rest }
  for (const member of allOf as JSONSchema[]) {
    const keys = Object.keys(member ?? {})
    const objectLike = isObject(member) && (member.type === 'object' || member.properties)
      && keys.every((key) => ['type', 'properties', 'required', 'description', 'additionalProperties'].includes(key))
    if (!objectLike) throw new NotStrict('allOf is not supported')
    if (merged.type !== undefined && merged.type !== 'object') throw new NotStrict('allOf is not supported')
    merged.type = 'object'
    for (const [name, property] of Object.entries((member.properties ?? {}) as JSONSchema)) {
      if (merged.properties?.[name] && JSON.stringify(merged.properties[name]) !== JSON.stringify(property)) {
        throw new NotStrict(`allOf defines "${name}" twice`)
      }
      merged.properties = { ...merged.properties, [name]: property }
    }
    merged.required = [...new Set([...(merged.required ?? []), ...(member.required ?? [])])]
    merged.description ??= member.description
  }
  return merged
}

/** `type: ['string', 'number']` → `anyOf` of one schema per type. */
function splitTypes(schema: JSONSchema): JSONSchema {
  const { type, description, ...rest } = schema
  const members = (type as string[]).filter((item) => item !== 'null').map((item) => ({ ...rest, type: item }))
  if ((type as string[]).includes('null')) members.push({ type: 'null' } as any)
  return description ? { description, anyOf: members } : { anyOf: members }
}

/** Adds `null` to what a converted schema accepts: the strict form of an optional field. */
export function nullable(schema: JSONSchema): JSONSchema {
  if (Array.isArray(schema.anyOf)) {
    if (schema.anyOf.some((member: JSONSchema) => member.type === 'null')) return schema
    return { ...schema, anyOf: [...schema.anyOf, { type: 'null' }] }
  }
  return withNullType(schema) ?? { anyOf: [schema, { type: 'null' }] }
}

/**
 * The inverse of the nullable rewrite, for the arguments a model sends
 * under a strict schema: removes `null` values of properties the original
 * `parameters` did not require and do not accept `null`, so that the tool
 * sees a missing field (and its default) as before. Nested objects and
 * array items are handled; the value is copied, not changed in place.
 */
export function stripStrictNulls(parameters: JSONSchema, value: unknown): unknown {
  if (!isObject(parameters)) return value
  if (Array.isArray(value)) {
    return isObject(parameters.items) ? value.map((item) => stripStrictNulls(parameters.items, item)) : value
  }
  if (!isObject(value) || !isObject(parameters.properties)) return value
  const required = new Set<string>(Array.isArray(parameters.required) ? parameters.required : [])
  const result: Record<string, unknown> = {}
  for (const [key, inner] of Object.entries(value)) {
    const schema = parameters.properties[key]
    if (inner === null && schema && !required.has(key) && !acceptsNull(schema)) continue
    result[key] = schema ? stripStrictNulls(schema, inner) : inner
  }
  return result
}

function acceptsNull(schema: JSONSchema): boolean {
  if (!isObject(schema)) return true
  if (schema.type === 'null' || (Array.isArray(schema.type) && schema.type.includes('null'))) return true
  if (Array.isArray(schema.enum) && schema.enum.includes(null)) return true
  if (Array.isArray(schema.anyOf)) return schema.anyOf.some(acceptsNull)
  if (Array.isArray(schema.oneOf)) return schema.oneOf.some(acceptsNull)
  return schema.type === undefined && !schema.enum && !('const' in schema) && !schema.$ref
}
