import { expect } from 'chai'
import { mkdtemp, rm } from 'fs/promises'
import { tmpdir } from 'os'
import { join } from 'path'
import { App } from 'koishi'
import mock from '@koishijs/plugin-mock'
import SQLite from '@koishijs/plugin-database-sqlite'
import * as tools from '../src'
import { callText, defineTestTools, nextApproval } from './helpers/permissions'

// Rules, policies, channel modes and the audit trail are stored in a real
// sqlite file and survive a restart of the app (issue 3, items 5, 6, 9).

describe('permission storage on sqlite', () => {
  let baseDir: string
  let app: App
  let ran: string[]
  let file = 0

  async function start(config: object = {}) {
    app = new App({ i18n: { locales: ['en-US', 'zh-CN'] } } as any)
    app.baseDir = baseDir
    app.plugin(mock)
    app.plugin(SQLite, { path: join(baseDir, `koishi-${file}.db`) })
    app.plugin(tools, { callAuthority: 1, ...config })
    await app.start()
    ran = []
    defineTestTools(app, ran)
    await app.tools.permissions.ready()
  }

  async function stop() {
    app.registry.delete(mock)
    await app.stop()
  }

  before(async () => baseDir = await mkdtemp(join(tmpdir(), 'chatluna-tools-sqlite-')))
  after(() => rm(baseDir, { recursive: true, force: true }))
  beforeEach(() => file++)
  afterEach(async () => {
    if (app?.lifecycle.isActive) await stop()
  })

  it('keeps an "always" answer after a restart: the same call runs without asking', async () => {
    await start()
    await app.mock.initUser('mod', 4)
    await app.mock.initUser('admin', 3)
    const asked = nextApproval(app)
    const replies = app.mock.client('mod', 'group').receive(callText('save', { path: 'notes.txt' }))
    await app.mock.client('admin', 'group').receive(`tools.approve ${(await asked).id} always`)
    expect((await replies)[1]).to.equal('saved notes.txt')
    const [stored] = await app.database.get('chatluna_tools_rule', {})
    expect(stored).to.deep.include({ effect: 'allow', action: 'tool:save', target: 'notes.txt', exact: true, userId: 'mod', platform: 'mock', validity: 'permanent', source: 'approval', createdBy: 'mock:admin' })
    // A session grant for another action works until the restart, and is never stored.
    const askedAgain = nextApproval(app)
    const other = app.mock.client('mod', 'group').receive(callText('save', { path: 'todo.txt' }))
    await app.mock.client('admin', 'group').receive(`tools.approve ${(await askedAgain).id} session`)
    await other
    expect(await app.mock.client('mod', 'group').receive(callText('save', { path: 'todo.txt' }))).to.deep.equal(['saved todo.txt'])
    expect(await app.database.get('chatluna_tools_rule', {})).to.have.length(1)
    await stop()

    await start()
    let asking = 0
    app.on('chatluna/approval-requested', () => asking++)
    expect(await app.mock.client('mod', 'group').receive(callText('save', { path: 'notes.txt' }))).to.deep.equal(['saved notes.txt'])
    expect(asking).to.equal(0)
    expect(ran).to.deep.equal(['save notes.txt'])
    expect(app.tools.permissions.rules.list().map((rule) => rule.id)).to.deep.equal([stored.id])
    const expired = nextApproval(app)
    const afterRestart = app.mock.client('mod', 'group').receive(callText('save', { path: 'todo.txt' }))
    await app.mock.client('admin', 'group').receive(`tools.deny ${(await expired).id}`)
    expect((await afterRestart)[1]).to.match(/refused approval/)
    expect(asking).to.equal(1)
  })

  it('keeps "never" rules, policies, channel modes and the audit trail; drops rules that expired meanwhile', async () => {
    await start()
    await app.mock.initUser('mod', 4)
    const asked = nextApproval(app)
    const replies = app.mock.client('mod', 'group').receive(callText('shell', { command: 'make clean' }))
    await app.mock.client('mod', 'group').receive(`tools.deny ${(await asked).id} never`)
    await replies
    const mod = app.mock.client('mod', 'group')
    await mod.receive('tools.policy peek disabled')
    await mod.receive('tools.mode files')
    const expiring = await app.tools.permissions.rules.add({ effect: 'allow', action: 'exec:*', expiresAt: Date.now() + 300 })
    const lasting = await app.tools.permissions.rules.add({ effect: 'ask', action: 'tool:save', expiresAt: Date.now() + 3600_000 })
    expect(await app.database.get('chatluna_tools_rule', {})).to.have.length(3)
    await stop()
    await new Promise((resolve) => setTimeout(resolve, 350))

    await start()
    const ids = app.tools.permissions.rules.list().map((rule) => rule.id)
    expect(ids).not.to.include(expiring.id)
    expect(ids).to.include(lasting.id)
    expect(app.tools.permissions.rules.get(lasting.id).expiresAt).to.equal(lasting.expiresAt)
    expect((await app.database.get('chatluna_tools_rule', {})).map((row) => row.id)).not.to.include(expiring.id)
    expect(await app.mock.client('mod', 'group').receive(callText('shell', { command: 'make clean' }))).to.deep.equal([
      `[denied] Rule ${ids[0]} forbids "exec:make".`,
    ])
    expect(app.tools.list({}).map((entry) => entry.definition.name)).not.to.include('peek')
    expect(app.tools.permissions.modeOf({ authority: 4, platform: 'mock', channelId: 'group', private: false })).to.equal('files')
    const audit = await app.tools.permissions.audit(10)
    expect(audit.map((entry) => `${entry.tool}:${entry.status}:${entry.code}`)).to.deep.equal([
      'shell:denied:rule-deny',
      'shell:denied:approval-rejected',
    ])
    expect(audit[1]).to.deep.include({ approver: 'mock:mod', answer: 'never', userId: 'mod', authority: 4, channelId: 'group', target: 'make clean' })
  })
})
