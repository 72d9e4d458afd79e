import { expect } from 'chai'
import { Schema } from 'koishi'
import { readServerSentEvents, StreamReadError } from '../src/agent/sse'
import { CompletionAccumulator, parseCompletion } from '../src/agent/completion'
import { trimToTurns } from '../src/agent/history'
import { completionsURL } from '../src/agent/provider'
import { ChatMessage } from '../src/agent/messages'
import { createApp, TestApp } from './helpers/app'
import { fixture } from './helpers/replay-server'

/** A byte stream of `text` cut into pieces of `size` bytes (splitting lines and UTF-8 characters). */
async function* pieces(text: string | Buffer, size: number) {
  const bytes = Buffer.isBuffer(text) ? text : Buffer.from(text)
  for (let offset = 0; offset < bytes.length; offset += size) yield new Uint8Array(bytes.subarray(offset, offset + size))
}

async function events(source: AsyncIterable<Uint8Array>, options = {}) {
  const list: { event?: string; data: string }[] = []
  await readServerSentEvents(source, (event) => {
    list.push({ event: event.event, data: event.data })
  }, options)
  return list
}

describe('agent: reading streams', () => {
  describe('server-sent events', () => {
    it('reads events across any chunk boundary, with CRLF, comments and multi-line data', async () => {
      const text = ': keep-alive\r\nevent: delta\r\ndata: {"text":"你好"}\r\n\r\ndata: line one\ndata: line two\n\ndata: [DONE]\n\n'
      for (const size of [1, 2, 3, 7, 1000]) {
        expect(await events(pieces(text, size)), `size ${size}`).to.deep.equal([
          { event: 'delta', data: '{"text":"你好"}' },
          { event: undefined, data: 'line one\nline two' },
          { event: undefined, data: '[DONE]' },
        ])
      }
    })

    it('keeps a last event that the server ended without a blank line', async () => {
      expect(await events(pieces('data: one\n\ndata: two', 4))).to.deep.equal([{ event: undefined, data: 'one' }, { event: undefined, data: 'two' }])
    })

    it('stops at a stall with idle-timeout', async () => {
      async function* stalled() {
        yield new TextEncoder().encode('data: one\n\n')
        await new Promise((resolve) => setTimeout(resolve, 1000))
      }
      const error = await readServerSentEvents(stalled(), () => {}, { idleTimeout: 50 }).catch((error) => error)
      expect(error).to.be.instanceOf(StreamReadError)
      expect(error.code).to.equal('idle-timeout')
    })

    it('reads the recorded Anthropic streams (event lines, ping events, input_json_delta)', async () => {
      const list = await events(pieces(fixture('anthropic-haiku45-tool-use-input-json-delta.sse'), 5))
      expect(list.map((item) => item.event)).to.deep.equal([
        'message_start', 'content_block_start', 'content_block_delta', 'ping', 'content_block_delta', 'content_block_delta', 'content_block_stop', 'message_delta', 'message_stop',
      ])
      expect(list.every((item) => JSON.parse(item.data).type === item.event)).to.equal(true)
    })
  })

  describe('completions', () => {
    it('a stream whose tool call has no index continues the last call unless a new id comes', () => {
      const accumulator = new CompletionAccumulator()
      const chunk = (tool_calls: object[]) => ({ choices: [{ index: 0, delta: { tool_calls } }] })
      accumulator.push(chunk([{ id: 'a', function: { name: 'first', arguments: '{"x"' } }]))
      accumulator.push(chunk([{ function: { arguments: ':1}' } }]))
      accumulator.push(chunk([{ id: 'b', function: { name: 'second', arguments: '{}' } }]))
      expect(accumulator.result().toolCalls).to.deep.equal([
        { id: 'a', name: 'first', arguments: '{"x":1}' },
        { id: 'b', name: 'second', arguments: '{}' },
      ])
    })

    it('arguments sent as an object and the legacy function_call are read as tool calls', () => {
      const object = parseCompletion({ choices: [{ message: { role: 'assistant', tool_calls: [{ id: 'x', function: { name: 'f', arguments: { a: 1 } } }] } }] })
      expect(object.toolCalls).to.deep.equal([{ id: 'x', name: 'f', arguments: '{"a":1}' }])
      const legacy = parseCompletion({ choices: [{ message: { role: 'assistant', content: null, function_call: { name: 'g', arguments: '{}' } } }] })
      expect(legacy.toolCalls).to.deep.equal([{ id: '', name: 'g', arguments: '{}' }])
      expect(legacy.content).to.equal(null)
    })

    it('completionsURL appends /chat/completions once', () => {
      expect(completionsURL('https://api.deepseek.com')).to.equal('https://api.deepseek.com/chat/completions')
      expect(completionsURL('http://127.0.0.1:11434/v1/')).to.equal('http://127.0.0.1:11434/v1/chat/completions')
      expect(completionsURL('https://x.example/v1/chat/completions')).to.equal('https://x.example/v1/chat/completions')
    })
  })

  describe('history', () => {
    const turn = (n: number, tools = 0): ChatMessage[] => [
      { role: 'user', content: `q${n}` },
      ...Array.from({ length: tools }, (_, index): ChatMessage[] => [
        { role: 'assistant', content: '', tool_calls: [{ id: `c${n}${index}`, type: 'function', function: { name: 't', arguments: '{}' } }] },
        { role: 'tool', tool_call_id: `c${n}${index}`, content: 'r' },
      ]).flat(),
      { role: 'assistant', content: `a${n}` },
    ]

    it('keeps whole turns only, the most recent first', () => {
      const messages = [...turn(1, 2), ...turn(2), ...turn(3, 1)]
      expect(trimToTurns(messages, 100)).to.deep.equal(messages)
      expect(trimToTurns(messages, 6)).to.deep.equal([...turn(2), ...turn(3, 1)])
      expect(trimToTurns(messages, 5)).to.deep.equal(turn(3, 1))
      expect(trimToTurns(messages, 3)).to.deep.equal([])
      expect(trimToTurns(messages, 0)).to.deep.equal([])
    })
  })

  describe('the tool-call shapes of the Anthropic and Gemini recordings run through the pipeline', () => {
    let test: TestApp
    const seen: { tool: string; args: any }[] = []
    before(async () => {
      test = await createApp()
      const define = (name: string, args: Schema) => test.app.tools.define({
        name, description: name, args, traits: { effect: 'read' }, run: (value) => {
          seen.push({ tool: name, args: value })
          return 'ok'
        },
      })
      define('getWeather', Schema.object({ city: Schema.string().required() }))
      define('json', Schema.object({ elements: Schema.array(Schema.object({ location: String, temperature: Number, condition: String })) }))
      define('updateIssueList', Schema.object({}))
      define('weather', Schema.object({ location: Schema.string().required() }))
      define('read_theme', Schema.object({}))
    })
    after(() => test.dispose())

    it('Anthropic: `input` objects, and `input_json_delta` pieces joined (an empty piece means no arguments)', async () => {
      const direct = JSON.parse(fixture('anthropic-sonnet45-tool-use.json').toString()).content[0]
      const calls: { name: string; args: unknown }[] = [{ name: direct.name, args: direct.input }]
      for (const file of ['anthropic-haiku45-tool-use-input-json-delta.sse', 'anthropic-sonnet45-text-then-tool-use-no-args.sse']) {
        let current: { name: string; json: string } | undefined
        await readServerSentEvents(pieces(fixture(file), 11), ({ data }) => {
          const event = JSON.parse(data)
          if (event.type === 'content_block_start' && event.content_block.type === 'tool_use') current = { name: event.content_block.name, json: '' }
          if (event.type === 'content_block_delta' && event.delta.type === 'input_json_delta') current.json += event.delta.partial_json
          if (event.type === 'content_block_stop' && current) {
            calls.push({ name: current.name, args: current.json })
            current = undefined
          }
        })
      }
      for (const call of calls) {
        const result = await test.app.tools.call({ name: call.name, args: call.args })
        expect(result.status, call.name).to.equal('success')
      }
      expect(seen.splice(0)).to.deep.equal([
        { tool: 'getWeather', args: { city: 'Tokyo' } },
        { tool: 'json', args: { elements: [{ location: 'San Francisco', temperature: 58, condition: 'sunny' }] } },
        { tool: 'updateIssueList', args: {} },
      ])
    })

    it('Gemini: `args` objects, and a call without `args`', async () => {
      const [part] = JSON.parse(fixture('gemini-3pro-function-call.json').toString()).candidates[0].content.parts
      let noArgs: any
      await readServerSentEvents(pieces(fixture('vertex-gemini3flash-streamed-parallel-function-calls.sse'), 64), ({ data }) => {
        for (const item of JSON.parse(data).candidates?.[0]?.content?.parts ?? []) {
          if (item.functionCall?.name === 'read_theme') noArgs = item.functionCall
        }
      })
      for (const call of [part.functionCall, noArgs]) {
        expect((await test.app.tools.call({ name: call.name, args: call.args })).status).to.equal('success')
      }
      expect(seen.splice(0)).to.deep.equal([
        { tool: 'weather', args: { location: 'San Francisco' } },
        { tool: 'read_theme', args: {} },
      ])
      // What the gemini dialect declares for these tools is what the recorded calls fit.
      const declared = test.app.tools.declarations({}, { dialect: 'gemini' })
      expect(declared.find((item) => item.name === 'weather').parameters).to.deep.equal({ type: 'OBJECT', properties: { location: { type: 'STRING' } }, required: ['location'] })
      expect(declared.find((item) => item.name === 'read_theme')).to.deep.equal({ name: 'read_theme', description: 'read_theme' })
    })
  })
})
