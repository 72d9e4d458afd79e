import { promises as fs } from 'fs'
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'path'

/**
 * Why a path was refused. Stable: tools return it to the model and tests
 * assert it.
 *
 * - `empty-path`: not a string, or only whitespace;
 * - `nul-byte`: contains `\0` (the OS would cut the path there);
 * - `too-long`: longer than `maxPathLength`, or the OS says ENAMETOOLONG;
 * - `outside-workdir`: resolves outside every root (`..`, an absolute path
 *   elsewhere, a symbolic link pointing out, a prefix-sibling such as
 *   `/w/work-evil` next to `/w/work`);
 * - `read-only`: a write into a read-only dir;
 * - `unresolvable`: the OS could not resolve it (symbolic link loop, no
 *   permission to search a directory).
 */
export type PathGuardCode =
  | 'empty-path'
  | 'nul-byte'
  | 'too-long'
  | 'outside-workdir'
  | 'read-only'
  | 'unresolvable'

/**
 * A refused path. `code` is stable, `path` is the input exactly as the caller
 * gave it, `message` is plain English for the model or a user. Messages never
 * show where an outside symbolic link points, only that it points outside.
 */
export class PathGuardError extends Error {
  name = 'PathGuardError'

  constructor(public code: PathGuardCode, public path: string, message: string) {
    super(message)
  }
}

/** Options of {@link PathGuard}. */
export interface PathGuardOptions {
  /** Absolute work directory; relative inputs resolve against it. Read and write. */
  workDir: string
  /** More absolute directories allowed for reading and writing. */
  extraDirs?: string[]
  /** Absolute directories allowed for reading only. */
  readOnlyDirs?: string[]
  /** Longest accepted input, in characters (UTF-16 code units). Default 4096. */
  maxPathLength?: number
}

/** Options of {@link PathGuard.resolve}. */
export interface ResolveOptions {
  /** The caller means to create, change or delete the path: read-only dirs refuse it. */
  write?: boolean
}

/** A root the guard confines paths to, after realpath. */
export interface GuardRoot {
  /** Absolute real path of the directory. */
  path: string
  readOnly: boolean
  /** `true` for the workDir. */
  workDir: boolean
}

/** A path the guard accepted. */
export interface ResolvedPath {
  /**
   * Absolute real path. When the target does not exist yet: the real path of
   * its nearest existing ancestor plus the remaining (normalised) tail.
   */
  path: string
  /** `path` relative to `root`, POSIX separators; `.` for the root itself. */
  relative: string
  /** Real path of the deepest root that contains `path`. */
  root: string
  /** Whether `path` existed at resolve time. */
  exists: boolean
  /** Whether `root` is a read-only dir. */
  readOnly: boolean
}

/** Default `maxPathLength`, in characters. */
export const DEFAULT_MAX_PATH_LENGTH = 4096

/** Symbolic links followed for one path before giving up (Linux MAXSYMLINKS). */
const MAX_LINKS = 40

/**
 * Whether `path` is `root` or inside it. Both must be absolute and already
 * resolved the same way (both real, or both lexical); nothing touches the disk.
 * Separator-aware, so `/w/work-evil` is not inside `/w/work`.
 */
export function contains(root: string, path: string): boolean {
  const rel = relative(root, path)
  return rel === '' || (rel !== '..' && !rel.startsWith('..' + sep) && !isAbsolute(rel))
}

/** Turns a relative path into POSIX separators (`.` when empty). */
function toPosix(rel: string): string {
  return rel === '' ? '.' : rel.split(sep).join('/')
}

/** Quotes a caller's input for a message: JSON-escaped, cut to 200 characters. */
function quote(input: string): string {
  return JSON.stringify(input.length > 200 ? input.slice(0, 200) + '…' : input)
}

interface RootEntry extends GuardRoot {
  exists: boolean
}

interface RealPath {
  path: string
  exists: boolean
}

/**
 * Resolves every existing component of an absolute, normalised path like the
 * OS would: `fs.realpath` on the path, or, when it does not exist, on its
 * nearest existing ancestor, the missing tail appended. A dangling symbolic
 * link on the way is followed to its target (opening the path would follow
 * it too), so a link to a missing outside dir cannot pass as an inside path.
 * Throws the `fs` error for anything but ENOENT / ENOTDIR (ELOOP, EACCES,
 * ENAMETOOLONG), or `Error & { code: 'ELOOP' }` after {@link MAX_LINKS} links.
 */
