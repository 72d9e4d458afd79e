import { expect } from 'chai'
import { resolve } from 'path'
import { createApp, onlyRead, TestApp } from './helpers/app'
import { stdioServer } from './helpers/mcp'
import { ReplayServer, startReplayServer } from './helpers/replay-server'
import { answer } from './helpers/completions'

/*
 * Input schemas of an MCP server (tests/fixtures/mcp-hostile.cjs) built to
 * hurt whoever walks them: 10 000 levels of nesting, and definitions that
 * each use the next one twice (2^40 copies when inlined). One such tool
 * must neither freeze the bot nor break the declarations of the others.
 */
const hostileBin = resolve(__dirname, 'fixtures/mcp-hostile.cjs')

describe('hostile input: MCP input schemas', function () {
  this.timeout(20000)
  let test: TestApp
  let server: ReplayServer
  const scope = { authority: 3 }
  before(async () => {
    server = await startReplayServer()
    test = await createApp({
      ...onlyRead,
      modes: { mode: 'native' },
      mcp: { servers: [stdioServer('h', hostileBin)] },
      agent: { enabled: true, baseURL: server.baseURL, model: 'replay-model', timeout: 5000, dialect: 'openai-strict', progress: 'never' },
    }, { database: true, http: true, locale: 'en-US' })
    await test.app.tools.mcp.settled()
    await test.app.mock.initUser('admin', 3)
  })
  after(async () => {
    await test.dispose()
    await server.close()
  })

  it('skips a tool whose schema is nested thousands of levels deep (named or not), and says why in tools.mcp', async () => {
    const [status] = test.app.tools.mcp.servers
    expect(status.state, status.error).to.equal('connected')
    expect(test.app.tools.get('mcp__h__deep-schema')).to.equal(undefined)
    expect(status.skipped).to.deep.include({ tool: 'deep-schema', reason: 'its inputSchema is nested more than 64 levels deep' })
    expect(status.skipped.find((item) => item.tool.startsWith('(a tool without a name')).reason).to.match(/^not a valid MCP tool: name: /)
    const [reply] = await test.app.mock.client('admin').receive('tools.mcp')
    expect(reply).to.contain('deep-schema')
  })

  for (const dialect of ['openai', 'openai-strict', 'anthropic', 'gemini'] as const) {
    it(`declares every tool in the ${dialect} dialect in bounded time and size, references that double included`, () => {
      const started = Date.now()
      const declarations = test.app.tools.declarations(scope, { mode: 'native', dialect })
      expect(Date.now() - started).to.be.below(1000)
      const text = JSON.stringify(declarations)
      expect(text).to.contain('mcp__h__ref-bomb')
      expect(text.length).to.be.below(2_000_000)
    })
  }

  it('refuses a plugin tool whose parameters are nested thousands of levels deep with a TypeError naming the rule', () => {
    let parameters: any = { type: 'string' }
    for (let level = 0; level < 5000; level++) parameters = { type: 'object', properties: { a: parameters } }
    expect(() => test.app.tools.define({ name: 'too_deep', description: 'Deep.', parameters, run: () => 'ok' }))
      .to.throw(TypeError, 'tool "too_deep" has a parameters schema nested more than 64 levels deep')
    expect(test.app.tools.get('too_deep')).to.equal(undefined)
    expect(() => JSON.stringify(test.app.tools.declarations(scope, { mode: 'native' }))).not.to.throw()
  })

  it('validates calls of the tool with doubling references', async () => {
    const valid = await test.app.tools.call({ name: 'mcp__h__ref-bomb', args: { x: { a: { a: {} } } }, scope })
    expect(valid.ok, valid.error?.message).to.equal(true)
    const invalid = await test.app.tools.call({ name: 'mcp__h__ref-bomb', args: { x: { a: 5 } }, scope })
    expect(invalid.status).to.equal('invalid')
  })

  it('lets the agent reach its model with those tools in view (strict dialect)', async () => {
    server.enqueue(answer('fine'))
    const started = Date.now()
    expect(await test.app.mock.client('admin').receive('agent hi')).to.deep.equal(['fine'])
    expect(Date.now() - started).to.be.below(2000)
    const names = server.requests.at(-1).body.tools.map((tool) => tool.function.name)
    expect(names).to.include('mcp__h__ref-bomb')
    expect(names).not.to.include('mcp__h__deep-schema')
  })
})
