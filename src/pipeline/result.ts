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

/**
 * Turns what `run` returned into content blocks, messages, extra meta and an
 * ok flag (DESIGN.md pipeline step 8): a string is one text block, a block
 * list is kept, a `{ content }` output is taken as is, `undefined` is an
 * empty success, any other value is shown as JSON text.
 */
export function normalizeOutput(value: unknown): { ok: boolean; content: ContentBlock[]; messages: string[]; meta: Dict; error?: ToolError } {
  if (typeof value === 'string') return { ok: true, content: [{ type: 'text', text: value }], messages: [], meta: {} }
  if (value === undefined || value === null) return { ok: true, content: [], messages: [], meta: {} }
  if (Array.isArray(value) && value.length && value.every(isContentBlock)) {
    return { ok: true, content: value, messages: [], meta: {} }
  }
  if (isOutput(value)) {
    return {
      ok: value.ok !== false,
      content: value.content,
      messages: value.messages?.map(String) ?? [],
      meta: value.meta ?? {},
      error: value.error,
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
