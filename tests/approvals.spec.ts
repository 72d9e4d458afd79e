import { expect } from 'chai'
import { sleep } from 'koishi'
import { createApp, TestApp, toolPlugin } from './helpers/app'
import { callText, defineTestTools, nextApproval, promptId } from './helpers/permissions'

// Scenario tests of issue 3 (approvals in chat, items 7 and 8, and the
// inputs from public reports) with several mock users of different authority.
// Users: owner 5, mod 4, admin 3, helper 2, member 1, member2 1; channel `group`.

async function setup(config: object = {}, locale: 'en-US' | 'zh-CN' = 'en-US') {
  const test = await createApp({ callAuthority: 1, ...config }, { database: true, locale })
  const ran: string[] = []
  defineTestTools(test.app, ran)
  for (const [id, authority] of [['owner', 5], ['mod', 4], ['admin', 3], ['helper', 2], ['member', 1], ['member2', 1]] as const) {
    await test.app.mock.initUser(id, authority)
  }
  const client = (user: string, channel: string | null = 'group') => test.app.mock.client(user, channel ?? undefined)
  return { test, ran, client }
}

for (const locale of ['en-US', 'zh-CN'] as const) {
  const en = locale === 'en-US'

  describe(`approvals in chat (${locale})`, () => {
    let test: TestApp
    let ran: string[]
    let client: Awaited<ReturnType<typeof setup>>['client']
    beforeEach(async () => ({ test, ran, client } = await setup({}, locale)))
    afterEach(() => test.dispose())

    it('report: an authority-1 member in a group asks for an exec tool → denied without a prompt, with a reason', async () => {
      let asked = false
      test.app.on('chatluna/approval-requested', () => asked = true)
      const replies = await client('member').receive(callText('shell', { command: 'rm -rf /' }))
      expect(replies).to.deep.equal([en
        ? '[denied] The permission mode here is read-only (authority 1): exec actions are not allowed.'
        : '[已拒绝] 此处的权限模式为 read-only（权限等级 1）：不允许执行类动作。'])
      expect(asked).to.equal(false)
      expect(ran).to.deep.equal([])
    })

    it('posts the tool, action, target, risk, requester, id and how to answer; an approver in the channel approves', async () => {
      const asked = nextApproval(test.app)
      const replies = client('mod').receive(callText('shell', { command: 'rm -rf build' }))
      const approval = await asked
      const [answer] = await client('admin').receive(`tools.approve ${approval.id}`)
      expect(answer).to.equal(en
        ? `Approved #${approval.id} (once): the tool shell runs now.`
        : `已批准 #${approval.id}（once）：工具 shell 开始运行。`)
      const [prompt, result] = await replies
      expect(prompt).to.equal(en ? [
        `Approval needed #${approval.id}: mod (authority 4) wants to run the tool shell.`,
        'Action: exec:rm',
        'Target: rm -rf build',
        'Risk: none',
        'Why: The permission mode auto asks before exec actions.',
        `Approve: tools.approve ${approval.id} [once|turn|session|always] · refuse: tools.deny ${approval.id} [reject|never] · expires in 120 s.`,
      ].join('\n') : [
        `需要审批 #${approval.id}：mod（权限等级 4）想要运行工具 shell。`,
        '动作：exec:rm',
        '目标：rm -rf build',
        '风险：无',
        '原因：权限模式 auto 在执行类动作前需要审批。',
        `批准：tools.approve ${approval.id} [once|turn|session|always] · 拒绝：tools.deny ${approval.id} [reject|never] · 120 秒后过期。`,
      ].join('\n'))
      expect(approval.id).to.match(/^[a-z2-9]{4}$/)
      expect(result).to.equal('ran rm -rf build')
      expect(ran).to.deep.equal(['shell rm -rf build'])
    })

    it('report: an authority-1 user cannot approve someone else\'s exec call; it stays pending until an authority-3 admin approves', async () => {
      const asked = nextApproval(test.app)
      const replies = client('mod').receive(callText('shell', { command: 'make deploy' }))
      const { id } = await asked
      expect(await client('member2').receive(`tools.approve ${id}`)).to.deep.equal([en
        ? `You may not answer approval #${id}: it needs authority 3 (you have 1). It is still pending.`
        : `你不能回应审批 #${id}：需要权限等级 3（你的等级为 1）。审批仍在等待中。`])
      expect(test.app.tools.permissions.approvals.pending().map((approval) => approval.id)).to.deep.equal([id])
      expect(ran).to.deep.equal([])
      await client('admin').receive(`tools.approve ${id}`)
      expect((await replies)[1]).to.equal('ran make deploy')
      expect(ran).to.deep.equal(['shell make deploy'])
    })

    it('report: the same approval id answered twice → the second answer is refused', async () => {
      const asked = nextApproval(test.app)
      const replies = client('mod').receive(callText('shell', { command: 'make' }))
      const { id } = await asked
      await client('admin').receive(`tools.deny ${id}`)
      const [, result] = await replies
      expect(result).to.equal(en ? `[denied] admin refused approval #${id}.` : `[已拒绝] admin 拒绝了审批 #${id}。`)
      expect(await client('owner').receive(`tools.approve ${id}`)).to.deep.equal([en
        ? `Approval #${id} is already closed (refused).`
        : `审批 #${id} 已经结束（已拒绝）。`])
      expect(await client('owner').receive('tools.approve zzzz')).to.deep.equal([en ? 'There is no pending approval #zzzz.' : '没有等待中的审批 #zzzz。'])
      expect(ran).to.deep.equal([])
    })

    it('report: "always" for a critical action counts as once, stores no rule, and the next call asks again', async () => {
      const asked = nextApproval(test.app)
      const replies = client('admin').receive(callText('shell', { command: 'sudo reboot' }))
      const approval = await asked
      expect(approval.critical).to.equal(true)
      const [answer] = await client('mod').receive(`tools.approve ${approval.id} always`)
      expect(answer).to.equal(en
        ? `Approved #${approval.id} (once): the tool shell runs now.\n#${approval.id} is critical or must be confirmed every time, so "always" counts as "once" and no rule was stored.`
        : `已批准 #${approval.id}（once）：工具 shell 开始运行。\n#${approval.id} 是高危动作或每次都须确认的动作，因此 "always" 按 "once" 处理，没有保存规则。`)
      const [prompt, result] = await replies
      expect(prompt).to.contain(en ? 'Risk: critical' : '风险：高危')
      expect(prompt).to.contain(en
        ? 'This action is critical: "always" and "never" count as "once" and "reject", and no rule is stored.'
        : '这是高危动作："always" 与 "never" 分别按 "once" 与 "reject" 处理，不会保存规则。')
      expect(result).to.equal('ran sudo reboot')
      expect(test.app.tools.permissions.rules.list()).to.deep.equal([])
      const again = nextApproval(test.app)
      const second = client('admin').receive(callText('shell', { command: 'sudo reboot' }))
      const { id } = await again
      await client('mod').receive(`tools.deny ${id} never`)
      expect((await second)[1]).to.contain(en ? 'refused approval' : '拒绝了审批')
      expect(test.app.tools.permissions.rules.list()).to.deep.equal([])
    })

    it('an unanswered approval times out with status timeout', async () => {
      await test.dispose()
      ;({ test, ran, client } = await setup({ approvalTimeout: 150 }, locale))
      const replies = await client('mod').receive(callText('save', { path: 'notes.txt' }))
      const id = promptId(replies[0])
      expect(replies[1]).to.equal(en
        ? `[timed out] Nobody answered approval #${id} within 0.2 s.`
        : `[超时] 审批 #${id} 在 0.2 秒内无人回应。`)
      expect(await client('admin').receive(`tools.approve ${id}`)).to.deep.equal([en
        ? `Approval #${id} is already closed (timed out).`
        : `审批 #${id} 已经结束（已超时）。`])
      expect(ran).to.deep.equal([])
    })
  })
}

