import { Dict } from 'koishi'

/*
 * Chat Completions messages (https://platform.openai.com/docs/api-reference/chat/create),
 * as the runner keeps them and as it sends them back.
 */

/** One tool call of an assistant message, after the runner has repaired it. */
export interface ChatToolCall {
  /** Never empty: a missing or empty id from the model is replaced by a generated one. */
  id: string
  type: 'function'
  function: { name: string; arguments: string }
}

export interface SystemMessage {
  role: 'system'
  content: string
}

export interface UserMessage {
  role: 'user'
  content: string
}

export interface AssistantMessage {
  role: 'assistant'
  /** `null` when the model sent none; sent back as `''` (see {@link toWireMessages}). */
  content: string | null
  tool_calls?: ChatToolCall[]
  /**
   * DeepSeek's thinking text. DeepSeek requires it back on every assistant
   * message that made tool calls, in all later requests ("the
   * reasoning_content in the thinking mode must be passed back to the API",
   * https://api-docs.deepseek.com/guides/thinking_mode), so it is kept
   * exactly as received (even `''`) when the endpoint sent the field.
   */
  reasoning_content?: string
}

export interface ToolMessage {
  role: 'tool'
  tool_call_id: string
  content: string
}

export type ChatMessage = SystemMessage | UserMessage | AssistantMessage | ToolMessage

/** Token counts as the endpoint reported them (any of the fields may be missing). */
export interface Usage {
  prompt_tokens?: number
  completion_tokens?: number
  total_tokens?: number
}

/**
 * A tool call as the endpoint sent it, before repair: the id may be empty,
 * the name empty, the arguments incomplete JSON.
 */
export interface RawToolCall {
  id: string
  name: string
  arguments: string
}

/** What one model request produced. */
export interface CompletionResult {
  /** The text, `null` when the endpoint sent no text at all. */
  content: string | null
  toolCalls: RawToolCall[]
  /** Set when the endpoint sent `reasoning_content` (DeepSeek, Qwen, vLLM). */
  reasoningContent?: string
  /** Other reasoning text (`reasoning` of Groq, Ollama, vLLM), kept for logs only. */
  reasoning?: string
  finishReason?: string
  usage?: Usage
  /** The model name the endpoint reported. */
  model?: string
}

/**
 * The messages as they go on the wire. Strict endpoints reject an
 * assistant message whose `content` is `null` (reported: HTTP 400), so
 * `null` becomes `''`; every other field is sent as kept. The history
 * itself is not changed.
 */
export function toWireMessages(messages: ChatMessage[]): Dict[] {
  return messages.map((message) => {
    if (message.role !== 'assistant') return message
    const wire: Dict = { role: 'assistant', content: message.content ?? '' }
    if (message.tool_calls?.length) wire.tool_calls = message.tool_calls
    if (message.reasoning_content !== undefined) wire.reasoning_content = message.reasoning_content
    return wire
  })
}
