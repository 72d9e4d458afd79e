import { expect } from 'chai'
import { mkdir, writeFile } from 'fs/promises'
import { createServer } from 'net'
import { join } from 'path'
import { Logger, Schema } from 'koishi'
import { createApp, TestApp } from './helpers/app'
import * as plugin from '../src'
import { ReplayServer, startReplayServer } from './helpers/replay-server'
import { answer, calls, stream } from './helpers/completions'

/*
 * The agent in Koishi: the command, replies to mentions and private
 * messages, progress messages, conversation history, endpoint failures as
 * chat replies (both locales) and a log line, and the full round trip of
 * the acceptance criteria.
 */

for (const locale of ['en-US', 'zh-CN'] as const) {
  const en = locale === 'en-US'

  describe(`agent in chat (${locale})`, function () {
    let server: ReplayServer
    let test: TestApp
    let logs: string[]
    const target: Logger.Target = { colors: 0, print: (text) => logs.push(text) }

    before(async () => {
      server = await startReplayServer()
      test = await createApp({
        workDir: 'workspace',
        agent: { enabled: true, baseURL: server.baseURL, apiKey: 'secret-key', model: 'replay-model', timeout: 300, replyOnMention: true, replyInPrivate: true },
      }, { database: true, http: true, locale })
      await mkdir(join(test.baseDir, 'workspace'), { recursive: true })
      await writeFile(join(test.baseDir, 'workspace/notes.txt'), 'Buy milk.\nCall Alice at 5.\n')
      test.app.tools.define({
        name: 'lookup', description: 'Reads a record.', args: Schema.object({ key: Schema.string().required() }), traits: { effect: 'read' },
        render: { call: ({ key }) => `lookup ${key}` },
        run: ({ key }) => `record ${key}`,
      })
      await test.app.mock.initChannel('group')
      Logger.targets.push(target)
    })
    after(async () => {
      Logger.targets.splice(Logger.targets.indexOf(target), 1)
      await test.dispose()
      await server.close()
    })
    beforeEach(() => {
      logs = []
      server.requests.length = 0
    })
    afterEach(() => {
      expect(server.requests.filter((request) => request.rejected).map((request) => request.rejected)).to.deep.equal([])
      expect(server.pending(), 'responses left in the replay queue').to.equal(0)
    })

    it('round trip: `agent <text>` → the model reads a workspace file → the reply is its final text', async () => {
      server.enqueue(
        calls({ id: 'call_read', name: 'read', arguments: '{"path":"notes.txt"}' }),
        answer('Your notes: buy milk, and call Alice at 5.'),
      )
      const client = test.app.mock.client('alice')
      const replies = await client.receive('agent what is in notes.txt?')
      expect(replies).to.deep.equal([en ? 'Running: read notes.txt' : '正在调用：read notes.txt', 'Your notes: buy milk, and call Alice at 5.'])
      const messages = server.requests[1].body.messages
      expect(messages.at(-1)).to.deep.equal({ role: 'tool', tool_call_id: 'call_read', content: '1\tBuy milk.\n2\tCall Alice at 5.' })
      expect(messages[0].role).to.equal('system')
      expect(messages[1]).to.deep.equal({ role: 'user', content: 'what is in notes.txt?' })
      const entry = test.app.tools.history.at(-1)
      expect(entry).to.deep.include({ tool: 'read', agent: 'agent', userId: 'alice', status: 'success' })
    })

    it('keeps the conversation: the next turn carries the earlier one; `agent.clear` forgets it', async () => {
      const client = test.app.mock.client('bob')
      server.enqueue(calls({ id: 'call_1', name: 'lookup', arguments: '{"key":"a"}' }), answer('a is a record.'))
      await client.receive('agent what is a?')
      server.enqueue(answer('Yes, as I said.'))
      await client.receive('agent really?')
      expect(server.requests[2].body.messages.slice(1).map((message) => [message.role, message.content])).to.deep.equal([
        ['user', 'what is a?'],
        ['assistant', ''],
        ['tool', 'record a'],
        ['assistant', 'a is a record.'],
        ['user', 'really?'],
      ])
      expect(await client.receive('agent.clear')).to.deep.equal([en ? 'The agent has forgotten this conversation.' : '智能体已忘记本会话的对话记录。'])
      expect(await client.receive('agent.clear')).to.deep.equal([en ? 'The agent has nothing to forget in this conversation.' : '本会话没有需要忘记的对话记录。'])
      server.enqueue(answer('Fresh start.'))
      await client.receive('agent hi')
      expect(server.requests[3].body.messages.slice(1)).to.deep.equal([{ role: 'user', content: 'hi' }])
    })

    it('runs one turn at a time per conversation; the second message waits and sees the first', async () => {
      server.enqueue({ ...answer('one'), delay: 80 }, answer('two'))
      const first = test.app.mock.client('carol', 'group').receive('agent first')
      const second = test.app.mock.client('dave', 'group').receive('agent second')
      expect(await first).to.deep.equal(['one'])
      expect(await second).to.deep.equal(['two'])
      expect(server.requests[1].body.messages.slice(1).map((message) => message.content)).to.deep.equal(['first', 'one', 'second'])
      test.app.tools.agent.history.clear('mock::group')
    })

    it('answers a mention in a group without progress messages, and a plain private message', async () => {
      server.enqueue(calls({ name: 'lookup', arguments: '{"key":"g"}' }), answer('group answer'))
      const group = test.app.mock.client('erin', 'group')
      expect(await group.receive(`<at id="${test.app.bots[0].selfId}"/> what is g?`)).to.deep.equal(['group answer'])
      expect(server.requests[0].body.messages.at(-1)).to.deep.equal({ role: 'user', content: 'what is g?' })
      await group.shouldNotReply('just chatting')
      server.enqueue(calls({ name: 'lookup', arguments: '{"key":"p"}' }), answer('private answer'))
      expect(await test.app.mock.client('erin').receive('what is p?')).to.deep.equal([en ? 'Running: lookup p' : '正在调用：lookup p', 'private answer'])
      test.app.tools.agent.history.clear('mock::group')
    })

    it('says when the step limit ended the turn, when the model gave no answer, and when it had to be stopped', async () => {
      const options = test.app.tools.agent.config()
      options.maxSteps = 2
      try {
        server.enqueue(calls({ name: 'lookup', arguments: '{"key":"1"}' }), calls({ name: 'lookup', arguments: '{"key":"2"}' }))
        expect(await test.app.mock.client('steps').receive('agent loop')).to.deep.equal([en ? 'Running: lookup 1' : '正在调用：lookup 1', en
          ? 'I stopped after 2 model requests without a final answer (the step limit, agent.maxSteps). Try a narrower question.'
          : '已进行 2 次模型请求仍未得到最终回答（达到步数上限 agent.maxSteps），已停止。请换一个更具体的问题。'])
      } finally {
        options.maxSteps = 16
      }
      server.enqueue(answer(''))
      expect(await test.app.mock.client('empty').receive('agent hi')).to.deep.equal([en ? 'The model finished without an answer.' : '模型结束了本轮，但没有给出回答。'])
      const same = { name: 'lookup', arguments: '{"key":"same"}' }
      server.enqueue(calls(same), calls(same), calls(same), calls(same), calls(same))
      const replies = await test.app.mock.client('stubborn', 'group').receive('agent same again')
      expect(replies).to.deep.equal([en ? 'The model kept calling tools after being asked to answer, so I stopped.' : '模型在被要求直接回答后仍在调用工具，已停止。'])
      expect(server.requests.at(-1).body.tool_choice).to.equal('none')
      test.app.tools.agent.history.clear('mock::group')
    })

    it('asks for text when the command has none', async () => {
      expect(await test.app.mock.client('frank').receive('agent')).to.deep.equal([en
        ? 'Please write your message after the command, e.g. "agent what is in notes.txt?".'
        : '请在命令后写上你的消息，例如 "agent notes.txt 里写了什么？"。'])
    })

    describe('endpoint failures become a reply and a log line', () => {
      const cases: [string, () => void, string, RegExp][] = [
        ['HTTP 500', () => server.enqueue({ status: 500, body: { error: { message: 'upstream exploded', type: 'server_error' } } }),
          en ? 'The model endpoint answered HTTP 500: upstream exploded' : '模型接口返回 HTTP 500：upstream exploded', /failed \(http\): HTTP 500: upstream exploded/],
        ['HTTP 429', () => server.enqueue({ status: 429, headers: { 'retry-after': '20' }, body: { error: { message: 'Rate limit reached.' } } }),
          en ? 'The model endpoint is limiting requests (HTTP 429): Rate limit reached. Please try again later.' : '模型接口正在限流（HTTP 429）：Rate limit reached. 请稍后再试。', /rate-limit/],
        ['HTTP 401', () => server.enqueue({ status: 401, body: { error: { message: 'Incorrect API key provided.' } } }),
          en ? 'The model endpoint refused the API key (HTTP 401): Incorrect API key provided. Check agent.apiKey.' : '模型接口拒绝了 API 密钥（HTTP 401）：Incorrect API key provided. 请检查 agent.apiKey。', /\(auth\)/],
        ['a body that is not JSON', () => server.enqueue({ body: '<html>502 Bad Gateway</html>', contentType: 'text/html' }),
          en ? 'The model endpoint sent a response that could not be read: ' : '模型接口返回的内容无法解析：', /\(bad-response\)/],
        ['an error object with status 200', () => server.enqueue({ body: { error: { message: 'model overloaded' } } }),
          en ? 'The model endpoint reported an error: model overloaded' : '模型接口报告了错误：model overloaded', /\(model-error\)/],
        ['an error event inside a stream', () => server.enqueue(stream([{ error: { message: 'stream aborted by upstream' } }], false)),
          en ? 'The model endpoint reported an error: stream aborted by upstream' : '模型接口报告了错误：stream aborted by upstream', /\(model-error\)/],
        ['a stream that breaks off', () => server.enqueue({ fixture: 'openai-gpt4o-parallel-tool-calls.sse', cutAfter: 900 }),
          en ? 'The model endpoint sent a response that could not be read: the stream broke off' : '模型接口返回的内容无法解析：the stream broke off', /\(bad-response\)/],
        ['no answer in time', () => server.enqueue({ ...answer('too late'), delay: 600 }),
          en ? 'The model endpoint did not answer in time (300 ms).' : '模型接口未在规定时间内响应（300 ms）。', /\(timeout\)/],
      ]
      for (const [name, setup, reply, log] of cases) {
        it(name, async () => {
          setup()
          const [text] = await test.app.mock.client(`failure-${name}`).receive('agent hello')
          expect(text.startsWith(reply), text).to.equal(true)
          expect(logs.some((line) => log.test(line)), logs.join('\n')).to.equal(true)
          expect(logs.join('\n')).not.to.contain('secret-key')
          // A turn that failed before any tool ran leaves no history.
          expect(test.app.tools.agent.history.get(`mock:private:failure-${name}`)).to.deep.equal([])
        })
      }

      it('an endpoint that cannot be reached', async () => {
        const port = await new Promise<number>((resolve) => {
          const probe = createServer().listen(0, '127.0.0.1', () => {
            const { port } = probe.address() as any
            probe.close(() => resolve(port))
          })
        })
        const options = test.app.tools.agent.config()
        const baseURL = options.baseURL
        options.baseURL = `http://127.0.0.1:${port}/v1`
        try {
          const [text] = await test.app.mock.client('unreachable').receive('agent hello')
          expect(text).to.match(en ? /^Could not reach the model endpoint \(http:\/\/127\.0\.0\.1:\d+\/v1\/chat\/completions: ECONNREFUSED\)\.$/ : /^无法连接模型接口（http:\/\/127\.0\.0\.1:\d+\/v1\/chat\/completions: ECONNREFUSED）。$/)
        } finally {
          options.baseURL = baseURL
        }
      })

      it('a failure after a tool ran keeps the turn with a note', async () => {
        server.enqueue(calls({ id: 'call_k', name: 'lookup', arguments: '{"key":"k"}' }), { status: 503, body: { error: { message: 'busy' } } })
        const client = test.app.mock.client('grace')
        await client.receive('agent k?')
        server.enqueue(answer('ok now'))
        await client.receive('agent again')
        expect(server.requests[2].body.messages.slice(-3)).to.deep.equal([
          { role: 'tool', tool_call_id: 'call_k', content: 'record k' },
          { role: 'assistant', content: '(This turn ended early: the model request failed (http).)' },
          { role: 'user', content: 'again' },
        ])
      })
    })
  })
}

