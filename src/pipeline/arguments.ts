import { ArgumentIssue } from '../types'

/**
 * Deepest nesting of objects and arrays accepted in a tool call's
 * arguments. Validators (ajv, Schemastery), hooks and MCP clients walk
 * arguments recursively; a model or a client sending thousands of levels
 * would overflow their stacks.
 */
export const maxArgumentDepth = 64

/**
 * Checks the shape of a call's arguments before any validator sees them
 * (DESIGN.md pipeline step 3): no own `__proto__` key at any depth (a
 * validator or a tool copying the value key by key would give the copy a
 * prototype chosen by the caller), and no nesting deeper than
 * {@link maxArgumentDepth}. Returns the first problem as an argument issue
 * (its `path` in dotted form), or undefined. Iterative, so hostile depth
 * cannot overflow the stack here either.
 */
export function checkArgumentShape(value: unknown): ArgumentIssue | undefined {
  if (!value || typeof value !== 'object') return
  const stack: [object, string, number][] = [[value, '', 1]]
  while (stack.length) {
    const [current, path, depth] = stack.pop()!
    if (depth > maxArgumentDepth) {
      return {
        path,
        expected: `at most ${maxArgumentDepth} levels of nesting`,
        got: 'deeper nesting',
        message: `the arguments are nested more than ${maxArgumentDepth} levels deep${path ? ` (at "${path}")` : ''}`,
      }
    }
    if (Object.prototype.hasOwnProperty.call(current, '__proto__')) {
      const at = path ? `${path}.__proto__` : '__proto__'
      return { path: at, expected: 'no such key', got: '"__proto__"', message: `the key "__proto__" is not allowed (at "${at}")` }
    }
    for (const key of Object.keys(current)) {
      const child = (current as any)[key]
      if (child && typeof child === 'object') stack.push([child, path ? `${path}.${key}` : key, depth + 1])
    }
  }
}
