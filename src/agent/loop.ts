import { Awaitable } from 'koishi'
import { ToolResult, ToolScope } from '../types'
import { ToolService } from '../service'
import { stripStrictNulls } from '../modes/strict'
import { AssistantMessage, ChatMessage, CompletionResult, RawToolCall } from './messages'
import { ChatProvider } from './provider'
import { ProviderError } from './errors'
import { outcomeNote, repairToolCalls, TurnGuards } from './guards'
import { settleWithin } from '../pipeline/within'

/** A tool call of one step, as the loop will run it. */
export interface PlannedCall {
  /** The repaired call (never-empty id) with the name and arguments the model sent. */
  call: RawToolCall
  /** Set when a guard refused the call: the text the model reads instead of a result. */
  refusal?: string
}

/** A tool call the loop handled, in order. */
export interface HandledCall extends PlannedCall {
  /** The result record, when the call ran through the pipeline. */
  result?: ToolResult
  /** The tool message content the model read. */
  text: string
}

/** Options of {@link runLoop}. */
export interface LoopOptions {
  provider: ChatProvider
  /** The tool service (hold the reference: reading `ctx.tools` goes through a proxy). */
  tools: ToolService
  /** The scope of every call: session, authority, agent, turn. */
  scope: ToolScope
  /** System prompt, earlier turns and the new user message; the loop appends this turn's messages. */
  messages: ChatMessage[]
  /** Most model requests (steps) in this run. */
  maxSteps: number
  /** Most tool calls of one response that run (default 32); the rest are answered "not run". */
  maxToolCalls?: number
  dialect: 'openai' | 'openai-strict'
  signal?: AbortSignal
  /** Called before a batch of tool calls runs, with the model's text of that step (progress messages). */
  onToolCalls?: (calls: PlannedCall[], text: string | null) => Awaitable<void>
}

/**
 * Most tool calls of one response kept in the conversation (at least
 * `maxToolCalls + 1`, so one "not run" answer tells the model); the calls
 * after them are dropped from the assistant message, so a response of
 * thousands of calls cannot make every later request of the turn and the
 * history carry thousands of calls and answers.
 */
export const maxKeptToolCalls = 256

/**
 * How a run ended:
 * - `answer`: the model answered in text (`text`, possibly empty);
 * - `max-steps`: `maxSteps` requests were made and the model still wanted
 *   tools; the calls of the last response did not run;
 * - `stopped`: the model kept calling tools after the repetition guard had
 *   asked it to answer (`tool_choice: "none"`), so the loop stopped;
 * - `error`: a model request failed (`error`).
 */
export interface LoopResult {
  status: 'answer' | 'max-steps' | 'stopped' | 'error'
  text: string
  /** Model requests made. */
  steps: number
  calls: HandledCall[]
  error?: ProviderError
}

/**
 * The agent loop (issue "Agent runner", item 3): request → tool calls →
 * results as tool messages → request … until a text answer or the step
 * limit. Every call goes through `ctx.tools.call` with the scope and the
 * names the model was shown; calls of one step run concurrently when every
 * called tool is parallel (`traits.parallel ?? effect === 'read'`),
 * otherwise in order; at most `maxToolCalls` calls of one response run,
 * the others are answered "not run" (calls after {@link maxKeptToolCalls}
 * are dropped). Guards: see `guards.ts`. When the model has been
 * refused a repeated call twice in a turn, the next request asks for a
 * text answer (`tool_choice: "none"`). Never throws: failures of the
 * endpoint end the run with `status: 'error'`.
 */
