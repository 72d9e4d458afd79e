import { promises as fs } from 'fs'
import { createHash } from 'crypto'
import { basename, join, resolve } from 'path'
import { ToolScope } from '../types'
import { contains } from './path-guard'
import { atomicWrite } from './atomic'
import { fnv1a } from '../skills/fnv'

/** One saved version of a file. */
export interface BackupEntry {
  /** Stable id the model passes to `restore`: `YYYYMMDD-HHMMSS-mmm-<n>`. */
  id: string
  /** Absolute real path of the file it is a copy of. */
  path: string
  /** When it was taken (ms since epoch). */
  time: number
  size: number
  /** Absolute path of the copy. */
  file: string
}

/** Longest session folder name, in characters. */
const maxKeyLength = 100

/** Turns one scope field into file-name-safe text: only `[A-Za-z0-9_-]` survive. */
function safePart(value: string | undefined) {
  const text = (value ?? '').replace(/[^A-Za-z0-9_-]/g, '_')
  return text || '-'
}

/**
 * The backup folder name of a scope (issue "Built-in tools", item 4:
 * "the session key is sanitised so it can never leave that folder"):
 * platform, channel and user (from the scope, else its chat session) and
 * agent, each reduced to `[A-Za-z0-9_-]`
 * (no dots, no separators), joined by `.`, cut to {@link maxKeyLength}
 * characters, followed by an FNV-1a hash of the raw values so sessions
 * whose names sanitise alike stay apart. Never `.`, `..` or a path.
 */
export function sessionKey(scope: ToolScope): string {
  const { session } = scope
  const raw = [
    scope.platform ?? session?.platform,
    scope.channelId ?? session?.channelId,
    scope.userId ?? session?.userId,
    scope.agent,
  ].map((value) => (typeof value === 'string' ? value : value === undefined || value === null ? '' : String(value)))
  const readable = raw.map(safePart).join('.').slice(0, maxKeyLength)
  return `${readable}.${fnv1a(raw.join('\0')).toString(16).padStart(8, '0')}`
}

/** `YYYYMMDD-HHMMSS-mmm` in UTC. */
function stamp(time: number) {
  const iso = new Date(time).toISOString()
  return `${iso.slice(0, 10).replace(/-/g, '')}-${iso.slice(11, 19).replace(/:/g, '')}-${iso.slice(20, 23)}`
}

/**
 * Backups of edited files, per session (RuleGo seed, "会话隔离的备份管理"):
 * `<root>/<session key>/<file name>-<hash of its path>/<id>.bak`, with a
 * `source.json` naming the original path. At most `maxHistory` backups per
 * file and session; older ones are deleted. Copies are written atomically
 * with mode `0600` (they may hold anything the file held).
 */
export class BackupStore {
  private counter = 0

  /** `root`: absolute backups folder (`<baseDir>/data/chatluna-tools/backups`). */
  constructor(private root: () => string, private maxHistory: () => number) {}

  /**
   * The folder of a session, checked to lie strictly inside the backups
   * folder (the path guard's `contains`); throws an `Error` otherwise,
   * which the sanitised key makes impossible.
   */
  sessionDir(scope: ToolScope): string {
    const root = resolve(this.root())
    const dir = resolve(root, sessionKey(scope))
    if (dir === root || !contains(root, dir)) throw new Error(`backup folder of this session would leave ${root}`)
    return dir
  }

  private fileDir(scope: ToolScope, path: string) {
    const hash = createHash('sha256').update(path).digest('hex').slice(0, 16)
    const name = basename(path).replace(/[^A-Za-z0-9_.-]/g, '_').replace(/^\.+/, '_').slice(0, 60)
    return join(this.sessionDir(scope), `${name}-${hash}`)
  }

  /** Saves `content` as the newest backup of `path` (absolute real path) and prunes old ones. */
  async save(scope: ToolScope, path: string, content: Buffer): Promise<BackupEntry> {
    const dir = this.fileDir(scope, path)
    await fs.mkdir(dir, { recursive: true, mode: 0o700 })
    await fs.writeFile(join(dir, 'source.json'), JSON.stringify({ path }) + '\n', { mode: 0o600 })
    const time = Date.now()
    const id = `${stamp(time)}-${++this.counter}`
    const file = join(dir, `${id}.bak`)
    await atomicWrite(file, content, { mode: 0o600 })
    await this.prune(dir)
    return { id, path, time, size: content.length, file }
  }

  /** Backups of one file (or of every file when `path` is omitted), newest first. */
  async list(scope: ToolScope, path?: string): Promise<BackupEntry[]> {
    const dirs = path ? [this.fileDir(scope, path)] : await this.fileDirs(scope)
    const entries: BackupEntry[] = []
    for (const dir of dirs) {
      const source = await fs.readFile(join(dir, 'source.json'), 'utf8').then((text) => JSON.parse(text).path as string, () => undefined)
      if (!source) continue
      for (const name of await fs.readdir(dir).catch(() => [] as string[])) {
        if (!name.endsWith('.bak')) continue
        const file = join(dir, name)
        const stat = await fs.stat(file).catch(() => undefined)
        if (!stat) continue
        entries.push({ id: name.slice(0, -4), path: source, time: stat.mtimeMs, size: stat.size, file })
      }
    }
    return entries.sort((a, b) => compareIds(b.id, a.id))
  }

  private async fileDirs(scope: ToolScope) {
    const session = this.sessionDir(scope)
    const names = await fs.readdir(session).catch(() => [] as string[])
    return names.map((name) => join(session, name))
  }

  private async prune(dir: string) {
    const names = (await fs.readdir(dir)).filter((name) => name.endsWith('.bak'))
    names.sort((a, b) => compareIds(b.slice(0, -4), a.slice(0, -4)))
    for (const name of names.slice(this.maxHistory())) {
      await fs.unlink(join(dir, name)).catch(() => {})
    }
  }
}

/** Orders backup ids by time, then by their sequence number. */
function compareIds(a: string, b: string) {
  const [timeA, seqA] = [a.slice(0, 19), Number(a.slice(20))]
  const [timeB, seqB] = [b.slice(0, 19), Number(b.slice(20))]
  if (timeA !== timeB) return timeA < timeB ? -1 : 1
  return seqA - seqB
}
