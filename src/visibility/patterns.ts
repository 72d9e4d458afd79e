import { compileGlob } from './glob'

const cache = new Map<string, (name: string) => boolean>()
/** Compiled patterns kept; the cache is cleared beyond this many (patterns come from config and rules). */
const maxCached = 4096

/**
 * Whether a name (a tool, an action, a path) matches a glob such as
 * `mcp__*` or `fs_{read,write}` ({@link compileGlob}, path mode: linear in
 * the name however the pattern is written). Compiled matchers are cached
 * by pattern.
 */
export function matchName(pattern: string, name: string) {
  let matcher = cache.get(pattern)
  if (!matcher) {
    if (cache.size >= maxCached) cache.clear()
    matcher = compileGlob(pattern)
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
