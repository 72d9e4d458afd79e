import { JSONSchema } from '../types'
import { cloneSchema, isObject } from './schema-utils'

/*
 * Anthropic Messages tool definitions
 * (https://platform.claude.com/docs/agents-and-tools/tool-use/define-tools):
 * `name` matching `^[a-zA-Z0-9_-]{1,128}$` (every legal tool name does),
 * a plaintext `description`, and `input_schema`, "a JSON Schema object
 * defining the expected parameters": the root is `type: "object"`, and the
 * API validates it as JSON Schema draft 2020-12 ("JSON schema is invalid.
 * It must match JSON Schema draft 2020-12"). Our schemas are draft-07, so
 * the few draft-07 forms that 2020-12 reads differently are rewritten:
 * tuples (`items: [...]` + `additionalItems` → `prefixItems` + `items`),
 * `dependencies` (→ `dependentRequired` / `dependentSchemas`), draft-04
 * boolean `exclusiveMinimum` / `exclusiveMaximum`, and the `$schema` URI.
 */

/** Keywords whose value is one subschema. */
const single = ['items', 'additionalItems', 'additionalProperties', 'not', 'if', 'then', 'else', 'contains', 'propertyNames']
/** Keywords whose value is a list of subschemas. */
const lists = ['anyOf', 'oneOf', 'allOf', 'prefixItems']
/** Keywords whose value maps names to subschemas. */
const maps = ['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas']

/** The `input_schema` of a tool: a 2020-12 object schema, freshly copied. Never throws. */
export function toAnthropicSchema(parameters: JSONSchema): JSONSchema {
  const schema = convert(cloneSchema(parameters ?? {}))
  delete schema.$schema
  if (schema.type === undefined && !schema.anyOf && !schema.oneOf && !schema.allOf) schema.type = 'object'
  if (schema.type !== 'object') return { type: 'object', properties: {} }
  return schema
}

function convert(schema: unknown): any {
  if (!isObject(schema)) return schema
  if (Array.isArray(schema.items)) {
    schema.prefixItems = schema.items
    if ('additionalItems' in schema) schema.items = schema.additionalItems
    else delete schema.items
    delete schema.additionalItems
  }
  if (isObject(schema.dependencies)) {
    for (const [name, value] of Object.entries(schema.dependencies)) {
      const key = Array.isArray(value) ? 'dependentRequired' : 'dependentSchemas'
      schema[key] = { ...schema[key], [name]: value }
    }
    delete schema.dependencies
  }
  for (const [bound, limit] of [['exclusiveMinimum', 'minimum'], ['exclusiveMaximum', 'maximum']]) {
    if (typeof schema[bound] === 'boolean') {
      if (schema[bound] && typeof schema[limit] === 'number') {
        schema[bound] = schema[limit]
        delete schema[limit]
      } else {
        delete schema[bound]
      }
    }
  }
  if (typeof schema.$schema === 'string') delete schema.$schema
  for (const key of single) if (key in schema) schema[key] = convert(schema[key])
  for (const key of lists) if (Array.isArray(schema[key])) schema[key] = schema[key].map(convert)
  for (const key of maps) {
    if (isObject(schema[key])) {
      schema[key] = Object.fromEntries(Object.entries(schema[key]).map(([name, inner]) => [name, convert(inner)]))
    }
  }
  return schema
}
