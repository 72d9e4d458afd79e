import { mkdir, writeFile } from 'fs/promises'
import { join } from 'path'
import { ToolResult } from '../types'
import { resultText } from './result'

/** Whether the text blocks of a result hold more than `limit` characters. */
export function needsSpool(result: ToolResult, limit: number) {
  let length = 0
  for (const block of result.content) {
    if (block.type === 'text') length += block.text.length + 1
  }
  return length - 1 > limit
}

/**
 * Oversized output (DESIGN.md pipeline step 10): when the text blocks of a
 * result hold more than `limit` characters, the full text is written to
 * `<dir()>/<time>-<tool>-<callId>.txt` and the blocks are replaced by the
 * head (about `limit` characters) and a footer giving the full size and the
 * path. Non-text blocks are kept. Returns the file path, or undefined when
 * nothing was spooled. A write failure keeps the head and says the file
 * could not be saved.
 */
export async function spoolOutput(result: ToolResult, dir: () => string, limit: number): Promise<string | undefined> {
  const text = resultText(result)
  if (text.length <= limit) return
  const safe = (value: string) => value.replace(/[^a-zA-Z0-9_-]/g, '_').slice(0, 64)
  const time = new Date().toISOString().replace(/[:.]/g, '-')
  const folder = dir()
  const path = join(folder, `${time}-${safe(result.meta.tool)}-${safe(result.meta.callId)}.txt`)
  let footer: string
  try {
    await mkdir(folder, { recursive: true })
    await writeFile(path, text, 'utf8')
    footer = `[output truncated: ${text.length} characters in total; the full output is saved at ${path}]`
    result.meta.spooled = { path, size: text.length }
  } catch (error) {
    footer = `[output truncated: ${text.length} characters in total; the full output could not be saved: ${error.message}]`
  }
  const head = text.slice(0, limit)
  const others = result.content.filter((block) => block.type !== 'text')
  result.content = [{ type: 'text', text: `${head}\n…\n${footer}` }, ...others]
  result.meta.truncated = true
  return result.meta.spooled?.path
}
