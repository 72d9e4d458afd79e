import { expect } from 'chai'
import { Schema } from 'koishi'
import { createApp, TestApp } from './helpers/app'
import { ReplayServer, startReplayServer } from './helpers/replay-server'
import { answer, calls } from './helpers/completions'

/*
 * The agent in search mode: above the threshold the model sees the resident
 * tools and `tool_search`; a tool it loads appears in the declarations of
 * the next step (the loop declares anew every step) and can be called.
 */

describe('agent: search mode', () => {
  let server: ReplayServer
  let test: TestApp
  const ran: string[] = []

  before(async () => {
    server = await startReplayServer()
    test = await createApp({
      agent: { enabled: true, baseURL: server.baseURL, model: 'replay-model', progress: 'never' },
    }, { database: true, http: true, locale: 'en-US' })
    for (let index = 0; index < 24; index++) {
      test.app.tools.define({ name: `mcp__files__tool_${index}`, description: `File utility number ${index}.`, traits: { effect: 'read' }, run: () => 'ok' })
    }
    test.app.tools.define({
      name: 'mcp__weather__forecast', description: 'Weather forecast for a city.', args: Schema.object({ city: Schema.string().required() }),
      traits: { effect: 'read' },
      run: ({ city }) => {
        ran.push(city)
        return `Sunny in ${city}`
      },
    })
  })
  after(async () => {
    await test.dispose()
    await server.close()
  })

  it('a tool found with tool_search is declared in the next step and runs', async () => {
    server.enqueue(
      calls({ id: 'call_search', name: 'tool_search', arguments: '{"query":"weather forecast","limit":1}' }),
      calls({ id: 'call_forecast', name: 'mcp__weather__forecast', arguments: '{"city":"Paris"}' }),
      answer('Sunny in Paris.'),
    )
    expect(await test.app.mock.client('searcher').receive('agent weather in Paris?')).to.deep.equal(['Sunny in Paris.'])
    const declared = (index: number) => server.requests[index].body.tools.map((tool) => tool.function.name)
    expect(declared(0)).to.include('tool_search').and.not.include('mcp__weather__forecast')
    expect(declared(1)).to.include('mcp__weather__forecast')
    expect(ran).to.deep.equal(['Paris'])
    expect(server.requests.filter((request) => request.rejected)).to.deep.equal([])
  })
})
