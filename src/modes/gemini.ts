import { JSONSchema } from '../types'
import { appendNotes, cloneSchema, constraintNotes, hasRefs, inlineRefs, isObject } from './schema-utils'

/*
 * Gemini function declarations (`tools: [{ functionDeclarations: [...] }]`
 * of generateContent). A declaration is `{ name, description, parameters? }`
 * where `parameters` is a Schema object: "a select subset of an OpenAPI 3.0
 * schema object" (https://ai.google.dev/api/caching#Schema, and
 * https://ai.google.dev/gemini-api/docs/function-calling "Function
 * declarations"). Its fields are exactly: type, format, title, description,
 * nullable, enum, maxItems, minItems, properties, required, minProperties,
 * maxProperties, minLength, maxLength, pattern, example, anyOf,
 * propertyOrdering, default, items, minimum, maximum.
 *
 * - `type` is one enum value: STRING, NUMBER, INTEGER, BOOLEAN, ARRAY,
 *   OBJECT (or NULL); there are no type lists, so `['string', 'null']`
 *   becomes `STRING` + `nullable: true`;
 * - `enum` is a list of strings ("possible values of the element of
 *   Type.STRING");
 * - `format` is documented for NUMBER (float, double), INTEGER (int32,
 *   int64) and STRING (enum, date-time) only;
 * - `$ref`, `$defs`, `allOf`, `oneOf`, `not`, `const`, `additionalProperties`,
 *   tuples, `multipleOf`, `uniqueItems`, … do not exist: references are
 *   inlined, `allOf` of objects is merged, `oneOf` becomes `anyOf`, `const`
 *   becomes a one-value enum, a tuple becomes one item schema, and what
 *   cannot be said is dropped with an English note in the description (our
 *   own validator still enforces it);
 * - Vertex AI rejects a parameter without a type ("didn't specify the schema
 *   type field"), so "any value" is declared as a STRING with a note;
 * - a function with no parameters leaves `parameters` unset (the Vertex
 *   FunctionDeclaration reference: "For function with no parameters, this
 *   can be left unset"); an OBJECT with an empty `properties` map is rejected.
 *
 * Function names must be a-z, A-Z, 0-9, `_`, `.`, `:` or `-`, at most 64
 * characters: every legal tool name (`^[a-zA-Z0-9_-]{1,64}$`) already is.
 */

/** The fields of Gemini's Schema object. */
export const geminiSchemaFields = new Set([
  'type', 'format', 'title', 'description', 'nullable', 'enum', 'maxItems', 'minItems', 'properties', 'required',
  'minProperties', 'maxProperties', 'minLength', 'maxLength', 'pattern', 'example', 'anyOf', 'propertyOrdering',
  'default', 'items', 'minimum', 'maximum',
])

/** Values of Gemini's `Type` enum. */
export const geminiTypes = new Set(['STRING', 'NUMBER', 'INTEGER', 'BOOLEAN', 'ARRAY', 'OBJECT', 'NULL'])

/** Documented formats per type. */
export const geminiFormats: Record<string, string[]> = {
  STRING: ['enum', 'date-time'],
  NUMBER: ['float', 'double'],
  INTEGER: ['int32', 'int64'],
}

/** Keywords copied as they are (when valid for Gemini). */
const copied = ['title', 'description', 'minItems', 'maxItems', 'minProperties', 'maxProperties', 'minLength', 'maxLength', 'pattern', 'minimum', 'maximum', 'default']

/** Depth of references expanded inside themselves before a recursive schema is cut. */
const refDepth = 3

/**
 * Converts a tool's parameters (draft-07 JSON Schema, possibly frozen) into
 * Gemini's Schema subset. Returns `undefined` for a function without
 * parameters. Never throws.
 */
export function toGeminiSchema(parameters: JSONSchema): JSONSchema | undefined {
  let schema = cloneSchema(parameters ?? {})
  if (hasRefs(schema)) {
    schema = inlineRefs(schema, (ref) => ({ type: 'object', description: `(a nested ${ref.split('/').pop()} value)` }), refDepth)
  }
  if (schema.type === undefined && isObject(schema.properties)) schema.type = 'object'
  const result = convert(schema)
  if (result.type === 'OBJECT' && !result.properties) return undefined
  return result
}

