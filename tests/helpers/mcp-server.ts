import { mkdtemp, rm } from 'fs/promises'
import { tmpdir } from 'os'
import { join } from 'path'
import { App, Dict } from 'koishi'
import mock from '@koishijs/plugin-mock'
import server from '@koishijs/plugin-server'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import * as tools from '../../src'
import { freePort, waitFor } from './mcp'
import { onlyRead } from './app'

/** The token of the MCP server (self) in the apps below. */
export const token = 'test-token-123'

export interface ServerApp {
  app: App
  url: string
  dispose(): Promise<void>
}

/**
 * A Koishi app with the mock adapter, Koishi's server on 127.0.0.1 (a free
 * port, or `port`) and this plugin serving MCP with `mcpServer` over the
 * defaults (enabled, {@link token}); `extra` is more plugin config.
 */
export async function startServerApp(mcpServer: Dict, extra: Dict = {}, port?: number): Promise<ServerApp> {
  const baseDir = await mkdtemp(join(tmpdir(), 'chatluna-tools-mcp-server-'))
  port ??= await freePort()
  const app = new App({ i18n: { locales: ['en-US', 'zh-CN'] } } as any)
  app.baseDir = baseDir
  app.plugin(mock)
  app.plugin(server, { host: '127.0.0.1', port })
  app.plugin(tools, { ...onlyRead, ...extra, mcp: { ...extra.mcp, server: { enabled: true, token, ...mcpServer } } })
  await app.start()
  await waitFor(() => app.server?.port, 5000, 'the server to listen')
  return {
    app,
    url: `http://127.0.0.1:${port}${mcpServer.path ?? '/chatluna-tools/mcp'}`,
    async dispose() {
      app.registry.delete(server)
      app.registry.delete(mock)
      await app.stop()
      await rm(baseDir, { recursive: true, force: true })
    },
  }
}

/** An SDK client connected over Streamable HTTP, sending `Authorization: Bearer <bearer>` (none when empty). */
export async function connect(url: string, bearer = token) {
  const client = new Client({ name: 'test-client', version: '1.0.0' })
  const headers: Dict<string> = bearer ? { Authorization: `Bearer ${bearer}` } : {}
  const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } })
  await client.connect(transport, { timeout: 5000 })
  return client
}