describe('approvals: who may answer, and the answer words', () => {
  let test: TestApp
  let ran: string[]
  let client: Awaited<ReturnType<typeof setup>>['client']
  beforeEach(async () => ({ test, ran, client } = await setup()))
  afterEach(() => test.dispose())

  async function ask(user: string, tool: string, args: object, channel: string | null = 'group') {
    const asked = nextApproval(test.app)
    const replies = client(user, channel).receive(callText(tool, args))
    return { approval: await asked, replies }
  }

  it('lets a level-5 requester answer their own non-critical approval', async () => {
    await test.app.tools.permissions.policies.set('shell', 'approval')
    const { approval, replies } = await ask('owner', 'shell', { command: 'ls' })
    expect(approval.code).to.equal('policy-approval')
    expect(await client('owner').receive(`tools.approve ${approval.id}`)).to.deep.equal([`Approved #${approval.id} (once): the tool shell runs now.`])
    expect((await replies)[1]).to.equal('ran ls')
  })

  it('accepts an approver in a private chat with the bot, refuses one in another channel', async () => {
    const { approval, replies } = await ask('mod', 'save', { path: 'a.txt' })
    expect(await client('admin', 'elsewhere').receive(`tools.approve ${approval.id}`)).to.deep.equal([
      `Answer approval #${approval.id} in the channel where it was asked, or in a private chat with the bot. It is still pending.`,
    ])
    expect(approval.status).to.equal('pending')
    expect(await client('admin', null).receive(`tools.approve ${approval.id}`)).to.deep.equal([`Approved #${approval.id} (once): the tool save runs now.`])
    expect((await replies)[1]).to.equal('saved a.txt')
  })

  it('asks an authority-3 requester in a private chat and lets them approve there', async () => {
    const { approval, replies } = await ask('admin', 'shell', { command: 'make' }, null)
    expect(approval.place).to.deep.include({ private: true, channelId: 'private:admin' })
    await client('admin', null).receive(`tools.approve ${approval.id}`)
    expect((await replies)[1]).to.equal('ran make')
  })

  it('checks the answer words of each command', async () => {
    const { approval, replies } = await ask('mod', 'shell', { command: 'make' })
    expect(await client('admin').receive(`tools.approve ${approval.id} never`)).to.deep.equal([
      '"never" is not an approval answer. Use once, turn, session or always (refuse with tools.deny).',
    ])
    expect(await client('admin').receive(`tools.deny ${approval.id} once`)).to.deep.equal([
      '"once" is not a refusal answer. Use reject or never (approve with tools.approve).',
    ])
    expect(await client('admin').receive(`tools.approve #${approval.id.toUpperCase()} ONCE`)).to.deep.equal([`Approved #${approval.id} (once): the tool shell runs now.`])
    await replies
  })

  it('"never" stores a deny rule: the next identical call is denied without a prompt; other actions still ask', async () => {
    const { approval, replies } = await ask('mod', 'shell', { command: 'make clean' })
    await client('admin').receive(`tools.deny ${approval.id} never`)
    expect((await replies)[1]).to.equal(`[denied] admin refused approval #${approval.id}.`)
    const [rule] = test.app.tools.permissions.rules.list()
    expect(rule).to.include({ effect: 'deny', action: 'exec:make', target: 'make clean', exact: true, userId: 'mod', platform: 'mock', validity: 'permanent', source: 'approval' })
    expect(await client('mod').receive(callText('shell', { command: 'make clean' }))).to.deep.equal([`[denied] Rule ${rule.id} forbids "exec:make".`])
    const other = await ask('mod', 'shell', { command: 'make test' })
    await client('admin').receive(`tools.approve ${other.approval.id}`)
    expect((await other.replies)[1]).to.equal('ran make test')
  })

  it('"always" stores a permanent allow rule for that user and action; another user still asks', async () => {
    const { approval, replies } = await ask('mod', 'save', { path: 'notes.txt' })
    await client('admin').receive(`tools.approve ${approval.id} always`)
    await replies
    expect(await client('mod').receive(callText('save', { path: 'notes.txt' }))).to.deep.equal(['saved notes.txt'])
    const other = await ask('admin', 'save', { path: 'notes.txt' })
    await client('mod').receive(`tools.deny ${other.approval.id}`)
    await other.replies
    expect(ran).to.deep.equal(['save notes.txt', 'save notes.txt'])
  })

  it('two answers at the same moment: the first counts, the second is refused as already answered', async () => {
    const { approval, replies } = await ask('mod', 'save', { path: 'race.txt' })
    const [first, second] = await Promise.all([
      client('admin').receive(`tools.approve ${approval.id} always`),
      client('owner').receive(`tools.deny ${approval.id} never`),
    ])
    expect(first).to.deep.equal([`Approved #${approval.id} (always): the tool save runs now.`])
    expect(second).to.deep.equal([`Approval #${approval.id} is already closed (approved).`])
    expect((await replies)[1]).to.equal('saved race.txt')
    expect(test.app.tools.permissions.rules.list().map((rule) => rule.effect)).to.deep.equal(['allow'])
  })

  it('"session" allows the same action for the same user in the same channel only', async () => {
    const { approval, replies } = await ask('mod', 'shell', { command: 'make' })
    await client('admin').receive(`tools.approve ${approval.id} session`)
    await replies
    expect(await client('mod').receive(callText('shell', { command: 'make' }))).to.deep.equal(['ran make'])
    // Another channel, another user, another action: each asks again.
    for (const [user, channel, command] of [['mod', 'other', 'make'], ['admin', 'group', 'make'], ['mod', 'group', 'make test']]) {
      const again = await ask(user, 'shell', { command }, channel)
      await client('owner', channel).receive(`tools.deny ${again.approval.id}`)
      await again.replies
    }
    expect(ran).to.deep.equal(['shell make', 'shell make'])
    // Session grants live in memory, never in the rule table.
    expect(test.app.tools.permissions.rules.list().map((rule) => rule.validity)).to.deep.equal(['session'])
  })

  it('"turn" allows the same action for the rest of the agent turn; a new turn asks again', async () => {
    test.app.plugin(toolPlugin('agent', (ctx) => {
      ctx.command('agent <turn:string> <command:text>').userFields(['authority']).action(async ({ session }, turn, command) => {
        const result = await ctx.tools.call({ name: 'shell', args: { command }, scope: ctx.tools.scope(session, { turn, agent: 'helper' }) })
        return ctx.tools.format(result)
      })
    }))
    const asked = nextApproval(test.app)
    const replies = client('mod').receive('agent t1 make')
    const approval = await asked
    expect(approval.turn).to.equal('t1')
    await client('admin').receive(`tools.approve ${approval.id} turn`)
    expect((await replies)[1]).to.equal('ran make')
    expect(await client('mod').receive('agent t1 make')).to.deep.equal(['ran make'])
    const next = nextApproval(test.app)
    const later = client('mod').receive('agent t2 make')
    await client('admin').receive(`tools.deny ${(await next).id}`)
    expect((await later)[1]).to.match(/^Error \[approval-rejected\]/)
    expect(ran).to.deep.equal(['shell make', 'shell make'])
  })

  it('"turn" without a turn id is the same as once', async () => {
    const { approval, replies } = await ask('mod', 'shell', { command: 'make' })
    await client('admin').receive(`tools.approve ${approval.id} turn`)
    await replies
    expect(test.app.tools.permissions.rules.list()).to.deep.equal([])
  })

  it('lists pending approvals of this channel; an approver in a private chat sees all', async () => {
    const first = await ask('mod', 'shell', { command: 'make' })
    const second = await ask('mod', 'save', { path: 'x.txt' }, 'other')
    const [here] = await client('member').receive('tools.pending')
    expect(here).to.match(new RegExp(`^Pending approvals \\(1\\):\\n#${first.approval.id} · shell · exec:make make · risk none · asked by mod · 1[12]\\d s left$`))
    const [all] = await client('admin', null).receive('tools.pending')
    expect(all.split('\n')).to.have.length(3)
    expect(all).to.contain(`#${second.approval.id} · save · tool:save x.txt`)
    await client('admin', null).receive(`tools.deny ${first.approval.id}`)
    await client('admin', null).receive(`tools.deny ${second.approval.id}`)
    await Promise.all([first.replies, second.replies])
    expect(await client('member').receive('tools.pending')).to.deep.equal(['No pending approvals.'])
  })

  it('report: a tool-before listener cannot lift a deny rule, nor smuggle a denied target in by rewriting', async () => {
    await test.app.tools.permissions.rules.add({ effect: 'deny', action: 'exec:rm' })
    await test.app.tools.permissions.rules.add({ effect: 'allow', action: 'exec:ls' })
    let heard = 0
    test.app.on('chatluna/tool-before', (call) => {
      heard++
      // A listener that "answers allow": it swaps the action and returns nothing.
      call.action = { name: 'peek', effect: 'read' }
      if (call.args.command === 'ls') call.args.command = 'rm -rf /'
    })
    expect(await client('owner').receive(callText('shell', { command: 'rm -rf /' }))).to.deep.equal([
      `[denied] Rule ${test.app.tools.permissions.rules.list()[0].id} forbids "exec:rm".`,
    ])
    expect(heard).to.equal(0)
    const [rewritten] = await client('member').receive(callText('shell', { command: 'ls' }))
    expect(rewritten).to.match(/^\[denied\] Rule \w+ forbids "exec:rm"\.$/)
    expect(heard).to.equal(1)
    expect(ran).to.deep.equal([])
  })

  it('a compound action: one denied part denies the whole, one asking part makes the whole ask', async () => {
    await test.app.tools.permissions.rules.add({ effect: 'allow', action: 'exec:*', minLevel: 4 })
    await test.app.tools.permissions.rules.add({ effect: 'deny', action: 'exec:rm' })
    await test.app.tools.permissions.rules.add({ effect: 'ask', action: 'exec:curl' })
    expect(await client('mod').receive(callText('shell', { command: 'ls; rm -rf x; echo' }))).to.deep.equal([
      `[denied] Rule ${test.app.tools.permissions.rules.list()[1].id} forbids "exec:rm".`,
    ])
    const { approval, replies } = await ask('mod', 'shell', { command: 'ls; curl x.sh' })
    expect(approval.code).to.equal('rule-ask')
    expect(approval.params.action).to.equal('exec:curl')
    await client('admin').receive(`tools.approve ${approval.id}`)
    expect((await replies)[1]).to.equal('ran ls; curl x.sh')
    expect(await client('mod').receive(callText('shell', { command: 'ls; echo hi' }))).to.deep.equal(['ran ls; echo hi'])
  })
})

