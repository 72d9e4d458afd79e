import { expect } from 'chai'
import memory from '@koishijs/plugin-database-memory'
import { createApp, TestApp } from './helpers/app'
import { callText, defineTestTools, nextApproval } from './helpers/permissions'

// The permission commands (issue 3, item 10) in both locales, with users of
// authority 4 (admin commands), 3 and 1, in a group channel.

for (const locale of ['en-US', 'zh-CN'] as const) {
  const en = locale === 'en-US'

  describe(`permission commands (${locale})`, () => {
    let test: TestApp
    let ran: string[]
    beforeEach(async () => {
      test = await createApp({ callAuthority: 1, workDir: 'work' }, { database: true, locale })
      ran = []
      defineTestTools(test.app, ran)
      await test.app.mock.initUser('mod', 4)
      await test.app.mock.initUser('admin', 3)
      await test.app.mock.initUser('member', 1)
    })
    afterEach(() => test.dispose())
    const client = (user: string, channel = 'group') => test.app.mock.client(user, channel)

    it('refuses admin commands below adminAuthority', async () => {
      for (const command of ['tools.rule', 'tools.rule add allow x', 'tools.rule remove x', 'tools.policy', 'tools.mode files', 'tools.audit']) {
        expect(await client('admin').receive(command), command).to.deep.equal([en
          ? 'This command needs authority 4; you have 3.'
          : '此命令需要权限等级 4，你的等级为 3。'])
      }
      expect(test.app.tools.permissions.rules.list()).to.deep.equal([])
    })

    it('tools.rule add / list / remove, and the rule takes effect on the next call', async () => {
      const mod = client('mod')
      const [added] = await mod.receive('tools.rule add allow tool:save "notes/**" -l 1-2 -H')
      const rule = test.app.tools.permissions.rules.list()[0]
      expect(rule).to.deep.include({ effect: 'allow', action: 'tool:save', target: 'notes/**', minLevel: 1, maxLevel: 2, platform: 'mock', channelId: 'group', source: 'command', createdBy: 'mock:mod', validity: 'permanent' })
      expect(added).to.equal(en
        ? `Rule added: ${rule.id} · allow tool:save on "notes/**" · platform mock, channel group, authority 1-2 · permanent`
        : `已添加规则：${rule.id} · allow tool:save 目标 "notes/**" · 平台 mock；频道 group；权限等级 1-2 · 永久`)
      expect(await client('member').receive(callText('save', { path: 'notes/today.md' }))).to.deep.equal(['saved notes/today.md'])
      expect(await client('member', 'other').receive(callText('save', { path: 'notes/today.md' }))).to.have.length(1)
      expect(ran).to.deep.equal(['save notes/today.md'])

      await mod.receive('tools.rule add deny "exec:*" "rm -rf" -f -t 2h')
      await mod.receive('tools.rule add ask exec:git -u member -o')
      const [list] = await mod.receive('tools rule list')
      const lines = list.split('\n')
      expect(lines[0]).to.equal(en ? 'Permission rules (3):' : '权限规则（3 条）：')
      expect(lines[2]).to.match(en
        ? /^\w{5} · deny exec:\* on "rm -rf" · everyone · until \d{4}-\d\d-\d\d \d\d:\d\d · final$/
        : /^\w{5} · deny exec:\* 目标 "rm -rf" · 所有人 · 至 \d{4}-\d\d-\d\d \d\d:\d\d · 终止$/)
      expect(lines[3]).to.match(en ? /^\w{5} · ask exec:git · user member, platform mock · once$/ : /^\w{5} · ask exec:git · 用户 member；平台 mock · 一次$/)

      expect(await mod.receive(`tools.rule remove ${rule.id.toUpperCase()}`)).to.deep.equal([en ? `Rule ${rule.id} removed.` : `已删除规则 ${rule.id}。`])
      expect(await mod.receive(`tools.rule remove ${rule.id}`)).to.deep.equal([en ? `There is no rule ${rule.id}.` : `没有编号为 ${rule.id} 的规则。`])
      expect(await client('member').receive(callText('save', { path: 'notes/today.md' }))).to.have.length(1)
      expect(ran).to.deep.equal(['save notes/today.md'])
    })

    it('tools.rule add explains bad input and keeps special characters as typed', async () => {
      const mod = client('mod')
      expect(await mod.receive('tools.rule add maybe x')).to.deep.equal([en ? 'The effect must be allow, ask or deny, not "maybe".' : '效果必须是 allow、ask 或 deny，而不是 "maybe"。'])
      expect(await mod.receive('tools.rule add allow x -l 7')).to.deep.equal([en ? 'Cannot read the level range "7". Use 3, 1-3, 2+ or -2.' : '无法识别等级范围 "7"。请使用 3、1-3、2+ 或 -2。'])
      expect((await mod.receive('tools.rule add allow x -t yesterday'))[0]).to.contain(en ? 'Cannot read the time "yesterday".' : '无法识别时间 "yesterday"。')
      expect(await mod.receive('tools.rule add')).to.deep.equal([en
        ? 'Usage: tools.rule add <allow|ask|deny> <action pattern> ["target pattern"] [options], e.g. tools.rule add deny "exec:*" "rm -rf*"'
        : '用法：tools.rule add <allow|ask|deny> <动作模式> ["目标模式"] [选项]，例如 tools.rule add deny "exec:*" "rm -rf*"'])
      expect(test.app.tools.permissions.rules.list()).to.deep.equal([])
      const [added] = await mod.receive('tools.rule add deny "exec:*" "cat a&lt;b &amp; c"')
      expect(added).to.contain(en ? 'on "cat a<b & c"' : '目标 "cat a<b & c"')
      expect(test.app.tools.permissions.rules.list()[0].target).to.equal('cat a<b & c')
      expect(await client('mod').receive(callText('shell', { command: 'cat a<b & c' }))).to.have.length(1)
      expect(ran).to.deep.equal([])
    })

    it('tools.policy sets, lists and removes policies; disabled hides the tool from the next call on', async () => {
      const mod = client('mod')
      expect(await mod.receive('tools.policy')).to.deep.equal([en ? 'No tool policies.' : '没有工具策略。'])
      expect(await mod.receive('tools.policy sh* approval')).to.deep.equal([en
        ? 'Policy of "sh*" is now approval. It applies from the next call.'
        : '"sh*" 的策略已设为 approval，从下一次调用起生效。'])
      expect(await mod.receive('tools.policy peek sometimes')).to.deep.equal([en
        ? 'The policy must be auto, approval or disabled, not "sometimes".'
        : '策略必须是 auto、approval 或 disabled，而不是 "sometimes"。'])
      await mod.receive('tools.policy peek disabled')
      expect(await mod.receive('tools.policy')).to.deep.equal([en
        ? 'Tool policies (most specific pattern wins; stored ones take precedence over the config):\npeek → disabled (stored)\nsh* → approval (stored)'
        : '工具策略（最具体的模式优先；已保存的策略优先于配置）：\npeek → disabled（已保存）\nsh* → approval（已保存）'])
      expect((await client('member').receive('tools'))[0]).not.to.contain('peek')
      expect(await client('member').receive(callText('peek', {}))).to.deep.equal([en
        ? '[denied] The tool "peek" is not available in this conversation.'
        : '[已拒绝] 工具“peek”在当前会话中不可用。'])
      expect(await mod.receive('tools.policy -r peek')).to.deep.equal([en ? 'Stored policy of "peek" removed.' : '已删除 "peek" 保存的策略。'])
      expect(await client('member').receive(callText('peek', {}))).to.deep.equal(['peeked'])
    })

    it('tools.mode shows the mode here with its layers; an admin sets and resets the channel mode', async () => {
      expect(await client('member').receive('tools.mode')).to.deep.equal([en ? [
        'Your permission mode here: read-only (authority 1).',
        'read: allowed · write: denied · exec: denied',
        'Layers (the strictest wins): level 1: read-only, plugin default: allow',
      ].join('\n') : [
        '你在此处的权限模式：read-only（权限等级 1）。',
        '读取：允许 · 写入：拒绝 · 执行：拒绝',
        '各层（最严格者生效）：权限等级 1：read-only；插件默认：allow',
      ].join('\n')])
      const mod = client('mod')
      expect(await mod.receive('tools.mode bogus')).to.deep.equal([en ? 'Unknown mode "bogus". Modes: read-only, files, auto, allow.' : '未知模式 "bogus"。可用模式：read-only、files、auto、allow。'])
      expect(await mod.receive('tools.mode files')).to.deep.equal([en
        ? 'The permission mode of this channel is now files. A user\'s level still caps it.'
        : '当前频道的权限模式已设为 files。用户的权限等级仍是上限。'])
      expect((await mod.receive('tools.mode'))[0]).to.contain(en ? 'Your permission mode here: files (authority 4).\nread: allowed · write: allowed · exec: denied' : '你在此处的权限模式：files（权限等级 4）。\n读取：允许 · 写入：允许 · 执行：拒绝')
      // files: writes inside the workDir run without asking, exec is refused, other channels are untouched.
      expect(await mod.receive(callText('save', { path: 'a.txt' }))).to.deep.equal(['saved a.txt'])
      expect((await mod.receive(callText('shell', { command: 'ls' })))[0]).to.contain(en ? 'The permission mode here is files' : '此处的权限模式为 files')
      expect((await client('member').receive('tools.mode'))[0]).to.contain('read-only')
      expect(await mod.receive('tools.mode -r')).to.deep.equal([en ? 'The mode of this channel was removed.' : '已删除当前频道的模式设置。'])
      expect((await mod.receive('tools.mode'))[0]).to.contain(en ? 'auto (authority 4)' : 'auto（权限等级 4）')
    })

    it('tools.audit lists the newest decisions first, with who approved', async () => {
      await client('member').receive(callText('shell', { command: 'ls' }))
      const asked = nextApproval(test.app)
      const replies = client('mod').receive(callText('save', { path: 'b.txt' }))
      await client('admin').receive(`tools.approve ${(await asked).id} session`)
      await replies
      await client('member').receive(callText('peek', {}))
      const [audit] = await client('mod').receive('tools.audit 2')
      const lines = audit.split('\n')
      expect(lines).to.have.length(3)
      expect(lines[0]).to.equal(en ? 'Newest decisions (2):' : '最近的判定（2 条）：')
      expect(lines[1]).to.match(en
        ? /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d · mock:member \(1\) · peek: tool:peek · risk none · allowed \[mode-allow\]$/
        : /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d · mock:member（1） · peek：tool:peek · 风险 无 · 已允许 \[mode-allow\]$/)
      expect(lines[2]).to.match(en
        ? /· mock:mod \(4\) · save: tool:save on "b.txt" · risk none · allowed \[approved\] · session by mock:admin$/
        : /· mock:mod（4） · save：tool:save 目标 "b.txt" · 风险 无 · 已允许 \[approved\] · mock:admin 回应 session$/)
      const entries = await test.app.tools.permissions.audit(10)
      expect(entries.map((entry) => `${entry.userId}:${entry.tool}:${entry.status}:${entry.code}`)).to.deep.equal([
        'member:peek:allowed:mode-allow',
        'mod:save:allowed:approved',
        'member:shell:denied:mode-deny',
      ])
    })
  })
}

