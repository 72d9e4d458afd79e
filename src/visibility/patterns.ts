import picomatch from 'picomatch'

const cache = new Map<string, (name: string) => boolean>()

/**
 * Whether a tool name matches a picomatch pattern such as `mcp__*` or
 * `fs_{read,write}`. Compiled matchers are cached by pattern.
 */
export function matchName(pattern: string, name: string) {
  let matcher = cache.get(pattern)
  if (!matcher) {
    matcher = picomatch(pattern, { dot: true })
    cache.set(pattern, matcher)
  }
  return matcher(name)
}

/** The first pattern of `patterns` that matches `name`, or undefined. */
export function findMatch(patterns: readonly string[] | undefined, name: string) {
  return patterns?.find((pattern) => matchName(pattern, name))
}

/**
 * How specific a pattern is, for "most specific wins": a pattern without
 * glob characters beats every glob; among globs, more literal characters win.
 */
export function specificity(pattern: string) {
  const literal = pattern.replace(/[*?[\]{}()!+@]/g, '')
  return (literal.length === pattern.length ? 1000 : 0) + literal.length
}
