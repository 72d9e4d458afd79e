import { ToolRunError } from '../pipeline/errors'
import { expandReplacement, TextMatch, TextPattern } from './regex'

/**
 * A text file opened for editing. A file whose every line ends with CRLF
 * is edited as LF text and written back with CRLF; any other file is
 * edited as is, new lines getting its dominant ending. A UTF-8 byte order
 * mark is kept.
 */
export interface EditDocument {
  /** The text edited (CRLF files: with LF endings). */
  text: string
  /** The line ending for new lines: `\r\n` or `\n`. */
  eol: '\n' | '\r\n'
  /** Every line break of the file was CRLF: convert back on save. */
  crlf: boolean
  bom: boolean
}

/** Opens file text for editing (see {@link EditDocument}). */
export function openDocument(raw: string): EditDocument {
  const bom = raw.startsWith('\uFEFF')
  const text = bom ? raw.slice(1) : raw
  const breaks = (text.match(/\n/g) ?? []).length
  const crlfBreaks = (text.match(/\r\n/g) ?? []).length
  const crlf = breaks > 0 && crlfBreaks === breaks
  return {
    text: crlf ? text.replace(/\r\n/g, '\n') : text,
    eol: crlfBreaks * 2 > breaks ? '\r\n' : '\n',
    crlf,
    bom,
  }
}

/** The file text of an edited document: CRLF restored, BOM restored. */
export function saveDocument(doc: EditDocument, text: string): string {
  return (doc.bom ? '\uFEFF' : '') + (doc.crlf ? text.replace(/\n/g, '\r\n') : text)
}

/**
 * Text from the model in the document's terms: line breaks become `\n`
 * for a CRLF document (edited as LF) and the dominant ending otherwise.
 */
export function modelText(doc: EditDocument, text: string): string {
  const lf = text.replace(/\r\n/g, '\n')
  return doc.crlf || doc.eol === '\n' ? lf : lf.replace(/\n/g, '\r\n')
}

/** Lines of a text; a final line break does not start another line. */
export function splitLines(text: string): { lines: string[]; trailing: boolean } {
  if (text === '') return { lines: [], trailing: false }
  const trailing = text.endsWith('\n')
  const lines = (trailing ? text.slice(0, -1) : text).split('\n')
  return { lines, trailing }
}

export function joinLines(lines: string[], trailing: boolean): string {
  if (!lines.length) return ''
  return lines.join('\n') + (trailing ? '\n' : '')
}

/** The inserted lines of a content argument: one final line break is dropped. */
function contentLines(content: string): string[] {
  const text = content.endsWith('\n') ? content.slice(0, -1) : content
  return text.split('\n')
}

/** What an operation changed: the new text and a one-line summary. */
export interface EditOutcome {
  text: string
  summary: string
  /** 1-based first and last line of the changed region in the new text (for a preview). */
  first: number
  last: number
}

function lineOf(text: string, offset: number) {
  let line = 1
  for (let index = text.indexOf('\n'); index !== -1 && index < offset; index = text.indexOf('\n', index + 1)) line++
  return line
}

function checkRange(from: number, to: number, total: number) {
  if (!Number.isInteger(from) || from < 1) {
    throw new ToolRunError('invalid-range', `line_from must be a line number from 1 to ${total}.`, { status: 'invalid' })
  }
  if (to < from) throw new ToolRunError('invalid-range', `line_to (${to}) is before line_from (${from}).`, { status: 'invalid' })
  if (to > total) {
    throw new ToolRunError('invalid-range', `The file has ${total} lines; line ${to} does not exist.`, { status: 'invalid', hint: 'Read the file to see its current line numbers.' })
  }
}

/** `line`: replaces lines `from`–`to` (1-based, inclusive) with `content`. */
export function replaceLines(text: string, from: number, to: number | undefined, content: string): EditOutcome {
  const { lines, trailing } = splitLines(text)
  const last = to ?? from
  checkRange(from, last, lines.length)
  const added = contentLines(content)
  lines.splice(from - 1, last - from + 1, ...added)
  const range = from === last ? `line ${from}` : `lines ${from}-${last}`
  return {
    text: joinLines(lines, trailing),
    summary: `replaced ${range} with ${added.length} line${added.length === 1 ? '' : 's'}`,
    first: from,
    last: from + added.length - 1,
  }
}