export async function runLoop(options: LoopOptions): Promise<LoopResult> {
  const { provider, tools, scope, messages, maxSteps, dialect, signal } = options
  const guards = new TurnGuards()
  const calls: HandledCall[] = []
  let answerOnly = false
  for (let step = 1; step <= maxSteps; step++) {
    const declarations = tools.declarations(scope, { dialect })
    const shown = declarations.map((declaration) => declaration.function.name)
    let completion: CompletionResult
    try {
      completion = await provider.complete({ messages, tools: declarations, toolChoice: answerOnly ? 'none' : undefined }, signal)
    } catch (error) {
      const failure = error instanceof ProviderError ? error : new ProviderError('bad-response', String(error?.message ?? error))
      return { status: 'error', text: '', steps: step, calls, error: failure }
    }
    const text = completion.content ?? ''
    if (!completion.toolCalls.length) {
      messages.push({ role: 'assistant', content: text })
      return { status: 'answer', text, steps: step, calls }
    }
    if (answerOnly) {
      // The model ignored tool_choice "none" (some servers do): stop here.
      messages.push({ role: 'assistant', content: text })
      return { status: 'stopped', text, steps: step, calls }
    }

    // A response asking for hundreds of calls (each may post an approval to the chat) runs only the first
    // ones; beyond `keep`, calls are dropped from the conversation, which every later request carries.
    const limit = options.maxToolCalls ?? 32
    const keep = Math.max(limit + 1, maxKeptToolCalls)
    const asked = completion.toolCalls.length
    const repaired = repairToolCalls(completion.toolCalls.slice(0, keep))
    const assistant: AssistantMessage = { role: 'assistant', content: completion.content, tool_calls: repaired.map((item) => item.wire) }
    if (completion.reasoningContent !== undefined) assistant.reasoning_content = completion.reasoningContent
    messages.push(assistant)

    if (step === maxSteps) {
      for (const { raw } of repaired) {
        messages.push({ role: 'tool', tool_call_id: raw.id, content: 'Not run: this turn reached its step limit.' })
      }
      return { status: 'max-steps', text, steps: step, calls }
    }

    const dropped = asked > keep ? ` The ${asked - keep} calls after the first ${keep} were dropped.` : ''
    const tooMany = `Not run: this response asked for ${asked} tool calls; at most ${limit} run per response.${dropped} Call fewer tools at once.`
    const planned: PlannedCall[] = repaired.map(({ raw }, index) => ({ call: raw, refusal: index < limit ? guards.repetition(raw) : tooMany }))
    // A progress message is a courtesy: a platform that never confirms the send must not hold up the turn.
    await settleWithin(Promise.resolve().then(() => options.onToolCalls?.(planned, completion.content)), progressWait, options.signal).catch(() => {})
    const runnable = planned.filter((item) => !item.refusal)
    const run = (item: PlannedCall) => tools.call({
      name: item.call.name,
      args: argumentsFor(tools, item.call, dialect),
      id: item.call.id,
      scope,
      shown,
      signal,
    })
    const results = new Map<PlannedCall, ToolResult>()
    if (runnable.every((item) => isParallel(tools, item.call.name))) {
      const settled = await Promise.all(runnable.map(run))
      runnable.forEach((item, index) => results.set(item, settled[index]))
    } else {
      for (const item of runnable) results.set(item, await run(item))
    }

    for (const item of planned) {
      const result = results.get(item)
      const content = item.refusal
        ?? [outcomeNote(result), tools.format(result), guards.outcome(item.call, result)].filter(Boolean).join('\n')
      messages.push({ role: 'tool', tool_call_id: item.call.id, content })
      calls.push({ ...item, result, text: content })
    }
    if (guards.refusals >= 2) answerOnly = true
  }
  // Not reached: the last step returns above.
  return { status: 'max-steps', text: '', steps: maxSteps, calls }
}

/** Whether a call may overlap others: the tool's `parallel` trait, default true for `read` tools; unknown names count as parallel. */
function isParallel(tools: ToolService, name: string) {
  const entry = tools.registry.resolve(name)
  if (!entry) return true
  const traits = entry.definition.traits ?? {}
  return traits.parallel ?? (traits.effect ?? 'exec') === 'read'
}

/**
 * The arguments handed to the pipeline: the model's text as it is (the
 * pipeline reports malformed JSON), except under the strict dialect, where
 * `null` for an optional field (how strict mode says "not given") is
 * removed again.
 */
function argumentsFor(tools: ToolService, call: RawToolCall, dialect: LoopOptions['dialect']) {
  if (dialect !== 'openai-strict') return call.arguments
  const entry = tools.registry.resolve(call.name)
  if (!entry) return call.arguments
  try {
    return stripStrictNulls(entry.schema.jsonSchema(), JSON.parse(call.arguments || '{}'))
  } catch {
    return call.arguments
  }
}

/** Longest wait (ms) for the progress messages of one step to be sent before its tools run. */
export const progressWait = 5000
