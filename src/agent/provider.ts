import { Dict, HTTP } from 'koishi'
import { ChatMessage, CompletionResult, toWireMessages } from './messages'
import { CompletionAccumulator, CompletionErrorEvent, CompletionFormatError, parseCompletion } from './completion'
import { readServerSentEvents, StreamReadError } from './sse'
import { ProviderError } from './errors'

/** Where and how to reach an OpenAI-compatible Chat Completions endpoint. */
export interface ProviderOptions {
  /** API root such as `https://api.openai.com/v1`, or the full `…/chat/completions` URL. */
  baseURL: string
  /** Sent as `Authorization: Bearer <apiKey>` when not empty. */
  apiKey: string
  model: string
  headers: Dict<string>
  /** ms: the whole response when not streaming; the gap between two chunks when streaming. 0 = none. */
  timeout: number
  stream: boolean
  /** ms: the whole response, streamed or not, however steadily chunks come. 0 = none. */
  responseTimeout: number
}

/** One model request. */
export interface CompletionRequest {
  messages: ChatMessage[]
  /** Tool declarations in an OpenAI dialect; left out of the request when empty. */
  tools?: unknown[]
  /** `none` makes the model answer in text (used by the repetition guard). */
  toolChoice?: 'auto' | 'none'
}

/** Most characters of an error body read for the message. */
const maxErrorBody = 64 * 1024

/**
 * Most characters of one response (a JSON body, or the data of all events
 * of a stream, 16 Mi): far above what a model writes, low enough that an
 * endpoint cannot fill the bot's memory.
 */
export const maxResponseLength = 16 * 1024 * 1024

/** The URL of the completions endpoint for an API root (a full `…/chat/completions` URL is kept). */
export function completionsURL(baseURL: string) {
  const trimmed = (baseURL || '').trim().replace(/\/+$/, '')
  return /\/chat\/completions$/.test(trimmed) ? trimmed : `${trimmed}/chat/completions`
}

class Timeout extends Error {}
class ResponseTimeout extends Error {}

/**
 * An OpenAI-compatible Chat Completions client over Koishi's `ctx.http`
 * (issue "Agent runner", item 1). It sends `{ model, messages, tools,
 * tool_choice, stream }`, reads a JSON body or a server-sent event stream
 * (whatever the endpoint answers, whatever was asked), and turns every
 * failure into a {@link ProviderError}: it never throws anything else. A
 * response longer than {@link maxResponseLength} characters, or taking
 * longer than `responseTimeout` as a whole, is refused (`bad-response`,
 * `timeout`).
 */
export class ChatProvider {
  constructor(private http: HTTP, private options: () => ProviderOptions) {}

