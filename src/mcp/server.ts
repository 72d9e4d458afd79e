import { randomUUID, timingSafeEqual } from 'crypto'
import { Context, Logger } from 'koishi'
import type {} from '@koishijs/plugin-server'
import { Server } from '@modelcontextprotocol/sdk/server/index.js'
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js'
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js'
import { ToolProgress } from '../types'
import { McpSelfConfig } from './config'
import { McpSelfProvider } from './self'
import { implementation } from './implementation'

const logger = new Logger('chatluna-tools')

/** Sessions idle longer than this (ms) are closed. */
export const sessionIdleTimeout = 30 * 60 * 1000
/** Most open sessions; the least recently used one is closed to make room. */
export const maxSessions = 64

interface McpSession {
  server: Server
  transport: StreamableHTTPServerTransport
  lastSeen: number
}

/** Whether an `Authorization` header carries exactly this bearer token (compared in constant time). */
export function hasBearer(header: string | undefined, token: string) {
  const match = /^Bearer\s+(.+)$/i.exec(header?.trim() ?? '')
  if (!match || !token) return false
  const given = Buffer.from(match[1].trim())
  const expected = Buffer.from(token)
  return given.length === expected.length && timingSafeEqual(given, expected)
}

function jsonRpcError(koa: any, status: number, code: number, message: string) {
  koa.status = status
  koa.type = 'application/json'
  koa.body = JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null })
}

/**
 * The MCP server "self" over Streamable HTTP, mounted on Koishi's own
 * server at `config.path` (issue "MCP", item 7). Off unless `enabled`;
 * without a `token` (spaces around it do not count) it is not mounted (a
 * warning says why). Every request needs `Authorization: Bearer <token>`;
 * a missing or wrong token gets 401.
 *
 * Session-based (the SDK's stateful mode): a client's `initialize` opens a
 * session (`Mcp-Session-Id`), so that `notifications/cancelled` reaches the
 * call it cancels, progress and `notifications/tools/list_changed` reach
 * the client, and DELETE ends it. Sessions idle for 30 minutes are closed,
 * at most 64 are kept (the least recently used is closed first), and all
 * are closed when the plugin or the server plugin stops. A request with an
 * unknown session id gets 404, telling the client to initialise again.
 *
 * Tools are listed and called through `provider` with the configured
 * identity, so every call runs the whole pipeline (visibility, validation,
 * permission and approval, hooks).
 */
export function applyMcpServer(ctx: Context, provider: McpSelfProvider, config: McpSelfConfig) {
  // Spaces around a pasted token are not part of it; a token of spaces only is no token.
  const token = config.token?.trim()
  if (!token) {
    logger.warn('the MCP server (mcp.server) is enabled but has no token, so it is not served; set mcp.server.token')
    return
  }
  const sessions = new Map<string, McpSession>()

  function createServer() {
    const server = new Server(implementation, { capabilities: { tools: { listChanged: true } } })
    server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: provider.list() }))
    server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
      const token = request.params._meta?.progressToken
      let count = 0
      const onProgress = token === undefined ? undefined : (event: ToolProgress) => {
        count = typeof event.progress === 'number' && event.progress > count ? event.progress : count + 1
        extra.sendNotification({
          method: 'notifications/progress',
          params: { progressToken: token, progress: count, total: event.total, message: event.message },
        }).catch(() => {})
      }
      return provider.call(request.params.name, request.params.arguments ?? {}, undefined, { signal: extra.signal, onProgress })
    })
    return server
  }

  async function close(id: string) {
    const session = sessions.get(id)
    if (!session) return
    sessions.delete(id)
    await session.server.close().catch(() => {})
  }

  async function open(): Promise<McpSession> {
    if (sessions.size >= maxSessions) {
      const oldest = [...sessions.entries()].sort((a, b) => a[1].lastSeen - b[1].lastSeen)[0]
      await close(oldest[0])
    }
    const server = createServer()
    const session: McpSession = { server, lastSeen: Date.now(), transport: undefined }
    session.transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => {
        sessions.set(id, session)
      },
    })
    server.onclose = () => {
      const id = session.transport.sessionId
      if (id && sessions.get(id) === session) sessions.delete(id)
    }
    await server.connect(session.transport)
    return session
  }

  const handler = async (koa: any) => {
    if (!hasBearer(koa.get('authorization'), token)) {
      koa.set('WWW-Authenticate', 'Bearer realm="chatluna-tools"')
      return jsonRpcError(koa, 401, -32001, 'Unauthorized: send the token of mcp.server as "Authorization: Bearer <token>".')
    }
    const id = koa.get('mcp-session-id')
    let session = id ? sessions.get(id) : undefined
    if (id && !session) return jsonRpcError(koa, 404, -32001, 'Session not found: initialise a new session.')
    let fresh = false
    if (!session) {
      if (koa.method !== 'POST') return jsonRpcError(koa, 400, -32000, 'Bad Request: no session; send initialize first.')
      session = await open()
      fresh = true
    }
    session.lastSeen = Date.now()
    koa.respond = false
    // The body is read by the SDK; Koishi's body parser is skipped for this route (see below).
    const parsed = koa.request.body
    await session.transport.handleRequest(koa.req, koa.res, parsed && typeof parsed === 'object' && Object.keys(parsed).length ? parsed : undefined)
    // A first request that was not a valid `initialize` opened nothing.
    if (fresh && !session.transport.sessionId) await session.server.close().catch(() => {})
  }
  // Koishi's router parses bodies unless the first middleware carries this mark.
  handler[Symbol.for('noParseBody')] = true
  ctx.server.all(config.path, handler)

  ctx.setInterval(() => {
    const now = Date.now()
    for (const [id, session] of sessions) {
      if (now - session.lastSeen > sessionIdleTimeout) close(id)
    }
  }, 60 * 1000)

  let pending: NodeJS.Timeout | undefined
  ctx.on('chatluna/tools-changed', () => {
    if (pending) return
    pending = setTimeout(() => {
      pending = undefined
      for (const session of sessions.values()) session.server.sendToolListChanged().catch(() => {})
    }, 50)
  })

  ctx.on('dispose', () => {
    clearTimeout(pending)
    for (const id of [...sessions.keys()]) close(id)
  })
  logger.info('MCP server listening at %s', config.path)
}
