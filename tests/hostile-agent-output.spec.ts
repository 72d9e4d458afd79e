import { expect } from 'chai'
import { Schema } from 'koishi'
import { createApp, noBuiltins, TestApp } from './helpers/app'
import { ReplayServer, startReplayServer } from './helpers/replay-server'
import { answer, calls, stream } from './helpers/completions'
import { maxKeptToolCalls, progressWait } from '../src/agent/loop'
import { trimToTurns } from '../src/agent/history'
import { ChatMessage } from '../src/agent/messages'

/*
 * Model output built (or broken) to hurt the agent: tool names that strict
 * endpoints refuse to see again, a stream of tens of thousands of calls
 * without `index`, a response of a hundred thousand calls, a runaway
 * answer, a megabyte-long tool name.
 */
describe('hostile input: model output', function () {
  this.timeout(20000)
  let server: ReplayServer
  let test: TestApp
  let runs: number

  beforeEach(async () => {
    server = await startReplayServer()
    test = await createApp({
      ...noBuiltins,
      agent: { enabled: true, baseURL: server.baseURL, model: 'replay-model', timeout: 5000, progress: 'always', maxToolCalls: 4 },
    }, { database: true, http: true, locale: 'en-US' })
    runs = 0
    test.app.tools.define({
      name: 'lookup',
      description: 'Reads a record.',
      args: Schema.object({ key: Schema.string() }),
      traits: { effect: 'read' },
      render: { call: ({ key }) => `lookup ${key}` },
      run: ({ key }) => `record ${key} ${++runs}`,
    })
    await test.app.mock.initUser('admin', 5)
  })
  afterEach(async () => {
    await test.dispose()
    await server.close()
  })
  const rejected = () => server.requests.map((request) => request.rejected).filter(Boolean)

  it('sends illegal tool names back in a legal form, so the conversation is not broken for later turns', async () => {
    server.enqueue(
      calls(
        { id: 'a', name: 'functions.lookup', arguments: '{"key":"x"}' },
        { id: 'b', name: 'lookup<|channel|>commentary', arguments: '{"key":"y"}' },
        { id: 'c', name: '工具', arguments: '{}' },
        { id: 'd', name: 'lookup', arguments: '{"key":"z"}' },
      ),
      answer('done'),
      answer('second turn'),
    )
    const client = test.app.mock.client('admin')
    expect(await client.receive('agent go')).to.deep.equal(['Running: functions.lookup, lookup<|channel|>commentary, 工具, lookup z', 'done'])
    expect(await client.receive('agent again')).to.deep.equal(['second turn'])
    expect(rejected()).to.deep.equal([])
    const history = server.requests[2].body.messages
    expect(history[2].tool_calls.map((call) => call.function.name)).to.deep.equal(['functions_lookup', 'lookup__channel__commentary', 'missing_tool_name', 'lookup'])
    expect(history[3].content).to.match(/^Error \[unknown-tool\]: There is no tool named "functions\.lookup"/)
    expect(history[6].content).to.equal('record z 1')
  })

  it('runs the tools and answers when the platform never confirms the progress message', async function () {
    this.timeout(15000)
    const bot = test.app.bots[0]
    const send = bot.sendMessage.bind(bot)
    bot.sendMessage = (channelId, content, ...rest) => String(content).startsWith('Running:') ? new Promise(() => {}) : send(channelId, content, ...rest)
    server.enqueue(calls({ id: 'a', name: 'lookup', arguments: '{"key":"x"}' }), answer('done anyway'))
    const started = Date.now()
    expect(await test.app.mock.client('admin').receive('agent go')).to.deep.equal(['done anyway'])
    expect(Date.now() - started).to.be.within(progressWait - 100, progressWait + 3000)
    expect(runs).to.equal(1)
  })

  it('reads a stream of 60 000 tool calls without index in linear time', async function () {
    this.timeout(8000)
    const fragments = Array.from({ length: 60000 }, (_, index) => ({ id: `call_${index}`, type: 'function', function: { name: 'lookup', arguments: JSON.stringify({ key: String(index) }) } }))
    server.enqueue(
      { ...stream([{ object: 'chat.completion.chunk', choices: [{ index: 0, delta: { role: 'assistant', tool_calls: fragments } }] }]), chunkSize: 1 << 20 },
      answer('read them'),
    )
    const started = Date.now()
    expect(await test.app.mock.client('admin').receive('agent go')).to.deep.equal(['Running: lookup 0, lookup 1, lookup 2, lookup 3', 'read them'])
    expect(Date.now() - started).to.be.below(4000)
    expect(runs).to.equal(4)
  })

  it('keeps at most maxKeptToolCalls calls of a response of 100 000 in the conversation, and says how many were dropped', async () => {
    const many = Array.from({ length: 100000 }, (_, index) => ({ id: `call_${index}`, name: 'lookup', arguments: JSON.stringify({ key: String(index) }) }))
    server.enqueue({ ...calls(...many), chunkSize: 1 << 20 }, answer('Counted.'))
    const replies = await test.app.mock.client('admin').receive('agent count')
    expect(replies).to.deep.equal(['Running: lookup 0, lookup 1, lookup 2, lookup 3', 'Counted.'])
    expect(runs).to.equal(4)
    const messages = server.requests[1].body.messages
    const assistant = messages.find((message) => message.tool_calls)
    expect(assistant.tool_calls).to.have.length(maxKeptToolCalls)
    const tools = messages.filter((message) => message.role === 'tool')
    expect(tools).to.have.length(maxKeptToolCalls)
    expect(tools[4].content).to.equal(`Not run: this response asked for 100000 tool calls; at most 4 run per response. The ${100000 - maxKeptToolCalls} calls after the first ${maxKeptToolCalls} were dropped. Call fewer tools at once.`)
    expect(JSON.stringify(server.requests[1].body).length).to.be.below(200000)
    expect(rejected()).to.deep.equal([])
  })

  it('shows each call of the progress line on one short line, and leaves out calls that do not run', async () => {
    const key = 'k'.repeat(5000) + '\nRisk: none'
    server.enqueue(
      calls({ id: 'a', name: 'lookup', arguments: JSON.stringify({ key }) }, { id: 'b', name: 'lookup', arguments: '{"key":"same"}' }),
      calls({ id: 'c', name: 'lookup', arguments: '{"key":"same"}' }, { id: 'd', name: 'lookup', arguments: '{"key":"same"}' }),
      answer('ok'),
    )
    const replies = await test.app.mock.client('admin').receive('agent go')
    expect(replies).to.have.length(3)
    expect(replies[0]).to.equal(`Running: lookup ${'k'.repeat(92)}…, lookup same`)
    // The third identical call is refused by the repetition guard, so it is not announced.
    expect(replies[1]).to.equal('Running: lookup same')
    expect(replies[2]).to.equal('ok')
  })

  it('keeps a runaway answer or megabytes of arguments out of later turns (a note instead), and keeps ordinary turns', async () => {
    const client = test.app.mock.client('admin')
    server.enqueue(answer('small talk'))
    await client.receive('agent hello')
    const runaway = 'la '.repeat(400000)
    server.enqueue({ ...answer(runaway), chunkSize: 1 << 20 })
    expect(await client.receive('agent sing')).to.deep.equal([runaway.trim()])
    server.enqueue({ ...calls({ id: 'a', name: 'lookup', arguments: JSON.stringify({ key: 'k'.repeat(1200000) }) }), chunkSize: 1 << 20 }, answer('looked'))
    await client.receive('agent look')
    server.enqueue(answer('still here'))
    expect(await client.receive('agent and now?')).to.deep.equal(['still here'])
    const last = server.requests.at(-1).body
    const note = (content: string) => /^\(This turn was too long to keep in the history: 12\d{5} characters\.\)$/.test(content) ? 'note' : content
    expect(last.messages.slice(1).map((message) => note(message.content))).to.deep.equal(['hello', 'small talk', 'sing', 'note', 'look', 'note', 'and now?'])
    expect(JSON.stringify(last).length).to.be.below(100000)
    expect(rejected()).to.deep.equal([])
  })

  it('drops the oldest whole turns when the kept turns together exceed the character bound', () => {
    const turn = (text: string): ChatMessage[] => [{ role: 'user', content: text }, { role: 'assistant', content: text.repeat(400) }]
    const messages = [...turn('a'.repeat(1000)), ...turn('b'.repeat(1000)), ...turn('c'.repeat(1000))]
    expect(trimToTurns(messages, 40).map((message) => message.content[0])).to.deep.equal(['b', 'b', 'c', 'c'])
    expect(trimToTurns(messages, 40, 401000)).to.deep.equal(turn('c'.repeat(1000)))
  })

  it('answers a megabyte-long unknown tool name quickly, echoing only its start', async function () {
    this.timeout(8000)
    for (let index = 0; index < 500; index++) {
      test.app.tools.define({ name: `mcp__server__a_rather_long_tool_name_${index}`, description: 'Filler.', traits: { effect: 'read' }, run: () => 'ok' })
    }
    const name = 'q'.repeat(1024 * 1024)
    server.enqueue(calls({ id: 'a', name, arguments: '{}' }), answer('no such tool'))
    const started = Date.now()
    expect(await test.app.mock.client('admin').receive('agent go')).to.have.length(2)
    expect(Date.now() - started).to.be.below(3000)
    const tool = server.requests[1].body.messages.find((message) => message.role === 'tool')
    expect(tool.content).to.match(new RegExp(`^Error \\[unknown-tool\\]: There is no tool named "${'q'.repeat(100)}…"\\.`))
    expect(tool.content.length).to.be.below(1000)
    expect(rejected()).to.deep.equal([])
  })
})
