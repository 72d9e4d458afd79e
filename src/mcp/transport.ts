import { resolve } from 'path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js'
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js'
import { McpServerConfig } from './config'

/** The wire protocol a connection ended up using. */
export type WireProtocol = 'stdio' | 'streamable-http' | 'sse'

/** The last lines a stdio server wrote to stderr, for error reports. */
export class StderrTail {
  lines: string[] = []
  private partial = ''

  constructor(private limit = 20, private onLine?: (line: string) => void) {}

  push(chunk: string) {
    const parts = (this.partial + chunk).split(/\r?\n/)
    this.partial = parts.pop() ?? ''
    for (const line of parts) this.add(line)
  }

  /** The last `count` non-empty lines, joined by ` | `. */
  text(count = 3) {
    const lines = this.partial.trim() ? [...this.lines, this.partial] : this.lines
    return lines.slice(-count).join(' | ')
  }

  private add(line: string) {
    if (!line.trim()) return
    this.lines.push(line)
    if (this.lines.length > this.limit) this.lines.shift()
    this.onLine?.(line)
  }
}

/** Options of {@link openClient}. */
export interface OpenOptions {
  /** Koishi's base dir: the default and the base of a relative `cwd`. */
  baseDir: string
  /** Builds a fresh client with our handlers; called once per attempt (and again for the SSE fallback). */
  createClient: () => Client
  /** Called with each client before it connects, so that a close during the attempt can reach it. */
  onClient: (client: Client, transport: Transport) => void
  /** Collects a stdio server's stderr; a fresh one when absent. */
  stderr?: StderrTail
  /** A stdio server's process was spawned; the returned function is called when it has exited. */
  onSpawn?: (pid: number) => () => void
}

/** An initialised client and how it is connected. */
export interface OpenedClient {
  client: Client
  transport: Transport
  protocol: WireProtocol
  /** The stdio server's process id. */
  pid?: number
  stderr?: StderrTail
  /** `serverInfo` from the server's `initialize` answer. */
  server?: { name: string; version: string }
}

/** The name and version an initialised client's server gave, without its other fields. */
function serverInfo(client: Client) {
  const info = client.getServerVersion()
  return info ? { name: info.name, version: info.version } : undefined
}

/** Whether a failed Streamable HTTP attempt means "try the old HTTP+SSE transport" (a 4xx other than auth). */
function wantsSseFallback(error: unknown) {
  if (!(error instanceof StreamableHTTPError)) return false
  const code = error.code ?? 0
  return code >= 400 && code < 500 && code !== 401 && code !== 403
}

/**
 * Connects one client to an MCP server and runs `initialize` within
 * `config.startupTimeout` ms (issue "MCP", items 1 and 5). `stdio` spawns
 * the command with stderr piped into a {@link StderrTail}; `http` tries
 * Streamable HTTP and, when the server answers it with a 4xx other than
 * 401/403, the old HTTP+SSE transport, as the SDK's backwards-compatibility
 * guide does. Throws the SDK's error (spawn errors, `McpError` for a
 * timeout or a closed connection, `StreamableHTTPError`, …); the caller
 * closes what `onClient` handed it.
 */
export async function openClient(config: McpServerConfig, options: OpenOptions): Promise<OpenedClient> {
  const requestOptions = { timeout: config.startupTimeout }
  if (config.transport === 'stdio') {
    const stderr = options.stderr ?? new StderrTail()
    const transport = new StdioClientTransport({
      command: config.command,
      args: config.args ?? [],
      env: config.env && Object.keys(config.env).length ? config.env : undefined,
      cwd: resolve(options.baseDir, config.cwd || '.'),
      stderr: 'pipe',
    })
    // With `pipe`, the SDK hands out the stream before the process starts.
    transport.stderr?.on('data', (chunk: Buffer | string) => stderr.push(chunk.toString()))
    // Know the process as soon as it exists, not only after `initialize`.
    // (The client chains the transport's own `onclose` before its handler.)
    let exited: (() => void) | undefined
    const start = transport.start.bind(transport)
    transport.start = async () => {
      await start()
      if (transport.pid) exited = options.onSpawn?.(transport.pid)
    }
    transport.onclose = () => exited?.()
    const client = options.createClient()
    options.onClient(client, transport)
    await client.connect(transport, requestOptions)
    return { client, transport, protocol: 'stdio', pid: transport.pid ?? undefined, stderr, server: serverInfo(client) }
  }

  const url = new URL(config.url)
  const requestInit: RequestInit = { headers: { ...config.headers } }
  const streamable = new StreamableHTTPClientTransport(url, { requestInit })
  const client = options.createClient()
  options.onClient(client, streamable)
  try {
    await client.connect(streamable, requestOptions)
    return { client, transport: streamable, protocol: 'streamable-http', server: serverInfo(client) }
  } catch (error) {
    if (!wantsSseFallback(error)) throw error
    await client.close().catch(() => {})
  }
  const sse = new SSEClientTransport(url, { requestInit })
  const fallback = options.createClient()
  options.onClient(fallback, sse)
  await fallback.connect(sse, requestOptions)
  return { client: fallback, transport: sse, protocol: 'sse', server: serverInfo(fallback) }
}
