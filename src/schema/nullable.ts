import { JSONSchema } from '../types'

/**
 * Adds `null` to the `type` of a schema that has one (a string or a list),
 * turning a `const` into an `enum` of it and null and appending null to an
 * `enum`. Returns a new object; undefined when the schema has no `type`, so
 * callers decide how to widen untyped schemas (e.g. with `anyOf`).
 * Used by the Schemastery converter (optional fields accept null) and the
 * `openai-strict` dialect (optional fields are required but nullable).
 */
export function withNullType(schema: JSONSchema): JSONSchema | undefined {
  const { type } = schema
  if (typeof type !== 'string' && !Array.isArray(type)) return
  const types: string[] = Array.isArray(type) ? type : [type]
  const result: JSONSchema = { ...schema, type: types.includes('null') ? types : [...types, 'null'] }
  if ('const' in result) {
    result.enum = [result.const, null]
    delete result.const
  } else if (Array.isArray(result.enum) && !result.enum.includes(null)) {
    result.enum = [...result.enum, null]
  }
  return result
}
