import { expect } from 'chai'
import { Logger, Schema } from 'koishi'
import { createApp, TestApp, toolPlugin } from './helpers/app'

function tool(name: string, text = name) {
  return {
    name,
    description: `the ${name} tool`,
    args: Schema.object({}),
    traits: { effect: 'read' as const },
    run: () => text,
  }
}

/** Captures warnings logged by the plugin while `body` runs. */
async function warnings(body: () => unknown) {
  const lines: string[] = []
  const target = { colors: 0, record: (record: Logger.Record) => { if (record.type === 'warn') lines.push(record.content) } }
  Logger.targets.push(target as any)
  try {
    await body()
  } finally {
    Logger.targets.splice(Logger.targets.indexOf(target as any), 1)
  }
  return lines
}

describe('registry: define, lifecycle and shadowing', () => {
  let test: TestApp
  beforeEach(async () => test = await createApp())
  afterEach(() => test.dispose())

  it('binds a tool to the defining plugin and removes it when that plugin is disposed', async () => {
    const plugin = toolPlugin('weather-plugin', (ctx) => { ctx.tools.define(tool('weather')) })
    const fork = test.app.plugin(plugin)
    expect(test.app.tools.get('weather')?.definition.name).to.equal('weather')
    fork.dispose()
    expect(test.app.tools.get('weather')).to.be.undefined
    const result = await test.app.tools.call({ name: 'weather' })
    expect(result.status).to.equal('invalid')
    expect(result.error.code).to.equal('unknown-tool')
  })

  it('returns a disposer from define', () => {
    const dispose = test.app.tools.define(tool('clock'))
    expect(test.app.tools.get('clock')).to.exist
    dispose()
    expect(test.app.tools.get('clock')).to.be.undefined
  })

  for (const bad of ['', 'has space', 'dot.name', 'a'.repeat(65), '名字', 'slash/name', undefined, 42]) {
    it(`refuses the tool name ${JSON.stringify(bad)} at define time`, () => {
      expect(() => test.app.tools.define({ ...tool('x'), name: bad as any })).to.throw(TypeError, /tool name/)
    })
  }

  for (const good of ['a', 'read_file', 'get-sum', 'A1', 'a'.repeat(64)]) {
    it(`accepts the tool name ${JSON.stringify(good.length > 10 ? good.slice(0, 5) + '…' : good)}`, () => {
      test.app.tools.define(tool(good))
      expect(test.app.tools.get(good)).to.exist
    })
  }

  it('refuses a definition without run or forward', () => {
    expect(() => test.app.tools.define({ name: 'empty', description: 'nothing' } as any)).to.throw(TypeError, /run or a forward/)
  })

  it('keeps the builtin read when a plugin defines read, and explains the shadowing', async () => {
    const plugin = toolPlugin('my-reader', (ctx) => { ctx.tools.define(tool('read', 'plugin read')) })
    test.app.plugin(plugin)
    expect(test.app.tools.get('read').source).to.equal('builtin')
    const explanation = test.app.tools.explain('read')
    expect(explanation.active).to.deep.equal({ source: 'builtin', plugin: 'chatluna-tools' })
    expect(explanation.shadowed).to.deep.equal([{
      source: 'plugin',
      plugin: 'my-reader',
      by: { source: 'builtin', plugin: 'chatluna-tools' },
      reason: 'priority',
    }])
  })

  it('keeps the first of two plugins defining weather, warns about the second, and restores it when the first is disposed', async () => {
    const first = toolPlugin('first', (ctx) => { ctx.tools.define(tool('weather', 'first')) })
    const second = toolPlugin('second', (ctx) => { ctx.tools.define(tool('weather', 'second')) })
    const fork = test.app.plugin(first)
    const logged = await warnings(() => test.app.plugin(second))
    expect(logged.join('\n')).to.match(/weather from plugin second is skipped: plugin first registered it first/)
    expect((await test.app.tools.call({ name: 'weather' })).content).to.deep.equal([{ type: 'text', text: 'first' }])
    expect(test.app.tools.explain('weather').shadowed[0]).to.include({ plugin: 'second', reason: 'duplicate' })
    fork.dispose()
    expect((await test.app.tools.call({ name: 'weather' })).content).to.deep.equal([{ type: 'text', text: 'second' }])
    expect(test.app.tools.explain('weather').shadowed).to.deep.equal([])
  })

  it('orders sources builtin > plugin > agent > mcp whatever the registration order', async () => {
    test.app.tools.define(tool('lookup', 'mcp'), { source: 'mcp' })
    test.app.tools.define(tool('lookup', 'agent'), { source: 'agent' })
    expect(test.app.tools.get('lookup').source).to.equal('agent')
    const dispose = test.app.tools.define(tool('lookup', 'plugin'))
    expect(test.app.tools.get('lookup').source).to.equal('plugin')
    dispose()
    expect(test.app.tools.get('lookup').source).to.equal('agent')
  })

  it('emits chatluna/tools-changed on define and dispose', () => {
    let count = 0
    test.app.on('chatluna/tools-changed', () => count++)
    const dispose = test.app.tools.define(tool('ping'))
    dispose()
    expect(count).to.equal(2)
  })

  it('resolves a name conservatively: case and - to _', async () => {
    test.app.tools.define(tool('get_weather', 'sunny'))
    expect((await test.app.tools.call({ name: 'Get-Weather' })).content).to.deep.equal([{ type: 'text', text: 'sunny' }])
    expect((await test.app.tools.call({ name: 'getweather' })).error.code).to.equal('unknown-tool')
  })
})
