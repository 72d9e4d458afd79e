import { expect } from 'chai'
import { mkdir, writeFile } from 'fs/promises'
import { join } from 'path'
import { Schema } from 'koishi'
import { createApp, onlyRead, TestApp } from './helpers/app'
import { ReplayServer, startReplayServer, strictProblems } from './helpers/replay-server'
import { answer, calls, completion, stream } from './helpers/completions'

/*
 * The loop's guards and the "inputs from public reports", each
 * replayed through the whole agent from chat. Responses are inline but in
 * the recorded form of tests/fixtures/chat-completions.
 */

describe('agent: guards and reported failures', function () {
  let server: ReplayServer
  let test: TestApp
  let user = 0
  let runs: { tool: string; args: any; start: number; end: number }[]

  before(async () => {
    server = await startReplayServer()
    test = await createApp({
      ...onlyRead,
      workDir: 'workspace',
      agent: { enabled: true, baseURL: server.baseURL, model: 'replay-model', progress: 'never' },
    }, { database: true, http: true, locale: 'en-US' })
    await mkdir(join(test.baseDir, 'workspace'), { recursive: true })
    await writeFile(join(test.baseDir, 'workspace/notes.txt'), 'first note\nsecond note\n')
    const timed = (tool: string, ms: number, value: (args: any) => any) => async (args: any) => {
      const run = { tool, args, start: Date.now(), end: 0 }
      runs.push(run)
      await new Promise((resolve) => setTimeout(resolve, ms))
      run.end = Date.now()
      return value(args)
    }
    test.app.tools.define({
      name: 'flaky', description: 'Always fails.', args: Schema.object({ n: Schema.number() }), traits: { effect: 'read' },
      run: () => { throw new Error('the backend is down') },
    })
    test.app.tools.define({
      name: 'save', description: 'Writes a note.', args: Schema.object({ text: Schema.string().required() }), traits: { effect: 'write' },
      run: timed('save', 30, ({ text }) => `saved ${text}`),
    })
    test.app.tools.define({
      name: 'lookup', description: 'Reads a record.', args: Schema.object({ key: Schema.string().required() }), traits: { effect: 'read' },
      run: timed('lookup', 30, ({ key }) => `record ${key}`),
    })
    test.app.tools.define({
      name: 'slow', description: 'Never answers in time.', traits: { effect: 'read', timeout: 40 },
      run: () => new Promise(() => {}),
    })
    test.app.tools.define({
      name: 'search', description: 'Searches.', traits: { effect: 'read' },
      args: Schema.object({ query: Schema.string().required(), limit: Schema.natural().default(5), lang: Schema.union(['en', 'zh']) }),
      run: (args) => `results for ${JSON.stringify(args)}`,
    })
    // Authority 5: allowed to write under the default gate and under the permission service's default modes.
    await test.app.mock.initUser('admin', 5)
  })
  after(async () => {
    await test.dispose()
    await server.close()
  })
  beforeEach(() => {
    runs = []
    server.requests.length = 0
    test.app.tools.history.length = 0
  })
  afterEach(() => {
    expect(server.requests.filter((request) => request.rejected).map((request) => request.rejected)).to.deep.equal([])
    expect(server.pending(), 'responses left in the replay queue').to.equal(0)
  })

  const ask = (text: string, userId = `guard-${++user}`) => test.app.mock.client(userId).receive(`agent ${text}`)
  const tools = (index: number) => server.requests[index].body.messages.filter((message) => message.role === 'tool')
  const lastTool = (index: number) => tools(index).at(-1)
  const ranCalls = (tool: string) => test.app.tools.history.filter((entry) => entry.tool === tool)

  describe('inputs from public reports', () => {
    it('a model that keeps calling a tool with an empty name gets invalid, then refusals, then must answer', async () => {
      const empty = { name: '', arguments: '{}' }
      server.enqueue(calls(empty), calls(empty), calls(empty), calls(empty), answer('Sorry, I could not find a tool for that.'))
      const replies = await ask('do something')
      expect(replies).to.deep.equal(['Sorry, I could not find a tool for that.'])
      expect(server.requests).to.have.length(5)
      expect(lastTool(1).content).to.match(/^Error \[unknown-tool\]: The tool call has no tool name\.\nHint: Call one of the available tools, e\.g\. /)
      expect(lastTool(2).content).to.match(/^Error \[unknown-tool\]/)
      expect(lastTool(3).content).to.match(/^Refused: you already called a tool without a name with exactly these arguments 2 times/)
      expect(lastTool(4).content).to.match(/^Refused: you already called a tool without a name with exactly these arguments 3 times/)
      // After the refusal was ignored, the model is asked for a text answer.
      expect(server.requests.map((request) => request.body.tool_choice)).to.deep.equal([undefined, undefined, undefined, undefined, 'none'])
      // The nameless calls went back under a legal placeholder name, which strict endpoints accept.
      const assistant = server.requests[4].body.messages.filter((message) => message.role === 'assistant')
      expect(assistant.flatMap((message) => message.tool_calls.map((call) => call.function.name))).to.deep.equal(Array(4).fill('missing_tool_name'))
    })

    it('a tool call whose id is "" in every chunk (Qwen) runs and is answered under a generated id', async () => {
      const chunk = (delta: object, finish: string = null) => ({
        id: 'chatcmpl-qwen', object: 'chat.completion.chunk', model: 'qwen-plus', created: 1770764938,
        choices: [{ index: 0, delta, finish_reason: finish, logprobs: null }],
      })
      server.enqueue(stream([
        chunk({ role: 'assistant', content: null, tool_calls: [{ index: 0, id: '', type: 'function', function: { name: 'read', arguments: '' } }] }),
        chunk({ tool_calls: [{ index: 0, id: '', type: 'function', function: { arguments: '{"path": "notes' } }] }),
        chunk({ tool_calls: [{ index: 0, id: '', type: 'function', function: { arguments: '.txt"}' } }] }),
        chunk({}, 'tool_calls'),
      ]), answer('The notes say: first note, second note.'))
      expect(await ask('read my notes')).to.deep.equal(['The notes say: first note, second note.'])
      expect(ranCalls('read').map((entry) => entry.status)).to.deep.equal(['success'])
      const [call] = server.requests[1].body.messages.find((message) => message.role === 'assistant').tool_calls
      expect(call.id).to.match(/^call_[A-Za-z0-9]{24}$/)
      expect(tools(1)).to.deep.equal([{ role: 'tool', tool_call_id: call.id, content: '1\tfirst note\n2\tsecond note' }])
    })

    it('arguments that end mid-string come back as invalid, and the retry works', async () => {
      server.enqueue(
        calls({ id: 'call_cut', name: 'read', arguments: '{"path": "notes' }),
        calls({ id: 'call_retry', name: 'read', arguments: '{"path": "notes.txt"}' }),
        answer('Done.'),
      )
      expect(await ask('read notes')).to.deep.equal(['Done.'])
      expect(lastTool(1).tool_call_id).to.equal('call_cut')
      expect(lastTool(1).content).to.match(/^Error \[invalid-json\]: The arguments are not valid JSON: .*\nHint: Send the arguments as one complete JSON object\.$/)
      // The broken arguments are sent back as {} (Ollama and vLLM parse them), the error text explains.
      expect(server.requests[1].body.messages[2].tool_calls[0].function.arguments).to.equal('{}')
      expect(lastTool(2)).to.deep.equal({ role: 'tool', tool_call_id: 'call_retry', content: '1\tfirst note\n2\tsecond note' })
    })

    it('an assistant message with tool calls and content null is sent back in a form the strict endpoint accepts', async () => {
      server.enqueue(calls({ name: 'lookup', arguments: '{"key":"a"}' }), answer('ok'))
      expect(await ask('look up a')).to.deep.equal(['ok'])
      expect(server.requests[1].body.messages[2]).to.deep.include({ role: 'assistant', content: '' })
      // The check is real: the same history with null is refused.
      const withNull = structuredClone(server.requests[1].body)
      withNull.messages[2].content = null
      expect(strictProblems(withNull, { enabled: true })).to.deep.equal(['messages[2].content: null is not a valid value'])
    })
  })

  describe('guards', () => {
    it('the same tool with the same arguments a third time in one turn is refused with a note', async () => {
      const same = { name: 'lookup', arguments: '{"key": "x"}' }
      server.enqueue(calls(same), calls({ name: 'lookup', arguments: '{ "key":"x" }' }), calls(same), answer('x is a record'))
      expect(await ask('look up x')).to.deep.equal(['x is a record'])
      expect(runs.map((run) => run.tool)).to.deep.equal(['lookup', 'lookup'])
      expect(lastTool(3).content).to.equal('Refused: you already called "lookup" with exactly these arguments 2 times in this turn, and the results are above. '
        + 'Calling it again will not give a different result. Use what you have, try something different, or answer the user now.')
      // One ignored refusal is not yet enough to force an answer.
      expect(server.requests.at(-1).body.tool_choice).to.equal(undefined)
    })

    it('a new turn starts with fresh counts', async () => {
      const same = { name: 'lookup', arguments: '{"key":"y"}' }
      server.enqueue(calls(same), calls(same), answer('first'), calls(same), answer('second'))
      await ask('first', 'guard-fresh')
      await ask('second', 'guard-fresh')
      expect(runs).to.have.length(3)
    })

    it('three failures in a row of one tool add guidance', async () => {
      server.enqueue(
        calls({ name: 'flaky', arguments: '{"n":1}' }),
        calls({ name: 'flaky', arguments: '{"n":2}' }),
        calls({ name: 'flaky', arguments: '{"n":3}' }),
        answer('The backend is down.'),
      )
      await ask('try flaky')
      expect(lastTool(1).content).to.equal('Error [run-error]: the backend is down')
      expect(lastTool(2).content).to.equal('Error [run-error]: the backend is down')
      expect(lastTool(3).content).to.equal('Error [run-error]: the backend is down\n'
        + 'Guidance: "flaky" has failed 3 times in a row. Do not retry the same approach. '
        + 'Read the errors and hints above, then change the arguments, use another tool, or explain the problem to the user.')
    })

    it('an unknown tool name goes back as invalid with close names', async () => {
      server.enqueue(calls({ name: 'lookupp', arguments: '{"key":"a"}' }), answer('ok'))
      await ask('x')
      expect(lastTool(1).content).to.equal('Error [unknown-tool]: There is no tool named "lookupp".\nHint: Call one of the available tools, e.g. lookup, flaky, slow, read, save.')
    })

    it('calls run concurrently only when every called tool is parallel', async () => {
      server.enqueue(
        calls({ id: 'a', name: 'lookup', arguments: '{"key":"1"}' }, { id: 'b', name: 'lookup', arguments: '{"key":"2"}' }),
        calls({ id: 'c', name: 'lookup', arguments: '{"key":"3"}' }, { id: 'd', name: 'save', arguments: '{"text":"t"}' }),
        answer('done'),
      )
      await ask('mixed', 'admin')
      const [one, two, three, four] = runs
      expect(runs.map((run) => run.tool)).to.deep.equal(['lookup', 'lookup', 'lookup', 'save'])
      expect(two.start).to.be.below(one.end)
      expect(four.start).to.be.at.least(three.end)
      expect(tools(2).map((message) => message.tool_call_id)).to.deep.equal(['a', 'b', 'c', 'd'])
    })

    it('tells the model plainly when a call was denied', async () => {
      server.enqueue(calls({ name: 'save', arguments: '{"text":"hi"}' }), answer('I am not allowed to save notes.'))
      expect(await ask('save hi')).to.deep.equal(['I am not allowed to save notes.'])
      expect(runs).to.deep.equal([])
      expect(lastTool(1).content).to.match(/^This call was denied and did not run\. Do not try to get around the refusal; tell the user it was not allowed\.\nError \[[a-z-]+\]: The call was not allowed: /)
    })

    it('tells the model plainly when a call timed out', async () => {
      server.enqueue(calls({ name: 'slow', arguments: '{}' }), answer('It took too long.'))
      await ask('slow')
      expect(lastTool(1).content).to.equal('This call timed out: the tool, or the approval it was waiting for, did not finish in time. It did not complete.\n'
        + 'Error [timeout]: the tool did not finish within 40 ms\nHint: Try a smaller task, or ask for less output.')
    })

    it('openai-strict: sends strict declarations and removes the nulls of optional fields before the tool runs', async () => {
      const options = test.app.tools.agent.config()
      options.dialect = 'openai-strict'
      try {
        server.enqueue(calls({ name: 'search', arguments: '{"query":"koishi","limit":null,"lang":null}' }), answer('found'))
        await ask('search koishi')
        const declaration = server.requests[0].body.tools.find((tool) => tool.function.name === 'search')
        expect(declaration.function.strict).to.equal(true)
        expect(declaration.function.parameters.required).to.deep.equal(['query', 'limit', 'lang'])
        expect(lastTool(1).content).to.equal('results for {"query":"koishi","limit":5}')
      } finally {
        options.dialect = 'openai'
      }
    })

    it('ends with a clear message at maxSteps, without running the last calls', async () => {
      const options = test.app.tools.agent.config()
      options.maxSteps = 3
      try {
        server.enqueue(
          calls({ name: 'lookup', arguments: '{"key":"1"}' }),
          calls({ name: 'lookup', arguments: '{"key":"2"}' }),
          completion({ content: 'Still looking.', tool_calls: [{ name: 'lookup', arguments: '{"key":"3"}' }] }),
        )
        const replies = await ask('loop', 'guard-steps')
        expect(replies).to.deep.equal(['Still looking.\n\nI stopped after 3 model requests without a final answer (the step limit, agent.maxSteps). Try a narrower question.'])
        expect(runs.map((run) => run.args.key)).to.deep.equal(['1', '2'])
        // The history stays valid: the unrun call is answered, and a note closes the turn.
        server.enqueue(answer('next'))
        await ask('next', 'guard-steps')
        const history = server.requests[3].body.messages
        expect(history.at(-3)).to.deep.equal({ role: 'tool', tool_call_id: 'call_inline_0', content: 'Not run: this turn reached its step limit.' })
        expect(history.at(-2)).to.deep.equal({ role: 'assistant', content: '(This turn ended early: the step limit was reached before an answer. Still looking.)' })
        expect(history.at(-1)).to.deep.equal({ role: 'user', content: 'next' })
      } finally {
        options.maxSteps = 16
      }
    })
  })
})
