import { expect } from 'chai'
import { createHash } from 'crypto'
import { Schema } from 'koishi'
import { ConsoleApp, ConsoleSocket, createConsoleApp } from '../helpers/console'
import { demoTools, noBashInGroups } from '../helpers/demo-tools'
import { consoleListeners } from '../../src/console'

// The console page's server side in a real app (server + console + mock +
// memory database), spoken to over the console's WebSocket as the page does.

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex')

describe('console: server side', function () {
  this.timeout(15000)

  describe('tool table, scope reports, policies and the call log', () => {
    let env: ConsoleApp
    let socket: ConsoleSocket

    before(async () => {
      env = await createConsoleApp({
        config: { scenes: [noBashInGroups], policies: { 'mcp__*': 'approval' } },
        plugins: [[demoTools]],
        locale: 'en-US',
      })
      socket = await ConsoleSocket.connect(env.port)
    })

    after(async () => {
      socket?.close()
      await env?.dispose()
    })

    it('pushes the tool table with source, plugin, traits and policies', async () => {
      const table = await socket.until('chatluna-tools', (value) => value?.tools.some((row) => row.name === 'get_weather'))
      const names = table.tools.map((row) => row.name)
      expect(names).to.include.members(['bash', 'edit', 'get_weather', 'read', 'write'])
      const bash = table.tools.find((row) => row.name === 'bash')
      expect(bash).to.include({ active: true, source: 'builtin', plugin: 'chatluna-tools', effect: 'exec', parallel: false })
      expect(table.tools.find((row) => row.name === 'read')).to.include({ source: 'builtin', effect: 'read', parallel: true })
      expect(table.tools.find((row) => row.name === 'get_weather')).to.include({ source: 'plugin', plugin: 'demo-tools', effect: 'read' })
      expect(table.policies).to.deep.equal([{ pattern: 'mcp__*', policy: 'approval', origin: 'config' }])
      expect(table.scenes).to.deep.equal(['no-bash-in-groups'])
      expect(table.features.modes).to.include('native')
      expect(table.features.persistentPolicies).to.equal(true)
    })

    it('pushes a new table when a tool is defined or disposed, with shadowing', async () => {
      const fork = env.app.plugin({
        name: 'late-plugin',
        inject: ['tools'],
        apply(ctx) {
          ctx.tools.define({ name: 'late_tool', description: 'Defined later.', run: () => 'ok' })
          ctx.tools.define({ name: 'read', description: 'A plugin read, shadowed.', traits: { effect: 'read' }, run: () => 'x' })
        },
      })
      const table = await socket.until('chatluna-tools', (value) => value.tools.some((row) => row.name === 'late_tool'))
      const shadowed = table.tools.find((row) => row.name === 'read' && !row.active)
      expect(shadowed).to.deep.include({ plugin: 'late-plugin', shadowedBy: { source: 'builtin', plugin: 'chatluna-tools', reason: 'priority' } })
      fork.dispose()
      await socket.until('chatluna-tools', (value) => !value.tools.some((row) => row.name === 'late_tool'))
    })

    it('explains a group scope: bash removed by the scene layer with the rule named', async () => {
      const report = await socket.send('chatluna-tools/scope', { platform: 'sandbox', kind: 'group', guildId: 'g1', channelId: 'g1', authority: 1, locale: 'en-US' })
      expect(report.tools.bash.visible).to.equal(false)
      expect(report.tools.bash.removedBy).to.include({ layer: 'scene', code: 'scene-deny' })
      expect(report.tools.bash.removedBy.params).to.deep.equal({ rule: 'no-bash-in-groups', pattern: 'bash' })
      expect(report.tools.bash.removedBy.text).to.equal('Scene rule "no-bash-in-groups" hides tools matching "bash" here.')
      expect(report.tools.get_weather.visible).to.equal(true)
      // Level 1 (mode read-only): write and exec tools would be denied, read tools allowed.
      expect(report.tools.bash.decision).to.include({ decision: 'deny', code: 'mode-deny', mode: 'read-only' })
      expect(report.tools.bash.decision.text).to.equal('The permission mode here is read-only (authority 1): exec actions are not allowed.')
      expect(report.tools.write.decision).to.include({ decision: 'deny', code: 'mode-deny' })
      expect(report.tools.get_weather.decision).to.include({ decision: 'allow' })

      const zh = await socket.send('chatluna-tools/scope', { kind: 'group', locale: 'zh-CN' })
      expect(zh.tools.bash.removedBy.text).to.equal('场景规则 "no-bash-in-groups" 在此隐藏了匹配 "bash" 的工具。')

      const admin = await socket.send('chatluna-tools/scope', { kind: 'private', userId: 'alice', authority: 4 })
      expect(admin.tools.bash.visible).to.equal(true)
      // Level 4 (mode auto): write and exec tools need an approval, read tools run.
      expect(admin.tools.bash.decision).to.include({ decision: 'ask', code: 'mode-ask', mode: 'auto' })
      expect(admin.tools.write.decision).to.include({ decision: 'ask', code: 'mode-ask' })
      expect(admin.tools.get_weather.decision).to.include({ decision: 'allow', mode: 'auto' })
    })

    it('shows exactly the declarations the model gets, with their byte size', async () => {
      const report = await socket.send('chatluna-tools/scope', { kind: 'group', mode: 'native' })
      const expected = env.app.tools.declarations({ private: false }, { mode: 'native' })
      const json = JSON.stringify(expected)
      expect(report.declarations.bytes).to.equal(Buffer.byteLength(json))
      expect(JSON.parse(report.declarations.json)).to.deep.equal(expected)
      const names = report.declarations.items.map((item) => item.name)
      expect(names).to.deep.equal(expected.map((declaration) => declaration.function.name))
      expect(names).to.include.members(['get_weather', 'read', 'write']).and.not.include('bash')
      expect(report.declarations.count).to.equal(expected.length)
      // The agent's tool set narrows it (layer 2).
      const narrowed = await socket.send('chatluna-tools/scope', { kind: 'private', agent: 'helper', include: ['get_*'] })
      expect(narrowed.declarations.items.map((item) => item.name)).to.deep.equal(['get_weather'])
      expect(narrowed.tools.read.removedBy).to.include({ layer: 'agent', code: 'agent-not-included' })
    })

    it('search mode: the resident tools plus tool_search; auto names the mode it chose', async () => {
      const fork = env.app.plugin({
        name: 'mcp-like',
        inject: ['tools'],
        apply(ctx) {
          ctx.tools.define({ name: 'mcp__demo__lookup', description: 'Look a word up.', traits: { effect: 'read' }, run: () => 'x' }, { source: 'mcp' })
        },
      })
      try {
        const table = await socket.until('chatluna-tools', (value) => value.tools.some((row) => row.name === 'mcp__demo__lookup'))
        expect(table.features.modes).to.include.members(['auto', 'native', 'search'])
        expect(table.features.defaultMode).to.equal('auto')
        expect(table.tools.find((row) => row.name === 'mcp__demo__lookup')).to.include({ source: 'mcp', deferred: true, modeTool: false })
        expect(table.tools.find((row) => row.name === 'tool_search')).to.include({ modeTool: true })

        const search = await socket.send('chatluna-tools/scope', { kind: 'private', authority: 4, mode: 'search' })
        expect(search.declarations).to.include({ mode: 'search', resolved: 'search' })
        const expected = env.app.tools.declarations({ private: true, authority: 4 }, { mode: 'search' })
        const names = search.declarations.items.map((item) => item.name)
        expect(names).to.deep.equal(expected.map((declaration) => declaration.function.name))
        expect(names).to.include.members(['bash', 'get_weather', 'read']).and.not.include('mcp__demo__lookup')
        expect(names.at(-1)).to.equal('tool_search')
        expect(search.declarations.bytes).to.equal(Buffer.byteLength(JSON.stringify(expected)))
        expect(JSON.parse(search.declarations.json).at(-1).function.description).to.include('mcp__demo__lookup: Look a word up.')

        const auto = await socket.send('chatluna-tools/scope', { kind: 'private', authority: 4 })
        expect(auto.declarations).to.include({ mode: 'auto', resolved: 'native' })
        expect(auto.declarations.items.map((item) => item.name)).to.include('mcp__demo__lookup')
      } finally {
        fork.dispose()
      }
    })

    it('describes one tool: Schemastery JSON for k-form, JSON Schema, layers and sentences', async () => {
      const detail = await socket.send('chatluna-tools/tool', 'get_weather', { kind: 'private', locale: 'en-US' })
      // Schemastery's own serialisation, which the page turns back into a schema for k-form.
      const schema = new Schema(detail.schema)
      expect(schema.type).to.equal('object')
      expect(Object.keys(schema.dict)).to.deep.equal(['city', 'unit'])
      expect(schema.dict.city.meta.description).to.equal('City name, e.g. Paris')
      expect(schema({ city: 'Paris' })).to.deep.equal({ city: 'Paris', unit: 'celsius' })
      expect(detail.jsonSchema.required).to.deep.equal(['city'])
      expect(detail.permission).to.equal('tool:get_weather')
      expect(detail.layers.map((layer) => layer.passed)).to.deep.equal([true, true, true, true, true])
      expect(detail.lines[0]).to.equal('The tool "get_weather" is visible here: it passes all five visibility layers.')
      const hidden = await socket.send('chatluna-tools/tool', 'bash', { kind: 'group', locale: 'en-US' })
      expect(hidden.layers.find((layer) => !layer.passed)).to.include({ layer: 'scene', code: 'scene-deny' })
      expect(await socket.send('chatluna-tools/tool', 'nope', {})).to.equal(null)
    })

    it('sets a policy: disabled hides the tool from chat at the next call, removing it restores it', async () => {
      await env.app.mock.initUser('u1', 1)
      const chat = env.app.mock.client('u1')
      expect((await chat.receive('tools')).join('\n')).to.include('get_weather')

      expect(await socket.send('chatluna-tools/set-policy', 'get_weather', 'disabled')).to.include({ ok: true })
      expect((await chat.receive('tools')).join('\n')).not.to.include('get_weather')
      const table = await socket.until('chatluna-tools', (value) => value.policies.some((row) => row.origin === 'stored'))
      expect(table.policies).to.deep.include({ pattern: 'get_weather', policy: 'disabled', origin: 'stored', updatedBy: 'console:owner' })
      expect(table.tools.find((row) => row.name === 'get_weather').policy).to.deep.equal({ policy: 'disabled', pattern: 'get_weather' })
      const report = await socket.send('chatluna-tools/scope', {})
      expect(report.tools.get_weather.removedBy).to.include({ layer: 'policy', code: 'policy-disabled' })

      await socket.send('chatluna-tools/set-policy', 'get_weather', null)
      expect((await chat.receive('tools')).join('\n')).to.include('get_weather')
    })

    it('refuses malformed input with a clear error and changes nothing', async () => {
      const refused = (promise: Promise<unknown>) => promise.then(() => { throw new Error('accepted') }, (error) => String(error.message))
      expect(await refused(socket.send('chatluna-tools/set-policy', 'bash', 'sometimes'))).to.match(/invalid-input: policy must be one of auto, approval, disabled/)
      expect(await refused(socket.send('chatluna-tools/set-policy', '', 'disabled'))).to.match(/invalid-input: pattern/)
      expect(await refused(socket.send('chatluna-tools/scope', { authority: 9 }))).to.match(/invalid-input: authority/)
      expect(await refused(socket.send('chatluna-tools/scope', 'group'))).to.match(/invalid-input: the scope must be an object/)
      expect(await refused(socket.send('chatluna-tools/answer', 'abc', 'maybe'))).to.match(/invalid-input: answer/)
      expect(env.app.tools.policies.resolve('bash')).to.equal(undefined)
    })

    it('answers a policy the permission service refuses with its reason in the page\'s language, and changes nothing', async () => {
      expect(await socket.send('chatluna-tools/set-policy', 'two words', 'disabled', 'zh-CN')).to.deep.equal({
        ok: false, code: 'policy-pattern', message: '模式 "two words" 的长度必须为 1 到 255 个字符，且不含空格。',
      })
      expect(await socket.send('chatluna-tools/set-policy', 'two words', 'disabled')).to.deep.equal({
        ok: false, code: 'policy-pattern', message: 'The pattern "two words" must be 1 to 255 characters without spaces.',
      })
      expect(await socket.send('chatluna-tools/set-policy', 'never_set', null, 'en-US')).to.deep.equal({
        ok: false, code: 'policy-not-found', message: 'No policy set at run time for "never_set", so there is nothing to remove.',
      })
      expect(await socket.send('chatluna-tools/set-policy', 'never_set', null, 'zh-CN')).to.include({ message: '没有为 "never_set" 在运行时设置的策略，无需移除。' })
      expect(env.app.tools.policies.resolve('two')).to.equal(undefined)
      expect(env.app.tools.permissions.policies.list().filter((row) => row.source === 'stored')).to.deep.equal([])
    })

    it('pushes finished calls to the call log, newest first', async () => {
      await env.app.mock.initUser('u2', 4)
      await env.app.mock.client('u2').receive('tools.call get_weather {"city":"Paris"}')
      const calls = await socket.until('chatluna-tools-calls', (value) => value?.some((call) => call.tool === 'get_weather'))
      expect(calls[0]).to.include({ tool: 'get_weather', status: 'success', ok: true, userId: 'u2', platform: 'mock' })
      expect(calls[0].duration).to.be.a('number')
      expect((await socket.send('chatluna-tools/calls', 5))[0].id).to.equal(calls[0].id)
    })

    it('lists a compound shell line whole, with every part and its decision', async () => {
      await env.app.mock.initUser('u5', 4)
      const reply = env.app.mock.client('u5').receive('tools.call bash {"command":"ls | wc -l"}')
      const [approval] = await socket.until('chatluna-tools-approvals', (value) => value?.length === 1)
      expect(approval).to.deep.include({
        tool: 'bash',
        target: 'ls | wc -l',
        parts: [{ action: 'exec:ls', target: 'ls', decision: 'ask' }, { action: 'exec:wc', target: 'wc -l', decision: 'ask' }],
      })
      expect(await socket.send('chatluna-tools/answer', approval.id, 'reject')).to.include({ ok: true, code: 'rejected' })
      await reply
      await socket.until('chatluna-tools-approvals', (value) => value?.length === 0)
    })

    it('lists a pending approval from chat and answers it: once runs the call, reject refuses it', async () => {
      await socket.send('chatluna-tools/set-policy', 'get_weather', 'approval')
      await env.app.mock.initUser('u3', 4)
      const chat = env.app.mock.client('u3')
      const first = chat.receive('tools.call get_weather {"city":"Paris"}')
      const [approval] = await socket.until('chatluna-tools-approvals', (value) => value?.length === 1)
      expect(approval).to.include({ tool: 'get_weather', action: 'tool:get_weather', userId: 'u3', platform: 'mock' })
      // Why it asks, in each language of the page (the data reaches every console user).
      expect(approval.why).to.deep.equal({
        'zh-CN': '"get_weather" 的策略要求工具 get_weather 经过审批。',
        'en-US': 'The policy of "get_weather" requires an approval for the tool get_weather.',
      })
      expect(await socket.send('chatluna-tools/approvals')).to.deep.equal([approval])
      const answered = await socket.send('chatluna-tools/answer', approval.id, 'once')
      expect(answered).to.include({ ok: true, code: 'approved' })
      expect((await first).join('\n')).to.include('Paris: 21 °C')
      await socket.until('chatluna-tools-approvals', (value) => value?.length === 0)
      expect(env.app.tools.history.at(-1)).to.include({ tool: 'get_weather', status: 'success' })

      const second = chat.receive('tools.call get_weather {"city":"Rome"}')
      const [next] = await socket.until('chatluna-tools-approvals', (value) => value?.length === 1)
      expect(await socket.send('chatluna-tools/answer', next.id, 'reject')).to.include({ ok: true, code: 'rejected' })
      expect((await second).join('\n')).not.to.include('Rome: 21')
      expect(env.app.tools.history.at(-1)).to.include({ tool: 'get_weather', status: 'denied' })
      expect(await socket.send('chatluna-tools/answer', next.id, 'once')).to.include({ ok: false, code: 'already-answered' })
      expect(await socket.send('chatluna-tools/answer', 'zzzz', 'once')).to.include({ ok: false, code: 'unknown-id' })
      await socket.send('chatluna-tools/set-policy', 'get_weather', null)
    })

    it('answers an approval in the console user\'s language (zh-CN, en-US), else in the default', async () => {
      await socket.send('chatluna-tools/set-policy', 'get_weather', 'approval')
      await env.app.mock.initUser('u4', 4)
      const chat = env.app.mock.client('u4')
      const first = chat.receive('tools.call get_weather {"city":"Lima"}')
      const mine = (value: any[]) => value?.find((item) => item.userId === 'u4')
      const approval = mine(await socket.until('chatluna-tools-approvals', mine))
      const zh = await socket.send('chatluna-tools/answer', approval.id, 'once', 'zh-CN')
      expect(zh).to.deep.equal({ ok: true, code: 'approved', message: `已批准 #${approval.id}（once）：工具 get_weather 开始运行。` })
      await first
      expect(await socket.send('chatluna-tools/answer', approval.id, 'once', 'zh-CN')).to.deep.equal({
        ok: false, code: 'already-answered', message: `审批 #${approval.id} 已经结束（已批准）。`,
      })
      expect(await socket.send('chatluna-tools/answer', 'zzzz', 'reject', 'en-US')).to.deep.include({ message: 'There is no pending approval #zzzz.' })
      // No locale, or one the plugin has no texts for: the app's default (en-US here).
      expect(await socket.send('chatluna-tools/answer', 'zzzz', 'reject')).to.deep.include({ message: 'There is no pending approval #zzzz.' })
      expect(await socket.send('chatluna-tools/answer', 'zzzz', 'reject', 'fr-FR')).to.deep.include({ message: 'There is no pending approval #zzzz.' })

      const second = chat.receive('tools.call get_weather {"city":"Quito"}')
      const next = mine(await socket.until('chatluna-tools-approvals', (value) => mine(value) && mine(value).id !== approval.id))
      const rejected = await socket.send('chatluna-tools/answer', next.id, 'reject', 'zh-CN')
      expect(rejected).to.deep.equal({ ok: true, code: 'rejected', message: `已拒绝 #${next.id}（reject）。` })
      await second
      await socket.send('chatluna-tools/set-policy', 'get_weather', null)
    })

    it('lists permission rules', async () => {
      await env.app.tools.permissions.rules.add({ effect: 'deny', action: 'tool:bash', userId: 'u9', createdBy: 'test' })
      const rules = await socket.send('chatluna-tools/rules')
      expect(rules).to.have.length(1)
      expect(rules[0]).to.include({ effect: 'deny', action: 'tool:bash', userId: 'u9', createdBy: 'test' })
    })
  })

  describe('console users (plugin-auth)', () => {
    let env: ConsoleApp

    before(async () => {
      env = await createConsoleApp({
        auth: { admin: { enabled: true, password: 'admin-password' } },
        plugins: [[demoTools]],
        config: { consoleAuthority: 2, policies: { get_weather: 'approval' } },
      })
      await env.app.database.create('user', { name: 'alice', authority: 1, password: sha256('alice-password') } as any)
      await env.app.database.create('user', { name: 'bob', authority: 2, password: sha256('bob-password') } as any)
    })

    after(() => env?.dispose())

    async function loggedIn(name: string, password: string) {
      const socket = await ConsoleSocket.connect(env.port)
      await socket.send('login/password', name, password)
      return socket
    }

    it('refuses every listener and withholds the data from a console user below the authority', async () => {
      const socket = await loggedIn('alice', 'alice-password')
      try {
        for (const name of consoleListeners) {
          const error = await socket.send(name, 'bash', 'disabled').then(() => null, (error) => error.message)
          expect(error, name).to.equal('unauthorized')
        }
        await socket.until('chatluna-tools', (value) => value === null)
        expect(env.app.tools.policies.resolve('bash')).to.equal(undefined)
      } finally {
        socket.close()
      }
    })

    it('refuses a client that has not logged in', async () => {
      const socket = await ConsoleSocket.connect(env.port)
      try {
        const error = await socket.send('chatluna-tools/scope', {}).then(() => null, (error) => error.message)
        expect(error).to.equal('unauthorized')
      } finally {
        socket.close()
      }
    })

    it('the listener itself refuses a low console user with a clear error (even without an intercepting auth plugin)', async () => {
      const listener = env.app.console.listeners['chatluna-tools/set-policy']
      const client = { auth: { id: 7, name: 'alice', authority: 1, expiredAt: Date.now() + 60000 } }
      const error = await Promise.resolve().then(() => listener.callback.call(client, 'bash', 'disabled')).then(() => null, (error) => error.message)
      expect(error).to.equal('console-authority: this page needs authority 2; console user "alice" has authority 1')
      expect(env.app.tools.policies.resolve('bash')).to.equal(undefined)
      const anonymous = await Promise.resolve().then(() => listener.callback.call({}, 'bash', 'disabled')).then(() => null, (error) => error.message)
      expect(anonymous).to.equal('console-authority: log in to the console with a user of authority 2 or more')
    })

    it('answers approvals with the same rules as chat: a console user below the approver authority may not', async () => {
      await env.app.mock.initUser('u1', 4)
      const pending = env.app.mock.client('u1').receive('tools.call get_weather {"city":"Oslo"}')
      const bob = await loggedIn('bob', 'bob-password')
      const admin = await loggedIn('admin', 'admin-password')
      try {
        const [approval] = await bob.until('chatluna-tools-approvals', (value) => value?.length === 1)
        const refused = await bob.send('chatluna-tools/answer', approval.id, 'once')
        expect(refused).to.include({ ok: false, code: 'not-allowed' })
        expect(await admin.send('chatluna-tools/answer', approval.id, 'once')).to.include({ ok: true, code: 'approved' })
        expect((await pending).join('\n')).to.include('Oslo: 21 °C')
        const entry = (await env.app.tools.permissions.audit(1))[0]
        expect(entry).to.include({ tool: 'get_weather', approver: 'console:admin', answer: 'once' })
      } finally {
        bob.close()
        admin.close()
      }
    })

    it('lets an admin (authority 5) use the page', async () => {
      const socket = await loggedIn('admin', 'admin-password')
      try {
        const table = await socket.until('chatluna-tools', (value) => value?.tools?.length >= 4)
        expect(table.tools.map((row) => row.name)).to.include('bash')
        expect(await socket.send('chatluna-tools/set-policy', 'bash', 'disabled')).to.include({ ok: true })
        expect(env.app.tools.policies.resolve('bash')).to.deep.equal({ policy: 'disabled', pattern: 'bash' })
      } finally {
        socket.close()
      }
    })
  })
})
