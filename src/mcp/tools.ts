import type { Tool } from '@modelcontextprotocol/sdk/types.js'
import { ToolSchema } from '@modelcontextprotocol/sdk/types.js'
import { ToolAnnotations, ToolCall, ToolDefinition, ToolOutput } from '../types'
import { mcpToolName } from '../registry/names'
import { findMatch } from '../visibility/patterns'
import { maxSchemaDepth, nestedDeeperThan } from '../schema/limits'

/** A tool of an MCP server that becomes a tool of `ctx.tools`. */
export interface PlannedTool {
  /** Our name: `mcp__<server>__<tool>`, sanitised and cut to 64 characters. */
  name: string
  tool: Tool
}

/** A tool of an MCP server that was not taken, and why (in English, for logs and `tools.mcp`). */
export interface SkippedTool {
  tool: string
  reason: string
}

/** Which tools of a server are defined, under which names (issue "MCP", item 2). */
export interface ToolPlan {
  tools: PlannedTool[]
  skipped: SkippedTool[]
  /** Tools the filter left out (not an error). */
  filtered: number
}

/**
 * Plans the tools of server `serverId` from its `tools/list` answer (every
 * page, in the server's order): each entry is checked against the MCP tool
 * shape (a malformed one, or one nested more than {@link maxSchemaDepth}
 * levels deep, is skipped with the reason), kept only if `filter`
 * is empty or one of its glob patterns matches the tool's own name or
 * its full name, and named by {@link mcpToolName}. When two tools end up
 * with the same name after sanitising and cutting, the first in the
 * server's order wins and the later one is skipped with a reason naming both.
 */
export function planTools(serverId: string, listed: unknown[], filter: string[] = []): ToolPlan {
  const plan: ToolPlan = { tools: [], skipped: [], filtered: 0 }
  const byName = new Map<string, Tool>()
  for (const raw of listed) {
    const parsed = ToolSchema.safeParse(raw)
    const label = typeof (raw as any)?.name === 'string' ? (raw as any).name : shortJSON(raw)
    if (!parsed.success) {
      plan.skipped.push({ tool: label, reason: `not a valid MCP tool: ${parsed.error.issues.map((issue) => `${issue.path.join('.') || '(tool)'}: ${issue.message}`).join('; ')}` })
      continue
    }
    const tool = parsed.data as Tool
    // Compared, validated, converted and sent to models by recursive code: too deep a schema would break them all.
    const deep = (['inputSchema', 'outputSchema', 'annotations', '_meta'] as const).find((key) => nestedDeeperThan(tool[key], maxSchemaDepth))
    if (deep) {
      plan.skipped.push({ tool: tool.name, reason: `its ${deep} is nested more than ${maxSchemaDepth} levels deep` })
      continue
    }
    const name = mcpToolName(serverId, tool.name)
    if (filter.length && !findMatch(filter, tool.name) && !findMatch(filter, name)) {
      plan.filtered++
      continue
    }
    const first = byName.get(name)
    if (first) {
      plan.skipped.push({
        tool: tool.name,
        reason: `its name becomes "${name}", the same as the name of tool "${first.name}" of this server, which was listed first`,
      })
      continue
    }
    byName.set(name, tool)
    plan.tools.push({ name, tool })
  }
  return plan
}

/** The start of a value as JSON, for a tool without a name; a value JSON cannot encode (too deep) is described instead. */
function shortJSON(value: unknown) {
  if (nestedDeeperThan(value, maxSchemaDepth)) return '(a tool without a name, nested too deep to show)'
  return JSON.stringify(value)?.slice(0, 80) ?? String(value)
}

/**
 * What a tool's MCP annotations mean here (issue "MCP", item 2):
 * `readOnlyHint` → effect `read`, otherwise `exec`; an explicit
 * `destructiveHint: true` on a tool that is not read-only → risk `dangerous`.
 */
export function traitsOf(tool: Tool, timeout: number) {
  const hints = tool.annotations ?? {}
  const effect = hints.readOnlyHint === true ? 'read' as const : 'exec' as const
  const risk = effect === 'exec' && hints.destructiveHint === true ? 'dangerous' as const : undefined
  return { effect, risk, deferred: true, timeout }
}

/** Runs one MCP tool call: the server's own tool name, the validated arguments, the pipeline's call. */
export type McpToolRunner = (tool: string, args: Record<string, unknown>, call: ToolCall) => Promise<ToolOutput>

/**
 * The definition of one planned tool: source `mcp` and owner
 * `{ kind: 'mcp', id }` are the caller's (`define(..., { source: 'mcp' })`);
 * the input schema is kept as JSON Schema `parameters` (validated by ajv in
 * the pipeline); description, title and annotations are kept; the permission
 * action is `tool:<name>` with the arguments as target, for approvers.
 * `timeout` is the server's per-call limit in ms.
 */
export function toDefinition(serverId: string, planned: PlannedTool, timeout: number, runner: McpToolRunner): ToolDefinition {
  const { name, tool } = planned
  const annotations: ToolAnnotations = { ...tool.annotations }
  if (tool.title && !annotations.title) annotations.title = tool.title
  return {
    name,
    description: tool.description || tool.title || tool.annotations?.title || `Tool "${tool.name}" of the MCP server "${serverId}".`,
    parameters: tool.inputSchema,
    owner: { kind: 'mcp', id: serverId },
    traits: traitsOf(tool, timeout),
    annotations,
    permission: (args) => ({ name: `tool:${name}`, target: args && typeof args === 'object' ? args : undefined }),
    run: (args, call) => runner(tool.name, args ?? {}, call),
  }
}

/** A stable text of what the model would see of a tool, to tell whether a re-listed tool changed. */
export function toolSignature(planned: PlannedTool) {
  const { tool } = planned
  return JSON.stringify([tool.name, tool.title, tool.description, tool.inputSchema, tool.annotations])
}
