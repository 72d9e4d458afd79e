import { promises as fs } from 'fs'
import { dirname } from 'path'
import { Schema } from 'koishi'
import { ToolAction, ToolDefinition, ToolRisk } from '../types'
import { ToolRunError, toolErrorText } from '../pipeline/errors'
import { PathGuard, PathGuardError } from './path-guard'
import { WriteConfig } from './config'
import { atomicWrite } from './atomic'
import { assertRegularFile, formatSize, guarded, quote } from './files'
import { describeIn, localizedArgs, toolDescription } from './texts'

/** What `write` does with an existing file. */
export type WriteOperation = 'create' | 'overwrite' | 'append'

/** Arguments of `write` (RuleGo seed, "write — 创造力"). */
export interface WriteArgs {
  path: string
  content: string
  /** Default `create`, which refuses to replace an existing file. */
  operation?: WriteOperation
}

/**
 * The permission action of a file-changing call: `fs:write` (or `name`) on
 * the absolute real path when the guard accepts it, the path as given
 * otherwise. Risk: none inside the workDir, `review` in an extra allowed
 * dir, `dangerous` for a path the guard refuses (it will not run, but an
 * approver should see why it was asked). Never throws.
 */
export async function writeAction(guard: PathGuard, path: string, name = 'fs:write'): Promise<ToolAction> {
  try {
    const resolved = await guard.resolve(path, { write: true })
    const [work] = await guard.getRoots()
    const risk: ToolRisk | undefined = resolved.root === work.path ? undefined : 'review'
    return { name, target: { path: resolved.path }, risk }
  } catch (error) {
    const reason = error instanceof PathGuardError ? error.message : `the path could not be checked: ${error?.message ?? error}`
    return { name, target: { path: String(path) }, risk: 'dangerous', reason }
  }
}

/** The separator line `append` puts before new text: `--- 2025-01-02T03:04:05.678Z ---`. */
export function timestampLine(date = new Date()) {
  return `--- ${date.toISOString()} ---`
}

/**
 * The built-in `write` tool (issue "Built-in tools", item 3): `create`
 * (refused when the file exists), `overwrite` and `append` (a timestamp
 * line first when `appendTimestamp`), always through an atomic temp file +
 * rename that keeps the file's permission bits. Parent directories are
 * created. Sizes over `maxFileSize` bytes, directories and non-regular
 * files are refused with a clear error and nothing on disk changes.
 * Effect `write`, action `fs:write` on the resolved path.
 */
export function createWriteTool(guard: PathGuard, config: () => WriteConfig): ToolDefinition<WriteArgs> {
  return {
    name: 'write',
    description: toolDescription('write'),
    describe: describeIn('write'),
    args: localizedArgs('write', Schema.object({
      path: Schema.string().required(),
      content: Schema.string().required(),
      operation: Schema.union(['create', 'overwrite', 'append']).default('create'),
    })),
    traits: { effect: 'write' },
    permission: (args) => writeAction(guard, args.path),
    render: {
      call: (args) => `write ${args.operation ?? 'create'} ${args.path}`,
    },
    async run(args, call) {
      const { maxFileSize, appendTimestamp } = config()
      const operation = args.operation ?? 'create'
      const resolved = await guarded(guard, args.path, { write: true })
      if (resolved.relative === '.' && resolved.exists) {
        throw new ToolRunError('is-directory', `${quote(args.path)} is a directory, not a file.`, { text: toolErrorText('is-directory', { path: args.path }) })
      }
      let existing = ''
      if (resolved.exists) {
        await assertRegularFile(resolved, args.path)
        if (operation === 'create') {
          throw new ToolRunError('file-exists', `${quote(args.path)} already exists.`, {
            hint: 'Use operation "overwrite" to replace it, "append" to add to it, or the edit tool to change part of it.',
            text: toolErrorText('file-exists', { path: args.path }),
          })
        }
        if (operation === 'append') existing = await fs.readFile(resolved.path, 'utf8')
      }

      let text = args.content
      if (operation === 'append' && existing) {
        const newline = existing.includes('\r\n') ? '\r\n' : '\n'
        const head = existing.endsWith('\n') ? existing : existing + newline
        text = appendTimestamp ? `${head}${timestampLine()}${newline}${args.content}` : head + args.content
      }
      const size = Buffer.byteLength(text, 'utf8')
      if (size > maxFileSize) {
        throw new ToolRunError('too-large', `The file would be ${formatSize(size)}; at most ${formatSize(maxFileSize)} may be written.`, {
          hint: 'Write less, or split the content over several files.',
        })
      }
      if (!resolved.exists) {
        // Guarded: the nearest existing ancestor is inside a root, so the new directories are too.
        await fs.mkdir(dirname(resolved.path), { recursive: true })
      }
      try {
        await atomicWrite(resolved.path, text, { signal: call.signal, exclusive: !resolved.exists })
      } catch (error) {
        if (error?.code !== 'EEXIST') throw error
        throw new ToolRunError('file-exists', `${quote(args.path)} was created by someone else while writing; nothing was changed.`, {
          hint: 'Read it, then use operation "overwrite" or "append" if you mean to change it.',
          text: toolErrorText('file-exists-now', { path: args.path }),
        })
      }
      const verb = !resolved.exists ? 'Created' : operation === 'append' ? 'Appended to' : 'Overwrote'
      const lines = text === '' ? 0 : text.split('\n').length - (text.endsWith('\n') ? 1 : 0)
      return `${verb} ${quote(args.path)} (${size} byte${size === 1 ? '' : 's'}, ${lines} line${lines === 1 ? '' : 's'}).`
    },
  }
}
