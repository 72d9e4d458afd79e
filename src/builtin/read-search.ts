import { createReadStream, promises as fs } from 'fs'
import { createInterface } from 'readline'
import { ToolRunError, toolErrorText } from '../pipeline/errors'
import { PathGuard } from './path-guard'
import { ReadConfig } from './config'
import { guarded, isBinaryFile, quote } from './files'
import { TextPattern } from './regex'
import { displayPath, globFilter, walk } from './walk'

/** How `search` reports: matching lines, file names, or counts per file. */
export type SearchOutputMode = 'content' | 'files_with_matches' | 'count'

/** The `search` arguments of `read`. */
export interface SearchArgs {
  /** Text to find (a literal, or an RE2 regex with `regex: true`); matched line by line. */
  query?: string
  regex?: boolean
  ignore_case?: boolean
  /** Glob on paths relative to `path` (glob; `*.ts` matches at any depth). */
  pattern?: string
  /** Lines of context before and after each match (`context_before`/`context_after` win). */
  context?: number
  context_before?: number
  context_after?: number
  output_mode?: SearchOutputMode
  /** Fewer results than `maxSearchResults`. */
  head_limit?: number
}

/** Longest line shown, in characters; longer lines (minified code) are cut. */
const maxLineLength = 500

function clip(line: string) {
  return line.length > maxLineLength ? line.slice(0, maxLineLength) + '…' : line
}

interface FileHit {
  display: string
  /** Output lines of content mode (matches, context, `--` separators). */
  lines: string[]
  matches: number
}

/**
 * Searches one text file line by line (streamed). In content mode, stops
 * after `budget` matching lines (context lines do not count); otherwise
 * counts every match line.
 */
async function searchFile(path: string, display: string, matcher: TextPattern, args: SearchArgs, budget: number, signal?: AbortSignal): Promise<FileHit> {
  const before = args.context_before ?? args.context ?? 0
  const after = args.context_after ?? args.context ?? 0
  const content = (args.output_mode ?? 'content') === 'content'
  const hit: FileHit = { display, lines: [], matches: 0 }
  const recent: [number, string][] = []
  let lastShown = 0
  let afterLeft = 0
  let number = 0
  const stream = createReadStream(path, { encoding: 'utf8', signal })
  const reader = createInterface({ input: stream, crlfDelay: Infinity })
  const show = (line: number, text: string, separator: string) => {
    if ((before || after) && hit.lines.length && line > lastShown + 1) hit.lines.push('--')
    hit.lines.push(`${display}${separator}${line}${separator}${clip(text)}`)
    lastShown = line
  }
  try {
    for await (const text of reader) {
      number++
      const matched = matcher.test(text)
      if (matched) {
        hit.matches++
        if (!content) continue
        if (hit.matches > budget) break
        for (const [line, previous] of recent) if (line > lastShown) show(line, previous, '-')
        recent.length = 0
        show(number, text, ':')
        afterLeft = after
      } else if (content) {
        if (afterLeft > 0) {
          afterLeft--
          show(number, text, '-')
        } else if (before) {
          recent.push([number, text])
          if (recent.length > before) recent.shift()
        }
      }
    }
  } finally {
    reader.close()
    stream.destroy()
  }
  if (content) hit.matches = Math.min(hit.matches, budget + 1)
  return hit
}

/**
 * `read` with `operation: "search"` (issue "Built-in tools", item 2):
 * finds `query` in the file at `path`, or in every text file under the
 * directory at `path` whose relative path matches `pattern`, skipping
 * binary files, symbolic links and the `skipDirs` (`.git`,
 * `node_modules`). At most `head_limit` (capped by `maxSearchResults`)
 * results: matching lines in `content` mode, files otherwise.
 *
 * Output (paths relative to the workDir, absolute outside it):
 * - `content`: `path:line:text` for matches, `path-line-text` for
 *   context, `--` between separate blocks (grep's format);
 * - `files_with_matches`: one path per line;
 * - `count`: `path:matches` per file, then `Total: N matches in M files.`;
 * - a final `[…]` line when results were cut; `No matches for "query" in
 *   "path".` when nothing matched.
 */
