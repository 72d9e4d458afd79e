/** Keywords through which a JSON Schema can still describe arguments besides `properties`. */
const argumentKeywords = ['patternProperties', 'anyOf', 'oneOf', 'allOf', '$ref', 'items']

/**
 * Whether a tool's argument JSON Schema declares any argument: false for an
 * object schema without properties (`{ type: 'object', properties: {} }`,
 * what a tool without `args` or with `Schema.object({})` gets) that allows
 * no other shape.
 */
export function takesArguments(schema: unknown): boolean {
  if (!schema || typeof schema !== 'object') return false
  const json = schema as Record<string, any>
  if (json.type !== undefined && json.type !== 'object') return true
  if (json.properties && Object.keys(json.properties).length) return true
  if (json.additionalProperties && typeof json.additionalProperties === 'object') return true
  return argumentKeywords.some((key) => json[key] !== undefined)
}
