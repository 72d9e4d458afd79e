import { promises as fs } from 'fs'
import { dirname } from 'path'
import { Schema } from 'koishi'
import { ToolCall, ToolDefinition } from '../types'
import { ToolRunError, toolErrorText } from '../pipeline/errors'
import { PathGuard } from './path-guard'
import { EditConfig } from './config'
import { atomicWrite } from './atomic'
import { assertRegularFile, formatSize, guarded, isBinaryBuffer, numberLines, quote } from './files'
import { TextPattern } from './regex'
import { BackupStore } from './backups'
import { deleteLines, EditOutcome, insertLines, modelText, openDocument, replaceLines, replaceMatches, saveDocument, splitLines } from './edit-ops'
import { writeAction } from './write'
import { displayPath } from './walk'
import { describeIn, localizedArgs, toolDescription } from './texts'

/** What `edit` does (RuleGo seed, "edit — 进化"). */
export type EditOperation = 'line' | 'search' | 'insert' | 'delete' | 'restore' | 'list_backups'

/** Arguments of `edit`; which fields matter depends on `operation`. */
export interface EditArgs {
  operation: EditOperation
  /** The file; optional for `list_backups` (all files of this session). */
  path?: string
  line_from?: number
  line_to?: number
  content?: string
  search?: string
  replace?: string
  regex?: boolean
  ignore_case?: boolean
  global?: boolean
  anchor?: string
  line?: number
  position?: 'before' | 'after'
  lines?: number[]
  backup?: string
}

/** Lines of context around a change in the preview. */
const previewContext = 2
/** Longest preview, in lines. */
const previewLines = 30

function requireField<T>(value: T | undefined, field: string, operation: string): T {
  if (value === undefined || value === null) {
    throw new ToolRunError('missing-argument', `Operation "${operation}" needs "${field}".`, { status: 'invalid' })
  }
  return value
}

/** Numbered lines around the change, so the model sees the result without another read. */
function preview(text: string, outcome: EditOutcome) {
  const { lines } = splitLines(text)
  if (!lines.length) return '(the file is now empty)'
  const from = Math.max(1, outcome.first - previewContext)
  const to = Math.min(lines.length, outcome.last + previewContext, from + previewLines - 1)
  return numberLines(lines.slice(from - 1, to), from)
}

/**
 * The built-in `edit` tool (issue "Built-in tools", item 4): `line`,
 * `search` (literal or RE2 regex; unique unless `global`), `insert`
 * (before/after a unique anchor or a line, on its own line), `delete`,
 * `restore` and `list_backups`. Each change backs up the previous content
 * per session first (`restore` too), keeps the line endings (LF/CRLF) and
 * the BOM, and is written atomically with the file's mode bits.
 */
