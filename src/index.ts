import { Context } from 'koishi'
import { Config } from './config'
import { ToolService } from './service'
import { applyCommands } from './commands'
import { applyBuiltinTools } from './builtin'
import { createToolSearchTool } from './modes/tool-search'
import { locales } from './locales'
import { applyAgent } from './agent'
import { applyMcpCommands } from './commands/mcp'
import { applyMcpServer } from './mcp/server'
import { applyConsole } from './console'

export * from './types'
export * from './service'
export { Config } from './config'
export { ToolRunError } from './pipeline/errors'
export { formatForModel } from './pipeline/result'
export type { PermissionGate, PermissionVerdict } from './permission/gate'
export type { ToolExplanation } from './visibility/explain'
export type { SceneRule } from './visibility/scene'
export type { ToolPolicy } from './permission/policy'
export type { PermissionService, DecideOptions, ModeExplanation, ModeLayer } from './permission/service'
export type { PermissionDecision, PartDecision, Decision } from './permission/decision'
export type { PermissionMode } from './permission/modes'
export type { PermissionSubject } from './permission/subject'
export type { PermissionRule, RuleInput, RuleEffect, RuleValidity } from './permission/rules'
export type { Approval, ApprovalAnswer, AnswerResult, Approver } from './permission/approvals'
export type { AuditEntry } from './permission/audit'
export type { PolicyEntry } from './permission/policy-store'
export { PermissionInputError } from './permission/rules'
export type { ToolMode, DeclarationOptions, ToolDeclaration } from './modes'
export { conversationKey } from './modes/loaded'
export { AgentRunner, ChatProvider, ProviderError } from './agent'
export type { AgentOptions, SubAgentConfig } from './agent'
export type { McpServerStatus, McpServerState, McpTestReport } from './mcp/connection'
export type { McpServerConfig, McpSelfConfig } from './mcp/config'
export type { McpManager } from './mcp/manager'
export type { McpSelfProvider } from './mcp/self'
export type { Skill, SkillExplanation, SkillInfo, SkillManager } from './skills'
export { analyzeCommandLine } from './builtin/shell/analyze'
export type { FoundCommand, ShellAnalysis } from './builtin/shell/analyze'

export const name = 'chatluna-tools'
export const inject = {
  optional: ['database', 'console', 'http', 'server'],
}

export const usage = `
The tool system for LLM agents: every tool call goes through one pipeline
(validate → authorise → hooks → run → record). See the README for the
configuration reference and how plugins define tools.
`

export function apply(ctx: Context, config: Config) {
  for (const [locale, messages] of Object.entries(locales)) {
    ctx.i18n.define(locale, messages)
  }
  ctx.plugin(ToolService, config)

  ctx.inject(['tools'], (ctx) => {
    applyBuiltinTools(ctx, config)
    const tools = ctx.tools
    tools.define(createToolSearchTool({
      search: tools.searchMode,
      config: () => config,
      locales: (scope) => tools.scopeLocales(scope),
    }), { source: 'builtin' })
    applyCommands(ctx, config)
    applyMcpCommands(ctx)
  })
  applyAgent(ctx, config.agent)

  if (config.mcp.server.enabled) {
    ctx.inject(['tools', 'server'], (ctx) => applyMcpServer(ctx, ctx.tools.mcp.self, config.mcp.server))
  }

  ctx.inject(['tools', 'console'], (ctx) => applyConsole(ctx, config))
}
