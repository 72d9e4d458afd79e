import { Dict } from 'koishi'
import { CompletionResult, RawToolCall } from './messages'

/*
 * Reading Chat Completions responses as real endpoints send them (see the
 * recorded fixtures in the tests): `content` may be a string, `null`, or
 * missing; tool calls may lack `index` (Mistral) or `type`, repeat an empty
 * `id: ""` on continuation chunks (Qwen on DashScope), arrive whole in one
 * chunk or in fragments of a few characters; arguments may be a JSON string
 * or (some servers) an object; reasoning may come as `reasoning_content`
 * (DeepSeek) or `reasoning` (Groq, Ollama, vLLM); the finish reason and the
 * usage may share a chunk or come separately.
 */

/** A response the endpoint sent that cannot be read as a chat completion. */
export class CompletionFormatError extends Error {}

/** An error object the endpoint sent inside a 200 response or a stream. */
export class CompletionErrorEvent extends Error {
  constructor(message: string, public detail: Dict) {
    super(message)
  }
}

function argumentsText(value: unknown): string {
  if (typeof value === 'string') return value
  if (value === undefined || value === null) return ''
  try {
    return JSON.stringify(value)
  } catch {
    return ''
  }
}

function errorOf(body: Dict): CompletionErrorEvent | undefined {
  const error = body?.error
  if (!error) return
  const message = typeof error === 'string' ? error : error.message ?? JSON.stringify(error)
  return new CompletionErrorEvent(String(message), typeof error === 'object' ? error : { message })
}

/**
 * Reads a non-streamed completion (`object: "chat.completion"`): the first
 * choice's message. Throws `CompletionErrorEvent` for an `{ error }` body
 * and `CompletionFormatError` for a body without a message.
 */
export function parseCompletion(body: unknown): CompletionResult {
  if (!body || typeof body !== 'object') throw new CompletionFormatError('the response is not a JSON object')
  const error = errorOf(body as Dict)
  if (error) throw error
  const choice = (body as Dict).choices?.[0]
  const message = choice?.message
  if (!message || typeof message !== 'object') throw new CompletionFormatError('the response has no choices[0].message')
  const toolCalls: RawToolCall[] = []
  for (const call of Array.isArray(message.tool_calls) ? message.tool_calls : []) {
    toolCalls.push({
      id: typeof call?.id === 'string' ? call.id : '',
      name: typeof call?.function?.name === 'string' ? call.function.name : '',
      arguments: argumentsText(call?.function?.arguments),
    })
  }
  // The legacy single `function_call` (still sent by some servers).
  if (!toolCalls.length && message.function_call && typeof message.function_call.name === 'string') {
    toolCalls.push({ id: '', name: message.function_call.name, arguments: argumentsText(message.function_call.arguments) })
  }
  const result: CompletionResult = {
    content: contentText(message.content),
    toolCalls,
    finishReason: choice.finish_reason ?? undefined,
    usage: (body as Dict).usage ?? undefined,
    model: (body as Dict).model,
  }
  if (typeof message.reasoning_content === 'string') result.reasoningContent = message.reasoning_content
  if (typeof message.reasoning === 'string') result.reasoning = message.reasoning
  return result
}

/** `content` as text: a string, the text parts of a list, or `null`. */
function contentText(content: unknown): string | null {
  if (typeof content === 'string') return content
  if (Array.isArray(content)) {
    return content.map((part) => typeof part === 'string' ? part : part?.type === 'text' ? part.text ?? '' : '').join('')
  }
  return null
}

/**
 * Accumulates streamed chunks (`object: "chat.completion.chunk"`) into one
 * result. Tool calls are keyed by `index`; a fragment without `index` (e.g.
 * Mistral's whole call in one chunk) starts a new call when it carries a new
 * id, else continues the last one. An empty `id` or `name` on a later
 * fragment never replaces a known one; argument fragments are joined in
 * order.
 */
export class CompletionAccumulator {
  private content: string | null = null
  private reasoningContent?: string
  private reasoning?: string
  private calls: RawToolCall[] = []
  private byIndex = new Map<number, RawToolCall>()
  /** Calls by their first id: a stream of many calls without `index` is joined in linear time. */
  private byId = new Map<string, RawToolCall>()
  private finishReason?: string
  private usage?: CompletionResult['usage']
  private model?: string
  /** Whether any chunk arrived. */
  received = false

  /** Adds one parsed chunk. Throws `CompletionErrorEvent` for an `{ error }` chunk. */
  push(chunk: unknown) {
    if (!chunk || typeof chunk !== 'object') throw new CompletionFormatError('a stream chunk is not a JSON object')
    const error = errorOf(chunk as Dict)
    if (error) throw error
    this.received = true
    const body = chunk as Dict
    if (body.usage) this.usage = body.usage
    if (typeof body.model === 'string') this.model = body.model
    for (const choice of Array.isArray(body.choices) ? body.choices : []) {
      if ((choice?.index ?? 0) !== 0) continue
      if (choice.finish_reason) this.finishReason = choice.finish_reason
      const delta = choice.delta ?? choice.message
      if (!delta || typeof delta !== 'object') continue
      const text = contentText(delta.content)
      if (text !== null) this.content = (this.content ?? '') + text
      if (typeof delta.reasoning_content === 'string') this.reasoningContent = (this.reasoningContent ?? '') + delta.reasoning_content
      if (typeof delta.reasoning === 'string') this.reasoning = (this.reasoning ?? '') + delta.reasoning
      for (const fragment of Array.isArray(delta.tool_calls) ? delta.tool_calls : []) this.addFragment(fragment)
    }
  }

  private addFragment(fragment: Dict) {
    if (!fragment || typeof fragment !== 'object') return
    const id = typeof fragment.id === 'string' ? fragment.id : ''
    const indexed = typeof fragment.index === 'number'
    let call = indexed
      ? this.byIndex.get(fragment.index)
      : id ? this.byId.get(id) : this.calls[this.calls.length - 1]
    if (!call) {
      call = { id: '', name: '', arguments: '' }
      this.calls.push(call)
      if (indexed) this.byIndex.set(fragment.index, call)
    }
    if (id && !call.id) {
      call.id = id
      if (!this.byId.has(id)) this.byId.set(id, call)
    }
    const name = fragment.function?.name
    if (typeof name === 'string' && name && !call.name) call.name = name
    call.arguments += argumentsText(fragment.function?.arguments)
  }

  /** The accumulated result. */
  result(): CompletionResult {
    const result: CompletionResult = {
      content: this.content,
      toolCalls: this.calls.map((call) => ({ ...call })),
      finishReason: this.finishReason,
      usage: this.usage,
      model: this.model,
    }
    if (this.reasoningContent !== undefined) result.reasoningContent = this.reasoningContent
    if (this.reasoning !== undefined) result.reasoning = this.reasoning
    return result
  }
}
