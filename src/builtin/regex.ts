import { RE2JS } from 're2js'
import { ToolRunError } from '../pipeline/errors'

/**
 * Longest search text or regex a model may send, in characters (RuleGo
 * seed: "正则表达式长度限制 1000 字符"). Not the ReDoS defence: that is the
 * linear-time engine below.
 */
export const maxPatternLength = 1000

/** One match: UTF-16 offsets into the text, and the capture groups. */
export interface TextMatch {
  start: number
  end: number
  /** `groups[0]` is the whole match; an unmatched group is `null`. */
  groups: (string | null)[]
  /** Named groups; an unmatched one is `null`. */
  named: Record<string, string | null>
}

/** Options of {@link TextPattern}. */
export interface PatternOptions {
  /** Treat the text as an RE2 regular expression; default: a literal string. */
  regex?: boolean
  ignoreCase?: boolean
  /** `^` and `$` match at every line (for whole-file edits); default off (per-line search). */
  multiline?: boolean
}

/**
 * A literal string or a regular expression from a model, run with RE2JS,
 * a linear-time port of RE2 (issue "Built-in tools", item 4: model regexes
 * never hang the bot; `(a+)+$` against 50 000 `a`s and a `b` answers in
 * milliseconds). RE2 syntax: no backreferences and no lookarounds; named
 * groups are `(?<name>…)` or `(?P<name>…)`.
 *
 * The constructor throws `ToolRunError` with status `invalid`:
 * `empty-pattern`, `pattern-too-long` (over {@link maxPatternLength}
 * characters) or `invalid-regex` (with RE2's message).
 */
export class TextPattern {
  private re?: RE2JS
  private needle?: string

  constructor(readonly source: string, readonly options: PatternOptions = {}) {
    if (typeof source !== 'string' || source === '') {
      throw new ToolRunError('empty-pattern', 'The search text is empty.', { status: 'invalid' })
    }
    if (source.length > maxPatternLength) {
      throw new ToolRunError('pattern-too-long', `The search text is ${source.length} characters long; at most ${maxPatternLength} are accepted.`, {
        status: 'invalid',
        hint: 'Search for a shorter, distinctive part of the text.',
      })
    }
    if (!options.regex && !options.ignoreCase) {
      this.needle = source
      return
    }
    let flags = 0
    if (options.ignoreCase) flags |= RE2JS.CASE_INSENSITIVE
    if (options.multiline) flags |= RE2JS.MULTILINE
    try {
      this.re = RE2JS.compile(options.regex ? source : RE2JS.quote(source), flags)
    } catch (error) {
      throw new ToolRunError('invalid-regex', `The regular expression ${JSON.stringify(source)} is not valid: ${error?.message ?? error}.`, {
        status: 'invalid',
        hint: 'The engine is RE2: no backreferences (\\1) and no lookarounds ((?=…), (?<=…)). Or search for a literal text with regex: false.',
      })
    }
  }

  /** Whether the text contains a match. */
  test(text: string): boolean {
    if (this.needle !== undefined) return text.includes(this.needle)
    return this.re!.test(text)
  }

  /**
   * The matches in `text`, left to right, non-overlapping, at most `limit`
   * (default: all). An empty match advances by one character, so the list
   * is always finite.
   */
  matches(text: string, limit = Infinity): TextMatch[] {
    const found: TextMatch[] = []
    for (const match of this.iterate(text)) {
      if (found.length >= limit) break
      found.push(match)
    }
    return found
  }

  /**
   * The matches in `text` one at a time, like {@link matches}: for callers
   * that may stop early or need not keep them all (a global replacement of
   * millions of matches).
   */
  *iterate(text: string): Generator<TextMatch> {
    if (this.needle !== undefined) {
      let index = text.indexOf(this.needle)
      while (index !== -1) {
        yield { start: index, end: index + this.needle.length, groups: [this.needle], named: {} }
        index = text.indexOf(this.needle, index + this.needle.length)
      }
      return
    }
    const matcher = this.re!.matcher(text)
    const count = matcher.groupCount()
    const names = Object.keys(this.re!.namedGroups())
    while (matcher.find()) {
      const groups: (string | null)[] = []
      for (let group = 0; group <= count; group++) groups.push(matcher.group(group))
      const named: Record<string, string | null> = {}
      for (const name of names) named[name] = matcher.group(name)
      yield { start: matcher.start(), end: matcher.end(), groups, named }
    }
  }
}

/**
 * Expands a regex replacement for one match, the same way for a single and
 * a global replacement: `$1`–`$99` (a group number that does not exist is
 * kept as text), `$<name>` and `${name}` (named groups), `$&` and `$0` (the
 * whole match), `$$` (a dollar sign). An unmatched group is empty.
 */
export function expandReplacement(template: string, match: TextMatch): string {
  let out = ''
  for (let index = 0; index < template.length; index++) {
    const char = template[index]
    if (char !== '$' || index === template.length - 1) {
      out += char
      continue
    }
    const next = template[index + 1]
    if (next === '$') {
      out += '$'
      index++
    } else if (next === '&') {
      out += match.groups[0] ?? ''
      index++
    } else if (next >= '0' && next <= '9') {
      const after = template[index + 2]
      const digits = after >= '0' && after <= '9' && Number(next + after) < match.groups.length ? next + after : next
      const number = Number(digits)
      if (number < match.groups.length) {
        out += match.groups[number] ?? ''
        index += digits.length
      } else {
        out += char
      }
    } else if (next === '<' || next === '{') {
      const close = template.indexOf(next === '<' ? '>' : '}', index + 2)
      const name = close === -1 ? '' : template.slice(index + 2, close)
      if (name && name in match.named) {
        out += match.named[name] ?? ''
        index = close
      } else {
        out += char
      }
    } else {
      out += char
    }
  }
  return out
}
