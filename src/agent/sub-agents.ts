import { Context, Schema } from 'koishi'
import { ToolRunError } from '../pipeline/errors'
import { SubAgentConfig } from './config'
import { AgentRunner } from './runner'

/** The system prompt of a sub-agent whose configuration gives none. */
export const defaultSubAgentPrompt = [
  'You are a sub-agent: another agent gave you the task below.',
  'Use your tools to complete it, then reply with the result only, in plain text.',
].join(' ')

/**
 * Defines each configured sub-agent as a tool with source `agent` (issue
 * "Agent runner", item 6; RuleGo seed, sub-agent tools): `{ task }` in, the
 * sub-agent's final text out. The sub-agent runs its own loop with its own
 * system prompt, tool set and step limit, in the caller's scope: the same
 * session, authority, turn and approval channel, so every nested call goes
 * through the same pipeline and permissions as the outer caller's. Its tool
 * set lies within the caller's (`within`), and the caller stays in
 * `delegatedBy`, so the caller's agent mode and agent deny/ask rules bind
 * the sub-agent too: delegating never widens what may run. A
 * sub-agent never sees itself or another sub-agent (no recursion). The tool
 * is `parallel` (it must never hold the serial lock its own nested calls
 * wait for) and `read` (delegating changes nothing; each nested call is
 * judged on its own). It fails with `max-steps` or `model-error` when the
 * sub-agent gives no answer.
 */
export function defineSubAgents(ctx: Context, runner: AgentRunner, subAgents: SubAgentConfig[]) {
  const names = subAgents.map((agent) => agent.name)
  for (const agent of subAgents) {
    ctx.tools.define({
      name: agent.name,
      description: agent.description,
      args: Schema.object({
        task: Schema.string().required().description('The complete task for the sub-agent: what to do and what to report back.'),
      }),
      traits: { effect: 'read', parallel: true, timeout: 0 },
      async run({ task }, call) {
        // Within the caller's tool set, and bound by the caller's agent modes and rules.
        const caller = call.scope
        const scope = {
          ...caller,
          agent: agent.name,
          delegatedBy: [...caller.delegatedBy ?? [], ...caller.agent ? [caller.agent] : []],
          tools: { include: agent.tools?.include ?? [], exclude: [...(agent.tools?.exclude ?? []), ...names], within: caller.tools },
        }
        const turn = await runner.run({
          scope,
          text: task,
          systemPrompt: agent.systemPrompt || defaultSubAgentPrompt,
          maxSteps: agent.maxSteps,
          signal: call.signal,
          onToolCalls: (calls) => call.progress({ message: calls.map((item) => item.call.name).join(', ') }),
        })
        if (turn.status === 'error') {
          throw new ToolRunError('model-error', `The sub-agent "${agent.name}" could not reach its model: ${turn.error?.message}`)
        }
        if (turn.status === 'max-steps') {
          throw new ToolRunError('max-steps', `The sub-agent "${agent.name}" used all ${agent.maxSteps} steps without finishing.${turn.text ? ' Last text: ' + turn.text : ''}`, {
            hint: 'Give it a smaller, more precise task.',
          })
        }
        return turn.text || '(the sub-agent gave no answer)'
      },
    }, { source: 'agent' })
  }
}