  /**
   * Sends one request and reads the whole answer, streamed or not. Throws a
   * {@link ProviderError} for every failure (see its codes); aborting
   * `signal` ends the request with `aborted`.
   */
  async complete(request: CompletionRequest, signal?: AbortSignal): Promise<CompletionResult> {
    const options = this.options()
    const url = completionsURL(options.baseURL)
    const body: Dict = { model: options.model, messages: toWireMessages(request.messages), stream: options.stream }
    if (request.tools?.length) {
      body.tools = request.tools
      if (request.toolChoice) body.tool_choice = request.toolChoice
    }
    const headers: Dict<string> = { ...options.headers }
    if (options.apiKey) headers.Authorization = `Bearer ${options.apiKey}`
    if (options.stream) headers.Accept = 'text/event-stream, application/json'

    const controller = new AbortController()
    const onAbort = () => controller.abort(signal.reason)
    if (signal?.aborted) throw new ProviderError('aborted', 'the request was cancelled')
    signal?.addEventListener('abort', onAbort, { once: true })
    const timeout = options.timeout > 0 ? options.timeout : 0
    const responseTimeout = options.responseTimeout > 0 ? options.responseTimeout : 0
    const whole = responseTimeout ? setTimeout(() => controller.abort(new ResponseTimeout()), responseTimeout) : undefined
    let timer: NodeJS.Timeout | undefined
    const startTimer = () => {
      if (timeout) timer = setTimeout(() => controller.abort(new Timeout()), timeout)
    }
    const fail = (error: any): never => {
      if (error instanceof ProviderError) throw error
      if (signal?.aborted) throw new ProviderError('aborted', 'the request was cancelled')
      if (controller.signal.reason instanceof ResponseTimeout) {
        throw new ProviderError('timeout', `the response from ${url} did not end within ${responseTimeout} ms`, { detail: `${responseTimeout} ms` })
      }
      if (controller.signal.reason instanceof Timeout) {
        throw new ProviderError('timeout', `no response from ${url} within ${timeout} ms`, { detail: `${timeout} ms` })
      }
      if (error instanceof StreamReadError) {
        if (error.code === 'idle-timeout') throw new ProviderError('timeout', `the stream from ${url} stalled: ${error.message}`, { detail: `${timeout} ms` })
        throw new ProviderError('bad-response', error.message)
      }
      if (error instanceof CompletionErrorEvent) throw new ProviderError('model-error', error.message, { detail: error.message })
      if (error instanceof CompletionFormatError || error instanceof SyntaxError) {
        throw new ProviderError('bad-response', error.message, { detail: error.message })
      }
      const cause = rootCause(error)
      throw new ProviderError('network', `cannot reach ${url}: ${cause}`, { detail: `${url}: ${cause}` })
    }

    try {
      startTimer()
      let response: HTTP.Response<ReadableStream<Uint8Array>>
      try {
        response = await this.http(url, {
          method: 'POST',
          data: body,
          headers,
          responseType: 'stream',
          validateStatus: () => true,
          signal: controller.signal,
        }) as any
      } catch (error) {
        fail(error)
      }
      const type = response.headers.get('content-type') ?? ''
      if (response.status >= 400) {
        const text = await readText(response.data, maxErrorBody).catch(() => '')
        throw statusError(response.status, text, response.headers)
      }
      if (type.includes('text/event-stream')) {
        // From here the timeout is the gap between chunks.
        clearTimeout(timer)
        return await readStream(response.data, timeout, controller.signal)
      }
      const text = await readText(response.data, maxResponseLength + 1)
      if (text.length > maxResponseLength) throw new CompletionFormatError(`the response is larger than ${maxResponseLength} characters`)
      if (/^\s*(data|event|:)/.test(text) && !/^\s*[{[]/.test(text)) {
        // A stream sent with the wrong content type.
        return await readStream(streamOf(text), 0, controller.signal)
      }
      if (!text.trim()) throw new CompletionFormatError('the response body is empty')
      return parseCompletion(JSON.parse(text))
    } catch (error) {
      fail(error)
    } finally {
      clearTimeout(timer)
      clearTimeout(whole)
      signal?.removeEventListener('abort', onAbort)
    }
  }
}

/** Reads a streamed completion: `data:` events until `[DONE]` (or the end of the body), at most {@link maxResponseLength} characters of data. */
async function readStream(stream: ReadableStream<Uint8Array> | AsyncIterable<Uint8Array>, idleTimeout: number, signal: AbortSignal) {
  const accumulator = new CompletionAccumulator()
  let failure: unknown
  let length = 0
  await readServerSentEvents(stream as any, (event) => {
    const data = event.data.trim()
    if (!data) return
    if (data === '[DONE]') return true
    length += data.length
    if (length > maxResponseLength) {
      failure = new CompletionFormatError(`the streamed response is larger than ${maxResponseLength} characters`)
      return true
    }
    try {
      accumulator.push(JSON.parse(data))
    } catch (error) {
      failure = error instanceof SyntaxError ? new CompletionFormatError(`a stream event is not JSON: ${data.slice(0, 80)}`) : error
      return true
    }
  }, { idleTimeout, signal })
  if (failure) throw failure
  if (!accumulator.received) throw new CompletionFormatError('the stream ended without any completion chunk')
  return accumulator.result()
}

/** The most specific reason in an error's `cause` chain: a system error code such as `ECONNREFUSED`, else the innermost message. */
function rootCause(error: any) {
  let message = String(error?.message ?? error)
  for (let current = error, depth = 0; current && depth < 8; current = current.cause, depth++) {
    if (typeof current.code === 'string' && /^E[A-Z_]+$/.test(current.code)) return current.code
    if (current.message) message = current.message
  }
  return message
}

async function* streamOf(text: string) {
  yield new TextEncoder().encode(text)
}

/** The body as text, at most `limit` characters (the rest is cancelled). */
async function readText(stream: ReadableStream<Uint8Array> | null, limit = Infinity) {
  if (!stream) return ''
  const decoder = new TextDecoder()
  let text = ''
  for await (const chunk of stream as any as AsyncIterable<Uint8Array>) {
    text += decoder.decode(chunk, { stream: true })
    if (text.length >= limit) break
  }
  return text + decoder.decode()
}

/** The error for an HTTP status, with the endpoint's own message when its body has one. */
function statusError(status: number, text: string, headers: Headers) {
  let detail = text.trim()
  try {
    const body = JSON.parse(text)
    const error = body?.error ?? body
    detail = typeof error === 'string' ? error : error?.message ?? body?.message ?? detail
  } catch {}
  detail = String(detail || `HTTP ${status}`)
  if (status === 429) {
    const retry = Number(headers.get('retry-after'))
    return new ProviderError('rate-limit', `rate limited (HTTP 429): ${detail}`, {
      status,
      detail,
      retryAfter: Number.isFinite(retry) && retry > 0 ? retry : undefined,
    })
  }
  if (status === 401 || status === 403) return new ProviderError('auth', `HTTP ${status}: ${detail}`, { status, detail })
  return new ProviderError('http', `HTTP ${status}: ${detail}`, { status, detail })
}
