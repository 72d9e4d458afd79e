import { posix } from 'path'

/** Where the bash tool's commands are expected to stay (absolute POSIX paths). */
export interface Workspace {
  /** The workDir: commands run there. */
  workDir: string
  /** More directories a command may name without counting as reaching out (the extra dirs, the outputs folder). */
  allowedDirs: string[]
}

/** Device files that read or write nothing of the system (`> /dev/null`, `cat /dev/stdin`). */
const harmlessDevices = /^\/dev\/(null|zero|random|urandom|stdin|stdout|stderr|tty|fd\/\d+)$/

/** Whether `path` (normalised, absolute) is `dir` or inside it. */
function within(path: string, dir: string) {
  if (dir === '/') return true
  return path === dir || (path.startsWith(dir) && path[dir.length] === '/')
}

/**
 * Whether one literal word of a command names a path outside the
 * workspace: it starts with `~` (a home directory), it is relative and
 * its `..` segments climb above the workDir (`../x`, `a/../../x`, but not
 * `a/../x`), or it is absolute and in neither the workDir nor an allowed
 * dir (harmless devices such as `/dev/null` excepted). For an option
 * (`--file=../x`) or a `key=value` word (`if=/etc/passwd`) the value after
 * `=` is judged.
 *
 * A heuristic on the words as written (issue "Built-in tools", item 6, and
 * the zh-CN newcomer report): it raises the risk an approver sees, it does
 * not confine anything. It cannot see paths built at run time (`$HOME/x`,
 * `$(pwd)/..`), a `cd` earlier in the line, symbolic links, or options
 * that glue a path to a letter (`-I../include`); it may flag a word that
 * only looks like a path (a regex `/x/`).
 */
export function leavesWorkspace(word: string, workspace: Workspace): boolean {
  let path = word
  const eq = path.indexOf('=')
  if (path[0] === '-') {
    if (eq === -1) return false
    path = path.slice(eq + 1)
  } else if (eq > 0 && !path.slice(0, eq).includes('/')) {
    path = path.slice(eq + 1)
  }
  const first = path[0]
  if (first === '~') return true
  if (first === '/') {
    const normal = posix.normalize(path)
    if (harmlessDevices.test(normal)) return false
    return !within(normal, workspace.workDir) && !workspace.allowedDirs.some((dir) => within(normal, dir))
  }
  if (first === undefined || !path.includes('..')) return false
  const normal = posix.normalize(path)
  return normal === '..' || normal.startsWith('../')
}

/** The distinct literal words of a command that leave the workspace ({@link leavesWorkspace}), in order. */
export function outsidePaths(words: readonly string[], workspace: Workspace): string[] {
  const found: string[] = []
  for (const word of words) {
    if (word && leavesWorkspace(word, workspace) && !found.includes(word)) found.push(word)
  }
  return found
}

/** Normalises the dirs of a workspace once (no trailing slash, no `..`), so each check is cheap. */
export function normalizeWorkspace(workDir: string, allowedDirs: readonly string[] = []): Workspace {
  const clean = (dir: string) => {
    const normal = posix.normalize(dir)
    return normal.length > 1 && normal.endsWith('/') ? normal.slice(0, -1) : normal
  }
  return { workDir: clean(workDir), allowedDirs: allowedDirs.map(clean) }
}
