import { JSONSchema } from '../types'

/*
 * Helpers for the provider dialects (dialects.ts): the neutral parameters
 * are draft-07 JSON Schema, shared and deep-frozen (ArgumentSchema), and
 * raw MCP schemas may carry `$ref`s and keywords of later drafts. Every
 * dialect works on a copy made here.
 */

/** A deep, mutable copy of a JSON value (schemas are plain JSON). */
export function cloneSchema<T>(value: T): T {
  return value === undefined ? value : JSON.parse(JSON.stringify(value))
}

/** Whether a value is a plain object (a schema, or a map of them), not an array or null. */
export function isObject(value: unknown): value is JSONSchema {
  return !!value && typeof value === 'object' && !Array.isArray(value)
}

/** Local `$ref`s (`#/$defs/x`, `#/definitions/x`, any `#/...` pointer) resolved against `root`. */
function resolvePointer(root: JSONSchema, ref: string): JSONSchema | undefined {
  if (ref === '#') return root
  if (!ref.startsWith('#/')) return
  let current: any = root
  for (const raw of ref.slice(2).split('/')) {
    const key = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~')
    if (!current || typeof current !== 'object' || !(key in current)) return
    current = current[key]
  }
  return isObject(current) ? current : undefined
}

/**
 * Most schema objects {@link inlineRefs} visits before it stops expanding
 * references: definitions that each use the next one twice would otherwise
 * double the copy at every level (30 levels: a billion objects).
 */
export const maxInlinedNodes = 10000

/** Most references expanded inside one another (a chain of definitions, each using the next). */
export const maxRefNesting = 16

/**
 * A copy of `schema` with every local `$ref` replaced by what it points to
 * (sibling keywords of the `$ref` win), and `$defs` / `definitions` removed.
 * A reference that cannot be resolved, one nested deeper than `maxDepth`
 * inside its own expansion (a recursive schema), one inside
 * {@link maxRefNesting} other expansions, and every reference met after
 * {@link maxInlinedNodes} objects becomes `fallback(ref)`.
 */
export function inlineRefs(schema: JSONSchema, fallback: (ref: string) => JSONSchema, maxDepth = 4): JSONSchema {
  const root = schema
  let nodes = 0
  const visit = (node: unknown, stack: string[]): any => {
    if (Array.isArray(node)) return node.map((item) => visit(item, stack))
    if (!isObject(node)) return node
    nodes++
    if (typeof node.$ref === 'string') {
      const { $ref, ...rest } = node
      const target = resolvePointer(root, $ref)
      const depth = stack.filter((item) => item === $ref).length
      const spent = nodes > maxInlinedNodes || stack.length >= maxRefNesting
      if (!target || depth >= maxDepth || spent) return { ...fallback($ref), ...visit(rest, stack) }
      return visit({ ...target, ...rest }, [...stack, $ref])
    }
    const result: JSONSchema = {}
    for (const [key, value] of Object.entries(node)) {
      if (key === '$defs' || key === 'definitions') continue
      // Property names and enum values are data, not schemas.
      if (key === 'properties' || key === 'patternProperties') {
        result[key] = isObject(value)
          ? Object.fromEntries(Object.entries(value).map(([name, inner]) => [name, visit(inner, stack)]))
          : value
      } else if (key === 'enum' || key === 'const' || key === 'default' || key === 'examples' || key === 'required') {
        result[key] = cloneSchema(value)
      } else {
        result[key] = visit(value, stack)
      }
    }
    return result
  }
  return visit(schema, [])
}

/** Whether a schema contains a `$ref` anywhere. */
export function hasRefs(schema: unknown): boolean {
  if (Array.isArray(schema)) return schema.some(hasRefs)
  if (!isObject(schema)) return false
  if (typeof schema.$ref === 'string') return true
  return Object.entries(schema).some(([key, value]) => key !== 'enum' && key !== 'const' && key !== 'default' && hasRefs(value))
}

/**
 * English notes for constraints a dialect has to drop, so the model still
 * reads them (our own validator enforces them either way): e.g. `default`
 * → `default: 5`, `maxLength` → `at most 20 characters`.
 */
export const constraintNotes: Record<string, (value: any, schema: JSONSchema) => string | undefined> = {
  default: (value) => `default: ${JSON.stringify(value)}`,
  const: (value) => `must be ${JSON.stringify(value)}`,
  minLength: (value) => `at least ${value} characters`,
  maxLength: (value) => `at most ${value} characters`,
  pattern: (value) => `must match /${value}/`,
  format: (value) => `format: ${value}`,
  minimum: (value) => `at least ${value}`,
  maximum: (value) => `at most ${value}`,
  exclusiveMinimum: (value) => typeof value === 'number' ? `greater than ${value}` : undefined,
  exclusiveMaximum: (value) => typeof value === 'number' ? `less than ${value}` : undefined,
  multipleOf: (value) => `a multiple of ${value}`,
  minItems: (value) => `at least ${value} items`,
  maxItems: (value) => `at most ${value} items`,
  uniqueItems: (value) => value ? 'items must be unique' : undefined,
  minProperties: (value) => `at least ${value} keys`,
  maxProperties: (value) => `at most ${value} keys`,
  propertyNames: (value) => isObject(value) && typeof value.pattern === 'string' ? `keys must match /${value.pattern}/` : undefined,
}

/** Appends notes to a schema's description: `Text (note; note)`. */
export function appendNotes(schema: JSONSchema, notes: string[]) {
  const list = notes.filter(Boolean)
  if (!list.length) return
  const text = list.join('; ')
  schema.description = schema.description ? `${schema.description} (${text})` : text[0].toUpperCase() + text.slice(1) + '.'
}