describe('permission commands without a database', () => {
  let test: TestApp
  beforeEach(async () => test = await createApp({ callAuthority: 0 }))
  afterEach(() => test.dispose())

  it('checks adminAuthority itself (Koishi lets everybody pass without a database), and an allow rule cannot raise level 0', async () => {
    const ran: string[] = []
    defineTestTools(test.app, ran)
    const stranger = test.app.mock.client('stranger', 'group')
    expect(await stranger.receive('tools.rule add allow "*"')).to.deep.equal(['此命令需要权限等级 4，你的等级为 0。'])
    await test.app.tools.permissions.rules.add({ effect: 'allow', action: 'tool:save' })
    expect(await stranger.receive(callText('save', { path: 'a.txt' }))).to.deep.equal(['[已拒绝] 此处的权限模式为 read-only（权限等级 0）：不允许写入类动作。'])
    expect(await stranger.receive(callText('peek', {}))).to.deep.equal(['peeked'])
    // Without a database, rules, policies and the audit trail live in memory.
    expect((await test.app.tools.permissions.audit(5)).map((entry) => entry.code)).to.deep.equal(['mode-allow', 'mode-deny'])
    expect(ran).to.deep.equal(['peek'])
  })

  it('writes rules, policies and channel modes made before a database was loaded into it when it comes', async () => {
    const permissions = test.app.tools.permissions
    const rule = await permissions.rules.add({ effect: 'deny', action: 'exec:rm' })
    await permissions.rules.add({ effect: 'allow', action: 'x', validity: 'session', session: 'k' })
    await permissions.policies.set('peek', 'approval')
    await permissions.sceneModes.set('mock', 'group', 'files')
    test.app.plugin(memory)
    await new Promise((resolve) => setTimeout(resolve, 0))
    await permissions.ready()
    expect((await test.app.database.get('chatluna_tools_rule', {})).map((row) => row.id)).to.deep.equal([rule.id])
    expect((await test.app.database.get('chatluna_tools_policy', {})).map((row) => `${row.pattern}:${row.policy}`)).to.deep.equal(['peek:approval'])
    expect((await test.app.database.get('chatluna_tools_scene_mode', {})).map((row) => row.mode)).to.deep.equal(['files'])
    expect(permissions.rules.list()).to.have.length(2)
  })
})
