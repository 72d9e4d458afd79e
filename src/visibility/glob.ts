import { RE2JS } from 're2js'

/*
 * Glob patterns matched in time linear in the text. Rules, policies, tool
 * sets, scene rules and the bash lists are written by admins, but the text
 * they are matched against is often a model's (a command line, an action
 * name, a path), and `read`'s search takes a model's own glob. picomatch
 * turns globs into backtracking regular expressions: `*git*push*origin*`
 * against a 45 kB command took two minutes, `*a*a*a*a*a*a*a*a*a*a*b`
 * against a 40-character file name much longer, with the bot frozen. Its
 * regexes also treat text as paths: `*` refuses to cross a `/./` or
 * `/../` segment, so a deny rule `rm *` missed `rm -rf /tmp/../etc`.
 *
 * This module compiles the same glob syntax to a regex it runs with V8 when
 * the pattern has at most one wildcard run (linear there), else with
 * RE2JS (linear always).
 */

/** How a glob reads its text. */
export interface GlobOptions {
  /**
   * `path` (default): `*` and `?` stay inside one `/`-separated segment,
   * `**` crosses segments (`a/**\/b` also matches `a/b`), and a text with a
   * `.` or `..` segment never matches unless the pattern names one (paths
   * are compared in canonical form). `text`: `*` matches any characters,
   * `/` included (command lines).
   */
  mode?: 'path' | 'text'
  /** A pattern without `/` is matched against the last segment of the text (`*.ts` finds `src/a.ts`). */
  basename?: boolean
}

const special = /[.*+?^${}()|[\]\\/]/g

function escape(text: string) {
  return text.replace(special, '\\$&')
}

/** The index of the `]` closing a bracket expression opened at `start`, or -1. */
function closingBracket(pattern: string, start: number) {
  let index = start + 1
  if (pattern[index] === '!' || pattern[index] === '^') index++
  if (pattern[index] === ']') index++
  for (; index < pattern.length; index++) {
    if (pattern[index] === '\\') index++
    else if (pattern[index] === ']') return index
  }
  return -1
}

/** The alternatives of a brace expression opened at `start` and the index of its `}`, or undefined when it has no top-level comma. */
function braceAlternatives(pattern: string, start: number): { parts: string[]; end: number } | undefined {
  const parts: string[] = []
  let depth = 0
  let from = start + 1
  for (let index = start + 1; index < pattern.length; index++) {
    const char = pattern[index]
    if (char === '\\') index++
    else if (char === '{') depth++
    else if (char === '}' && depth > 0) depth--
    else if (char === ',' && depth === 0) {
      parts.push(pattern.slice(from, index))
      from = index + 1
    } else if (char === '}') {
      parts.push(pattern.slice(from, index))
      return parts.length > 1 ? { parts, end: index } : undefined
    }
  }
}

interface Compiled {
  source: string
  /** Wildcard runs (`*`, `**`): more than one can make a backtracking engine slow. */
  stars: number
}

function compile(pattern: string, mode: 'path' | 'text'): Compiled {
  let source = ''
  let stars = 0
  const any = mode === 'path' ? '[^/]' : '[\\s\\S]'
  for (let index = 0; index < pattern.length; index++) {
    const char = pattern[index]
    if (char === '\\' && index + 1 < pattern.length) {
      source += escape(pattern[++index])
    } else if (char === '*') {
      let end = index
      while (pattern[end + 1] === '*') end++
      const before = index === 0 || pattern[index - 1] === '/'
      const after = end + 1 === pattern.length || pattern[end + 1] === '/'
      // `**` is a globstar only as a whole segment; elsewhere it is one `*`.
      const globstar = end > index && mode === 'path' && before && after
      stars++
      if (!globstar) {
        source += `${any}*`
      } else {
        if (pattern[end + 1] === '/') {
          // `**/`: any number of whole segments, none included.
          source += '(?:[\\s\\S]*/)?'
          end++
        } else if (index > 0) {
          // A trailing `/**`: the folder itself or anything in it.
          source = source.replace(/\\\/$/, '') + '(?:/[\\s\\S]*)?'
        } else {
          source += '[\\s\\S]*'
        }
      }
      index = end
    } else if (char === '?') {
      source += any
    } else if (char === '[' && closingBracket(pattern, index) !== -1) {
      const end = closingBracket(pattern, index)
      let body = pattern.slice(index + 1, end)
      const negated = body[0] === '!' || body[0] === '^'
      if (negated) body = body.slice(1)
      const inner = body.replace(/\\(.)/g, '$1').replace(/[\\\]^[]/g, '\\$&')
      source += negated ? `[^${mode === 'path' ? '/' : ''}${inner}]` : `[${inner}]`
      index = end
    } else if (char === '{' && braceAlternatives(pattern, index)) {
      const { parts, end } = braceAlternatives(pattern, index)!
      const compiled = parts.map((part) => compile(part, mode))
      stars += compiled.reduce((sum, part) => sum + part.stars, 0)
      source += `(?:${compiled.map((part) => part.source).join('|')})`
      index = end
    } else {
      source += escape(char)
    }
  }
  return { source, stars }
}

/** A `.` or `..` segment of a path. */
const dotSegment = /(^|\/)\.{1,2}(\/|$)/

/**
 * Compiles a glob (`*`, `**`, `?`, `[abc]`, `[!a-z]`, `{a,b}`, `\` escapes;
 * dotfiles are matched like other names) into a matcher that runs in time
 * linear in the text. Never throws: a pattern that cannot be compiled
 * matches only itself, literally.
 */
export function compileGlob(pattern: string, options: GlobOptions = {}): (text: string) => boolean {
  const mode = options.mode ?? 'path'
  if (!/[*?[{\\]/.test(pattern)) {
    const segmentOnly = options.basename && mode === 'path' && !pattern.includes('/')
    return (text) => text === pattern || (!!segmentOnly && text.slice(text.lastIndexOf('/') + 1) === pattern)
  }
  const { source, stars } = compile(pattern, mode)
  const anchored = `^(?:${source})$`
  let test: (text: string) => boolean
  try {
    if (stars <= 1) {
      const re = new RegExp(anchored)
      test = (text) => re.test(text)
    } else {
      const re = RE2JS.compile(anchored)
      test = (text) => re.matches(text)
    }
  } catch {
    return (text) => text === pattern
  }
  const allowDots = mode === 'path' && dotSegment.test(pattern)
  const basename = options.basename && mode === 'path' && !pattern.includes('/')
  return (text) => {
    if (typeof text !== 'string') return false
    if (mode === 'path' && !allowDots && dotSegment.test(text)) return false
    return test(basename ? text.slice(text.lastIndexOf('/') + 1) : text)
  }
}