/** Describes where matches are, for an error: `lines 3, 8 and 12`. */
function matchLines(text: string, matches: TextMatch[]) {
  const lines = [...new Set(matches.map((match) => lineOf(text, match.start)))]
  const shown = lines.slice(0, 10).join(', ')
  return lines.length > 10 ? `${shown}, …` : shown
}

/** Most matches one global replacement may replace (more would hold the bot for seconds; narrow the pattern). */
export const maxReplacements = 100000

/** Limits of {@link replaceMatches}: the longest result in characters, the most matches. */
export interface ReplaceLimits {
  maxLength?: number
  maxMatches?: number
}

/**
 * `search`: replaces the match of `pattern` (exactly one unless `global`)
 * with `replacement`. Literal mode inserts the replacement as is; regex
 * mode expands `$1`, `$<name>`, `$&`, `$$` — the same for one match and for
 * every match. No match → `no-match`; several without `global` →
 * `ambiguous-match` naming the lines. Matches are replaced as they are
 * found, never all held at once: more than `limits.maxMatches` (default
 * {@link maxReplacements}) → `too-many-matches`, a result longer than
 * `limits.maxLength` characters → `too-large`, both as soon as they are
 * reached.
 */
export function replaceMatches(text: string, pattern: TextPattern, replacement: string, global: boolean, limits: ReplaceLimits = {}): EditOutcome {
  const what = pattern.options.regex ? 'regex' : 'text'
  const maxLength = limits.maxLength ?? Infinity
  const maxMatches = limits.maxMatches ?? maxReplacements
  if (!global) {
    const matches = pattern.matches(text, 2)
    if (matches.length > 1) {
      const all = pattern.matches(text, 50)
      throw new ToolRunError('ambiguous-match', `The ${what} ${JSON.stringify(pattern.source)} occurs ${all.length >= 50 ? 'at least 50' : all.length} times (lines ${matchLines(text, all)}); it must occur exactly once.`, {
        hint: 'Include more surrounding text to make it unique, or set global: true to replace every occurrence.',
      })
    }
  }
  const chunks: string[] = []
  let pending: string[] = []
  let length = 0
  let count = 0
  let position = 0
  let replacedStart = 0
  let replacedEnd = 0
  const add = (piece: string) => {
    length += piece.length
    if (length > maxLength) {
      throw new ToolRunError('too-large', `Replacing every match would make the file longer than ${maxLength} characters; nothing was changed.`, {
        hint: 'Replace fewer matches, or with shorter text.',
      })
    }
    pending.push(piece)
    // Join in blocks, so millions of small pieces never sit in memory one by one.
    if (pending.length >= 4096) {
      chunks.push(pending.join(''))
      pending = []
    }
  }
  for (const match of pattern.iterate(text)) {
    if (++count > maxMatches) {
      throw new ToolRunError('too-many-matches', `The ${what} ${JSON.stringify(pattern.source)} matches more than ${maxMatches} times; nothing was changed.`, {
        hint: 'Use a more specific pattern, or edit the file in parts.',
      })
    }
    add(text.slice(position, match.start))
    if (count === 1) replacedStart = length
    add(pattern.options.regex ? expandReplacement(replacement, match) : replacement)
    replacedEnd = length
    position = match.end
    if (!global) break
  }
  if (!count) {
    throw new ToolRunError('no-match', `The ${what} ${JSON.stringify(pattern.source)} was not found in the file.`, {
      hint: 'Read the file and copy the exact text, including spaces and indentation.',
    })
  }
  add(text.slice(position))
  const out = chunks.join('') + pending.join('')
  const first = lineOf(out, replacedStart)
  return {
    text: out,
    summary: `replaced ${count} occurrence${count === 1 ? '' : 's'}`,
    first,
    last: Math.max(first, lineOf(out, Math.max(replacedStart, replacedEnd - 1))),
  }
}

/**
 * `insert`: puts `content` on its own line(s) before or after the line
 * holding the unique match of `anchor`, or before/after line `line`.
 */