export function createEditTool(guard: PathGuard, backups: BackupStore, config: () => EditConfig): ToolDefinition<EditArgs> {
  async function load(path: string) {
    const resolved = await guarded(guard, path, { write: true })
    if (!resolved.exists) {
      throw new ToolRunError('not-found', `The file ${quote(path)} does not exist.`, {
        hint: 'Use the write tool to create a file.',
        text: toolErrorText('not-found', { path }),
      })
    }
    const stat = await assertRegularFile(resolved, path)
    const { maxFileSize } = config()
    if (stat.size > maxFileSize) {
      throw new ToolRunError('too-large', `${quote(path)} is ${formatSize(stat.size)}; files over ${formatSize(maxFileSize)} are not edited.`)
    }
    const raw = await fs.readFile(resolved.path)
    if (isBinaryBuffer(raw)) {
      throw new ToolRunError('binary-file', `${quote(path)} is a binary file; only text files can be edited.`, { text: toolErrorText('binary-file', { path }) })
    }
    return { resolved, raw, mode: stat.mode & 0o7777 }
  }

  async function change(args: EditArgs, call: ToolCall) {
    const path = requireField(args.path, 'path', args.operation)
    const { resolved, raw } = await load(path)
    const doc = openDocument(raw.toString('utf8'))
    const pattern = (source: string | undefined, field: string) => new TextPattern(modelText(doc, requireField(source, field, args.operation)), {
      regex: args.regex,
      ignoreCase: args.ignore_case,
      multiline: true,
    })
    let outcome: EditOutcome
    switch (args.operation) {
      case 'line':
        outcome = replaceLines(doc.text, requireField(args.line_from, 'line_from', 'line'), args.line_to, modelText(doc, requireField(args.content, 'content', 'line')))
        break
      case 'search':
        outcome = replaceMatches(doc.text, pattern(args.search, 'search'), modelText(doc, requireField(args.replace, 'replace', 'search')), !!args.global, {
          maxLength: config().maxFileSize,
        })
        break
      case 'insert': {
        if (args.anchor === undefined && args.line === undefined) {
          throw new ToolRunError('missing-argument', 'Operation "insert" needs "anchor" (text to insert next to) or "line".', { status: 'invalid' })
        }
        const where = args.anchor !== undefined ? { anchor: pattern(args.anchor, 'anchor') } : { line: args.line }
        outcome = insertLines(doc.text, where, args.position ?? 'after', modelText(doc, requireField(args.content, 'content', 'insert')))
        break
      }
      case 'delete': {
        const numbers = [...args.lines ?? []]
        let range: { from: number; to: number } | undefined
        if (args.line_from !== undefined) {
          const to = args.line_to ?? args.line_from
          if (to < args.line_from) throw new ToolRunError('invalid-range', `line_to (${to}) is before line_from (${args.line_from}).`, { status: 'invalid' })
          range = { from: args.line_from, to }
        }
        outcome = deleteLines(doc.text, numbers, range)
        break
      }
    }
    if (outcome.text === doc.text) return `Nothing changed in ${quote(path)}: the ${args.operation} leaves the text as it was.`
    const next = Buffer.from(saveDocument(doc, outcome.text), 'utf8')
    const { maxFileSize } = config()
    if (next.length > maxFileSize) {
      throw new ToolRunError('too-large', `The edited file would be ${formatSize(next.length)}; at most ${formatSize(maxFileSize)} is allowed.`)
    }
    const backup = await backups.save(call.scope, resolved.path, raw)
    await atomicWrite(resolved.path, next, { signal: call.signal })
    return `Edited ${quote(path)}: ${outcome.summary}. Backup: ${backup.id}.\n\n${preview(outcome.text, outcome)}`
  }

  async function restore(args: EditArgs, call: ToolCall) {
    const path = requireField(args.path, 'path', 'restore')
    const resolved = await guarded(guard, path, { write: true })
    const entries = await backups.list(call.scope, resolved.path)
    if (!entries.length) {
      throw new ToolRunError('no-backup', `There is no backup of ${quote(path)} in this session.`, { text: toolErrorText('no-backup', { path }) })
    }
    const entry = args.backup ? entries.find((item) => item.id === args.backup) : entries[0]
    if (!entry) {
      throw new ToolRunError('no-backup', `There is no backup ${quote(args.backup)} of ${quote(path)}.`, {
        hint: `Backups of this file: ${entries.slice(0, 10).map((item) => item.id).join(', ')}.`,
        text: toolErrorText('no-such-backup', { path, name: args.backup }),
      })
    }
    const content = await fs.readFile(entry.file)
    let saved = ''
    if (resolved.exists) {
      const current = await load(path)
      if (current.raw.equals(content)) return `${quote(path)} already has the content of backup ${entry.id}; nothing changed.`
      saved = ` The content it replaced was backed up as ${(await backups.save(call.scope, resolved.path, current.raw)).id}.`
    } else {
      await fs.mkdir(dirname(resolved.path), { recursive: true })
    }
    await atomicWrite(resolved.path, content, { signal: call.signal })
    return `Restored ${quote(path)} from backup ${entry.id} (${content.length} bytes).${saved}`
  }

  async function listBackups(args: EditArgs, call: ToolCall) {
    const resolved = args.path ? await guarded(guard, args.path) : undefined
    const entries = await backups.list(call.scope, resolved?.path)
    const where = args.path ? ` of ${quote(args.path)}` : ''
    if (!entries.length) return `No backups${where} in this session.`
    const lines = [`Backups${where} in this session, newest first (id, time UTC, size in bytes${args.path ? '' : ', file'}):`]
    for (const entry of entries) {
      const time = new Date(entry.time).toISOString().replace(/\.\d{3}Z$/, 'Z')
      lines.push(`${entry.id}\t${time}\t${entry.size}${args.path ? '' : '\t' + await displayPath(guard, entry.path)}`)
    }
    return lines.join('\n')
  }

  return {
    name: 'edit',
    description: toolDescription('edit'),
    describe: describeIn('edit'),
    args: localizedArgs('edit', Schema.object({
      operation: Schema.union(['line', 'search', 'insert', 'delete', 'restore', 'list_backups']).required(),
      path: Schema.string(),
      line_from: Schema.natural().min(1),
      line_to: Schema.natural().min(1),
      content: Schema.string(),
      search: Schema.string(),
      replace: Schema.string(),
      regex: Schema.boolean().default(false),
      ignore_case: Schema.boolean().default(false),
      global: Schema.boolean().default(false),
      anchor: Schema.string(),
      line: Schema.natural().min(1),
      position: Schema.union(['before', 'after']).default('after'),
      lines: Schema.array(Schema.natural().min(1)),
      backup: Schema.string(),
    })),
    traits: { effect: 'write' },
    permission: async (args) => {
      if (args.operation === 'list_backups') return { name: 'fs:read', effect: 'read', target: { path: args.path ?? '.' } }
      return writeAction(guard, args.path ?? '')
    },
    render: {
      call: (args) => `edit ${args.operation} ${args.path ?? ''}`.trim(),
    },
    async run(args, call) {
      switch (args.operation) {
        case 'restore': return restore(args, call)
        case 'list_backups': return listBackups(args, call)
        default: return change(args, call)
      }
    },
  }
}
