import { Dict } from 'koishi'
import { ContentBlock, ToolError, ToolOutput, ToolResult, ToolResultMeta, ToolStatus } from '../types'

/** Builds a failed result record. */
export function failure(status: ToolStatus, error: ToolError, meta: ToolResultMeta, messages: string[] = []): ToolResult {
  return { ok: false, status, content: [{ type: 'text', text: error.message }], meta, messages, error }
}

function isContentBlock(value: any): value is ContentBlock {
  return value && typeof value === 'object' && typeof value.type === 'string'
    && ['text', 'image', 'file', 'audio', 'resource'].includes(value.type)
}

function isOutput(value: any): value is ToolOutput {
  return value && typeof value === 'object' && !Array.isArray(value)
    && Array.isArray(value.content) && value.content.every(isContentBlock)
}

/** What {@link normalizeOutput} makes of a value `run` returned. */
export interface NormalizedOutput {
  ok: boolean
  content: ContentBlock[]
  messages: string[]
  meta: Dict
  error?: ToolError
}

/**
 * Turns what `run` returned into content blocks, messages, extra meta and an
 * ok flag (DESIGN.md pipeline step 8): a string is one text block, a block
 * list is kept, a `{ content }` output is taken as is, `undefined` is an
 * empty success, any other value is shown as JSON text (or `String(value)`
 * when JSON cannot hold it: cycles, BigInt). A value that cannot be read
 * (a throwing getter or proxy), a text block whose `text` is not a string,
 * or `messages` that are not a list of strings is a failure with code
 * `invalid-output` and a plain message; this never throws.
 */
export function normalizeOutput(value: unknown): NormalizedOutput {
  try {
    return normalizeValue(value)
  } catch (error) {
    const message = error instanceof InvalidOutput ? error.message : `The tool returned a value that cannot be read: ${error?.message ?? error}`
    return { ok: false, content: [], messages: [], meta: {}, error: { code: 'invalid-output', message } }
  }
}

class InvalidOutput extends Error {}

function checkBlocks(content: ContentBlock[]) {
  content.forEach((block, index) => {
    if (block.type === 'text' && typeof block.text !== 'string') {
      throw new InvalidOutput(`The tool returned a text block whose text is not a string (block ${index + 1}).`)
    }
  })
  return content
}

/** A tool's own `error`: kept when it has a string message, otherwise its text under code `tool-error`. */
function toolError(error: unknown): ToolError | undefined {
  if (error === undefined || error === null) return
  if (typeof error === 'object' && typeof (error as ToolError).message === 'string') {
    return typeof (error as ToolError).code === 'string' ? error as ToolError : { ...error as ToolError, code: 'tool-error' }
  }
  return { code: 'tool-error', message: String(error) }
}

function normalizeValue(value: unknown): NormalizedOutput {
  if (typeof value === 'string') return { ok: true, content: [{ type: 'text', text: value }], messages: [], meta: {} }
  if (value === undefined || value === null) return { ok: true, content: [], messages: [], meta: {} }
  if (Array.isArray(value) && value.length && value.every(isContentBlock)) {
    return { ok: true, content: checkBlocks(value), messages: [], meta: {} }
  }
  if (isOutput(value)) {
    const messages = value.messages ?? []
    if (!Array.isArray(messages)) throw new InvalidOutput('The tool returned messages that are not a list of strings.')
    const meta = value.meta ?? {}
    return {
      ok: value.ok !== false,
      content: checkBlocks(value.content),
      messages: messages.map(String),
      meta: meta && typeof meta === 'object' ? { ...meta } : {},
      error: toolError(value.error),
    }
  }
  let text: string
  try {
    text = JSON.stringify(value, null, 2) ?? String(value)
  } catch {
    text = String(value)
  }
  return { ok: true, content: [{ type: 'text', text }], messages: [], meta: {} }
}

/** The text of a result's text blocks, joined by newlines. */
export function resultText(result: Pick<ToolResult, 'content'>) {
  return result.content.filter((block) => block.type === 'text').map((block: any) => block.text).join('\n')
}

function describeBlock(block: ContentBlock) {
  switch (block.type) {
    case 'text': return block.text
    case 'image': return `[image ${block.mimeType}${block.url ? ' ' + block.url : ''}]`
    case 'audio': return `[audio ${block.mimeType}${block.url ? ' ' + block.url : ''}]`
    case 'file': return `[file ${block.path ?? block.url ?? block.name ?? ''}]`
    case 'resource': return block.text ?? `[resource ${block.uri}]`
  }
}

/**
 * The text a model reads for a result: the content (non-text blocks as
 * short bracketed notes), then for failures `Error [code]: message`, the
 * hint and each argument issue, then every message as a `Note:` line.
 */
export function formatForModel(result: ToolResult) {
  const lines: string[] = []
  if (result.ok) {
    const body = result.content.map(describeBlock).join('\n')
    lines.push(body || '(no output)')
  } else {
    const error = result.error
    lines.push(`Error [${error?.code ?? result.status}]: ${error?.message ?? resultText(result)}`)
    for (const issue of error?.issues ?? []) {
      lines.push(`- ${issue.path || '(arguments)'}: expected ${issue.expected}, got ${issue.got}`)
    }
    if (error?.hint) lines.push(`Hint: ${error.hint}`)
  }
  for (const message of result.messages) lines.push(`Note: ${message}`)
  return lines.join('\n')
}
