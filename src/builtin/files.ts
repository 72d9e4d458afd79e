import { createReadStream, promises as fs } from 'fs'
import { createInterface } from 'readline'
import { ToolRunError, toolErrorText } from '../pipeline/errors'
import { PathGuard, PathGuardError, ResolvedPath } from './path-guard'

/** Bytes inspected to decide whether a file is binary. */
const sniffBytes = 8000

/**
 * Resolves a path through the guard, turning a refusal into a `denied`
 * tool failure that keeps the guard's code (`outside-workdir`, `nul-byte`,
 * …) and message. Other `fs` errors propagate.
 */
export async function guarded(guard: PathGuard, path: string, options: { write?: boolean } = {}): Promise<ResolvedPath> {
  try {
    return await guard.resolve(path, options)
  } catch (error) {
    if (error instanceof PathGuardError) {
      throw new ToolRunError(error.code, error.message, {
        status: 'denied',
        hint: 'Use a path inside the workspace, relative to it.',
        text: { path: `chatluna-tools.path.${error.code}`, params: { path: error.path } },
      })
    }
    throw error
  }
}

/** Whether the first bytes of a file look binary (a NUL byte, as git and grep decide). */
export async function isBinaryFile(path: string) {
  const handle = await fs.open(path, 'r')
  try {
    const buffer = Buffer.alloc(sniffBytes)
    const { bytesRead } = await handle.read(buffer, 0, sniffBytes, 0)
    return isBinaryBuffer(buffer.subarray(0, bytesRead))
  } finally {
    await handle.close()
  }
}

/** Whether bytes look binary: a NUL byte in the first {@link sniffBytes}. */
export function isBinaryBuffer(buffer: Buffer) {
  return buffer.subarray(0, sniffBytes).includes(0)
}

/**
 * Reads lines `from`–`to` (1-based, inclusive) of a text file by streaming
 * it, so large files never sit in memory whole. Returns the lines and the
 * file's total line count. Line endings (LF or CRLF) are removed.
 */
export async function readLines(path: string, from: number, to: number, signal?: AbortSignal) {
  const lines: string[] = []
  let total = 0
  const stream = createReadStream(path, { encoding: 'utf8', signal })
  const reader = createInterface({ input: stream, crlfDelay: Infinity })
  try {
    for await (const line of reader) {
      total++
      if (total >= from && total <= to) lines.push(line)
    }
  } finally {
    reader.close()
    stream.destroy()
  }
  return { lines, total }
}

/** Formats numbered lines the way `cat -n` does: right-aligned number, a tab, the line. */
export function numberLines(lines: string[], first: number) {
  const width = String(first + lines.length - 1).length
  return lines.map((line, index) => `${String(first + index).padStart(width)}\t${line}`).join('\n')
}

/** A byte count for people: `512 B`, `1.5 KB`, `2.0 MB`. */
export function formatSize(bytes: number) {
  if (bytes < 1024) return `${bytes} B`
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`
  if (bytes < 1024 * 1024 * 1024) return `${(bytes / 1024 / 1024).toFixed(1)} MB`
  return `${(bytes / 1024 / 1024 / 1024).toFixed(1)} GB`
}

/** Quotes a path or text for a message: JSON-escaped, cut to 200 characters. */
export function quote(text: string) {
  return JSON.stringify(text.length > 200 ? text.slice(0, 200) + '…' : text)
}

/**
 * Stats an existing path the tool means to change as a regular file.
 * Throws `ToolRunError` `is-directory` for a directory and `not-a-file` for
 * anything else but a regular file (device, socket, FIFO).
 */
export async function assertRegularFile(resolved: ResolvedPath, given: string) {
  const stat = await fs.stat(resolved.path)
  if (stat.isDirectory()) {
    throw new ToolRunError('is-directory', `${quote(given)} is a directory, not a file.`, {
      hint: 'Give the path of a file inside it.',
      text: toolErrorText('is-directory', { path: given }),
    })
  }
  if (!stat.isFile()) throw new ToolRunError('not-a-file', `${quote(given)} is not a regular file.`, { text: toolErrorText('not-a-file', { path: given }) })
  return stat
}
