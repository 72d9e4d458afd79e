import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { ResultSchema } from '@modelcontextprotocol/sdk/types.js'

/** Most `tools/list` pages read from one server. */
export const maxPages = 100

/**
 * Every tool of every `tools/list` page, unchecked (`planTools` checks each
 * one, so one malformed tool does not fail the whole list as the SDK's
 * `listTools` would). At most {@link maxPages} pages; a repeated cursor ends
 * the listing. `timeout` in ms per page. Throws the SDK's error.
 */
export async function listAllTools(client: Client, timeout: number): Promise<unknown[]> {
  const listed: unknown[] = []
  const cursors = new Set<string>()
  let cursor: string | undefined
  for (let page = 0; page < maxPages; page++) {
    const result: any = await client.request({ method: 'tools/list', params: cursor ? { cursor } : {} }, ResultSchema, { timeout })
    if (Array.isArray(result.tools)) listed.push(...result.tools)
    cursor = typeof result.nextCursor === 'string' && result.nextCursor ? result.nextCursor : undefined
    if (!cursor || cursors.has(cursor)) break
    cursors.add(cursor)
  }
  return listed
}
