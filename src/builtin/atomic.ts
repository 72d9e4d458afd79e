import { promises as fs } from 'fs'
import { randomBytes } from 'crypto'
import { basename, dirname, join } from 'path'

/** Options of {@link atomicWrite}. */
export interface AtomicWriteOptions {
  /**
   * Permission bits of the result (e.g. `0o644`). Default: the bits of the
   * file being replaced, or `0o666` minus the umask for a new file.
   */
  mode?: number
  /** Stops the write before the rename; the target is then left untouched. */
  signal?: AbortSignal
  /**
   * Fail with `EEXIST` instead of replacing a file that appeared meanwhile
   * (the temp file is hard-linked to the target instead of renamed).
   */
  exclusive?: boolean
}

/** Bytes written per `write` call, so an abort is noticed between chunks. */
const chunkSize = 1024 * 1024

/**
 * A temp file name in the same directory as `path`, so the final rename
 * never crosses file systems: `.<name>.<random>.tmp` (the name cut so the
 * result stays under the usual 255-byte limit).
 */
export function tempPathFor(path: string) {
  const name = basename(path).slice(0, 200)
  return join(dirname(path), `.${name}.${randomBytes(6).toString('hex')}.tmp`)
}

/**
 * Replaces (or creates) the file at `path` atomically (RuleGo seed, "使用原子
 * 写入确保数据安全"): the data goes to a temp file in the same directory,
 * is flushed to disk, gets the permission bits (and, when running as root,
 * the owner) of the file it replaces, and is then renamed over `path`.
 * Readers see the old content or the new one, never a mix; a crash, a
 * failure or an abort before the rename leaves the target as it was (a
 * failed or aborted write removes its temp file; a killed process may leave
 * one behind, named `.<name>.<random>.tmp`).
 *
 * `path` must be the real path (symbolic links resolved, as the path guard
 * returns it): the link itself is kept and its target replaced. Hard links
 * to the old file keep the old content. Throws the `fs` error, or the
 * signal's reason when aborted.
 */
export async function atomicWrite(path: string, data: string | Buffer, options: AtomicWriteOptions = {}) {
  const { signal } = options
  signal?.throwIfAborted()
  const existing = await fs.stat(path).catch((error) => {
    if (error?.code === 'ENOENT') return undefined
    throw error
  })
  const buffer = typeof data === 'string' ? Buffer.from(data, 'utf8') : data
  const temp = tempPathFor(path)
  const handle = await fs.open(temp, 'wx', 0o666)
  let renamed = false
  try {
    try {
      for (let offset = 0; offset < buffer.length; offset += chunkSize) {
        signal?.throwIfAborted()
        await handle.write(buffer, offset, Math.min(chunkSize, buffer.length - offset), offset)
      }
      await handle.sync()
      const mode = options.mode ?? (existing ? existing.mode & 0o7777 : undefined)
      if (mode !== undefined) await handle.chmod(mode)
      if (existing && process.getuid?.() === 0 && (existing.uid !== 0 || existing.gid !== 0)) {
        await handle.chown(existing.uid, existing.gid).catch(() => {})
      }
    } finally {
      await handle.close()
    }
    signal?.throwIfAborted()
    if (options.exclusive) {
      await publishExclusive(temp, path)
    } else {
      await fs.rename(temp, path)
    }
    renamed = true
    await syncDirectory(dirname(path))
  } finally {
    if (!renamed) await fs.unlink(temp).catch(() => {})
  }
}

/**
 * Makes `temp` appear at `path` only if nothing is there: a hard link
 * (fails with `EEXIST`), then the temp name is removed. File systems
 * without hard links fall back to a check and a rename.
 */
async function publishExclusive(temp: string, path: string) {
  try {
    await fs.link(temp, path)
  } catch (error) {
    if (!['EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'ENOSYS', 'EXDEV'].includes(error?.code)) throw error
    if (await fs.lstat(path).then(() => true, () => false)) throw Object.assign(new Error(`EEXIST: file already exists, '${path}'`), { code: 'EEXIST' })
    await fs.rename(temp, path)
    return
  }
  await fs.unlink(temp).catch(() => {})
}

/** Flushes a directory entry change to disk where the platform allows it (best effort). */
async function syncDirectory(dir: string) {
  if (process.platform === 'win32') return
  const handle = await fs.open(dir, 'r').catch(() => undefined)
  if (!handle) return
  try {
    await handle.sync()
  } catch {
  } finally {
    await handle.close()
  }
}
