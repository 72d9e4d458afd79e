import { Awaitable, Context, Random, Session } from 'koishi'
import { ToolScope } from '../types'
import { ToolService } from '../service'
import { AgentOptions } from './config'
import { ChatMessage } from './messages'
import { ChatProvider } from './provider'
import { ConversationHistory } from './history'
import { LoopResult, PlannedCall, runLoop } from './loop'

declare module 'koishi' {
  interface Events {
    /**
     * Before each agent turn: push extra sections of the system prompt for
     * this scope (e.g. the skill catalog). Listeners run in parallel; a
     * throwing listener is logged and skipped.
     */
    'chatluna/agent-prompt'(scope: ToolScope, sections: string[]): Awaitable<void>
  }
}

/** The agent id of the chat agent in scopes (visibility layer 2, explanations, the call log). */
export const chatAgentId = 'agent'

/** Options of one run without conversation history (sub-agents, plugins). */
export interface AgentRunOptions {
  scope: ToolScope
  /** The user message (or the task of a sub-agent). */
  text: string
  /** The system prompt; default the configured one. */
  systemPrompt?: string
  /** Earlier messages to continue from. */
  history?: ChatMessage[]
  maxSteps?: number
  signal?: AbortSignal
  onToolCalls?: (calls: PlannedCall[], text: string | null) => Awaitable<void>
}

/** A finished turn: the loop's result and the messages it added after the system prompt. */
export interface AgentTurn extends LoopResult {
  /** The user message and everything the turn added after it. */
  messages: ChatMessage[]
}

/**
 * The agent runner (issue "Agent runner"): a Chat Completions provider,
 * the conversation history, and turns run through {@link runLoop}. One
 * conversation (a channel, or a user in private chat) runs one turn at a
 * time; later messages wait their turn. Available as `ctx.tools.agent`
 * while the agent is enabled.
 */
export class AgentRunner {
  readonly provider: ChatProvider
  readonly history: ConversationHistory
  private queues = new Map<string, Promise<unknown>>()
  private controller = new AbortController()
  private logger

  constructor(private ctx: Context, private tools: ToolService, readonly config: () => AgentOptions) {
    this.provider = new ChatProvider(ctx.http, () => {
      const { baseURL, apiKey, model, headers, timeout, stream, responseTimeout } = config()
      return { baseURL, apiKey, model, headers, timeout, stream, responseTimeout: responseTimeout ?? 600000 }
    })
    this.history = new ConversationHistory(() => config().historyLimit)
    this.logger = ctx.logger('chatluna-tools')
    ctx.on('dispose', () => this.controller.abort(new Error('the agent was stopped')))
  }

  /** The conversation of a session: its channel, or the user in a private chat. */
  conversationKey(session: Session) {
    return session.isDirect
      ? `${session.platform}:private:${session.userId}`
      : `${session.platform}:${session.guildId ?? ''}:${session.channelId}`
  }

  /**
   * Runs one turn of a chat conversation: the scope of the session (with a
   * new `turn` id), the conversation's history, the configured system
   * prompt. Turns of one conversation run one after another. The turn's
   * messages are kept in the history; a turn that failed before any tool
   * ran leaves no trace, a later failure is kept with a note so the model
   * knows what already happened.
   */
  chat(session: Session, text: string, onToolCalls?: AgentRunOptions['onToolCalls']): Promise<AgentTurn> {
    const key = this.conversationKey(session)
    const previous = this.queues.get(key) ?? Promise.resolve()
    const current = previous.catch(() => {}).then(async () => {
      const scope = this.tools.scope(session, { agent: chatAgentId, turn: `turn_${Random.id(12)}` })
      const turn = await this.run({ scope, text, history: this.history.get(key), onToolCalls })
      const kept = keptMessages(turn)
      if (kept.length) this.history.append(key, kept)
      return turn
    })
    this.queues.set(key, current)
    current.finally(() => {
      if (this.queues.get(key) === current) this.queues.delete(key)
    }).catch(() => {})
    return current
  }

  /** Runs one turn without touching the stored history (sub-agents, plugins). Never throws for model or tool faults. */
  async run(options: AgentRunOptions): Promise<AgentTurn> {
    const config = this.config()
    const system = await this.systemPrompt(options.scope, options.systemPrompt ?? config.systemPrompt)
    const start: ChatMessage[] = system ? [{ role: 'system', content: system }] : []
    const messages: ChatMessage[] = [...start, ...(options.history ?? []), { role: 'user', content: options.text }]
    const first = start.length + (options.history?.length ?? 0)
    const signal = options.signal ? AbortSignal.any([options.signal, this.controller.signal]) : this.controller.signal
    const result = await runLoop({
      provider: this.provider,
      tools: this.tools,
      scope: options.scope,
      messages,
      maxSteps: options.maxSteps ?? config.maxSteps,
      maxToolCalls: config.maxToolCalls,
      dialect: config.dialect,
      signal,
      onToolCalls: options.onToolCalls,
    })
    if (result.error) {
      this.logger.warn('agent request to %s failed (%s): %s', config.baseURL, result.error.code, result.error.message)
    }
    return { ...result, messages: messages.slice(first) }
  }

  /** The system prompt: the configured text plus the sections of `chatluna/agent-prompt` listeners. */
  async systemPrompt(scope: ToolScope, base: string) {
    const sections: string[] = []
    try {
      await this.ctx.parallel('chatluna/agent-prompt', scope, sections)
    } catch (error) {
      this.logger.warn('a chatluna/agent-prompt listener failed: %s', error?.message ?? error)
    }
    return [base, ...sections].map((section) => section?.trim()).filter(Boolean).join('\n\n')
  }
}

/**
 * What of a turn goes into the history: everything when it ended with an
 * answer; after a failure, nothing when no tool ran, otherwise the turn plus
 * an assistant note (so roles keep alternating and the model knows).
 */
function keptMessages(turn: AgentTurn): ChatMessage[] {
  if (turn.status === 'answer' || turn.status === 'stopped') return turn.messages
  if (turn.status === 'error' && !turn.calls.length && turn.messages.length <= 1) return []
  const reason = turn.status === 'max-steps'
    ? 'the step limit was reached before an answer'
    : `the model request failed (${turn.error?.code ?? 'error'})`
  const note = `(This turn ended early: ${reason}.${turn.text ? ' ' + turn.text : ''})`
  return [...turn.messages, { role: 'assistant', content: note }]
}
