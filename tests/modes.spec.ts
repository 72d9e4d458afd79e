import { expect } from 'chai'
import { Dict } from 'koishi'
import * as plugin from '../src'
import { ToolScope } from '../src'
import { createApp, noBuiltins, TestApp } from './helpers/app'
import { conversationKey, LoadedTools, maxConversations, maxLoadedPerConversation } from '../src/modes/loaded'
import { catalogBudget } from '../src/modes/search'
import { chineseTools } from './fixtures/search-corpus'

const groupA: ToolScope = { platform: 'mock', channelId: 'a', guildId: 'g' }
const groupB: ToolScope = { platform: 'mock', channelId: 'b', guildId: 'g' }

function names(declarations: any[]) {
  return declarations.map((declaration) => declaration.function.name)
}

describe('tool modes', () => {
  let test: TestApp
  afterEach(() => test?.dispose())

  async function start(config: Dict = {}) {
    test = await createApp({ ...noBuiltins, ...config })
    return test.app.tools
  }

  /** `count` plugin tools `tool_01` … (resident by default). */
  function defineTools(count: number, prefix = 'tool_', source: 'plugin' | 'mcp' = 'plugin') {
    for (let i = 1; i <= count; i++) {
      test.app.tools.define({
        name: `${prefix}${String(i).padStart(2, '0')}`,
        description: `Tool number ${i}.`,
        traits: { effect: 'read' },
        run: () => `ran ${i}`,
      }, { source })
    }
  }

  /** The Chinese fixture tools as MCP tools of server `zh` (deferred by the default pattern). */
  function defineChineseMcpTools() {
    for (const tool of chineseTools) {
      test.app.tools.define({
        name: `mcp__zh__${tool.name}`,
        description: tool.description,
        parameters: tool.parameters ?? { type: 'object', properties: {} },
        traits: { effect: 'read' },
        run: (args) => `${tool.name} ${JSON.stringify(args)}`,
        owner: { kind: 'mcp', id: 'zh' },
      }, { source: 'mcp' })
    }
  }

  describe('declarations', () => {
    it('native declares every visible tool in full and never tool_search', async () => {
      const tools = await start()
      defineTools(3)
      defineTools(2, 'mcp__demo__', 'mcp')
      const declarations = tools.declarations(groupA, { mode: 'native' })
      expect(names(declarations)).to.deep.equal(['mcp__demo__01', 'mcp__demo__02', 'tool_01', 'tool_02', 'tool_03'])
      expect(tools.list(groupA).map((entry) => entry.definition.name)).not.to.include('tool_search')
    })

    it('search declares resident tools, then tool_search with the catalog of loadable tools', async () => {
      const tools = await start()
      defineTools(2)
      defineChineseMcpTools()
      const declarations = tools.declarations(groupA, { mode: 'search' })
      expect(names(declarations)).to.deep.equal(['tool_01', 'tool_02', 'tool_search'])
      const search = declarations[2].function
      expect(search.parameters.required).to.deep.equal(['query'])
      expect(search.parameters.properties.limit.description).to.equal('How many tools to load. Default 5, at most 20.')
      expect(search.description).to.contain('Tools you can load (10):\n- mcp__zh__book_train_ticket: 预订火车票或高铁票，查询车次和余票。\n')
      expect(search.description).to.contain('- mcp__zh__set_alarm: 设置闹钟，在指定时间提醒。')
    })

    it('auto is native at the threshold and search one tool above it', async () => {
      const tools = await start()
      defineTools(10)
      defineTools(10, 'mcp__demo__', 'mcp')
      expect(tools.modeFor(groupA)).to.equal('native')
      expect(tools.declarations(groupA)).to.have.length(20)
      expect(names(tools.declarations(groupA))).not.to.include('tool_search')
      defineTools(1, 'extra_')
      expect(tools.modeFor(groupA)).to.equal('search')
      expect(names(tools.declarations(groupA))).to.deep.equal([
        'extra_01', ...Array.from({ length: 10 }, (_, i) => `tool_${String(i + 1).padStart(2, '0')}`), 'tool_search',
      ])
      // Counting is per scope: tools hidden here do not count.
      tools.config.scenes = [{ channelId: 'a', deny: ['extra_*'] } as any]
      expect(tools.modeFor(groupA)).to.equal('native')
      expect(tools.modeFor(groupB)).to.equal('search')
    })

    it('follows the configured mode and threshold when the caller names none', async () => {
      let tools = await start({ mode: 'native', searchThreshold: 0 })
      defineTools(1, 'mcp__demo__', 'mcp')
      expect(names(tools.declarations(groupA))).to.deep.equal(['mcp__demo__01'])
      await test.dispose()
      tools = await start({ searchThreshold: 0 })
      defineTools(1, 'mcp__demo__', 'mcp')
      expect(names(tools.declarations(groupA))).to.deep.equal(['tool_search'])
      expect(() => tools.declarations(groupA, { mode: 'code' as any })).to.throw(TypeError, 'unknown tool mode "code"')
    })

    it('defers tools by traits.deferred and by the configured patterns', async () => {
      const tools = await start({ mode: 'search', deferred: ['ext_*'] })
      defineTools(1, 'ext_')
      defineTools(1, 'mcp__demo__', 'mcp')
      tools.define({ name: 'lazy', description: 'Rarely needed.', traits: { deferred: true, effect: 'read' }, run: () => 'lazy' })
      tools.define({ name: 'eager', description: 'Always needed.', traits: { effect: 'read' }, run: () => 'eager' })
      // mcp__* is no longer a pattern, so the MCP tool is resident.
      expect(names(tools.declarations(groupA))).to.deep.equal(['eager', 'mcp__demo__01', 'tool_search'])
      expect(tools.declarations(groupA)[2].function.description).to.contain('Tools you can load (2):\n- ext_01: Tool number 1.\n- lazy: Rarely needed.')
      expect(tools.searchMode.isDeferred(tools.registry.get('lazy'))).to.equal(true)
      expect(tools.searchMode.isDeferred(tools.registry.get('eager'))).to.equal(false)
    })

    it('is native when nothing is deferred, or when tool_search is hidden in the scope', async () => {
      const tools = await start({ mode: 'search', policies: { tool_search: 'disabled' } })
      defineTools(2)
      expect(names(tools.declarations(groupA))).to.deep.equal(['tool_01', 'tool_02'])
      defineTools(2, 'mcp__demo__', 'mcp')
      // The policy hides tool_search, so the deferred tools are declared in full instead of becoming unreachable.
      expect(names(tools.declarations(groupA))).to.deep.equal(['mcp__demo__01', 'mcp__demo__02', 'tool_01', 'tool_02'])
      // An agent tool set without tool_search: the same.
      const allowed = tools.policies.push({ tool_search: 'auto' })
      expect(names(tools.declarations(groupA))).to.deep.equal(['tool_01', 'tool_02', 'tool_search'])
      const agent = { ...groupA, agent: 'helper', tools: { include: ['tool_0*', 'mcp__*'] } }
      expect(names(tools.declarations(agent))).to.deep.equal(['mcp__demo__01', 'mcp__demo__02', 'tool_01', 'tool_02'])
      allowed()
    })

    it('cuts a long catalog to names, then to a count of the rest', async () => {
      const tools = await start({ mode: 'search' })
      for (let i = 0; i < 400; i++) {
        tools.define({ name: `mcp__big__tool_with_a_long_name_${i}`, description: 'x'.repeat(200), traits: { effect: 'read' }, run: () => '' }, { source: 'mcp' })
      }
      const description: string = tools.declarations(groupA).find((d) => d.function.name === 'tool_search').function.description
      const catalog = description.slice(description.indexOf('Tools you can load (400):'))
      expect(catalog.length).to.be.below(catalogBudget + 100)
      expect(catalog).not.to.contain('xxx')
      expect(catalog).to.match(/mcp__big__tool_with_a_long_name_0, mcp__big__tool_with_a_long_name_1, /)
      expect(catalog).to.match(/ … and \d+ more; search to find them\.$/)
    })
  })

  describe('tool_search', () => {
    it('finds Chinese and English tools, returns their schemas and loads them for this conversation only', async () => {
      const tools = await start({ mode: 'search' })
      defineTools(1)
      defineChineseMcpTools()
      const before = names(tools.declarations(groupA))
      expect(before).to.deep.equal(['tool_01', 'tool_search'])

      const result = await tools.call({ name: 'tool_search', args: { query: '明天北京天气怎么样', limit: 1 }, scope: groupA, shown: before })
      expect(result).to.include({ ok: true, status: 'success' })
      expect(result.meta.loaded).to.deep.equal(['mcp__zh__get_weather'])
      expect(result.meta.candidates).to.equal(10)
      const text = tools.format(result)
      expect(text.split('\n').slice(0, 2)).to.deep.equal([
        'Loaded 1 of 10 loadable tools for "明天北京天气怎么样"; call them directly by name:',
        '- mcp__zh__get_weather: 查询指定城市的实时天气和未来三天的天气预报。',
      ])
      expect(text).to.contain('Parameters (JSON Schema): {"type":"object","properties":{"city":{"type":"string","description":"城市名称"}}}')

      // Declared from now on in A, after the resident tools and tool_search; not in B.
      expect(names(tools.declarations(groupA))).to.deep.equal(['tool_01', 'tool_search', 'mcp__zh__get_weather'])
      expect(names(tools.declarations(groupB))).to.deep.equal(['tool_01', 'tool_search'])

      // Callable in A even with the `shown` list from before the search; refused in B.
      const call = await tools.call({ name: 'mcp__zh__get_weather', args: { city: '北京' }, scope: groupA, shown: before })
      expect(call.ok).to.equal(true)
      expect(tools.format(call)).to.equal('get_weather {"city":"北京"}')
      const other = await tools.call({ name: 'mcp__zh__get_weather', args: { city: '北京' }, scope: groupB, shown: names(tools.declarations(groupB)) })
      expect(other).to.include({ ok: false, status: 'denied' })
      expect(other.error.code).to.equal('not-available')

      const english = await tools.call({ name: 'tool_search', args: { query: 'send_email' }, scope: groupA })
      expect(english.meta.loaded[0]).to.equal('mcp__zh__send_email')
      expect(names(tools.declarations(groupA)).slice(2, 4)).to.deep.equal(['mcp__zh__get_weather', 'mcp__zh__send_email'])
    })

    it('keeps conversations apart by channel, private user and agent', async () => {
      const tools = await start({ mode: 'search' })
      defineChineseMcpTools()
      const scopes: ToolScope[] = [
        groupA,
        { ...groupA, agent: 'other' },
        { platform: 'mock', private: true, userId: 'u1', channelId: 'private:u1' },
        { platform: 'mock', private: true, userId: 'u2', channelId: 'private:u2' },
        { platform: 'other', channelId: 'a' },
      ]
      expect(new Set(scopes.map(conversationKey)).size).to.equal(5)
      await tools.call({ name: 'tool_search', args: { query: '翻译' }, scope: scopes[2] })
      const loadedIn = scopes.map((scope) => names(tools.declarations(scope)).includes('mcp__zh__translate_text'))
      expect(loadedIn).to.deep.equal([false, false, true, false, false])
    })

    it('stops declaring a loaded tool that becomes hidden, and declares it again when it is back', async () => {
      const tools = await start({ mode: 'search' })
      defineChineseMcpTools()
      await tools.call({ name: 'tool_search', args: { query: '闹钟' }, scope: groupA })
      expect(names(tools.declarations(groupA))).to.include('mcp__zh__set_alarm')
      tools.setOwnerEnabled({ kind: 'mcp', id: 'zh' }, false)
      expect(names(tools.declarations(groupA))).not.to.include('mcp__zh__set_alarm')
      tools.setOwnerEnabled({ kind: 'mcp', id: 'zh' }, true)
      expect(names(tools.declarations(groupA))).to.include('mcp__zh__set_alarm')
    })

    it('says so when nothing matches or nothing can be loaded', async () => {
      const tools = await start({ mode: 'search' })
      const empty = await tools.call({ name: 'tool_search', args: { query: 'weather' }, scope: groupA })
      expect(tools.format(empty)).to.equal('There are no tools to load in this conversation: every available tool is already declared.')
      defineChineseMcpTools()
      const none = await tools.call({ name: 'tool_search', args: { query: 'kubernetes' }, scope: groupA })
      expect(none).to.include({ ok: true })
      expect(tools.format(none)).to.equal('No tool matches "kubernetes" among the 10 tools that can be loaded. Try other keywords (English or Chinese) or an exact tool name.')
      expect(none.meta.loaded).to.deep.equal([])
    })

    it('answers bad input with structured invalid results', async () => {
      const tools = await start({ mode: 'search' })
      defineTools(30, 'mcp__many__', 'mcp')
      for (const query of ['', '   ']) {
        const result = await tools.call({ name: 'tool_search', args: { query }, scope: groupA })
        expect(result).to.include({ ok: false, status: 'invalid' })
        expect(result.error).to.include({
          code: 'empty-query',
          message: 'The query is empty.',
          hint: 'Describe the tool you need in a few keywords, e.g. "send email" or "查询天气".',
        })
      }
      const missing = await tools.call({ name: 'tool_search', args: {}, scope: groupA })
      expect(missing.error.code).to.equal('invalid-arguments')
      expect(missing.error.issues[0].path).to.equal('query')
      const wrongType = await tools.call({ name: 'tool_search', args: '{"query": 42}', scope: groupA })
      expect(wrongType.error.code).to.equal('invalid-arguments')
      const zero = await tools.call({ name: 'tool_search', args: { query: 'tool', limit: 0 }, scope: groupA })
      expect(zero.error.code).to.equal('invalid-arguments')
      const long = await tools.call({ name: 'tool_search', args: { query: 'tool '.repeat(300) }, scope: groupA })
      expect(long.error).to.include({ code: 'query-too-long', message: 'The query has 1499 characters; at most 1000 are accepted.' })

      const huge = await tools.call({ name: 'tool_search', args: { query: 'tool number', limit: 1e9 }, scope: groupA })
      expect(huge.ok).to.equal(true)
      expect(huge.meta.loaded).to.have.length(20)
      expect(tools.format(huge).split('\n')[0]).to.equal('Loaded 20 of 30 loadable tools for "tool number" (limit capped at 20); call them directly by name:')
      const fallback = await tools.call({ name: 'tool_search', args: { query: 'tool number' }, scope: groupB })
      expect(fallback.meta.loaded).to.have.length(5)
    })

    it('uses searchLimit as the default limit', async () => {
      const tools = await start({ mode: 'search', searchLimit: 2 })
      defineTools(5, 'mcp__many__', 'mcp')
      const result = await tools.call({ name: 'tool_search', args: { query: 'tool' }, scope: groupA })
      expect(result.meta.loaded).to.deep.equal(['mcp__many__01', 'mcp__many__02'])
    })

    it('is refused when the caller did not show it (native mode with a shown list)', async () => {
      const tools = await start({ mode: 'native' })
      defineChineseMcpTools()
      const shown = names(tools.declarations(groupA))
      const refused = await tools.call({ name: 'tool_search', args: { query: '天气' }, scope: groupA, shown })
      expect(refused.error.code).to.equal('not-available')
      // Unknown names are not answered with tool_search as a close name.
      const unknown = await tools.call({ name: 'tool_serch', args: {}, scope: groupA })
      expect(unknown.error.hint).not.to.contain('tool_search')
    })

    it('forgets loaded tools when the plugin is disposed', async () => {
      const tools = await start({ mode: 'search' })
      defineChineseMcpTools()
      const searchMode = tools.searchMode
      await tools.call({ name: 'tool_search', args: { query: '天气' }, scope: groupA })
      expect(searchMode.loaded.size).to.equal(1)
      test.app.registry.delete(plugin)
      expect(searchMode.loaded.size).to.equal(0)
    })
  })

  describe('loaded tools store', () => {
    it('keeps at most maxLoadedPerConversation tools, moving a tool found again to the end', () => {
      const store = new LoadedTools()
      store.load('k', ['a', 'b', 'c'])
      expect(store.load('k', ['a'])).to.deep.equal(['b', 'c', 'a'])
      const many = Array.from({ length: maxLoadedPerConversation + 5 }, (_, i) => `t${i}`)
      const kept = store.load('k', many)
      expect(kept).to.have.length(maxLoadedPerConversation)
      expect(kept[0]).to.equal('t5')
      expect(store.has('k', 'a')).to.equal(false)
    })

    it('forgets the least recently used conversation past maxConversations', () => {
      const store = new LoadedTools()
      for (let i = 0; i < maxConversations; i++) store.load(`c${i}`, ['x'])
      store.names('c0')
      store.load('new', ['x'])
      expect(store.size).to.equal(maxConversations)
      expect(store.has('c0', 'x')).to.equal(true)
      expect(store.has('c1', 'x')).to.equal(false)
      store.clear()
      expect(store.size).to.equal(0)
    })
  })

  describe('chat', () => {
    it('tools lists the tools but not tool_search, in search mode too', async () => {
      await start({ mode: 'search' })
      test.app.tools.define({ name: 'mcp__zh__get_weather', description: '查询天气。', traits: { effect: 'read' }, run: () => '' }, { source: 'mcp' })
      const client = test.app.mock.client('u1', 'c1')
      await client.shouldReply('tools', '当前会话可用的工具（1 个）：\nmcp__zh__get_weather — 查询天气。')
    })
  })
})
