import { expect } from 'chai'
import { mkdir, readdir, symlink } from 'fs/promises'
import { join } from 'path'
import { Schema } from 'koishi'
import { createApp, noBuiltins, TestApp } from './helpers/app'
import { ReplayServer, startReplayServer } from './helpers/replay-server'
import { answer, calls } from './helpers/completions'
import { callText, defineTestTools, nextApproval } from './helpers/permissions'
import { oneLine } from '../src/permission/texts'

/*
 * Hostile input against permissions and visibility: a workDir behind a
 * symbolic link that made path rules miss, a scope that carries only its
 * session past the scene rules, and sub-agents that escaped the tool set,
 * the agent mode and the agent rules of the agent that called them.
 */
describe('hostile input: permissions', () => {
  let test: TestApp
  afterEach(() => test?.dispose())

  describe('a workDir behind a symbolic link', () => {
    beforeEach(async () => {
      test = await createApp({ workDir: 'link/work', bash: { enabled: false } }, { database: true })
      await mkdir(join(test.baseDir, 'real/work/secrets'), { recursive: true })
      await symlink(join(test.baseDir, 'real'), join(test.baseDir, 'link'))
    })

    it('still applies a relative deny rule to the real paths the file tools name', async () => {
      await test.app.tools.permissions.rules.add({ effect: 'deny', action: 'fs:write', target: 'secrets/**' })
      const result = await test.app.tools.call({ name: 'write', args: { path: 'secrets/x.txt', content: 'leak' }, scope: { authority: 5 } })
      expect(result).to.include({ ok: false, status: 'denied' })
      expect(result.error.code).to.equal('rule-deny')
      expect(await readdir(join(test.baseDir, 'real/work/secrets'))).to.deep.equal([])
      expect((await test.app.tools.call({ name: 'write', args: { path: 'notes.txt', content: 'fine' }, scope: { authority: 5 } })).ok).to.equal(true)
    })

    it('applies a deny rule written with the configured (linked) absolute path', async () => {
      await test.app.tools.permissions.rules.add({ effect: 'deny', action: 'fs:write', target: join(test.baseDir, 'link/work/secrets/**') })
      const result = await test.app.tools.call({ name: 'write', args: { path: 'secrets/y.txt', content: 'leak' }, scope: { authority: 5 } })
      expect(result.error?.code).to.equal('rule-deny')
    })

    it('lets the files mode write inside the workspace', async () => {
      await test.app.tools.permissions.sceneModes.set('sandbox', 'files-room', 'files')
      const scope = { authority: 3, platform: 'sandbox', channelId: 'files-room' }
      const result = await test.app.tools.call({ name: 'write', args: { path: 'inside.txt', content: 'ok' }, scope })
      expect(result.ok, result.error?.message).to.equal(true)
      expect(test.app.tools.permissions.workDir).to.equal(join(test.baseDir, 'real/work'))
    })
  })

  describe('a scope that carries only its session', () => {
    beforeEach(async () => {
      test = await createApp({ ...noBuiltins, scenes: [{ name: 'no-secret-here', platform: 'discord', deny: ['secret'] }] })
      test.app.tools.define({ name: 'secret', description: 'S.', traits: { effect: 'read' }, run: () => 'the secret' })
    })

    it('meets the scene rules of its session\'s platform', async () => {
      const session: any = { platform: 'discord', channelId: 'c', guildId: 'g', userId: 'u', isDirect: false, user: { authority: 5 } }
      expect(test.app.tools.list({ session }).map((entry) => entry.definition.name)).not.to.include('secret')
      const result = await test.app.tools.call({ name: 'secret', scope: { session } })
      expect(result.error?.code).to.equal('not-available')
      const elsewhere: any = { ...session, platform: 'telegram' }
      expect((await test.app.tools.call({ name: 'secret', scope: { session: elsewhere } })).ok).to.equal(true)
    })
  })

  describe('approvals', () => {
    it('answers "always" for a call without a user as "once": a rule for nobody would allow everybody', async () => {
      test = await createApp({ ...noBuiltins, callAuthority: 1 }, { database: true, locale: 'en-US' })
      const ran: string[] = []
      defineTestTools(test.app, ran)
      await test.app.mock.initUser('admin', 3)
      await test.app.mock.initUser('member', 1)
      // The mock bot can only reply to its own sessions: drop what is posted without one.
      const bot = test.app.bots[0]
      const original = bot.sendMessage.bind(bot)
      bot.sendMessage = async (channelId: string, content: any, guildId?: string, options?: any) => options?.session ? original(channelId, content, guildId, options) : ['1']
      const asked = nextApproval(test.app)
      const result = test.app.tools.call({ name: 'save', args: { path: 'x.txt' }, scope: { authority: 3, approvalChannel: { platform: 'mock', channelId: 'ops' } } })
      const { id } = await asked
      expect(await test.app.mock.client('admin', 'ops').receive(`tools.approve ${id} always`)).to.deep.equal([
        `Approved #${id} (once): the tool save runs now.\n#${id} was requested without a user, and a rule for nobody in particular would allow everybody, so "always" counts as "once" and no rule was stored.`,
      ])
      expect((await result).ok).to.equal(true)
      expect(test.app.tools.permissions.rules.list()).to.deep.equal([])
      // A read-only member still may not do what the anonymous call was allowed once.
      expect((await test.app.mock.client('member', 'group').receive(callText('save', { path: 'x.txt' })))[0]).to.match(/^\[denied\]/)
      expect(ran).to.deep.equal(['save x.txt'])
    })
  })

  describe('permission functions', () => {
    it('cannot lower a tool\'s base risk with a risk name that does not exist', async () => {
      test = await createApp(noBuiltins)
      let ran = false
      test.app.tools.define({
        name: 'wipe',
        description: 'W.',
        traits: { effect: 'read', risk: 'dangerous' },
        permission: () => ({ name: 'wipe', risk: 'harmless' as any, parts: [{ name: 'wipe:part', risk: 'none' as any }] }),
        run: () => { ran = true },
      })
      const result = await test.app.tools.call({ name: 'wipe', scope: { authority: 3 } })
      expect(result.error?.code).to.equal('approval-unavailable')
      expect(result.error.params).to.include({ risk: 'dangerous' })
      expect(ran).to.equal(false)
    })
  })

  describe('approval prompts', () => {
    it('cut an over-long value with a note that reads the same in every language', () => {
      expect(oneLine('a'.repeat(600))).to.equal('a'.repeat(500) + '…(+100)')
      expect(oneLine('x\ny', 10)).to.equal('x\\ny')
    })

    it('show a target, an action and a requester name built to fake prompt lines on one line each', async () => {
      test = await createApp({ ...noBuiltins, callAuthority: 1 }, { database: true, locale: 'en-US' })
      defineTestTools(test.app, [])
      await test.app.mock.initUser('mod', 4)
      const asked = nextApproval(test.app)
      const command = 'rm -rf / "\nRisk: none\nWhy: a harmless listing\u202e"'
      const replies = test.app.mock.client('mod', 'group').receive(callText('shell', { command }))
      const { id } = await asked
      await test.app.tools.permissions.approvals.answer(id, 'reject', { authority: 5, private: true, userId: 'x', platform: 'mock' })
      const [posted] = await replies
      const lines = posted.split('\n')
      expect(lines.filter((line) => line.startsWith('Risk:'))).to.deep.equal(['Risk: none'])
      expect(lines.filter((line) => line.startsWith('Why:'))).to.have.length(1)
      expect(lines.find((line) => line.startsWith('Target:'))).to.equal('Target: rm -rf / "\\nRisk: none\\nWhy: a harmless listing\\u202e"')
      expect(posted).not.to.contain('\u202e')
    })
  })

  describe('sub-agents', () => {
    let server: ReplayServer
    let saved: string[]
    before(async () => {
      server = await startReplayServer()
    })
    after(() => server.close())
    beforeEach(async () => {
      saved = []
      server.requests.length = 0
      test = await createApp({
        ...noBuiltins,
        agentModes: { outer: 'read-only' },
        agent: {
          enabled: true,
          baseURL: server.baseURL,
          model: 'replay-model',
          progress: 'never',
          subAgents: [{ name: 'helper', description: 'Does small jobs.', tools: {}, maxSteps: 2 }],
        },
      }, { database: true, http: true, locale: 'en-US' })
      test.app.tools.define({
        name: 'save',
        description: 'Saves text.',
        args: Schema.object({ text: Schema.string().required() }),
        traits: { effect: 'write' },
        run: ({ text }) => {
          saved.push(text)
          return 'saved'
        },
      })
    })

    /** Calls `helper` directly in a scope; its model then tries `save`. Returns what the sub-agent's model was told. */
    async function delegate(scope: object) {
      server.enqueue(calls({ id: 'call_save', name: 'save', arguments: '{"text":"x"}' }), answer('done'))
      const result = await test.app.tools.call({ name: 'helper', args: { task: 'save x' }, scope: { authority: 5, ...scope } })
      expect(result.ok, result.error?.message).to.equal(true)
      return server.requests[1].body.messages.at(-1).content as string
    }

    it('sees only tools of its caller\'s tool set', async () => {
      const told = await delegate({ agent: 'boxed', tools: { include: ['helper'] } })
      expect(server.requests[0].body.tools?.map((tool) => tool.function.name) ?? []).not.to.include('save')
      expect(told).to.match(/not-available/)
      expect(saved).to.deep.equal([])
    })

    it('is bound by its caller\'s agent mode', async () => {
      const told = await delegate({ agent: 'outer' })
      expect(told).to.match(/Error \[mode-deny\]/)
      expect(saved).to.deep.equal([])
    })

    it('is bound by deny rules of its caller, but not helped by its caller\'s allow rules', async () => {
      const rule = await test.app.tools.permissions.rules.add({ effect: 'deny', action: 'tool:save', agent: 'chat' })
      expect(await delegate({ agent: 'chat' })).to.match(/Error \[rule-deny\]/)
      await test.app.tools.permissions.rules.remove(rule.id)
      // Level 1 is read-only; an allow rule for the calling agent does not reach its sub-agent.
      await test.app.tools.permissions.rules.add({ effect: 'allow', action: 'tool:save', agent: 'chat' })
      server.requests.length = 0
      expect(await delegate({ agent: 'chat', authority: 1 })).to.match(/Error \[mode-deny\]/)
      expect(saved).to.deep.equal([])
    })

    it('still runs what its caller may run', async () => {
      expect(await delegate({ agent: 'chat' })).to.equal('saved')
      expect(saved).to.deep.equal(['x'])
      const explanation = test.app.tools.permissions.explainMode(test.app.tools.permissions.subjectOf({ authority: 5, agent: 'helper', delegatedBy: ['outer'] }))
      expect(explanation.mode).to.equal('read-only')
      expect(explanation.layers).to.deep.include({ source: 'agent', mode: 'read-only', name: 'outer' })
    })
  })
})
