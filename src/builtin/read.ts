import { createReadStream, promises as fs } from 'fs'
import { createInterface } from 'readline'
import { Context, Schema } from 'koishi'
import { ToolDefinition } from '../types'
import { ToolRunError } from '../pipeline/errors'
import { PathGuard, PathGuardError } from './path-guard'

/** Options of the built-in `read` tool (RuleGo seed, "read — 记忆"). */
export interface ReadConfig {
  enabled: boolean
  /** Most lines one call returns (seed default 1000). */
  maxReadLines: number
}

export const ReadConfig: Schema<ReadConfig> = Schema.object({
  enabled: Schema.boolean().default(true),
  maxReadLines: Schema.natural().min(1).default(1000),
})

/** Arguments of `read` in file mode. */
export interface ReadArgs {
  path: string
  line_from?: number
  line_to?: number
}

/** Bytes inspected to decide whether a file is binary. */
const sniffBytes = 8000

/**
 * Resolves a path through the guard, turning a refusal into a `denied`
 * tool failure that keeps the guard's code and message.
 */
export async function guarded(guard: PathGuard, path: string, options: { write?: boolean } = {}) {
  try {
    return await guard.resolve(path, options)
  } catch (error) {
    if (error instanceof PathGuardError) {
      throw new ToolRunError(error.code, error.message, { status: 'denied', hint: 'Use a path inside the workspace, relative to it.' })
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
    return buffer.subarray(0, bytesRead).includes(0)
  } finally {
    await handle.close()
  }
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

/**
 * The built-in `read` tool in file mode: a line range of a text file inside
 * the workDir, numbered, at most `maxReadLines` lines, with a footer when
 * more lines exist. Binary files are described instead of shown.
 */
export function createReadTool(ctx: Context, guard: PathGuard, config: () => ReadConfig): ToolDefinition<ReadArgs> {
  return {
    name: 'read',
    description: 'Read a text file from the workspace. Returns numbered lines. Use line_from/line_to (1-based, inclusive) to read a part of a long file.',
    args: Schema.object({
      path: Schema.string().required().description('File path, relative to the workspace.'),
      line_from: Schema.natural().min(1).description('First line to read (1-based). Default 1.'),
      line_to: Schema.natural().min(1).description('Last line to read (inclusive).'),
    }),
    traits: { effect: 'read', parallel: true },
    permission: (args) => ({ name: 'fs:read', target: { path: args.path } }),
    render: {
      call: (args) => `read ${args.path}`,
    },
    async run(args, call) {
      const { maxReadLines } = config()
      const resolved = await guarded(guard, args.path)
      if (!resolved.exists) {
        throw new ToolRunError('not-found', `The file "${args.path}" does not exist.`, { hint: 'Check the path; it is relative to the workspace.' })
      }
      const stat = await fs.stat(resolved.path)
      if (stat.isDirectory()) {
        throw new ToolRunError('is-directory', `"${args.path}" is a directory, not a file.`)
      }
      if (await isBinaryFile(resolved.path)) {
        return `"${args.path}" is a binary file (${stat.size} bytes); it is not shown as text.`
      }
      const from = args.line_from ?? 1
      if (args.line_to !== undefined && args.line_to < from) {
        throw new ToolRunError('invalid-range', `line_to (${args.line_to}) is before line_from (${from}).`, { status: 'invalid' })
      }
      const wanted = args.line_to ?? from + maxReadLines - 1
      const to = Math.min(wanted, from + maxReadLines - 1)
      const { lines, total } = await readLines(resolved.path, from, to, call.signal)
      if (!total) return `"${args.path}" is empty.`
      if (from > total) {
        throw new ToolRunError('invalid-range', `line_from (${from}) is past the end of the file (${total} lines).`, { status: 'invalid' })
      }
      const last = from + lines.length - 1
      let text = numberLines(lines, from)
      if (last < total) {
        const capped = to < wanted ? ` (at most ${maxReadLines} lines per call)` : ''
        text += `\n\n[showing lines ${from}-${last} of ${total}${capped}; call read with line_from=${last + 1} to continue]`
      }
      return text
    },
  }
}
