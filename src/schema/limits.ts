/*
 * Bounds on raw JSON Schemas (a tool's `parameters`, such as an MCP
 * server's `inputSchema`): the dialect converters, ajv, the console and the
 * JSON encoder of every model request walk schemas recursively, so one
 * schema thousands of levels deep would make each of them overflow its
 * stack — and with it the declarations of every tool in the scope.
 */

/** Deepest nesting of objects and arrays accepted in a raw JSON Schema. */
export const maxSchemaDepth = 64

/** Whether `value` nests objects and arrays more than `limit` levels deep. Iterative, so it cannot overflow itself. */
export function nestedDeeperThan(value: unknown, limit: number): boolean {
  if (!value || typeof value !== 'object') return false
  const stack: [object, number][] = [[value, 1]]
  const seen = new Set<object>()
  while (stack.length) {
    const [current, depth] = stack.pop()!
    if (depth > limit) return true
    // A shared (or cyclic) object is measured once, at the depth it was first found.
    if (seen.has(current)) continue
    seen.add(current)
    for (const child of Object.values(current)) {
      if (child && typeof child === 'object') stack.push([child, depth + 1])
    }
  }
  return false
}
