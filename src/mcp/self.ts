import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js'
import { ToolAnnotations, ToolProgress, ToolScope } from '../types'
import type { ToolService } from '../service'
import { RegisteredTool } from '../registry/registry'
import { declareTool } from '../modes'
import { McpSelfConfig } from './config'
import { toMcpResult } from './content'

/** Options of one call through the provider. */
export interface McpSelfCallOptions {
  /** Aborts the call (an MCP client's `notifications/cancelled`). */
  signal?: AbortSignal
  onProgress?: (event: ToolProgress) => void
  /** The call id to record; generated when absent. */
  id?: string
}

/**
 * The hints a client sees for one of our tools: the definition's own
 * `annotations`, else derived from its traits (`read` effect →
 * `readOnlyHint`; risk `dangerous`/`critical` → `destructiveHint`).
 */
export function annotationsOf(entry: RegisteredTool): ToolAnnotations {
  const { definition } = entry
  if (definition.annotations) return { ...definition.annotations }
  const traits = definition.traits ?? {}
  const readOnly = traits.effect === 'read'
  return {
    readOnlyHint: readOnly,
    destructiveHint: !readOnly && (traits.risk === 'dangerous' || traits.risk === 'critical'),
  }
}

/**
 * This plugin's tools as an MCP tool provider, in process: what the HTTP
 * server serves, and what `ctx.tools.mcp.self` offers without the network
 * (RuleGo seed, "进程内模式（self）"). `list` and `call` take a scope; when
 * none is given they use the configured identity (`mcp.server`: platform
 * `mcp`, its user id, authority, tool set and approval channel, agent
 * `mcp-server`). A given scope is used as it is, not merged.
 */
export class McpSelfProvider {
  constructor(private service: ToolService, private config: () => McpSelfConfig) {}

  /** The configured identity of calls from MCP clients, as a scope. */
  scope(): ToolScope {
    const config = this.config()
    const channel = config.approvalChannel
    return {
      platform: 'mcp',
      userId: config.userId,
      authority: config.authority,
      agent: 'mcp-server',
      tools: { include: config.tools?.include ?? [], exclude: config.tools?.exclude ?? [] },
      approvalChannel: channel?.platform && channel?.channelId
        ? {
          platform: channel.platform,
          channelId: channel.channelId,
          ...channel.guildId ? { guildId: channel.guildId } : {},
          ...channel.selfId ? { selfId: channel.selfId } : {},
        }
        : undefined,
    }
  }

  /** The tools visible in the scope as MCP tools (`tools/list`), in name order. */
  list(scope: ToolScope = this.scope()): Tool[] {
    const locales = this.service.locales().slice()
    if (scope.locale) locales.unshift(scope.locale)
    // `list` leaves out mode tools (tool_search): an MCP client chooses tools itself.
    return (this.service.list(scope) as RegisteredTool[]).map((entry) => {
      const declaration = declareTool(entry, scope, locales)
      const parameters = declaration.parameters
      const annotations = annotationsOf(entry)
      const tool: Tool = {
        name: declaration.name,
        description: declaration.description,
        inputSchema: (parameters?.type === 'object' ? parameters : { ...parameters, type: 'object' }) as Tool['inputSchema'],
        annotations,
      }
      if (annotations.title) tool.title = annotations.title
      return tool
    })
  }

  /**
   * Runs one call through the whole pipeline (`tools/call`) and returns the
   * MCP result; a refused or failed call is `isError: true` with the text a
   * model reads. Never rejects for a tool's fault.
   */
  async call(name: string, args: unknown, scope: ToolScope = this.scope(), options: McpSelfCallOptions = {}): Promise<CallToolResult> {
    const result = await this.service.call({
      name,
      args: args ?? {},
      scope,
      id: options.id,
      signal: options.signal,
      onProgress: options.onProgress,
    })
    return toMcpResult(result)
  }
}
