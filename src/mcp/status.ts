import { ContentBlock, ToolDefinition } from '../types'
import { WireProtocol } from './transport'
import { SkippedTool } from './tools'

/**
 * Where a server is: `disabled` (by config or command; not connected),
 * `connecting` (spawning / `initialize` / `tools/list`), `connected`,
 * `retrying` (waiting to reconnect after a failure; see `error`), `closed`
 * (the plugin was disposed).
 */
export type McpServerState = 'disabled' | 'connecting' | 'connected' | 'retrying' | 'closed'

/** What `ctx.tools.mcp.servers` and `tools.mcp` report of one server. */
export interface McpServerStatus {
  id: string
  transport: 'stdio' | 'http'
  state: McpServerState
  /** The protocol actually used once connected: `stdio`, `streamable-http` or `sse`. */
  protocol?: WireProtocol
  /** Names of the tools defined in `ctx.tools`. */
  tools: string[]
  /** Tools of the server that were not taken (invalid, or a name collision), with the reason. */
  skipped: SkippedTool[]
  /** Tools the server's tool filter left out. */
  filtered: number
  /** The last connection or listing error, in English. */
  error?: string
  /** Failed attempts since the last stable connection. */
  attempts: number
  /** When the next reconnection attempt is due (ms since epoch), while `retrying`. */
  retryAt?: number
  /** The stdio server's process id while it runs. */
  pid?: number
  /** `serverInfo` from `initialize`. */
  server?: { name: string; version: string }
  /** When the current connection was made (ms since epoch). */
  connectedAt?: number
}

/** What `tools.mcp.test` reports. */
export interface McpTestReport {
  id: string
  ok: boolean
  protocol?: WireProtocol
  server?: { name: string; version: string }
  /** The names the server's tools get (or have). */
  tools: string[]
  skipped: SkippedTool[]
  filtered: number
  error?: string
  /** Wall time of the test in ms. */
  duration: number
}

/** What a connection needs from the manager. */
export interface ConnectionHost {
  baseDir: string
  /** Defines a tool with source `mcp` for the plugin; returns its disposer. */
  define(definition: ToolDefinition): () => void
  /** First reconnection delay in ms (doubles per failure). */
  retryDelay(): number
  /** Longest reconnection delay in ms. */
  maxRetryDelay(): number
  /** Saves a binary resource of call `callId` as a file and returns its block. */
  saveBlob(callId: string, name: string, data: string, mimeType?: string): Promise<ContentBlock>
  /** Lists a spawned process until it exits (see `processes.ts`). */
  trackProcess(pid: number): () => void
  /** The status of a server changed. */
  changed(): void
}
