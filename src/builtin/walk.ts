import { Dirent, promises as fs } from 'fs'
import { isAbsolute, join, relative, sep } from 'path'
import { compileGlob } from '../visibility/glob'
import { contains, PathGuard } from './path-guard'

/** The kind of a directory entry (symbolic links are not followed). */
export type EntryType = 'dir' | 'file' | 'link' | 'other'

/** One entry met by {@link walk}. */
export interface WalkEntry {
  /** Absolute path. */
  path: string
  /** Path relative to the walk's start, POSIX separators. */
  relative: string
  name: string
  type: EntryType
  /** 1 for the start directory's own entries. */
  depth: number
  /** A directory that was not entered because its name is in `skipDirs`. */
  skipped?: boolean
}

/** Options of {@link walk}. */
export interface WalkOptions {
  /** Deepest level entered; default unlimited. */
  maxDepth?: number
  /** Directory names not entered (e.g. `.git`, `node_modules`); they are still reported, `skipped`. */
  skipDirs?: string[]
  /** Directories before files within each directory (a tree listing); default: by name only. */
  dirsFirst?: boolean
  signal?: AbortSignal
}

function typeOf(dirent: Dirent): EntryType {
  if (dirent.isDirectory()) return 'dir'
  if (dirent.isFile()) return 'file'
  if (dirent.isSymbolicLink()) return 'link'
  return 'other'
}

/**
 * Walks a directory depth-first, entries of each directory sorted by name
 * (so results are stable), without following symbolic links. Unreadable
 * directories are skipped silently. Throws the signal's reason when aborted.
 */
export async function* walk(start: string, options: WalkOptions = {}): AsyncGenerator<WalkEntry> {
  const skip = new Set(options.skipDirs ?? [])
  const maxDepth = options.maxDepth ?? Infinity
  async function* visit(dir: string, depth: number): AsyncGenerator<WalkEntry> {
    options.signal?.throwIfAborted()
    let dirents: Dirent[]
    try {
      dirents = await fs.readdir(dir, { withFileTypes: true })
    } catch {
      return
    }
    dirents.sort((a, b) => {
      if (options.dirsFirst && a.isDirectory() !== b.isDirectory()) return a.isDirectory() ? -1 : 1
      return a.name < b.name ? -1 : a.name > b.name ? 1 : 0
    })
    for (const dirent of dirents) {
      const path = join(dir, dirent.name)
      const entry: WalkEntry = {
        path,
        relative: relative(start, path).split(sep).join('/'),
        name: dirent.name,
        type: typeOf(dirent),
        depth,
      }
      if (entry.type === 'dir' && skip.has(dirent.name)) entry.skipped = true
      yield entry
      if (entry.type === 'dir' && !entry.skipped && depth < maxDepth) yield* visit(path, depth + 1)
    }
  }
  yield* visit(start, 1)
}

/**
 * A glob filter on relative POSIX paths (`**` recursion, dot files
 * included; {@link compileGlob}: the model writes the pattern, so it runs
 * in linear time). A pattern without `/` matches the base name at any
 * depth (`*.ts` finds `src/a/b.ts`). No pattern matches everything.
 */
export function globFilter(pattern: string | undefined): (relativePath: string) => boolean {
  if (!pattern) return () => true
  return compileGlob(pattern, { basename: !pattern.includes('/') })
}

/**
 * How a path is shown to the model: relative to the workDir when inside it
 * (so it can be passed back), absolute otherwise (extra and read-only dirs).
 */
export async function displayPath(guard: PathGuard, absolute: string) {
  const [work] = await guard.getRoots()
  if (contains(work.path, absolute)) {
    const rel = relative(work.path, absolute).split(sep).join('/')
    return rel || '.'
  }
  return isAbsolute(absolute) ? absolute : join(work.path, absolute)
}