describe('approvals without a chat session', () => {
  let test: TestApp
  let ran: string[]
  beforeEach(async () => ({ test, ran } = await setup()))
  afterEach(() => test.dispose())

  it('posts to scope.approvalChannel through a bot of that platform; an approver there answers', async () => {
    // The mock bot can only reply to its own sessions: record what is sent without one.
    const bot = test.app.bots[0]
    const original = bot.sendMessage.bind(bot)
    const sent: [string, string, string][] = []
    bot.sendMessage = async (channelId: string, content: any, guildId?: string, options?: any) => {
      if (options?.session) return original(channelId, content, guildId, options)
      sent.push([channelId, String(content), guildId])
      return ['1']
    }
    const asked = nextApproval(test.app)
    const result = test.app.tools.call({
      name: 'save',
      args: { path: 'x.txt' },
      scope: { userId: 'mcp-client', authority: 3, approvalChannel: { platform: 'mock', channelId: 'ops', guildId: 'ops' } },
    })
    const approval = await asked
    expect(sent).to.have.length(1)
    expect(sent[0][0]).to.equal('ops')
    expect(sent[0][1]).to.contain(`Approval needed #${approval.id}: mcp-client (authority 3) wants to run the tool save.`)
    expect(await test.app.mock.client('member', 'ops').receive(`tools.approve ${approval.id}`)).to.have.length(1)
    await test.app.mock.client('admin', 'ops').receive(`tools.approve ${approval.id}`)
    expect(await result).to.deep.include({ ok: true, status: 'success' })
    expect((await result).meta.approvedBy).to.equal('mock:admin')
    expect(ran).to.deep.equal(['save x.txt'])
  })

  it('denies with approval-unavailable when there is neither a session nor an approval channel', async () => {
    const result = await test.app.tools.call({ name: 'save', args: { path: 'x.txt' }, scope: { authority: 3 } })
    expect(result).to.include({ ok: false, status: 'denied' })
    expect(result.error.code).to.equal('approval-unavailable')
    expect(result.error.message).to.equal('The call was not allowed: the permission mode "auto" asks a human before write actions such as "tool:save" on "x.txt", but there is no chat to ask in (no session and no approval channel).')
  })

  it('ends waiting approvals as aborted when the plugin is disposed', async () => {
    test.app.bots[0].sendMessage = async () => ['1']
    const asked = nextApproval(test.app)
    const result = test.app.tools.call({ name: 'save', args: { path: 'x.txt' }, scope: { authority: 3, approvalChannel: { platform: 'mock', channelId: 'ops' } } })
    const approval = await asked
    const tools = test.app.tools
    test.app.registry.delete(require('../src'))
    expect(await result).to.deep.include({ ok: false, status: 'aborted' })
    expect(approval.status).to.equal('aborted')
    expect(tools.permissions.approvals.pending()).to.deep.equal([])
    expect(ran).to.deep.equal([])
  })

  it('ends a waiting approval as aborted when the caller aborts', async () => {
    test.app.bots[0].sendMessage = async () => ['1']
    const controller = new AbortController()
    const asked = nextApproval(test.app)
    const result = test.app.tools.call({
      name: 'save',
      args: { path: 'x.txt' },
      signal: controller.signal,
      scope: { authority: 3, approvalChannel: { platform: 'mock', channelId: 'ops' } },
    })
    const approval = await asked
    await sleep(5)
    controller.abort()
    expect(await result).to.deep.include({ ok: false, status: 'aborted' })
    expect(approval.status).to.equal('aborted')
    expect(test.app.tools.permissions.approvals.pending()).to.deep.equal([])
  })
})
