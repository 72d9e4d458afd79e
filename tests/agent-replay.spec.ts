import { expect } from 'chai'
import { Schema } from 'koishi'
import { createApp, TestApp } from './helpers/app'
import { ReplayServer, startReplayServer } from './helpers/replay-server'

/*
 * Every OpenAI-format fixture of tests/fixtures/chat-completions (recorded
 * provider responses, see SOURCES.md there) replayed through the whole
 * agent: a user writes `agent …` in a private chat, the replay server answers
 * with the recorded bytes, the loop runs the tools the recording calls, and
 * a recorded final answer ends the turn. The server's strict mode rejects
 * any follow-up request a real endpoint would reject.
 */

const finalAnswer = 'openai-gpt4omini-final-answer-turn2.sse'
const finalText = 'The capital of the UK is London.'

describe('agent: replayed provider recordings', function () {
  let server: ReplayServer
  let test: TestApp
  let executed: { tool: string; args: any }[]
  let user = 0
  /** Resolves when both parallel tools have started; each waits for it (or 500 ms). */
  let barrier: { count: number; open: () => void; opened: Promise<void> }

  const resetBarrier = () => {
    let open: () => void
    const opened = new Promise<void>((resolve) => open = resolve)
    barrier = { count: 0, open, opened }
  }
  const parallelTool = async (tool: string, args: any) => {
    executed.push({ tool, args })
    if (++barrier.count === 2) barrier.open()
    const met = await Promise.race([barrier.opened.then(() => true), new Promise((resolve) => setTimeout(() => resolve(false), 500))])
    return `${tool} ok (overlapped: ${met})`
  }

  before(async () => {
    server = await startReplayServer()
    test = await createApp({
      agent: { enabled: true, baseURL: server.baseURL, apiKey: 'test-key', model: 'replay-model' },
    }, { database: true, http: true, locale: 'en-US' })
    const define = (name: string, args: Schema, run: (args: any) => any) => test.app.tools.define({
      name, description: `The ${name} tool.`, args, traits: { effect: 'read' }, run,
    })
    define('GetWeatherArgs', Schema.object({
      city: Schema.string().required(), country: Schema.string().required(), units: Schema.union(['c', 'f']).required(),
    }), (args) => parallelTool('GetWeatherArgs', args))
    define('get_stock_price', Schema.object({
      ticker: Schema.string().required(), exchange: Schema.union(['NASDAQ', 'NYSE']).required(),
    }), (args) => parallelTool('get_stock_price', args))
    const simple = (name: string, args: Schema, answer: (args: any) => string) => define(name, args, (value) => {
      executed.push({ tool: name, args: value })
      return answer(value)
    })
    simple('get_capital', Schema.object({ country: Schema.string().required() }), ({ country }) => country === 'UK' ? 'London' : 'unknown')
    simple('weather', Schema.object({ location: Schema.string() }), ({ location }) => `Sunny in ${location ?? 'your area'}`)
    simple('get_weather', Schema.object({ city: Schema.string().required() }), ({ city }) => `Rain in ${city}`)
    simple('load_capability', Schema.object({ id: Schema.string().required() }), ({ id }) => `Loaded ${id}`)
    simple('get_something_by_name', Schema.object({ name: Schema.string().required() }), ({ name }) => `Found ${name}`)
    simple('get_current_time', Schema.object({}), () => '12:00')
    simple('final_result', Schema.object({ city: Schema.string().required(), country: Schema.string().required() }), ({ city }) => `Recorded ${city}`)
  })
  after(async () => {
    await test.dispose()
    await server.close()
  })
  beforeEach(() => {
    executed = []
    server.requests.length = 0
    server.strict.reasoningContent = false
    resetBarrier()
  })
  afterEach(() => {
    expect(server.requests.filter((request) => request.rejected).map((request) => request.rejected)).to.deep.equal([])
    expect(server.pending(), 'responses left in the replay queue').to.equal(0)
  })

  /** Sends `agent <text>` as a fresh private user and returns the bot's messages. */
  const ask = (text = 'hello') => test.app.mock.client(`replay-${++user}`).receive(`agent ${text}`)
  /** The messages of the n-th request the endpoint received. */
  const sent = (index: number) => server.requests[index].body.messages
  const toolMessages = (index: number) => sent(index).filter((message) => message.role === 'tool')
  const assistantOf = (index: number) => sent(index).find((message) => message.role === 'assistant')

  it('openai-gpt4o-parallel-tool-calls.json: two calls run concurrently, content null is sent back as ""', async () => {
    server.enqueue('openai-gpt4o-parallel-tool-calls.json', finalAnswer)
    const replies = await ask('weather in Edinburgh and the AAPL price')
    expect(replies).to.deep.equal(['Running: GetWeatherArgs, get_stock_price', finalText])
    expect(executed).to.deep.equal([
      { tool: 'GetWeatherArgs', args: { city: 'Edinburgh', country: 'GB', units: 'c' } },
      { tool: 'get_stock_price', args: { ticker: 'AAPL', exchange: 'NASDAQ' } },
    ])
    expect(assistantOf(1)).to.deep.equal({
      role: 'assistant',
      content: '',
      tool_calls: [
        { id: 'call_fdNz3vOBKYgOIpMdWotB9MjY', type: 'function', function: { name: 'GetWeatherArgs', arguments: '{"city": "Edinburgh", "country": "GB", "units": "c"}' } },
        { id: 'call_h1DWI1POMJLb0KwIyQHWXD4p', type: 'function', function: { name: 'get_stock_price', arguments: '{"ticker": "AAPL", "exchange": "NASDAQ"}' } },
      ],
    })
    expect(toolMessages(1)).to.deep.equal([
      { role: 'tool', tool_call_id: 'call_fdNz3vOBKYgOIpMdWotB9MjY', content: 'GetWeatherArgs ok (overlapped: true)' },
      { role: 'tool', tool_call_id: 'call_h1DWI1POMJLb0KwIyQHWXD4p', content: 'get_stock_price ok (overlapped: true)' },
    ])
  })

  it('openai-gpt4o-parallel-tool-calls.sse: arguments split into 11 and 9 fragments are joined per index', async () => {
    server.enqueue('openai-gpt4o-parallel-tool-calls.sse', finalAnswer)
    await ask()
    expect(executed).to.deep.equal([
      { tool: 'GetWeatherArgs', args: { city: 'Edinburgh', country: 'GB', units: 'c' } },
      { tool: 'get_stock_price', args: { ticker: 'AAPL', exchange: 'NASDAQ' } },
    ])
    expect(assistantOf(1).tool_calls.map((call) => [call.id, call.function.arguments])).to.deep.equal([
      ['call_JMW1whyEaYG438VE1OIflxA2', '{"city": "Edinburgh", "country": "GB", "units": "c"}'],
      ['call_DNYTawLBoN8fj3KN6qU9N1Ou', '{"ticker": "AAPL", "exchange": "NASDAQ"}'],
    ])
    expect(toolMessages(1).map((message) => message.content)).to.deep.equal(['GetWeatherArgs ok (overlapped: true)', 'get_stock_price ok (overlapped: true)'])
  })

  it('openai-gpt4omini turn 1 + turn 2: the recorded agent loop, tool result "London", then the recorded answer', async () => {
    server.enqueue('openai-gpt4omini-tool-call-turn1.sse', 'openai-gpt4omini-final-answer-turn2.sse')
    const replies = await ask('What is the capital of the UK?')
    expect(replies).to.deep.equal(['Running: get_capital', finalText])
    expect(executed).to.deep.equal([{ tool: 'get_capital', args: { country: 'UK' } }])
    // The second request carries the tool result for the recorded call id, as in the recording.
    expect(toolMessages(1)).to.deep.equal([{ role: 'tool', tool_call_id: 'call_ZR5UUuTt3pf61kjwAJIYdVMj', content: 'London' }])
    expect(server.requests[0].body).to.deep.include({ model: 'replay-model', stream: true })
    expect(server.requests[0].headers.authorization).to.equal('Bearer test-key')
    expect(server.requests[0].body.tools.map((tool) => tool.function.name)).to.include.members(['get_capital', 'read'])
  })

  it('openai-gpt4o-text-then-tool-call.sse: the interim text is shown and kept with the call', async () => {
    server.enqueue('openai-gpt4o-text-then-tool-call.sse', finalAnswer)
    const replies = await ask()
    expect(replies).to.deep.equal(['PRE_TOOL', 'Running: weather', finalText])
    expect(executed).to.deep.equal([{ tool: 'weather', args: {} }])
    expect(assistantOf(1)).to.deep.equal({
      role: 'assistant',
      content: 'PRE_TOOL',
      tool_calls: [{ id: 'call_NZa7xqfefoaMI2YYHowVXVlU', type: 'function', function: { name: 'weather', arguments: '{}' } }],
    })
  })

  it('deepseek-v4flash-reasoning-tool-call.json: reasoning_content goes back with the call (DeepSeek thinking mode)', async () => {
    server.strict.reasoningContent = true
    server.enqueue('deepseek-v4flash-reasoning-tool-call.json', finalAnswer)
    await ask()
    expect(executed).to.deep.equal([{ tool: 'weather', args: { location: 'San Francisco' } }])
    expect(assistantOf(1)).to.deep.equal({
      role: 'assistant',
      content: '',
      reasoning_content: 'The user asks about weather in San Francisco. I\'ll call the weather tool.',
      tool_calls: [{ id: 'call_00_lCIkdHRa7AKmCG3TlxXz1061', type: 'function', function: { name: 'weather', arguments: '{"location": "San Francisco"}' } }],
    })
  })

  it('deepseek-v4flash-reasoning-tool-call.sse: 17 reasoning chunks and 10 argument fragments', async () => {
    server.strict.reasoningContent = true
    server.enqueue('deepseek-v4flash-reasoning-tool-call.sse', finalAnswer)
    await ask()
    expect(executed).to.deep.equal([{ tool: 'weather', args: { location: 'San Francisco' } }])
    const assistant = assistantOf(1)
    expect(assistant.tool_calls[0].function.arguments).to.equal('{"location": "San Francisco"}')
    expect(assistant.reasoning_content).to.be.a('string').and.match(/^The user asks about the weather in San Francisco/)
  })

  it('deepseek-v4flash-text-plus-tool-call.json: text next to a call', async () => {
    server.enqueue('deepseek-v4flash-text-plus-tool-call.json', finalAnswer)
    const replies = await ask('roll a die')
    expect(replies).to.deep.equal(['Let me load the dice rolling capability!', 'Running: load_capability', finalText])
    expect(executed).to.deep.equal([{ tool: 'load_capability', args: { id: 'DICE_ROLL' } }])
    expect(toolMessages(1)).to.deep.equal([{ role: 'tool', tool_call_id: 'call_00_sXqYgMESDht75NCLLZtt9804', content: 'Loaded DICE_ROLL' }])
  })

  it('qwen3max-dashscope-tool-call.sse: continuation chunks with id "" neither drop nor split the call', async () => {
    server.enqueue('qwen3max-dashscope-tool-call.sse', finalAnswer)
    await ask()
    expect(executed).to.deep.equal([{ tool: 'weather', args: { location: 'San Francisco' } }])
    expect(assistantOf(1).tool_calls).to.deep.equal([
      { id: 'call_eee11723464a4b9eb8cee71d', type: 'function', function: { name: 'weather', arguments: '{"location": "San Francisco"}' } },
    ])
  })

  it('groq-llama33-tool-call-no-content.json: a message without a content key', async () => {
    server.enqueue('groq-llama33-tool-call-no-content.json', finalAnswer)
    await ask()
    expect(executed).to.deep.equal([{ tool: 'weather', args: {} }])
    expect(assistantOf(1).content).to.equal('')
    expect(toolMessages(1)).to.deep.equal([{ role: 'tool', tool_call_id: 'ax9fskhev', content: 'Sunny in your area' }])
  })

  it('groq-gptoss120b-reasoning-tool-call.sse: `reasoning` deltas are read but not sent back', async () => {
    server.enqueue('groq-gptoss120b-reasoning-tool-call.sse', finalAnswer)
    await ask()
    expect(executed).to.deep.equal([{ tool: 'get_something_by_name', args: { name: 'example' } }])
    expect(assistantOf(1)).to.deep.equal({
      role: 'assistant',
      content: '',
      tool_calls: [{ id: 'fc_bfb39741-3748-4def-9886-a93fc9c64a90', type: 'function', function: { name: 'get_something_by_name', arguments: '{"name":"example"}' } }],
    })
  })

  it('mistral-small-tool-call.sse: a call without index and type, finish reason and usage in the same chunk', async () => {
    server.enqueue('mistral-small-tool-call.sse', finalAnswer)
    await ask()
    expect(executed).to.deep.equal([{ tool: 'weather', args: { location: 'San Francisco' } }])
    expect(toolMessages(1)).to.deep.equal([{ role: 'tool', tool_call_id: 'gSIMJiOkT', content: 'Sunny in San Francisco' }])
  })

  it('gemini-openai-compat-tool-call-empty-id.json: id "" gets a generated id, used for the call and its result', async () => {
    server.enqueue('gemini-openai-compat-tool-call-empty-id.json', finalAnswer)
    await ask('what time is it?')
    expect(executed).to.deep.equal([{ tool: 'get_current_time', args: {} }])
    const [call] = assistantOf(1).tool_calls
    expect(call.id).to.match(/^call_[A-Za-z0-9]{24}$/)
    expect(toolMessages(1)).to.deep.equal([{ role: 'tool', tool_call_id: call.id, content: '12:00' }])
  })

  it('ollama-cloud-gptoss20b-tool-call.json: content "" with reasoning and a short id', async () => {
    server.enqueue('ollama-cloud-gptoss20b-tool-call.json', finalAnswer)
    await ask()
    expect(executed).to.deep.equal([{ tool: 'final_result', args: { city: 'Paris', country: 'France' } }])
    expect(toolMessages(1)).to.deep.equal([{ role: 'tool', tool_call_id: 'call_o2vnpxrw', content: 'Recorded Paris' }])
  })

  it('vllm-crusoe-glm52-tool-call.json: vLLM extras and content null', async () => {
    server.enqueue('vllm-crusoe-glm52-tool-call.json', finalAnswer)
    await ask()
    expect(executed).to.deep.equal([{ tool: 'get_weather', args: { city: 'Paris' } }])
    expect(assistantOf(1).content).to.equal('')
    expect(toolMessages(1)).to.deep.equal([{ role: 'tool', tool_call_id: 'chatcmpl-tool-bbb91941bf76335c', content: 'Rain in Paris' }])
  })

  it('openai-gpt4omini-final-answer-turn2.sse: a text answer ends the turn at once', async () => {
    server.enqueue(finalAnswer)
    const replies = await ask()
    expect(replies).to.deep.equal([finalText])
    expect(executed).to.deep.equal([])
    expect(server.requests).to.have.length(1)
  })

  it('without streaming: the request says stream false and a JSON recording is read', async () => {
    const options = test.app.tools.agent.config()
    options.stream = false
    try {
      server.enqueue('vllm-crusoe-glm52-tool-call.json', finalAnswer)
      await ask()
      expect(server.requests[0].body.stream).to.equal(false)
      expect(server.requests[0].headers.accept).not.to.contain('text/event-stream')
      expect(executed).to.deep.equal([{ tool: 'get_weather', args: { city: 'Paris' } }])
    } finally {
      options.stream = true
    }
  })
})
