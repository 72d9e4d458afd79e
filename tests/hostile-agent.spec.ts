import { expect } from 'chai'
import { createServer, Server } from 'http'
import { AddressInfo } from 'net'
import { Schema } from 'koishi'
import { ChatProvider, maxResponseLength, ProviderOptions } from '../src/agent/provider'
import { ProviderError } from '../src/agent/errors'
import { createApp, noBuiltins, TestApp } from './helpers/app'
import { ReplayServer, startReplayServer } from './helpers/replay-server'
import { answer, calls } from './helpers/completions'

/*
 * A model endpoint or a model that tries to break the agent: a stream that
 * never ends, a response too large to hold, a response with hundreds of
 * tool calls (each of which could post an approval to the chat).
 */
describe('hostile input: the agent', function () {
  this.timeout(10000)
  let test: TestApp
  afterEach(() => test?.dispose())

  describe('a hostile endpoint', () => {
    let server: Server
    let url: string
    let handler: (response: import('http').ServerResponse) => void
    before(async () => {
      server = createServer((request, response) => {
        request.resume()
        request.on('end', () => handler(response))
      })
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
      url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`
    })
    after(() => new Promise<void>((resolve) => {
      server.closeAllConnections()
      server.close(() => resolve())
    }))
    beforeEach(async () => {
      test = await createApp(noBuiltins, { http: true })
    })

    const provider = (options: Partial<ProviderOptions>) =>
      new ChatProvider(test.app.http, () => ({ baseURL: url, apiKey: '', model: 'm', headers: {}, timeout: 1000, stream: true, responseTimeout: 0, ...options }))
    const fails = (promise: Promise<unknown>) => promise.then(() => undefined, (error) => error as ProviderError)
    const chunk = (text: string) => `data: ${JSON.stringify({ object: 'chat.completion.chunk', choices: [{ index: 0, delta: { content: text } }] })}\n\n`

    it('ends a stream that never ends, although every chunk comes within the idle time', async () => {
      const timers: NodeJS.Timeout[] = []
      handler = (response) => {
        response.writeHead(200, { 'content-type': 'text/event-stream' })
        timers.push(setInterval(() => response.write(chunk('.')), 20))
        response.on('close', () => timers.forEach(clearInterval))
      }
      const error = await fails(provider({ timeout: 1000, responseTimeout: 300 }).complete({ messages: [{ role: 'user', content: 'hi' }] }))
      timers.forEach(clearInterval)
      expect(error).to.be.instanceOf(ProviderError)
      expect(error.code).to.equal('timeout')
      expect(error.message).to.match(/did not end within 300 ms/)
    })

    it('refuses a stream larger than the limit', async () => {
      const piece = chunk('x'.repeat(1024 * 1024))
      handler = (response) => {
        response.writeHead(200, { 'content-type': 'text/event-stream' })
        let sent = 0
        const write = () => {
          while (sent <= maxResponseLength + 2 * 1024 * 1024) {
            sent += piece.length
            if (!response.write(piece)) return response.once('drain', write)
          }
          response.end('data: [DONE]\n\n')
        }
        response.on('error', () => {})
        write()
      }
      const error = await fails(provider({}).complete({ messages: [{ role: 'user', content: 'hi' }] }))
      expect(error).to.be.instanceOf(ProviderError)
      expect(error.code).to.equal('bad-response')
      expect(error.message).to.match(/larger than/)
    })

    it('refuses a JSON body larger than the limit', async () => {
      handler = (response) => {
        response.writeHead(200, { 'content-type': 'application/json' })
        response.on('error', () => {})
        response.end(JSON.stringify({ choices: [{ index: 0, message: { role: 'assistant', content: 'x'.repeat(maxResponseLength + 10) } }] }))
      }
      const error = await fails(provider({ stream: false }).complete({ messages: [{ role: 'user', content: 'hi' }] }))
      expect(error).to.be.instanceOf(ProviderError)
      expect(error.code).to.equal('bad-response')
      expect(error.message).to.match(/larger than/)
    })
  })

  describe('a model that calls hundreds of tools at once', () => {
    let replay: ReplayServer
    before(async () => {
      replay = await startReplayServer()
    })
    after(() => replay.close())

    it('runs at most maxToolCalls of one response and tells the model the rest did not run', async () => {
      test = await createApp({
        ...noBuiltins,
        agent: { enabled: true, baseURL: replay.baseURL, model: 'replay-model', progress: 'never', maxToolCalls: 4 },
      }, { database: true, http: true, locale: 'en-US' })
      let runs = 0
      test.app.tools.define({ name: 'count', description: 'Counts.', args: Schema.object({ n: Schema.number() }), traits: { effect: 'read' }, run: () => String(++runs) })
      await test.app.mock.initUser('admin', 5)
      const many = Array.from({ length: 200 }, (_, index) => ({ id: `call_${index}`, name: 'count', arguments: JSON.stringify({ n: index }) }))
      replay.enqueue(calls(...many), answer('Counted.'))
      expect(await test.app.mock.client('admin').receive('agent count')).to.deep.equal(['Counted.'])
      expect(runs).to.equal(4)
      const tools = replay.requests[1].body.messages.filter((message) => message.role === 'tool')
      // Every call is answered, so the conversation stays valid for the endpoint.
      expect(tools).to.have.length(200)
      expect(tools[3].content).to.equal('4')
      expect(tools[4].content).to.equal('Not run: this response asked for 200 tool calls; at most 4 run per response. Call fewer tools at once.')
    })
  })
})
