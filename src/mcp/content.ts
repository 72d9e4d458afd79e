import { Dict } from 'koishi'
import type { CallToolResult, ContentBlock as McpContentBlock } from '@modelcontextprotocol/sdk/types.js'
import { ContentBlockSchema } from '@modelcontextprotocol/sdk/types.js'
import { ContentBlock, ToolOutput, ToolResult } from '../types'
import { formatForModel } from '../pipeline/result'

/**
 * Saves a binary resource that is neither an image nor audio, returning the
 * file block for it. `data` is base64.
 */
export type BlobSaver = (name: string, data: string, mimeType: string | undefined) => Promise<ContentBlock>

function baseName(uri: string) {
  const tail = uri.split(/[/\\?#]/).filter(Boolean).pop() ?? 'resource'
  return tail.replace(/[^\w.-]/g, '_').slice(0, 80) || 'resource'
}

/**
 * One MCP content block as our content blocks (issue "MCP", item 4): text,
 * image and audio as they are; an embedded text resource as a `resource`
 * block with its text; an embedded binary resource as an image or audio
 * block by its MIME type, otherwise as a file saved by `saveBlob`; a
 * resource link as a `resource` block without text. An unknown block type
 * becomes a text note, so nothing is dropped silently.
 */
export async function fromMcpBlock(raw: unknown, saveBlob: BlobSaver): Promise<ContentBlock> {
  const parsed = ContentBlockSchema.safeParse(raw)
  if (!parsed.success) {
    return { type: 'text', text: `[unsupported MCP content block: ${JSON.stringify(raw)?.slice(0, 200)}]` }
  }
  const block = parsed.data as McpContentBlock
  switch (block.type) {
    case 'text': return { type: 'text', text: block.text }
    case 'image': return { type: 'image', data: block.data, mimeType: block.mimeType }
    case 'audio': return { type: 'audio', data: block.data, mimeType: block.mimeType }
    case 'resource_link': return {
      type: 'resource',
      uri: block.uri,
      mimeType: block.mimeType,
      name: block.title ?? block.name,
      description: block.description,
    }
    case 'resource': {
      const resource = block.resource as { uri: string; mimeType?: string; text?: string; blob?: string }
      if (typeof resource.text === 'string') {
        return { type: 'resource', uri: resource.uri, mimeType: resource.mimeType, text: resource.text }
      }
      const mimeType = resource.mimeType
      if (mimeType?.startsWith('image/')) return { type: 'image', data: resource.blob, mimeType }
      if (mimeType?.startsWith('audio/')) return { type: 'audio', data: resource.blob, mimeType }
      return saveBlob(baseName(resource.uri), resource.blob ?? '', mimeType)
    }
  }
}

/**
 * The output of one MCP `tools/call` result for the pipeline: content
 * blocks mapped by {@link fromMcpBlock}; `structuredContent` kept in
 * `meta.structured` (and shown as JSON text when the server sent no
 * content); `isError` → `ok: false` with `error.code` `mcp-tool-error` and
 * the server's text as the message.
 */
export async function fromMcpResult(result: Partial<CallToolResult>, saveBlob: BlobSaver): Promise<ToolOutput> {
  const blocks: unknown[] = Array.isArray(result.content) ? result.content : []
  const content: ContentBlock[] = []
  for (const block of blocks) content.push(await fromMcpBlock(block, saveBlob))
  const meta: Dict = {}
  if (result.structuredContent && typeof result.structuredContent === 'object' && !Array.isArray(result.structuredContent)) {
    meta.structured = result.structuredContent
    if (!content.length) content.push({ type: 'text', text: JSON.stringify(result.structuredContent, null, 2) })
  }
  if (result.isError) {
    const text = content.filter((block) => block.type === 'text').map((block: any) => block.text).join('\n').trim()
    return {
      ok: false,
      content,
      meta,
      error: { code: 'mcp-tool-error', message: text || 'The MCP server reported that the tool failed.' },
    }
  }
  return { content, meta }
}

/**
 * A result record as an MCP `tools/call` result, for the tools this plugin
 * serves: text, image and audio with data, and resources with text go as
 * they are; a resource without text goes as a resource link; images and
 * audio known only by URL, and files, go as a text note naming where they
 * are. A failed call (`ok: false`) is `isError: true` with the text a model
 * reads (status, code, hint). `meta.structured` becomes `structuredContent`.
 */
export function toMcpResult(result: ToolResult): CallToolResult {
  const content: McpContentBlock[] = []
  if (!result.ok) {
    content.push({ type: 'text', text: formatForModel(result) })
    return { content, isError: true }
  }
  for (const block of result.content) {
    switch (block.type) {
      case 'text':
        content.push({ type: 'text', text: block.text })
        break
      case 'image':
      case 'audio':
        if (block.data) content.push({ type: block.type, data: block.data, mimeType: block.mimeType })
        else content.push({ type: 'text', text: `[${block.type} ${block.mimeType} ${block.url ?? ''}]`.replace(' ]', ']') })
        break
      case 'resource':
        if (typeof block.text === 'string') {
          content.push({ type: 'resource', resource: { uri: block.uri, mimeType: block.mimeType, text: block.text } })
        } else {
          content.push({ type: 'resource_link', uri: block.uri, name: block.name ?? block.uri, mimeType: block.mimeType, description: block.description })
        }
        break
      case 'file':
        content.push({ type: 'text', text: `[file ${block.path ?? block.url ?? block.name ?? ''}${block.size !== undefined ? `, ${block.size} bytes` : ''}]` })
        break
    }
  }
  for (const message of result.messages) content.push({ type: 'text', text: `Note: ${message}` })
  const structured = result.meta.structured
  const output: CallToolResult = { content }
  if (structured && typeof structured === 'object' && !Array.isArray(structured)) output.structuredContent = structured
  return output
}
