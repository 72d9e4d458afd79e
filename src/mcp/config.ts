import { Dict, Schema } from 'koishi'
import { configSection } from '../locales'

/** How the plugin reaches an MCP server. */
export type McpTransportKind = 'stdio' | 'http'

/**
 * One MCP server to connect to (issue "MCP", item 1; RuleGo seed, "MCP
 * 工具"). `stdio` spawns `command args` in `cwd` with `env` added to the
 * SDK's safe default environment; `http` talks Streamable HTTP to `url`,
 * falling back to the old HTTP+SSE transport for servers that refuse it.
 */
export interface McpServerConfig {
  /** Letters, digits, `_` and `-`; the tools are named `mcp__<id>__<tool>`. */
  id: string
  transport: McpTransportKind
  command?: string
  args?: string[]
  /** Extra environment variables of the server process (secret values). */
  env?: Dict<string>
  /** Working directory of the server process; default Koishi's base dir. */
  cwd?: string
  url?: string
  /** Extra HTTP headers, e.g. `Authorization` (secret values). */
  headers?: Dict<string>
  /** A disabled server is not connected and its tools are hidden. */
  enabled: boolean
  /** Time limit of one tool call in ms (RuleGo seed: 120000). */
  timeout: number
  /** Time limit of connecting and `initialize` in ms. */
  startupTimeout: number
  /** Tool names or wildcards to take from the server; empty takes every tool. */
  tools: string[]
}

/** Where approval requests of calls from MCP clients go: a channel of a bot. */
export interface McpApprovalChannel {
  platform: string
  channelId: string
  guildId?: string
  selfId?: string
}

/**
 * The MCP server this plugin serves ("self", issue "MCP", item 7): the
 * tools visible to one configured identity, over Streamable HTTP at `path`
 * of Koishi's own server, for clients that send `Authorization: Bearer <token>`.
 */
export interface McpSelfConfig {
  /** Off by default; without a token the server is not mounted. */
  enabled: boolean
  path: string
  token: string
  /** Authority level of every call from an MCP client (0–5). */
  authority: number
  /** The user id calls from MCP clients are made and recorded as. */
  userId: string
  /** The tool set served (visibility layer 2): include / exclude patterns. */
  tools: { include: string[]; exclude: string[] }
  /** Where approvals are asked; empty: calls that need approval are denied. */
  approvalChannel: McpApprovalChannel
}

/** The `mcp` section of the config. */
export interface McpOptions {
  servers: McpServerConfig[]
  /** First delay before reconnecting a server that died, in ms; doubles per failure. */
  retryDelay: number
  /** Longest delay between reconnection attempts, in ms. */
  maxRetryDelay: number
  server: McpSelfConfig
}

export interface McpConfig {
  mcp: McpOptions
}

const secretDict = Schema.dict(Schema.string().role('secret')).role('table')

const common = Schema.object({
  id: Schema.string().pattern(/^[a-zA-Z0-9_-]{1,32}$/).required(),
  transport: Schema.union(['stdio', 'http']).default('stdio'),
  enabled: Schema.boolean().default(true),
  timeout: Schema.natural().role('ms').min(1).default(120000),
  startupTimeout: Schema.natural().role('ms').min(1).default(30000),
  tools: Schema.array(String).role('table').default([]),
})

const byTransport = Schema.union([
  Schema.object({
    transport: Schema.const('stdio'),
    command: Schema.string().required(),
    args: Schema.array(String).role('table').default([]),
    env: secretDict.default({}),
    cwd: Schema.string(),
  }),
  Schema.object({
    transport: Schema.const('http').required(),
    url: Schema.string().role('link').required(),
    headers: secretDict.default({}),
  }),
])

export const McpServerConfig: Schema<McpServerConfig> = Schema.intersect([common, byTransport]) as any

export const McpSelfConfig: Schema<McpSelfConfig> = Schema.object({
  enabled: Schema.boolean().default(false),
  path: Schema.string().default('/chatluna-tools/mcp'),
  token: Schema.string().role('secret').default(''),
  authority: Schema.natural().max(5).default(1),
  userId: Schema.string().default('mcp-client'),
  tools: Schema.object({
    include: Schema.array(String).role('table').default([]),
    exclude: Schema.array(String).role('table').default(['mcp__*']),
  }),
  approvalChannel: Schema.object({
    platform: Schema.string().default(''),
    channelId: Schema.string().default(''),
    guildId: Schema.string(),
    selfId: Schema.string(),
  }),
})

export const McpConfig: Schema<McpConfig> = configSection('mcp', Schema.object({
  mcp: Schema.object({
    servers: Schema.array(McpServerConfig).default([]),
    retryDelay: Schema.natural().role('ms').min(10).default(1000),
    maxRetryDelay: Schema.natural().role('ms').min(10).default(60000),
    server: McpSelfConfig,
  }),
}))
