import { readFileSync } from 'fs'
import { createServer, IncomingMessage, Server, ServerResponse } from 'http'
import { AddressInfo } from 'net'
import { resolve } from 'path'

/*
 * A small OpenAI-compatible Chat Completions server for tests: it answers
 * each POST …/chat/completions with the next queued response — the bytes
 * of a recorded fixture (tests/fixtures/chat-completions, copied unchanged
 * from ../shared/fixtures) or an inline body — and records every request.
 * Its strict mode rejects, with HTTP 400 and an OpenAI-style error body,
 * the requests real endpoints reject (see `strictProblems`).
 */

export const fixtureDir = resolve(__dirname, '../fixtures/chat-completions')

/** The bytes of a fixture file. */
export function fixture(name: string): Buffer {
  return readFileSync(resolve(fixtureDir, name))
}

export interface ReplayResponse {
  /** A fixture file name; `.sse` is served as `text/event-stream`, `.json` as `application/json`. */
  fixture?: string
  /** An inline body (an object is sent as JSON). */
  body?: string | object
  status?: number
  contentType?: string
  headers?: Record<string, string>
  /** Send the body in pieces of this many bytes (default 37: splits events, lines and UTF-8 characters). */
  chunkSize?: number
  /** ms to wait before answering. */
  delay?: number
  /** Close the connection after this many bytes of the body (a broken stream). */
  cutAfter?: number
}

export interface RecordedRequest {
  path: string
  headers: Record<string, string | string[]>
  body: any
  /** Why strict mode refused it, if it did. */
  rejected?: string
}

export interface StrictChecks {
  /** Reject what endpoints reject in general (null content, broken tool-call history, …). */
  enabled: boolean
  /** DeepSeek thinking mode: an assistant message with tool calls must carry `reasoning_content`. */
  reasoningContent?: boolean
}

export interface ReplayServer {
  /** API root to configure as `baseURL`, e.g. `http://127.0.0.1:1234/v1`. */
  baseURL: string
  requests: RecordedRequest[]
  strict: StrictChecks
  enqueue(...responses: (ReplayResponse | string)[]): void
  /** Responses not served yet. */
  pending(): number
  close(): Promise<void>
}

const toolNamePattern = /^[a-zA-Z0-9_-]{1,64}$/

/**
 * Problems a strict endpoint reports for a request body, in its words. The
 * rules come from the reported failures the issue lists and from what
 * OpenAI, Ollama and vLLM validate: `content: null` refused; every tool call
 * in the history with a non-empty id, type `function`, a legal name and
 * arguments that parse as a JSON object; each answered by a tool message
 * before the conversation goes on; no tool message without its call; no
 * empty `tools` list; `tool_choice` only with tools; and, for DeepSeek's
 * thinking mode, `reasoning_content` on assistant messages with tool calls.
 */
export function strictProblems(body: any, checks: StrictChecks): string[] {
  const problems: string[] = []
  if (!body || typeof body !== 'object') return ['the body is not a JSON object']
  if (typeof body.model !== 'string' || !body.model) problems.push("'model' is required")
  if (!Array.isArray(body.messages) || !body.messages.length) return [...problems, "'messages' must be a non-empty array"]
  let pending = new Set<string>()
  body.messages.forEach((message: any, index: number) => {
    const at = `messages[${index}]`
    if (!['system', 'user', 'assistant', 'tool', 'developer'].includes(message?.role)) problems.push(`${at}.role is invalid`)
    if (message.role !== 'tool' && pending.size) {
      problems.push(`An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. Missing: ${[...pending].join(', ')}`)
      pending = new Set()
    }
    if ('content' in message && message.content === null) problems.push(`${at}.content: null is not a valid value`)
    if (message.role === 'assistant') {
      if (!('content' in message) && !message.tool_calls) problems.push(`${at}.content is required`)
      for (const [callIndex, call] of (message.tool_calls ?? []).entries()) {
        const where = `${at}.tool_calls[${callIndex}]`
        if (typeof call?.id !== 'string' || !call.id) problems.push(`${where}.id: empty string`)
        if (call?.type !== 'function') problems.push(`${where}.type must be "function"`)
        if (typeof call?.function?.name !== 'string' || !toolNamePattern.test(call.function.name)) problems.push(`${where}.function.name is invalid`)
        let args: any
        try {
          args = JSON.parse(call?.function?.arguments)
        } catch {}
        if (!args || typeof args !== 'object' || Array.isArray(args)) problems.push(`${where}.function.arguments: invalid tool call arguments`)
        if (call?.id) pending.add(call.id)
      }
      if (checks.reasoningContent && message.tool_calls?.length && typeof message.reasoning_content !== 'string') {
        problems.push('The reasoning_content in the thinking mode must be passed back to the API.')
      }
    }
    if (message.role === 'tool') {
      if (typeof message.tool_call_id !== 'string' || !pending.has(message.tool_call_id)) {
        problems.push(`${at}: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'`)
      }
      pending.delete(message.tool_call_id)
      if (typeof message.content !== 'string' && !Array.isArray(message.content)) problems.push(`${at}.content must be a string`)
    }
  })
  if (pending.size) problems.push(`tool calls without a response: ${[...pending].join(', ')}`)
  if ('tools' in body) {
    if (!Array.isArray(body.tools) || !body.tools.length) problems.push("'tools' must be a non-empty array when given")
    for (const tool of body.tools ?? []) {
      if (tool?.type !== 'function' || !toolNamePattern.test(tool?.function?.name ?? '')) problems.push('a tool declaration is invalid')
      if (tool?.function?.parameters?.type !== 'object') problems.push(`tool ${tool?.function?.name}: parameters must be an object schema`)
    }
  } else if ('tool_choice' in body) {
    problems.push("'tool_choice' is only allowed when 'tools' are specified")
  }
  return problems
}

