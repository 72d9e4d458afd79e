import { ReplayResponse } from './replay-server'

/*
 * Inline responses in the exact form of the recorded ones
 * (tests/fixtures/chat-completions), for the cases no recording covers:
 * the failures from public reports and the guards.
 */

export interface ToolCallShape {
  id?: string
  name: string
  arguments: string
}

/** A non-streamed `chat.completion` with one assistant message. */
export function completion(message: { content?: string | null; tool_calls?: ToolCallShape[]; [key: string]: unknown }, finish?: string): ReplayResponse {
  const { tool_calls, ...rest } = message
  const body: any = {
    id: 'chatcmpl-inline',
    object: 'chat.completion',
    created: 1767225600,
    model: 'inline-model',
    choices: [{
      index: 0,
      message: {
        role: 'assistant',
        ...rest,
        ...tool_calls && {
          tool_calls: tool_calls.map((call, index) => ({
            id: call.id ?? `call_inline_${index}`,
            type: 'function',
            function: { name: call.name, arguments: call.arguments },
          })),
        },
      },
      logprobs: null,
      finish_reason: finish ?? (tool_calls ? 'tool_calls' : 'stop'),
    }],
    usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
  }
  return { body }
}

/** A response that calls tools (content `null`, as OpenAI sends). */
export function calls(...toolCalls: ToolCallShape[]): ReplayResponse {
  return completion({ content: null, tool_calls: toolCalls })
}

/** A final text answer. */
export function answer(text: string): ReplayResponse {
  return completion({ content: text })
}

/** A server-sent event stream of the given chunk objects, ending with `[DONE]`. */
export function stream(chunks: object[], done = true): ReplayResponse {
  const body = chunks.map((chunk) => `data: ${JSON.stringify(chunk)}\n\n`).join('') + (done ? 'data: [DONE]\n\n' : '')
  return { body, contentType: 'text/event-stream' }
}