async function realpathLoose(abs: string, links = 0): Promise<RealPath> {
  const tail: string[] = []
  let current = abs
  for (;;) {
    try {
      const real = await fs.realpath(current)
      return { path: join(real, ...tail), exists: tail.length === 0 }
    } catch (error: any) {
      if (error?.code !== 'ENOENT' && error?.code !== 'ENOTDIR') throw error
    }
    const stats = await fs.lstat(current).catch(() => undefined)
    if (stats?.isSymbolicLink()) {
      if (links >= MAX_LINKS) throw Object.assign(new Error('too many symbolic links'), { code: 'ELOOP' })
      const target = await fs.readlink(current)
      // A relative target is relative to the real directory holding the link.
      const parent = await realpathLoose(dirname(current), links + 1)
      return realpathLoose(join(resolve(parent.path, target), ...tail), links + 1)
    }
    const parent = dirname(current)
    if (parent === current) return { path: join(current, ...tail), exists: false }
    tail.unshift(basename(current))
    current = parent
  }
}

/**
 * Confines paths to a work directory and a few allowed directories. Every
 * file tool (read, write, edit, backups) asks it before touching the disk
 * (DESIGN.md "Built-in tools": no escape by `..`, absolute paths, links or
 * prefix-siblings).
 *
 * Rules:
 * - a relative input resolves against the workDir; an absolute one is taken
 *   as is; both are normalised lexically first, so no `..` survives;
 * - symbolic links are then resolved with realpath on the path, or on its
 *   nearest existing ancestor with the missing tail appended (dangling links
 *   followed to their targets);
 * - the resulting real path must lie inside a root (the workDir, an extra
 *   dir, a read-only dir, each realpath-resolved once): an absolute input
 *   outside but linking inside is accepted, a path inside linking outside is
 *   not;
 * - the deepest root containing the path decides whether it is read-only
 *   (a read-only dir inside the workDir stays read-only, a dir listed as
 *   both is read-only);
 * - `\0` anywhere is refused; backslashes are ordinary characters on POSIX;
 *   `~` is not expanded.
 *
 * TOCTOU: the guard checks the disk as it is at call time. A caller must
 * then open `ResolvedPath.path`, never the original input, so a link swapped
 * in between cannot redirect the open. It cannot stop a process that can
 * already write inside the workDir from replacing a directory of the
 * resolved path with a link right after the check: it is a guard for model
 * input, not a sandbox.
 */
export class PathGuard {
  readonly workDir: string
  readonly extraDirs: string[]
  readonly readOnlyDirs: string[]
  readonly maxPathLength: number
  private roots?: Promise<RootEntry[]>

  /**
   * `options.workDir`, `extraDirs` and `readOnlyDirs` must be absolute (the
   * caller resolves them against Koishi's baseDir); throws `TypeError`
   * otherwise. Nothing touches the disk until the first `resolve`; use
   * {@link PathGuard.create} to make sure the workDir exists.
   */
  constructor(options: PathGuardOptions) {
    const dirs = [options.workDir, ...options.extraDirs ?? [], ...options.readOnlyDirs ?? []]
    for (const dir of dirs) {
      if (typeof dir !== 'string' || !isAbsolute(dir) || dir.includes('\0')) {
        throw new TypeError(`path guard directory must be an absolute path: ${JSON.stringify(dir)}`)
      }
    }
    this.workDir = resolve(options.workDir)
    this.extraDirs = (options.extraDirs ?? []).map((dir) => resolve(dir))
    this.readOnlyDirs = (options.readOnlyDirs ?? []).map((dir) => resolve(dir))
    this.maxPathLength = options.maxPathLength ?? DEFAULT_MAX_PATH_LENGTH
  }

  /**
   * Creates the workDir (`mkdir -p`) and returns a guard with its roots
   * already resolved. Throws the `fs` error if the directory cannot be made,
   * and `TypeError` for non-absolute directories.
   */
  static async create(options: PathGuardOptions): Promise<PathGuard> {
    const guard = new PathGuard(options)
    await fs.mkdir(guard.workDir, { recursive: true })
    await guard.getRoots()
    return guard
  }

  /**
   * The roots after realpath, workDir first, then extra dirs, then read-only
   * dirs. Resolved once and cached, as soon as the workDir exists; a missing
   * extra or read-only dir resolves through its nearest existing ancestor.
   * Throws the `fs` error if a root cannot be resolved (ELOOP, EACCES).
   */
  async getRoots(): Promise<GuardRoot[]> {
    const entries = await this.loadRoots()
    return entries.map(({ exists, ...root }) => root)
  }

