import { Logger } from 'koishi'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { ResultSchema, ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js'
import { ToolCall, ToolOutput } from '../types'
import { McpServerConfig } from './config'
import { openClient, StderrTail, WireProtocol } from './transport'
import { planTools, SkippedTool, toDefinition, toolSignature } from './tools'
import { fromMcpResult } from './content'
import { ConnectionHost, McpServerState, McpServerStatus, McpTestReport } from './status'
import { callError, errorMessage, isSessionGone, listingErrorText, startErrorText, unavailableError } from './errors'
import { listAllTools } from './listing'
import { probeServer, testReport } from './probe'
import { implementation } from './implementation'

export type { ConnectionHost, McpServerState, McpServerStatus, McpTestReport } from './status'

const logger = new Logger('chatluna-tools')

/** A connection that stayed up this long (ms) resets the reconnection backoff. */
export const stableAfter = 30000

/** Extra ms the SDK's own request timeout waits beyond the call's, so the pipeline's timeout (with cancellation) fires first. */
const timeoutGrace = 1000

/**
 * One configured MCP server: its client connection, its tools in
 * `ctx.tools`, reconnection and calls (issue "MCP", items 2, 4 and 5).
 *
 * Tools stay defined while the server reconnects (a call in that time fails
 * at once with `mcp-unavailable`), are replaced when the server's list
 * changes, and are removed when the plugin is disposed. Every connection
 * attempt has a generation; events of an older generation are ignored.
 */
export class McpConnection {
  state: McpServerState
  error?: string
  attempts = 0
  retryAt?: number
  protocol?: WireProtocol
  pid?: number
  serverInfo?: { name: string; version: string }
  connectedAt?: number
  skipped: SkippedTool[] = []
  filtered = 0

  private client?: Client
  private stderr?: StderrTail
  private generation = 0
  private retryTimer?: NodeJS.Timeout
  private tools = new Map<string, { signature: string; dispose: () => void }>()
  private syncing?: Promise<void>
  private syncAgain = false
  private probing = false
  /** Why the last connection ended, for the calls it cut off. */
  private dropReason?: string
  private attempt?: Promise<void>

  constructor(private host: ConnectionHost, public config: McpServerConfig) {
    this.state = config.enabled ? 'connecting' : 'disabled'
  }

  get id() {
    return this.config.id
  }

  /** The current status, a fresh object. */
  status(): McpServerStatus {
    return {
      id: this.id,
      transport: this.config.transport,
      state: this.state,
      protocol: this.protocol,
      tools: [...this.tools.keys()],
      skipped: this.skipped.slice(),
      filtered: this.filtered,
      error: this.error,
      attempts: this.attempts,
      retryAt: this.retryAt,
      pid: this.state === 'connected' ? this.pid : undefined,
      server: this.serverInfo,
      connectedAt: this.state === 'connected' ? this.connectedAt : undefined,
    }
  }

  /**
   * Starts a connection attempt now (cancelling a pending retry) and
   * returns it; it never rejects: failures end in `retrying` with `error`.
   */
  connect(): Promise<void> {
    this.cancelRetry()
    const generation = ++this.generation
    this.dropClient()
    this.state = 'connecting'
    this.host.changed()
    return this.attempt = this.open(generation)
  }

  /** The running connection attempt, if any. */
  pending() {
    return this.state === 'connecting' ? this.attempt : undefined
  }

  /**
   * Closes the connection: `disabled` keeps the tools defined (the manager
   * hides them through visibility layer 5), `closed` removes them. A call
   * in flight fails at once. Resolves when the SDK has closed the transport
   * (for stdio: the process has exited, or was killed after 4 s).
   */
  async close(state: 'disabled' | 'closed') {
    ++this.generation
    this.cancelRetry()
    this.dropReason = state === 'closed'
      ? `the MCP server "${this.id}" was closed because the plugin stopped`
      : `the MCP server "${this.id}" was disabled`
    const client = this.client
    this.client = undefined
    this.state = state
    if (state === 'closed') {
      for (const { dispose } of this.tools.values()) dispose()
      this.tools.clear()
    }
    this.host.changed()
    await client?.close().catch(() => {})
  }

  /** Cancels a pending reconnection attempt. */
  private cancelRetry() {
    clearTimeout(this.retryTimer)
    this.retryTimer = undefined
    this.retryAt = undefined
  }

  /** Forgets the current client and closes it in the background. */
  private dropClient() {
    const client = this.client
    this.client = undefined
    client?.close().catch(() => {})
  }

  private createClient(generation: number) {
    const client = new Client(implementation, { capabilities: {} })
    client.setNotificationHandler(ToolListChangedNotificationSchema, async () => {
      if (generation === this.generation && this.state === 'connected') this.requestSync(generation)
    })
    client.onclose = () => {
      if (generation !== this.generation || client !== this.client) return
      // During `connecting` the pending requests fail and `open` handles it.
      if (this.state === 'connected') this.lost(generation, this.closedText())
    }
    client.onerror = (error) => {
      if (generation !== this.generation || client !== this.client) return
      logger.debug('MCP server %s: transport error: %s', this.id, errorMessage(error))
      if (this.state === 'connected' && this.config.transport === 'http') this.checkAlive(generation, client)
    }
    return client
  }

  private closedText() {
    const tail = this.stderr?.text()
    const what = this.config.transport === 'stdio' ? 'its process exited' : 'the connection closed'
    return `the MCP server "${this.id}" stopped: ${what}${tail ? ` (last output: ${tail})` : ''}`
  }

  private async open(generation: number) {
    const current = () => generation === this.generation
    const stderr = new StderrTail(20, (line) => logger.debug('MCP server %s: %s', this.id, line))
    this.stderr = stderr
    try {
      const opened = await openClient(this.config, {
        stderr,
        baseDir: this.host.baseDir,
        createClient: () => this.createClient(generation),
        onClient: (client) => {
          if (current()) this.client = client
          else client.close().catch(() => {})
        },
        onSpawn: (pid) => this.host.trackProcess(pid),
      })
      if (!current()) {
        await opened.client.close().catch(() => {})
        return
      }
      this.protocol = opened.protocol
      this.pid = opened.pid
      this.serverInfo = opened.server
      await this.sync(generation, opened.client)
      if (!current()) return
      this.state = 'connected'
      this.error = undefined
      this.connectedAt = Date.now()
      logger.info('MCP server %s connected (%s, %d tools)', this.id, this.protocol, this.tools.size)
      this.host.changed()
    } catch (error) {
      if (!current()) return
      this.retry(generation, startErrorText(this.config, error, stderr.text()))
    }
  }

  /** The connection of `generation` ended unexpectedly: fail its calls, reconnect later. */
  private lost(generation: number, reason: string) {
    this.dropReason = reason
    this.retry(generation, reason)
  }

  /** Closes the client of `generation` and schedules the next attempt with capped exponential backoff. */
  private retry(generation: number, reason: string) {
    if (generation !== this.generation) return
    ++this.generation
    this.dropClient()
    if (this.connectedAt && Date.now() - this.connectedAt >= stableAfter) this.attempts = 0
    this.connectedAt = undefined
    const delay = Math.min(this.host.maxRetryDelay(), this.host.retryDelay() * 2 ** Math.min(this.attempts, 30))
    this.attempts++
    this.error = reason
    this.state = 'retrying'
    this.retryAt = Date.now() + delay
    logger.warn('%s; reconnecting in %d ms', reason, delay)
    this.retryTimer = setTimeout(() => this.connect(), delay)
    this.host.changed()
  }

  /** After a transport error on HTTP: a server that does not answer a ping counts as gone. */
  private async checkAlive(generation: number, client: Client) {
    if (this.probing) return
    this.probing = true
    try {
      await client.ping({ timeout: Math.min(5000, this.config.startupTimeout) })
    } catch (error) {
      if (generation === this.generation && client === this.client) {
        this.lost(generation, `the MCP server "${this.id}" stopped answering: ${errorMessage(error)}`)
      }
    } finally {
      this.probing = false
    }
  }

  /** Re-lists the tools after `notifications/tools/list_changed`; one listing at a time, the last request wins. */
  private requestSync(generation: number) {
    if (this.syncing) {
      this.syncAgain = true
      return
    }
    this.syncing = (async () => {
      do {
        this.syncAgain = false
        try {
          await this.sync(generation, this.client)
        } catch (error) {
          if (generation !== this.generation) break
          this.error = listingErrorText(this.id, error)
          logger.warn(this.error)
        }
      } while (this.syncAgain && generation === this.generation)
      this.syncing = undefined
      this.host.changed()
    })()
  }

  /** Lists every page of the server's tools and brings the defined tools in line with it. */
  private async sync(generation: number, client: Client | undefined) {
    if (!client) return
    const listed = await listAllTools(client, this.config.startupTimeout)
    if (generation !== this.generation) return
    this.apply(planTools(this.id, listed, this.config.tools))
  }

  /**
   * `tools.mcp.test` (issue "MCP", item 6): connect, list, report. A
   * connected server re-lists its tools on the live connection; any other
   * server (disabled ones too) gets a one-off connection that changes
   * nothing, except that a server waiting to reconnect reconnects at once
   * when the test succeeds. Never rejects.
   */
  async test(): Promise<McpTestReport> {
    if (this.state !== 'connected' || !this.client) {
      const report = await probeServer(this.config, this.host)
      if (report.ok && this.state === 'retrying') this.connect()
      return report
    }
    return testReport(this.id, async () => {
      await this.sync(this.generation, this.client)
      return { protocol: this.protocol, server: this.serverInfo, tools: [...this.tools.keys()], skipped: this.skipped, filtered: this.filtered }
    }, (error) => listingErrorText(this.id, error))
  }

  private apply(plan: ReturnType<typeof planTools>) {
    const known = new Set(this.skipped.map((item) => `${item.tool}\n${item.reason}`))
    for (const item of plan.skipped) {
      if (!known.has(`${item.tool}\n${item.reason}`)) logger.warn('MCP server %s: tool "%s" is skipped: %s', this.id, item.tool, item.reason)
    }
    this.skipped = plan.skipped
    this.filtered = plan.filtered
    const wanted = new Map(plan.tools.map((planned) => [planned.name, planned]))
    for (const [name, registered] of this.tools) {
      const planned = wanted.get(name)
      if (!planned || toolSignature(planned) !== registered.signature) {
        registered.dispose()
        this.tools.delete(name)
      }
    }
    for (const planned of plan.tools) {
      if (this.tools.has(planned.name)) continue
      const definition = toDefinition(this.id, planned, this.config.timeout, (tool, args, call) => this.call(tool, args, call))
      try {
        this.tools.set(planned.name, { signature: toolSignature(planned), dispose: this.host.define(definition) })
      } catch (error) {
        this.skipped.push({ tool: planned.tool.name, reason: errorMessage(error) })
        logger.warn('MCP server %s: tool "%s" is skipped: %s', this.id, planned.tool.name, errorMessage(error))
      }
    }
  }

  /**
   * Calls a tool of the server (`tools/call`) for the pipeline. Progress
   * notifications become `call.progress`; the pipeline's timeout or abort
   * (through `call.signal`) makes the SDK send `notifications/cancelled`.
   * Throws a `ToolRunError`: `mcp-unavailable` when the server is not
   * connected, `mcp-connection-lost` when the connection ends during the
   * call, `timeout`, or `mcp-error` for an error answer.
   */
  async call(tool: string, args: Record<string, unknown>, call: ToolCall): Promise<ToolOutput> {
    const client = this.client
    if (this.state !== 'connected' || !client) throw unavailableError(this.id, this.state, this.error)
    let result: any
    try {
      result = await client.request(
        { method: 'tools/call', params: { name: tool, arguments: args } },
        ResultSchema,
        {
          signal: call.signal,
          timeout: this.config.timeout + timeoutGrace,
          onprogress: (progress) => call.progress({ progress: progress.progress, total: progress.total, message: progress.message }),
        },
      )
    } catch (error) {
      // A Streamable HTTP server that forgot the session answers 404: start a new one.
      if (isSessionGone(error) && client === this.client && this.state === 'connected') {
        this.lost(this.generation, `the MCP server "${this.id}" ended the session`)
      }
      throw callError(this.config, this.state, error, this.dropReason)
    }
    return fromMcpResult(result, (name, data, mimeType) => this.host.saveBlob(call.id, name, data, mimeType))
  }
}
