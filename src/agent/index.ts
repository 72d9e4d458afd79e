import { Context } from 'koishi'
import { AgentOptions } from './config'
import { AgentRunner } from './runner'
import { defineSubAgents } from './sub-agents'
import { applyAgentCommand } from '../commands/agent'
import { completionsURL } from './provider'

export { AgentRunner } from './runner'
export { ChatProvider, completionsURL } from './provider'
export { ProviderError } from './errors'
export type { AgentOptions, SubAgentConfig } from './config'

/**
 * Starts the agent when `agent.enabled` (issue "Agent runner"): needs the
 * `tools` and `http` services (Koishi's `http` plugin; the agent waits for
 * it). Sets `ctx.tools.agent` while running, defines the sub-agent tools and
 * the chat command.
 */
export function applyAgent(ctx: Context, options: AgentOptions) {
  if (!options.enabled) return
  ctx.inject(['tools', 'http'], (ctx) => {
    const tools = ctx.tools
    const runner = new AgentRunner(ctx, tools, () => options)
    tools.agent = runner
    ctx.on('dispose', () => {
      if (tools.agent === runner) tools.agent = undefined
    })
    const logger = ctx.logger('chatluna-tools')
    if (!options.model) logger.warn('the agent is enabled but agent.model is empty: set the model name')
    else logger.info('agent: model %s at %s', options.model, completionsURL(options.baseURL))
    defineSubAgents(ctx, runner, options.subAgents)
    applyAgentCommand(ctx, runner, options)
  })
}