describe('agent configuration', () => {
  it('is off by default: no command, no ctx.tools.agent', async () => {
    const test = await createApp({}, { http: true })
    try {
      expect(test.app.tools.agent).to.equal(undefined)
      expect(test.app.$commander.get('agent')).to.equal(undefined)
    } finally {
      await test.dispose()
    }
  })

  it('says so when enabled without a model, and uses a configured command name', async () => {
    const test = await createApp({ agent: { enabled: true, command: 'ask' } }, { http: true, locale: 'en-US' })
    try {
      expect(test.app.$commander.get('agent')).to.equal(undefined)
      expect(await test.app.mock.client('u').receive('ask hello')).to.deep.equal([
        'The agent has no model configured: set agent.model (and agent.baseURL, agent.apiKey) in the plugin settings.',
      ])
      expect((test.app.i18n as any)._data['en-US']['commands.ask.description']).to.equal('Talk to the agent; it may use the tools of this conversation')
      expect((test.app.i18n as any)._data['zh-CN']['commands.ask.clear.description']).to.equal('让智能体忘记本会话的对话记录')
    } finally {
      await test.dispose()
    }
  })

  it('disposing the plugin aborts a model request in flight', async () => {
    const server = await startReplayServer()
    const test = await createApp({ agent: { enabled: true, baseURL: server.baseURL, model: 'm' } }, { http: true })
    try {
      server.enqueue({ ...answer('too late'), delay: 5000 })
      const runner = test.app.tools.agent
      const started = Date.now()
      const turn = runner.run({ scope: {}, text: 'hello' })
      await new Promise((resolve) => setTimeout(resolve, 50))
      test.app.registry.delete(plugin)
      const result = await turn
      expect(result.status).to.equal('error')
      expect(result.error.code).to.equal('aborted')
      expect(Date.now() - started).to.be.below(2000)
    } finally {
      await test.dispose()
      await server.close()
    }
  })
})
