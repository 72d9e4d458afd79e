import { ArgumentIssue, ToolError } from '../types'
import type { ArgumentSchema } from '../schema/validate'

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

function invalidArguments(issues: ArgumentIssue[]): { error: ToolError } {
  return {
    error: {
      code: 'invalid-arguments',
      message: `The arguments do not match the tool's schema: ${issues.map((issue) => issue.message).join('; ')}`,
      hint: 'Fix the listed fields and call the tool again.',
      issues,
      // Each issue is said with `chatluna-tools.error.issue` when the reply is rendered.
      text: { path: 'chatluna-tools.error.invalid-arguments', params: { issues } },
    },
  }
}

/**
 * Step 3 of the pipeline (DESIGN.md): a call's arguments as the tool gets
 * them. `raw` is a JSON text (blank means `{}`) or a value; it must pass
 * {@link checkArgumentShape}, then `schema` (defaults applied). Returns
 * `{ value }`, or `{ error }` with code `invalid-json` or
 * `invalid-arguments` (with the issues the model can correct from); never
 * throws for bad input.
 */
export function parseArguments(raw: unknown, schema: ArgumentSchema): { value: unknown } | { error: ToolError } {
  let value = raw
  if (typeof raw === 'string') {
    if (!raw.trim()) {
      value = {}
    } else {
      try {
        value = JSON.parse(raw)
      } catch (error) {
        return {
          error: {
            code: 'invalid-json',
            message: `The arguments are not valid JSON: ${error.message}`,
            hint: 'Send the arguments as one complete JSON object.',
            text: { path: 'chatluna-tools.error.invalid-json', params: { error: error.message } },
          },
        }
      }
    }
  }
  // Before any validator walks them: no prototype keys, no stack-deep nesting.
  const shape = checkArgumentShape(value)
  if (shape) return invalidArguments([shape])
  const parsed = schema.parse(value)
  if (parsed.ok === false) return invalidArguments(parsed.issues)
  return { value: parsed.value }
}