function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = ''
    request.setEncoding('utf8')
    request.on('data', (chunk) => text += chunk)
    request.on('end', () => resolve(text))
    request.on('error', reject)
  })
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

async function send(response: ServerResponse, reply: ReplayResponse) {
  let bytes: Buffer
  let type = reply.contentType
  if (reply.fixture) {
    bytes = fixture(reply.fixture)
    type ??= reply.fixture.endsWith('.sse') ? 'text/event-stream' : 'application/json'
  } else if (typeof reply.body === 'string') {
    bytes = Buffer.from(reply.body)
    type ??= 'application/json'
  } else {
    bytes = Buffer.from(JSON.stringify(reply.body ?? {}))
    type ??= 'application/json'
  }
  if (reply.delay) await sleep(reply.delay)
  response.writeHead(reply.status ?? 200, { 'content-type': type, ...reply.headers })
  const size = reply.chunkSize ?? 37
  const end = reply.cutAfter ?? bytes.length
  for (let offset = 0; offset < end; offset += size) {
    response.write(bytes.subarray(offset, Math.min(offset + size, end)))
    await new Promise(setImmediate)
  }
  if (reply.cutAfter !== undefined) response.socket?.destroy()
  else response.end()
}

/** Starts a replay server on 127.0.0.1 (a free port). */
export async function startReplayServer(strict: Partial<StrictChecks> = {}): Promise<ReplayServer> {
  const queue: ReplayResponse[] = []
  const requests: RecordedRequest[] = []
  const checks: StrictChecks = { enabled: true, ...strict }
  const server: Server = createServer(async (request, response) => {
    const text = await readBody(request)
    let body: any
    try {
      body = JSON.parse(text)
    } catch {
      body = text
    }
    const record: RecordedRequest = { path: request.url ?? '', headers: request.headers as any, body }
    requests.push(record)
    if (request.method !== 'POST' || !/\/chat\/completions$/.test(request.url ?? '')) {
      response.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: 'not found' } }))
      return
    }
    const problems = checks.enabled ? strictProblems(body, checks) : []
    if (problems.length) {
      record.rejected = problems.join('; ')
      response.writeHead(400, { 'content-type': 'application/json' })
      response.end(JSON.stringify({ error: { message: record.rejected, type: 'invalid_request_error', param: null, code: null } }))
      return
    }
    const next = queue.shift()
    if (!next) {
      response.writeHead(500, { 'content-type': 'application/json' })
      response.end(JSON.stringify({ error: { message: 'the replay queue is empty' } }))
      return
    }
    await send(response, next).catch(() => {})
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    requests,
    strict: checks,
    enqueue(...responses) {
      queue.push(...responses.map((item) => typeof item === 'string' ? { fixture: item } : item))
    },
    pending: () => queue.length,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections?.()
      server.close(() => resolve())
    }),
  }
}
