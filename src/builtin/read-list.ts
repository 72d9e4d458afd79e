import { promises as fs, Stats } from 'fs'
import { ToolRunError, toolErrorText } from '../pipeline/errors'
import { PathGuard } from './path-guard'
import { ReadConfig } from './config'
import { guarded, quote } from './files'
import { globFilter, walk, WalkEntry } from './walk'

/** The `list` arguments of `read`. */
export interface ListArgs {
  /** Levels to descend, 1 (default) to 5. */
  depth?: number
  /** Glob on entry paths relative to `path`; directories on the way are still entered. */
  pattern?: string
}

/** `2025-01-02T03:04:05Z`: UTC, to the second. */
function modified(stat: Stats | undefined) {
  return stat ? stat.mtime.toISOString().replace(/\.\d{3}Z$/, 'Z') : '-'
}

async function describeEntry(entry: WalkEntry) {
  const stat = await fs.lstat(entry.path).catch(() => undefined)
  let type: string = entry.type
  let name = entry.relative
  if (entry.type === 'dir') name += '/'
  if (entry.type === 'link') {
    // Say what the link leads to, never where (it may point outside the workspace).
    const target = await fs.stat(entry.path).catch(() => undefined)
    type = target?.isDirectory() ? 'link→dir' : target ? 'link→file' : 'link→missing'
  }
  if (entry.skipped) name += ' (not listed: skipped by default)'
  const size = entry.type === 'file' && stat ? String(stat.size) : '-'
  return `${type}\t${size}\t${modified(stat)}\t${name}`
}

/**
 * `read` with `operation: "list"` (issue "Built-in tools", item 2): the
 * entries of the directory at `path`, `depth` levels deep, directories
 * first at each level then by name, at most `maxListEntries`. Symbolic
 * links are shown, not followed; `skipDirs` are shown but not entered.
 *
 * Output: a header line `Directory "<path>": N entries (type, size in
 * bytes, modified UTC, name)`, then one tab-separated line per entry:
 * `dir|file|link→dir|link→file|link→missing|other`, the size (`-` for
 * non-files), the modification time `YYYY-MM-DDTHH:MM:SSZ`, and the path
 * relative to `path` (directories end with `/`). A final `[…]` line says
 * when entries were cut. An empty directory: `Directory "<path>" is empty.`
 */
export async function listDirectory(guard: PathGuard, args: ListArgs & { path: string }, config: ReadConfig, signal?: AbortSignal): Promise<string> {
  const resolved = await guarded(guard, args.path)
  // The workspace itself is created on first use: until then it is empty.
  if (!resolved.exists && resolved.relative === '.') return `Directory ${quote(args.path)} is empty.`
  if (!resolved.exists) {
    throw new ToolRunError('not-found', `${quote(args.path)} does not exist.`, {
      hint: 'Check the path; it is relative to the workspace ("." is the workspace itself).',
      text: toolErrorText('not-found', { path: args.path }),
    })
  }
  const stat = await fs.stat(resolved.path)
  if (!stat.isDirectory()) {
    throw new ToolRunError('not-a-directory', `${quote(args.path)} is a file, not a directory.`, {
      hint: 'Use operation "file" to read it.',
      text: toolErrorText('not-a-directory', { path: args.path }),
    })
  }
  const filter = globFilter(args.pattern)
  const entries: WalkEntry[] = []
  let more = false
  for await (const entry of walk(resolved.path, { maxDepth: args.depth ?? 1, skipDirs: config.skipDirs, dirsFirst: true, signal })) {
    if (!filter(entry.relative)) continue
    if (entries.length >= config.maxListEntries) {
      more = true
      break
    }
    entries.push(entry)
  }
  if (!entries.length) {
    return args.pattern
      ? `Nothing in ${quote(args.path)} matches ${quote(args.pattern)}.`
      : `Directory ${quote(args.path)} is empty.`
  }
  const lines = [`Directory ${quote(args.path)}: ${entries.length} entries (type, size in bytes, modified UTC, name)`]
  for (const entry of entries) lines.push(await describeEntry(entry))
  if (more) lines.push('', `[showing the first ${entries.length} entries; more exist. Use a pattern or a smaller depth.]`)
  return lines.join('\n')
}