  /** The roots with whether each existed; cached once the workDir exists. */
  private loadRoots(): Promise<RootEntry[]> {
    if (this.roots) return this.roots
    const roots = this.realRoots()
    this.roots = roots
    const forget = () => {
      if (this.roots === roots) this.roots = undefined
    }
    roots.then(([work]) => work.exists || forget(), forget)
    return roots
  }

  private async realRoots(): Promise<RootEntry[]> {
    const entries = [
      { dir: this.workDir, readOnly: false, workDir: true },
      ...this.extraDirs.map((dir) => ({ dir, readOnly: false, workDir: false })),
      ...this.readOnlyDirs.map((dir) => ({ dir, readOnly: true, workDir: false })),
    ]
    return Promise.all(entries.map(async ({ dir, readOnly, workDir }) => {
      const real = await realpathLoose(dir)
      return { path: real.path, exists: real.exists, readOnly, workDir }
    }))
  }

  /**
   * Resolves `input` (relative to the workDir, or absolute) to a real path
   * inside a root: `{ path, relative, root, exists, readOnly }`, see
   * {@link ResolvedPath}. With `options.write`, a path in a read-only dir is
   * refused. Rejects with {@link PathGuardError} (`empty-path`, `nul-byte`,
   * `too-long`, `outside-workdir`, `read-only`, `unresolvable`); other `fs`
   * errors propagate unchanged.
   */
  async resolve(input: string, options: ResolveOptions = {}): Promise<ResolvedPath> {
    if (typeof input !== 'string' || input.trim() === '') {
      throw new PathGuardError('empty-path', typeof input === 'string' ? input : String(input),
        'The path is empty: give a file or directory path, relative to the work directory.')
    }
    if (input.includes('\0')) {
      throw new PathGuardError('nul-byte', input,
        `The path ${quote(input)} contains a NUL byte (\\0), which no file name may contain.`)
    }
    if (input.length > this.maxPathLength) {
      throw new PathGuardError('too-long', input,
        `The path is ${input.length} characters long; at most ${this.maxPathLength} are accepted.`)
    }

    const roots = await this.loadRoots()
    const lexical = resolve(roots[0].path, input)
    let real: RealPath
    try {
      real = await realpathLoose(lexical)
    } catch (error) {
      throw this.fsError(input, error)
    }

    const root = deepestRoot(roots, real.path)
    if (!root) throw this.outside(input, lexical, roots)
    if (options.write && root.readOnly) {
      throw new PathGuardError('read-only', input,
        `The path ${quote(input)} is in a read-only directory: it may be read but not written.`)
    }
    return {
      path: real.path,
      relative: toPosix(relative(root.path, real.path)),
      root: root.path,
      exists: real.exists,
      readOnly: root.readOnly,
    }
  }

  /** The refusal for a path whose real path is outside every root, with the likely reason. */
  private outside(input: string, lexical: string, roots: GuardRoot[]): PathGuardError {
    const configured = [this.workDir, ...this.extraDirs, ...this.readOnlyDirs]
    const lexicallyInside = roots.some((root) => contains(root.path, lexical))
      || configured.some((dir) => contains(dir, lexical))
    let reason: string
    if (lexicallyInside) {
      reason = 'it goes through a symbolic link that points outside the work directory'
    } else if (isAbsolute(input)) {
      reason = 'this absolute path is outside the work directory and every allowed directory'
    } else {
      reason = 'its ".." segments climb out of the work directory'
    }
    return new PathGuardError('outside-workdir', input,
      `The path ${quote(input)} is refused: ${reason}. Use a path inside the work directory `
      + '(relative paths are resolved against it).')
  }

  /** Maps an `fs` error met while resolving to a {@link PathGuardError}, or returns it unchanged. */
  private fsError(input: string, error: any): Error {
    switch (error?.code) {
      case 'ENAMETOOLONG':
        return new PathGuardError('too-long', input,
          `The path ${quote(input)} is too long for the file system.`)
      case 'ELOOP':
        return new PathGuardError('unresolvable', input,
          `The path ${quote(input)} cannot be resolved: its symbolic links form a loop or chain too long.`)
      case 'EACCES':
      case 'EPERM':
        return new PathGuardError('unresolvable', input,
          `The path ${quote(input)} cannot be resolved: permission denied on a directory on the way.`)
      default:
        return error
    }
  }
}

/** The deepest root containing `path`; on equal depth a read-only root wins. */
function deepestRoot(roots: GuardRoot[], path: string): GuardRoot | undefined {
  let best: GuardRoot | undefined
  for (const root of roots) {
    if (!contains(root.path, path)) continue
    if (!best || root.path.length > best.path.length
      || (root.path.length === best.path.length && root.readOnly)) {
      best = root
    }
  }
  return best
}