export function insertLines(text: string, where: { anchor?: TextPattern; line?: number }, position: 'before' | 'after', content: string): EditOutcome {
  const { lines, trailing } = splitLines(text)
  let index: number
  let label: string
  if (where.anchor) {
    const matches = where.anchor.matches(text, 50)
    if (!matches.length) {
      throw new ToolRunError('no-match', `The anchor ${JSON.stringify(where.anchor.source)} was not found in the file.`, {
        hint: 'Read the file and copy an exact, unique piece of the line to insert next to.',
      })
    }
    if (matches.length > 1) {
      throw new ToolRunError('ambiguous-match', `The anchor ${JSON.stringify(where.anchor.source)} occurs ${matches.length >= 50 ? 'at least 50' : matches.length} times (lines ${matchLines(text, matches)}); it must occur exactly once.`, {
        hint: 'Use a longer anchor that occurs only once, or give a line number instead.',
      })
    }
    const [match] = matches
    const startLine = lineOf(text, match.start)
    // A match ending with its line break ends on that line, not the next.
    const endLine = lineOf(text, Math.max(match.start, match.end - 1))
    index = position === 'before' ? startLine - 1 : endLine
    label = `${position} the anchor on line ${position === 'before' ? startLine : endLine}`
  } else {
    const line = where.line
    if (!Number.isInteger(line) || line < 1 || line > Math.max(lines.length, 1)) {
      throw new ToolRunError('invalid-range', `line must be from 1 to ${Math.max(lines.length, 1)}.`, { status: 'invalid' })
    }
    index = position === 'before' ? line - 1 : Math.min(line, lines.length)
    label = `${position} line ${line}`
  }
  const added = contentLines(content)
  lines.splice(index, 0, ...added)
  return {
    text: joinLines(lines, trailing),
    summary: `inserted ${added.length} line${added.length === 1 ? '' : 's'} ${label}`,
    first: index + 1,
    last: index + added.length,
  }
}

/**
 * `delete`: removes the given lines (1-based) and the lines of `range`
 * (inclusive; a range reaching past the end is refused before it is
 * spelled out). Duplicates and numbers out of range are reported together
 * and nothing is deleted.
 */
export function deleteLines(text: string, numbers: number[], range?: { from: number; to: number }): EditOutcome {
  const { lines, trailing } = splitLines(text)
  if (range) {
    // Checked before it is spelled out: a range of a billion lines must not become a billion numbers.
    if (range.to > lines.length) {
      throw new ToolRunError('invalid-lines', `Nothing was deleted: lines ${range.from}-${range.to} reach past the end (the file has ${lines.length} lines).`, {
        status: 'invalid',
        hint: 'Give each line number once, from 1 to the number of lines.',
      })
    }
    numbers = [...numbers]
    for (let line = range.from; line <= range.to; line++) numbers.push(line)
  }
  if (!numbers.length) throw new ToolRunError('no-lines', 'Give the line numbers to delete (lines, or line_from/line_to).', { status: 'invalid' })
  const seen = new Set<number>()
  const duplicates = new Set<number>()
  const outside: number[] = []
  for (const number of numbers) {
    if (seen.has(number)) duplicates.add(number)
    seen.add(number)
    if (!Number.isInteger(number) || number < 1 || number > lines.length) outside.push(number)
  }
  const problems: string[] = []
  if (duplicates.size) problems.push(`line${duplicates.size === 1 ? '' : 's'} ${[...duplicates].join(', ')} listed more than once`)
  if (outside.length) problems.push(`line${outside.length === 1 ? '' : 's'} ${outside.join(', ')} out of range (the file has ${lines.length} lines)`)
  if (problems.length) {
    throw new ToolRunError('invalid-lines', `Nothing was deleted: ${problems.join('; ')}.`, { status: 'invalid', hint: 'Give each line number once, from 1 to the number of lines.' })
  }
  const sorted = [...seen].sort((a, b) => a - b)
  const kept = lines.filter((_, index) => !seen.has(index + 1))
  return {
    text: joinLines(kept, trailing),
    summary: `deleted ${sorted.length} line${sorted.length === 1 ? '' : 's'} (${compactRanges(sorted)})`,
    first: Math.min(sorted[0], Math.max(kept.length, 1)),
    last: Math.min(sorted[0], Math.max(kept.length, 1)),
  }
}

/** `1, 2, 3, 7` → `1-3, 7`. */
export function compactRanges(sorted: number[]) {
  const parts: string[] = []
  for (let index = 0; index < sorted.length;) {
    let end = index
    while (end + 1 < sorted.length && sorted[end + 1] === sorted[end] + 1) end++
    parts.push(end === index ? String(sorted[index]) : `${sorted[index]}-${sorted[end]}`)
    index = end + 1
  }
  return parts.join(', ')
}
