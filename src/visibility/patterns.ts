import { compileGlob } from './glob'

type Matcher = (text: string) => boolean

/** Compiled patterns by glob mode; each map is cleared beyond {@link maxCached} (patterns come from config and rules). */
const caches = { path: new Map<string, Matcher>(), text: new Map<string, Matcher>() }
const maxCached = 4096

function compiled(pattern: string, mode: 'path' | 'text'): Matcher {
  const cache = caches[mode]
  let matcher = cache.get(pattern)
  if (!matcher) {
    if (cache.size >= maxCached) cache.clear()
    matcher = compileGlob(pattern, { mode })
    cache.set(pattern, matcher)
  }
  return matcher
}

/**
 * Whether a name (a tool, an action, a path) matches a glob such as
 * `mcp__*` or `fs_{read,write}` ({@link compileGlob}, path mode: linear in
 * the name however the pattern is written). Compiled matchers are cached
 * by pattern.
 */
export function matchName(pattern: string, name: string) {
  return compiled(pattern, 'path')(name)
}

/**
 * Whether a text that is not a path (a command line) matches a glob: `*`
 * matches any characters, `/` and `..` included ({@link compileGlob}, text
 * mode; linear in the text). Compiled matchers are cached by pattern.
 */
export function matchText(pattern: string, text: string) {
  return compiled(pattern, 'text')(text)
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