export async function searchFiles(guard: PathGuard, args: SearchArgs & { path: string }, config: ReadConfig, signal?: AbortSignal): Promise<string> {
  if (typeof args.query !== 'string' || args.query === '') {
    throw new ToolRunError('missing-query', 'Search needs a "query": the text (or regex) to find.', { status: 'invalid' })
  }
  const matcher = new TextPattern(args.query, { regex: args.regex, ignoreCase: args.ignore_case })
  const mode = args.output_mode ?? 'content'
  const limit = Math.min(args.head_limit ?? config.maxSearchResults, config.maxSearchResults)
  const resolved = await guarded(guard, args.path)
  // The workspace itself is created on first use: until then nothing matches.
  if (!resolved.exists && resolved.relative === '.') return `No matches for ${quote(args.query)} in ${quote(args.path)}.`
  if (!resolved.exists) {
    throw new ToolRunError('not-found', `${quote(args.path)} does not exist.`, {
      hint: 'Check the path; it is relative to the workspace ("." is the workspace itself).',
      text: toolErrorText('not-found', { path: args.path }),
    })
  }
  const stat = await fs.stat(resolved.path)
  if (!stat.isDirectory() && !stat.isFile()) {
    // Opening a FIFO or a terminal for reading blocks a thread of libuv's small pool until a writer comes.
    throw new ToolRunError('not-a-file', `${quote(args.path)} is not a regular file (a FIFO, socket or device); it is not searched.`, {
      text: toolErrorText('not-a-file', { path: args.path }),
    })
  }
  const filter = globFilter(args.pattern)
  const candidates = async function* () {
    if (!stat.isDirectory()) {
      yield { path: resolved.path }
      return
    }
    for await (const entry of walk(resolved.path, { skipDirs: config.skipDirs, signal })) {
      if (entry.type === 'file' && filter(entry.relative)) yield { path: entry.path }
    }
  }

  const hits: FileHit[] = []
  let results = 0
  let more = false
  for await (const file of candidates()) {
    signal?.throwIfAborted()
    if (results >= limit) {
      more = true
      break
    }
    if (await isBinaryFile(file.path).catch(() => true)) continue
    const display = await displayPath(guard, file.path)
    const hit = await searchFile(file.path, display, matcher, { ...args, output_mode: mode }, limit - results, signal).catch(() => undefined)
    if (!hit?.matches) continue
    if (mode === 'content') {
      const shown = Math.min(hit.matches, limit - results)
      if (hit.matches > shown) more = true
      results += shown
    } else {
      results++
    }
    hits.push(hit)
  }

  if (!hits.length) return `No matches for ${quote(args.query)} in ${quote(args.path)}.`
  const lines: string[] = []
  if (mode === 'content') {
    const context = !!(args.context || args.context_before || args.context_after)
    hits.forEach((hit, index) => {
      if (index && context) lines.push('--')
      lines.push(...hit.lines)
    })
    if (more) lines.push('', `[showing the first ${results} matching lines; more exist. Narrow the search with path or pattern, or use output_mode "count".]`)
  } else if (mode === 'files_with_matches') {
    lines.push(...hits.map((hit) => hit.display))
    if (more) lines.push('', `[showing the first ${hits.length} files; more files match. Narrow the search with path or pattern.]`)
  } else {
    lines.push(...hits.map((hit) => `${hit.display}:${hit.matches}`))
    const total = hits.reduce((sum, hit) => sum + hit.matches, 0)
    lines.push(`Total: ${total} matches in ${hits.length} files.`)
    if (more) lines.push('', `[showing the first ${hits.length} files; more files match. Narrow the search with path or pattern.]`)
  }
  return lines.join('\n')
}
