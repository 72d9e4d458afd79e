import { mkdir, writeFile } from 'fs/promises'
import { extname, resolve } from 'path'
import { Context, Logger, Random } from 'koishi'
import { ContentBlock } from '../types'
import type { ToolService } from '../service'
import { McpOptions } from './config'
import { ConnectionHost, McpConnection, McpServerStatus, McpTestReport } from './connection'
import { McpSelfProvider } from './self'
import { trackProcess } from './processes'

const logger = new Logger('chatluna-tools')

declare module 'koishi' {
  interface Events {
    /** The state, tools or error of an MCP server changed. */
    'chatluna/mcp-changed'(): void
  }
}

/**
 * `ctx.tools.mcp` (issue "MCP"): the configured MCP servers as tools, and
 * this plugin's own tools as an MCP provider (`self`).
 *
 * Connections start in the background when Koishi is ready (Koishi's start
 * never waits for them) and are closed when the plugin is disposed. The
 * enabled state set by `enable` / `disable` lasts until the plugin restarts;
 * the config's `enabled` is the state at start.
 */
export class McpManager {
  /** The in-process MCP provider: lists and calls tools without the network (RuleGo seed, "进程内模式"). */
  readonly self: McpSelfProvider
  private connections = new Map<string, McpConnection>()
  private started = false

  constructor(ctx: Context, private service: ToolService, private options: () => McpOptions) {
    this.self = new McpSelfProvider(service, () => options().server)
    const host: ConnectionHost = {
      baseDir: ctx.baseDir,
      define: (definition) => service.define(definition, { source: 'mcp' }),
      retryDelay: () => this.options().retryDelay,
      maxRetryDelay: () => this.options().maxRetryDelay,
      saveBlob: (callId, name, data, mimeType) => this.saveBlob(callId, name, data, mimeType),
      trackProcess,
      changed: () => ctx.emit('chatluna/mcp-changed'),
    }
    for (const config of options()?.servers ?? []) {
      if (this.connections.has(config.id)) {
        logger.warn('MCP server id "%s" is configured twice; only the first entry is used', config.id)
        continue
      }
      this.connections.set(config.id, new McpConnection(host, config))
      if (!config.enabled) service.setOwnerEnabled({ kind: 'mcp', id: config.id }, false)
    }
    ctx.on('ready', () => this.start())
    ctx.on('dispose', () => this.stop())
  }

  /** Starts every enabled server's first connection attempt; returns at once. */
  private start() {
    if (this.started) return
    this.started = true
    for (const connection of this.connections.values()) {
      if (connection.config.enabled) connection.connect()
    }
  }

  /** Closes every connection; resolves when their transports are closed. */
  async stop() {
    await Promise.all([...this.connections.values()].map((connection) => connection.close('closed')))
  }

  /** Every configured server's status, in config order. */
  get servers(): McpServerStatus[] {
    return [...this.connections.values()].map((connection) => connection.status())
  }

  /** One server's status, or undefined for an unknown id. */
  server(id: string): McpServerStatus | undefined {
    return this.connections.get(id)?.status()
  }

  /**
   * Waits until no server is `connecting` (each attempt ends connected or
   * retrying). For commands and tests; resolves at once when none is.
   */
  async settled() {
    await Promise.all([...this.connections.values()].map((connection) => connection.pending()))
  }

  /** Connects and lists a server's tools, then reports (see `McpConnection.test`); undefined for an unknown id. */
  async test(id: string): Promise<McpTestReport | undefined> {
    return this.connections.get(id)?.test()
  }

  /**
   * Enables a server: its tools become visible again (visibility layer 5)
   * and it connects; resolves after that attempt with the status. Undefined
   * for an unknown id. An enabled server is left as it is.
   */
  async enable(id: string): Promise<McpServerStatus | undefined> {
    const connection = this.connections.get(id)
    if (!connection) return
    this.service.setOwnerEnabled({ kind: 'mcp', id }, true)
    if (connection.state === 'disabled') await connection.connect()
    return connection.status()
  }

  /**
   * Disables a server: its tools are hidden (visibility layer 5), its
   * connection is closed (a call in flight fails at once) and it is not
   * reconnected. Undefined for an unknown id.
   */
  async disable(id: string): Promise<McpServerStatus | undefined> {
    const connection = this.connections.get(id)
    if (!connection) return
    this.service.setOwnerEnabled({ kind: 'mcp', id }, false)
    if (connection.state !== 'disabled' && connection.state !== 'closed') await connection.close('disabled')
    return connection.status()
  }

  /**
   * Saves a binary resource of a call under `<data>/outputs/mcp/`, named
   * `<callId>-<name>`, and returns its file block (size in bytes). The call
   * id may be a model's tool-call id and the name comes from the server:
   * both are cut down to `[A-Za-z0-9_.-]` (no `/`), so the file always lands
   * in that folder. An existing file is never replaced: a name already taken
   * gets a random suffix before its extension.
   */
  private async saveBlob(callId: string, name: string, data: string, mimeType?: string): Promise<ContentBlock> {
    const buffer = Buffer.from(data, 'base64')
    const dir = resolve(this.service.outputDir, 'mcp')
    await mkdir(dir, { recursive: true })
    const safe = (text: string) => String(text).replace(/[^A-Za-z0-9_.-]/g, '_').slice(0, 80)
    const base = `${safe(callId)}-${safe(name)}`
    const extension = extname(base)
    // Never over another file: two resources of one call may share a name, and models reuse call ids.
    let path: string
    for (let attempt = 0; ; attempt++) {
      path = resolve(dir, attempt ? `${base.slice(0, base.length - extension.length)}-${Random.id(8)}${extension}` : base)
      try {
        await writeFile(path, buffer, { flag: 'wx' })
        break
      } catch (error) {
        if (error?.code !== 'EEXIST' || attempt >= 10) throw error
      }
    }
    return { type: 'file', path, name, mimeType, size: buffer.length }
  }
}
