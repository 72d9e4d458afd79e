import { expect } from 'chai'
import { Schema } from 'koishi'
import { createApp, noBuiltins, TestApp, toolPlugin } from './helpers/app'
import { explanationLines } from '../src/visibility/explain'

const names = (entries: { definition: { name: string } }[]) => entries.map((entry) => entry.definition.name)

function tool(name: string, extra = {}) {
  return { name, description: name, args: Schema.object({}), traits: { effect: 'read' as const }, run: () => name, ...extra }
}

describe('visibility: five layers, each only narrows', () => {
  let test: TestApp
  beforeEach(async () => {
    test = await createApp({
      ...noBuiltins,
      scenes: [
        { name: 'no-bash-in-groups', kind: 'group', deny: ['bash'] },
        { name: 'discord-only-safe', platform: 'discord', allow: ['safe_*'] },
      ],
      policies: { 'danger_*': 'disabled', 'danger_ok': 'auto' },
    })
  })
  afterEach(() => test.dispose())

  const lines = (name: string, scope = {}, locale = 'en-US') =>
    explanationLines(test.app, test.app.tools.explain(name, scope), [locale])

  it('layer 1: the defining context filter and the definition filter', () => {
    test.app.plugin(toolPlugin('qq-tools', (ctx) => {
      ctx.platform('qq').tools.define(tool('qq_only'))
    }))
    test.app.tools.define(tool('weekday', { filter: (scope) => scope.userId !== 'banned' }))
    expect(names(test.app.tools.list({ platform: 'qq' }))).to.include('qq_only')
    expect(names(test.app.tools.list({ platform: 'discord' }))).not.to.include('qq_only')
    expect(names(test.app.tools.list({ userId: 'banned' }))).not.to.include('weekday')
    expect(lines('qq_only', { platform: 'discord' })).to.deep.equal([
      'The tool "qq_only" is registered but the model cannot see it here. It was removed by layer 1: the plugin\'s registration filter.',
      'Plugin qq-tools registered this tool only for some platforms, guilds, channels or users, and this conversation is not one of them.',
    ])
  })

  it('layer 2: the agent tool set (include and exclude patterns)', () => {
    test.app.tools.define(tool('fs_read'))
    test.app.tools.define(tool('fs_write'))
    test.app.tools.define(tool('web_get'))
    expect(names(test.app.tools.list({ agent: 'coder', tools: { include: ['fs_*'], exclude: ['fs_write'] } }))).to.deep.equal(['fs_read'])
    expect(lines('web_get', { agent: 'coder', tools: { include: ['fs_*'] } })[1]).to.equal('The agent "coder" only uses tools matching fs_*.')
    expect(lines('fs_write', { agent: 'coder', tools: { exclude: ['fs_write'] } })[1]).to.equal('The agent "coder" excludes tools matching "fs_write".')
  })

  it('layer 3: scene rules by chat kind and platform, naming the rule', () => {
    test.app.tools.define(tool('bash'))
    test.app.tools.define(tool('safe_clock'))
    expect(names(test.app.tools.list({ private: true }))).to.include('bash')
    expect(names(test.app.tools.list({ private: false, guildId: 'g1' }))).not.to.include('bash')
    expect(lines('bash', { guildId: 'g1' })).to.deep.equal([
      'The tool "bash" is registered but the model cannot see it here. It was removed by layer 3: the scene rules.',
      'Scene rule "no-bash-in-groups" hides tools matching "bash" here.',
    ])
    expect(names(test.app.tools.list({ platform: 'discord', private: true }))).to.deep.equal(['safe_clock'])
    expect(lines('bash', { platform: 'discord', private: true })[1]).to.equal('Scene rule "discord-only-safe" only allows tools matching safe_* here.')
  })

  it('layer 4: the policy switch, most specific pattern first', () => {
    test.app.tools.define(tool('danger_rm'))
    test.app.tools.define(tool('danger_ok'))
    expect(names(test.app.tools.list())).to.deep.equal(['danger_ok'])
    expect(lines('danger_rm')[1]).to.equal('The policy for "danger_*" is "disabled".')
  })

  it('layer 5: the owner (skill or MCP server) enabled flag', () => {
    test.app.tools.define(tool('mcp__everything__echo', { owner: { kind: 'mcp', id: 'everything' } }), { source: 'mcp' })
    expect(names(test.app.tools.list())).to.include('mcp__everything__echo')
    test.app.tools.setOwnerEnabled({ kind: 'mcp', id: 'everything' }, false)
    expect(names(test.app.tools.list())).not.to.include('mcp__everything__echo')
    expect(lines('mcp__everything__echo')[1]).to.equal('The MCP server "everything" that provides this tool is disabled.')
    test.app.tools.setOwnerEnabled({ kind: 'mcp', id: 'everything' }, true)
    expect(names(test.app.tools.list())).to.include('mcp__everything__echo')
  })

  it('names the first layer that removed a tool, even when later layers would too', () => {
    test.app.tools.define(tool('danger_bash', { owner: { kind: 'skill', id: 'ops' } }))
    test.app.tools.setOwnerEnabled({ kind: 'skill', id: 'ops' }, false)
    const explanation = test.app.tools.explain('danger_bash', { agent: 'a', tools: { exclude: ['danger_*'] } })
    expect(explanation.removedBy.layer).to.equal('agent')
    expect(explanation.layers.map((verdict) => `${verdict.layer}:${verdict.passed}`)).to.deep.equal([
      'filter:true', 'agent:false', 'scene:true', 'policy:false', 'owner:false',
    ])
  })

  it('says when a tool is not registered, with similar names, in both locales', () => {
    test.app.tools.define(tool('get_weather'))
    expect(lines('get_wether')).to.deep.equal([
      'No plugin has registered a tool named "get_wether", so the model cannot see it.',
      'Registered tools with similar names: get_weather.',
    ])
    expect(lines('get_wether', {}, 'zh-CN')[0]).to.equal('没有插件注册名为 "get_wether" 的工具，所以模型看不到它。')
  })

  it('declares only visible tools, with exactly the JSON Schema the model gets', () => {
    test.app.tools.define({
      ...tool('greet'),
      description: 'Greets someone.',
      args: Schema.object({ name: Schema.string().required().description('Who to greet.') }),
    })
    test.app.tools.define(tool('bash'))
    expect(test.app.tools.declarations({ guildId: 'g', private: false }, { dialect: 'openai' })).to.deep.equal([{
      type: 'function',
      function: {
        name: 'greet',
        description: 'Greets someone.',
        parameters: {
          type: 'object',
          properties: { name: { type: 'string', description: 'Who to greet.' } },
          required: ['name'],
        },
      },
    }])
  })
})