function convert(input: unknown): JSONSchema {
  if (!isObject(input)) return { type: 'STRING', description: 'Any value.' }
  let schema = input
  if (Array.isArray(schema.allOf)) schema = mergeAllOf(schema)
  const notes: string[] = []
  const result: JSONSchema = {}

  // Alternatives: oneOf is read as anyOf; a `null` alternative becomes `nullable`.
  const alternatives = [...(schema.anyOf ?? []), ...(schema.oneOf ?? [])].filter(isObject)
  if (alternatives.length) {
    const nonNull = alternatives.filter((member) => member.type !== 'null')
    const own = { ...schema }
    delete own.anyOf
    delete own.oneOf
    if (nonNull.length === 1) {
      const merged = convert({ ...nonNull[0], ...own, description: own.description ?? nonNull[0].description })
      if (nonNull.length < alternatives.length) merged.nullable = true
      return merged
    }
    copyMeta(own, result, notes)
    result.anyOf = nonNull.map(convert)
    if (nonNull.length < alternatives.length) result.nullable = true
    appendNotes(result, notes)
    return result
  }

  // Type lists: `['string', 'null']` → STRING + nullable; several types → anyOf.
  let type = schema.type
  if (Array.isArray(type)) {
    const nonNull = type.filter((item: string) => item !== 'null')
    if (nonNull.length < type.length) result.nullable = true
    if (nonNull.length > 1) {
      const { type: _, description, ...rest } = schema
      const split = convert({ description, anyOf: nonNull.map((item: string) => ({ ...rest, type: item })) })
      if (result.nullable) split.nullable = true
      return split
    }
    type = nonNull[0]
  }

  // const and enum: Gemini enums are strings.
  let values: unknown[] | undefined = 'const' in schema ? [schema.const] : Array.isArray(schema.enum) ? schema.enum : undefined
  if (values) {
    if (values.includes(null)) {
      result.nullable = true
      values = values.filter((value) => value !== null)
    }
    if (values.length && values.every((value) => typeof value === 'string')) {
      type ??= 'string'
      if (type === 'string') result.enum = values
    }
    if (!result.enum && values.length) notes.push(`one of: ${values.map((value) => JSON.stringify(value)).join(', ')}`)
    if (type === undefined) {
      const kinds = new Set(values.map((value) => typeof value))
      if (kinds.size === 1) type = { number: Number.isInteger(values[0]) ? 'integer' : 'number', boolean: 'boolean' }[[...kinds][0] as string]
    }
  }

  if (type === undefined) {
    if (isObject(schema.properties) || isObject(schema.additionalProperties)) type = 'object'
    else if (schema.items !== undefined) type = 'array'
  }
  if (type === undefined) {
    // "Any value": Vertex AI needs a type; a string can carry anything.
    result.type = 'STRING'
    notes.push('any value')
  } else {
    result.type = String(type).toUpperCase()
    if (!geminiTypes.has(result.type)) {
      notes.push(`type ${type}`)
      result.type = 'STRING'
    }
  }

  copyMeta(schema, result, notes)

  if (result.type === 'OBJECT') {
    const properties: JSONSchema = {}
    for (const [name, property] of Object.entries((schema.properties ?? {}) as JSONSchema)) {
      properties[name] = convert(property)
    }
    if (Object.keys(properties).length) {
      result.properties = properties
      const required = (Array.isArray(schema.required) ? schema.required : []).filter((name: string) => name in properties)
      if (required.length) result.required = required
    } else if (isObject(schema.additionalProperties)) {
      notes.push('an object with any keys')
    }
  } else if (result.type === 'ARRAY') {
    result.items = arrayItems(schema, notes)
  }

  if (schema.format !== undefined) {
    if (geminiFormats[result.type]?.includes(schema.format)) result.format = schema.format
    else notes.push(constraintNotes.format(schema.format, schema))
  }
  if (Array.isArray(schema.examples) && schema.examples.length) result.example = schema.examples[0]
  else if (schema.example !== undefined) result.example = schema.example
  for (const key of ['multipleOf', 'exclusiveMinimum', 'exclusiveMaximum', 'uniqueItems', 'propertyNames']) {
    if (key in schema) {
      const note = constraintNotes[key](schema[key], schema)
      if (note) notes.push(note)
    }
  }
  appendNotes(result, notes)
  return result
}

/** Copies the keywords Gemini knows, dropping values of the wrong kind. */
function copyMeta(schema: JSONSchema, result: JSONSchema, notes: string[]) {
  for (const key of copied) {
    if (!(key in schema)) continue
    const value = schema[key]
    const valid = key === 'title' || key === 'description' || key === 'pattern' ? typeof value === 'string'
      : key === 'default' ? value !== undefined
        : typeof value === 'number' && Number.isFinite(value)
    if (valid) result[key] = value
    else if (key !== 'default') notes.push(`${key}: ${JSON.stringify(value)}`)
  }
}

/** Item schema of an array; a draft-07 tuple (`items: [...]`) or `prefixItems` becomes one schema. */
function arrayItems(schema: JSONSchema, notes: string[]): JSONSchema {
  const tuple = Array.isArray(schema.items) ? schema.items : Array.isArray(schema.prefixItems) ? schema.prefixItems : undefined
  if (!tuple) return isObject(schema.items) ? convert(schema.items) : { type: 'STRING', description: 'Any value.' }
  const members = tuple.map(convert)
  notes.push(`a list of ${tuple.length} items in this order: ${members.map((member: JSONSchema) => member.type.toLowerCase()).join(', ')}`)
  const distinct = [...new Map(members.map((member: JSONSchema) => [JSON.stringify(member), member])).values()]
  return distinct.length === 1 ? distinct[0] : { anyOf: distinct }
}

/** `allOf` merged into one schema: properties and required lists joined, other keywords first wins. */
function mergeAllOf(schema: JSONSchema): JSONSchema {
  const { allOf, ...rest } = schema
  const merged: JSONSchema = { ...rest }
  for (const member of allOf as unknown[]) {
    if (!isObject(member)) continue
    for (const [key, value] of Object.entries(member)) {
      if (key === 'properties' && isObject(value)) merged.properties = { ...value, ...merged.properties }
      else if (key === 'required' && Array.isArray(value)) merged.required = [...new Set([...(merged.required ?? []), ...value])]
      else if (!(key in merged)) merged[key] = value
    }
  }
  return merged
}
