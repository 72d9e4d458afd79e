import { expect } from 'chai'
import { join } from 'path'
import { createApp, TestApp } from './helpers/app'
import { defineTestTools } from './helpers/permissions'
import type { PermissionSubject } from '../src/permission/subject'
import type { ToolAction } from '../src'

// The decision (issue 3, items 1–6): levels, the mode table per effect,
// layered modes, risk, rules, policies. `decide` is the pure decision the
// console uses; the calls go through the real pipeline.

const subject = (authority: number, extra: Partial<PermissionSubject> = {}): PermissionSubject =>
  ({ userId: `u${authority}`, platform: 'mock', channelId: 'group', guildId: 'group', private: false, authority, ...extra })

describe('permission decision', () => {
  let test: TestApp
  let ran: string[]
  const decide = (action: ToolAction, who: PermissionSubject, options?: any) => test.app.tools.permissions.decide(action, who, options)
  const rules = () => test.app.tools.permissions.rules
  beforeEach(async () => {
    test = await createApp({ workDir: 'work' })
    ran = []
    defineTestTools(test.app, ran)
  })
  afterEach(() => test.dispose())

  describe('the mode table, per effect', () => {
    const table = {
      'read-only': { read: 'allow', write: 'deny', exec: 'deny', outside: 'deny' },
      files: { read: 'allow', write: 'allow', exec: 'deny', outside: 'deny' },
      auto: { read: 'allow', write: 'ask', exec: 'ask', outside: 'ask' },
      allow: { read: 'allow', write: 'allow', exec: 'allow', outside: 'allow' },
    } as const
    for (const [mode, row] of Object.entries(table)) {
      it(`${mode}: read ${row.read}, write ${row.write} (outside the workDir ${row.outside}), exec ${row.exec}`, () => {
        const who = subject(5)
        const judge = (action: ToolAction) => decide(action, who, { mode }).decision
        expect(judge({ name: 'tool:peek', effect: 'read' })).to.equal(row.read)
        expect(judge({ name: 'tool:save', effect: 'write', target: { path: 'notes/a.txt' } })).to.equal(row.write)
        expect(judge({ name: 'tool:save', effect: 'write', target: { path: join(test.baseDir, 'work/b.txt') } })).to.equal(row.write)
        expect(judge({ name: 'tool:save', effect: 'write', target: { path: '../koishi.yml' } })).to.equal(row.outside)
        expect(judge({ name: 'tool:save', effect: 'write', target: '/etc/passwd' })).to.equal(row.outside)
        expect(judge({ name: 'exec:ls', effect: 'exec', target: 'ls' })).to.equal(row.exec)
      })
    }

    it('the files mode names the workspace in its refusal', () => {
      const decision = decide({ name: 'tool:save', effect: 'write', target: { path: '../koishi.yml' } }, subject(5), { mode: 'files' })
      expect(decision).to.include({ decision: 'deny', code: 'files-outside' })
      expect(decision.reason).to.equal('the permission mode "files" only allows writing inside the workspace, and "../koishi.yml" is outside it')
    })

    it('runs, asks or refuses real calls by level: 0–2 read-only, 3–4 auto, 5 allow', async () => {
      const outcome = async (tool: string, args: object, authority: number) => {
        const result = await test.app.tools.call({ name: tool, args, scope: { authority } })
        return result.ok ? 'allow' : result.error.code === 'approval-unavailable' ? 'ask' : 'deny'
      }
      const rows: string[] = []
      for (const level of [0, 1, 2, 3, 4, 5]) {
        rows.push(`${level}: ${await outcome('peek', {}, level)} ${await outcome('save', { path: 'a.txt' }, level)} ${await outcome('shell', { command: 'ls' }, level)}`)
      }
      expect(rows).to.deep.equal([
        '0: allow deny deny',
        '1: allow deny deny',
        '2: allow deny deny',
        '3: allow ask ask',
        '4: allow ask ask',
        '5: allow allow allow',
      ])
    })
  })

  describe('layered modes', () => {
    const permissions = () => test.app.tools.permissions

    it('takes the strictest of level, plugin default, agent, scene rules and the channel mode', async () => {
      await test.dispose()
      test = await createApp({
        defaultMode: 'allow',
        agentModes: { careful: 'files' },
        scenes: [{ name: 'groups-read-only', kind: 'group', mode: 'read-only' }, { name: 'dm', kind: 'private', mode: 'auto' }],
      })
      const explain = (who: PermissionSubject) => permissions().explainMode(who)
      expect(explain(subject(5, { private: true })).mode).to.equal('auto')
      expect(explain(subject(5, { private: true, agent: 'careful' }))).to.deep.equal({
        mode: 'files',
        downgraded: false,
        layers: [
          { source: 'level', mode: 'allow' },
          { source: 'plugin', mode: 'allow' },
          { source: 'agent', mode: 'files', name: 'careful' },
          { source: 'scene', mode: 'auto', name: 'dm' },
        ],
      })
      expect(explain(subject(5)).mode).to.equal('read-only')
      expect(explain(subject(1, { private: true })).mode).to.equal('read-only')
      await permissions().sceneModes.set('mock', 'private:u5', 'read-only')
      expect(explain(subject(5, { private: true, channelId: 'private:u5' })).mode).to.equal('read-only')
    })

    it('a scene can never exceed the level: "allow" everywhere still gives level 4 only auto', async () => {
      await test.dispose()
      test = await createApp({ levelModes: { 4: 'allow' }, scenes: [{ mode: 'allow' }] })
      expect(permissions().explainMode(subject(4))).to.include({ mode: 'auto', downgraded: true })
      expect(permissions().modeOf(subject(4))).to.equal('auto')
      expect(permissions().modeOf(subject(1))).to.equal('read-only')
      expect(permissions().modeOf(subject(5))).to.equal('allow')
    })

    it('modeOf gives the same mode as explainMode for every level, agent, scene and channel mode', async () => {
      await test.dispose()
      test = await createApp({
        levelModes: { 2: 'files', 4: 'allow' },
        agentModes: { strict: 'read-only', loose: 'allow' },
        scenes: [{ kind: 'group', mode: 'auto' }, { channelId: 'lab', mode: 'files' }],
      })
      await permissions().sceneModes.set('mock', 'locked', 'read-only')
      for (const authority of [0, 1, 2, 3, 4, 5]) {
        for (const agent of [undefined, 'strict', 'loose']) {
          for (const [channelId, isPrivate] of [['group', false], ['lab', false], ['locked', false], ['private:x', true]] as const) {
            const who = subject(authority, { agent, channelId, private: isPrivate })
            expect(permissions().modeOf(who), JSON.stringify(who)).to.equal(permissions().explainMode(who).mode)
          }
        }
      }
    })

    it('a per-level default can open files mode to level 1', async () => {
      await test.dispose()
      test = await createApp({ workDir: 'work', levelModes: { 1: 'files' } })
      defineTestTools(test.app, ran)
      expect((await test.app.tools.call({ name: 'save', args: { path: 'a.txt' }, scope: { authority: 1 } })).ok).to.equal(true)
      expect((await test.app.tools.call({ name: 'save', args: { path: '../a.txt' }, scope: { authority: 1 } })).error.code).to.equal('files-outside')
      expect((await test.app.tools.call({ name: 'shell', args: { command: 'ls' }, scope: { authority: 1 } })).error.code).to.equal('mode-deny')
    })
  })

  describe('risk', () => {
    it('critical needs level 3 to be requested at all, always asks, and ignores permanent allow rules', async () => {
      const action: ToolAction = { name: 'exec:sudo', effect: 'exec', target: 'sudo reboot', risk: 'critical' }
      expect(decide(action, subject(2))).to.include({ decision: 'deny', code: 'critical-level' })
      expect(decide(action, subject(3))).to.include({ decision: 'ask', code: 'critical-ask' })
      expect(decide(action, subject(5))).to.include({ decision: 'ask', code: 'critical-ask' })
      await rules().add({ effect: 'allow', action: 'exec:*' })
      expect(decide(action, subject(5))).to.include({ decision: 'ask', code: 'critical-ask' })
      expect(decide(action, subject(2))).to.include({ decision: 'deny', code: 'critical-level' })
      await rules().add({ effect: 'deny', action: 'exec:sudo' })
      expect(decide(action, subject(5))).to.include({ decision: 'deny', code: 'rule-deny' })
    })

    it('a critical read still asks: a human confirms it even though reads pass', () => {
      expect(decide({ name: 'tool:secrets', effect: 'read', risk: 'critical' }, subject(4))).to.include({ decision: 'ask', code: 'critical-ask' })
    })

    it('dangerous asks where the mode would allow, except in allow mode; review changes nothing', () => {
      expect(decide({ name: 'tool:env', effect: 'read', risk: 'dangerous' }, subject(1))).to.include({ decision: 'ask', code: 'dangerous-ask' })
      expect(decide({ name: 'tool:env', effect: 'read', risk: 'dangerous' }, subject(5))).to.include({ decision: 'allow' })
      expect(decide({ name: 'tool:env', effect: 'read', risk: 'review' }, subject(1))).to.include({ decision: 'allow' })
    })

    it('a tool raises the risk from its target through its permission function', async () => {
      const result = await test.app.tools.call({ name: 'shell', args: { command: 'sudo ls' }, scope: { authority: 2 } })
      expect(result.error.code).to.equal('critical-level')
      expect(result.error.message).to.equal('The call was not allowed: "exec:sudo" on "sudo ls" is critical and can only be requested with authority 3 or higher; the caller has authority 2.')
    })
  })

  describe('tool verdicts', () => {
    it('a part the tool denies denies the whole call; no rule lifts it', async () => {
      await rules().add({ effect: 'allow', action: '*' })
      const action: ToolAction = { name: 'exec', effect: 'exec', parts: [{ name: 'exec:ls' }, { name: 'exec:chmod', verdict: 'deny', reason: 'chmod is refused' }] }
      expect(decide(action, subject(5))).to.include({ decision: 'deny', code: 'tool-deny', reason: 'chmod is refused' })
    })

    it('a part the tool wants asked asks even with a permanent allow rule; an approval grant of that action allows it', async () => {
      await rules().add({ effect: 'allow', action: 'exec:*' })
      const action: ToolAction = { name: 'exec:eval', effect: 'exec', target: 'eval $x', verdict: 'ask', reason: 'cannot judge eval' }
      expect(decide(action, subject(5))).to.include({ decision: 'ask', code: 'tool-ask' })
      const who = subject(5)
      rules().grant({ effect: 'allow', action: 'exec:eval', target: 'eval $x', exact: true, validity: 'session', session: JSON.stringify(['mock', 'group', 'u5', '']), source: 'approval' })
      expect(decide(action, who)).to.include({ decision: 'allow', code: 'grant' })
      expect(decide({ ...action, target: 'eval $y' }, who)).to.include({ decision: 'ask' })
    })
  })

  describe('rules', () => {
    it('deny rules win over any allow rule, however specific', async () => {
      await rules().add({ effect: 'allow', action: 'exec:git', target: 'git push', userId: 'u5', platform: 'mock' })
      await rules().add({ effect: 'deny', action: 'exec:*', target: 'git push*' })
      expect(decide({ name: 'exec:git', effect: 'exec', target: 'git push origin main' }, subject(5))).to.include({ decision: 'deny', code: 'rule-deny' })
    })

    it('the most specific ask/allow rule wins; a final rule stops the evaluation', async () => {
      const action: ToolAction = { name: 'exec:git', effect: 'exec', target: 'git status -s' }
      const general = await rules().add({ effect: 'ask', action: 'exec:*' })
      expect(decide(action, subject(5))).to.include({ decision: 'ask', code: 'rule-ask' })
      const specific = await rules().add({ effect: 'allow', action: 'exec:git', target: 'git status' })
      expect(decide(action, subject(5)).rule.id).to.equal(specific.id)
      expect(decide(action, subject(5)).decision).to.equal('allow')
      await rules().remove(general.id)
      await rules().add({ effect: 'ask', action: 'exec:*', final: true })
      expect(decide(action, subject(5))).to.include({ decision: 'ask', code: 'rule-ask' })
    })

    it('an allow rule lifts the mode default, but never for level 0', async () => {
      await rules().add({ effect: 'allow', action: 'tool:save', target: 'notes/**' })
      const write = (path: string): ToolAction => ({ name: 'tool:save', effect: 'write', target: { path } })
      expect(decide(write('notes/a/b.md'), subject(1))).to.include({ decision: 'allow', code: 'rule-allow' })
      expect(decide(write('other.md'), subject(1))).to.include({ decision: 'deny', code: 'mode-deny' })
      expect(decide(write('notes/a/b.md'), subject(0))).to.include({ decision: 'deny', code: 'mode-deny' })
      await rules().add({ effect: 'ask', action: 'tool:save' })
      expect(decide(write('other.md'), subject(0))).to.include({ decision: 'deny', code: 'mode-deny' })
    })

    it('matches who: user, level range, platform, channel, chat kind and agent', async () => {
      const action: ToolAction = { name: 'tool:peek', effect: 'read' }
      await rules().add({ effect: 'deny', action: 'tool:peek', minLevel: 1, maxLevel: 2, kind: 'group', agent: 'bot', channelId: 'group', platform: 'mock' })
      const base = subject(2, { agent: 'bot' })
      expect(decide(action, base).decision).to.equal('deny')
      for (const other of [{ authority: 3 }, { private: true }, { agent: 'other' }, { channelId: 'x' }, { platform: 'qq' }]) {
        expect(decide(action, { ...base, ...other }).decision, JSON.stringify(other)).to.equal('allow')
      }
    })

    it('target patterns: command prefixes of whole words, globs crossing "/", paths relative to the workDir', async () => {
      const exec = (target: string): ToolAction => ({ name: 'exec:x', effect: 'exec', target })
      await rules().add({ effect: 'deny', action: 'exec:*', target: 'git push' })
      await rules().add({ effect: 'deny', action: 'exec:*', target: 'curl *://*' })
      await rules().add({ effect: 'deny', action: 'tool:save', target: 'secret/**' })
      const who = subject(5)
      expect(decide(exec('git   push origin/main'), who).decision).to.equal('deny')
      expect(decide(exec('git pushx'), who).decision).to.equal('allow')
      expect(decide(exec('curl https://x.sh/a/b'), who).decision).to.equal('deny')
      expect(decide({ name: 'tool:save', effect: 'write', target: { path: 'secret/k.txt' } }, who).decision).to.equal('deny')
      expect(decide({ name: 'tool:save', effect: 'write', target: { path: join(test.baseDir, 'work/secret/k.txt') } }, who).decision).to.equal('deny')
      expect(decide({ name: 'tool:save', effect: 'write', target: { path: './x/../secret/k.txt' } }, who).decision).to.equal('deny')
      expect(decide({ name: 'tool:save', effect: 'write', target: { path: 'public/k.txt' } }, who).decision).to.equal('allow')
    })

    it('a rule with an expiry stops applying after it; a once rule is used up by one call', async () => {
      const until = await rules().add({ effect: 'allow', action: 'tool:save', expiresAt: Date.now() + 60000 })
      expect(until.validity).to.equal('until')
      const write: ToolAction = { name: 'tool:save', effect: 'write', target: { path: 'a' } }
      expect(decide(write, subject(1)).decision).to.equal('allow')
      expect(decide(write, subject(1), { now: Date.now() + 61000 }).decision).to.equal('deny')
      await rules().remove(until.id)
      await rules().add({ effect: 'allow', action: 'tool:save', validity: 'once' })
      expect((await test.app.tools.call({ name: 'save', args: { path: 'a' }, scope: { authority: 1 } })).ok).to.equal(true)
      expect((await test.app.tools.call({ name: 'save', args: { path: 'a' }, scope: { authority: 1 } })).error.code).to.equal('mode-deny')
      expect(rules().list()).to.deep.equal([])
      // A once rule is not used up by a call that does not run (here: another part asks, and nobody can be asked).
      const once = await rules().add({ effect: 'allow', action: 'exec:ls', validity: 'once' })
      await rules().add({ effect: 'ask', action: 'exec:curl' })
      const compound = await test.app.tools.call({ name: 'shell', args: { command: 'ls; curl x' }, scope: { authority: 5 } })
      expect(compound.error.code).to.equal('approval-unavailable')
      expect(rules().get(once.id)).to.not.equal(undefined)
      expect((await test.app.tools.call({ name: 'shell', args: { command: 'ls' }, scope: { authority: 1 } })).ok).to.equal(true)
      expect(rules().get(once.id)).to.equal(undefined)
    })

    it('refuses invalid rules with a code', async () => {
      for (const [input, code] of [
        [{ effect: 'maybe', action: 'x' }, 'rule-effect'],
        [{ effect: 'allow', action: '' }, 'rule-action'],
        [{ effect: 'allow', action: 'x', minLevel: 4, maxLevel: 2 }, 'rule-level'],
        [{ effect: 'allow', action: 'x', minLevel: 9 }, 'rule-level'],
        [{ effect: 'allow', action: 'x', expiresAt: Date.now() - 1 }, 'rule-expired'],
      ] as const) {
        const error = await rules().add(input as any).then(() => undefined, (error) => error)
        expect(error?.code, JSON.stringify(input)).to.equal(code)
      }
      expect(rules().list()).to.deep.equal([])
    })
  })

  describe('rules naming a tool (tool:<name>)', () => {
    it('a rule for tool:write covers the fs:write action of the built-in write tool', async () => {
      await rules().add({ effect: 'allow', action: 'tool:write', target: 'notes/**', minLevel: 1, maxLevel: 2 })
      const scope = { userId: 'u2', platform: 'mock', channelId: 'group', guildId: 'group', authority: 2 }
      const inside = await test.app.tools.call({ name: 'write', args: { path: 'notes/a.txt', content: 'hi' }, scope })
      expect(inside).to.deep.include({ ok: true, status: 'success' })
      const outside = await test.app.tools.call({ name: 'write', args: { path: 'other.txt', content: 'hi' }, scope })
      expect(outside.error.code).to.equal('mode-deny')
      expect(decide({ name: 'fs:write', effect: 'write', target: { path: 'notes/b.txt' } }, subject(2), { tool: 'write' })).to.include({ decision: 'allow', code: 'rule-allow' })
      // Without the tool name the action name alone does not match tool:write.
      expect(decide({ name: 'fs:write', effect: 'write', target: { path: 'notes/b.txt' } }, subject(2))).to.include({ decision: 'deny', code: 'mode-deny' })
    })

    it('a rule for tool:mcp__* covers MCP tools, whose default action is tool:<name>', async () => {
      await rules().add({ effect: 'ask', action: 'tool:mcp__*', kind: 'group' })
      expect(decide({ name: 'tool:mcp__everything__echo', effect: 'read' }, subject(3), { tool: 'mcp__everything__echo' })).to.include({ decision: 'ask', code: 'rule-ask' })
      expect(decide({ name: 'tool:mcp__everything__echo', effect: 'read' }, subject(3, { private: true }), { tool: 'mcp__everything__echo' })).to.include({ decision: 'allow' })
    })
  })

  describe('policies', () => {
    it('approval asks where the mode would allow; disabled hides the tool (visibility layer 4) and denies forwarded calls', async () => {
      const permissions = test.app.tools.permissions
      await permissions.policies.set('pe*', 'approval')
      expect(decide({ name: 'tool:peek', effect: 'read' }, subject(5), { tool: 'peek' })).to.include({ decision: 'ask', code: 'policy-approval' })
      await permissions.policies.set('peek', 'disabled')
      expect(test.app.tools.list({ authority: 5 }).map((entry) => entry.definition.name)).not.to.include('peek')
      expect(test.app.tools.explain('peek', {}).removedBy).to.deep.include({ layer: 'policy', code: 'policy-disabled' })
      expect((await test.app.tools.call({ name: 'peek', scope: { authority: 5 } })).error.code).to.equal('not-available')
      expect(decide({ name: 'tool:peek', effect: 'read' }, subject(5), { tool: 'peek' })).to.include({ decision: 'deny', code: 'policy-disabled' })
      expect(permissions.policies.list()).to.deep.equal([
        { pattern: 'pe*', policy: 'approval', source: 'stored', updatedAt: permissions.policies.list()[0].updatedAt, updatedBy: undefined },
        { pattern: 'peek', policy: 'disabled', source: 'stored', updatedAt: permissions.policies.list()[1].updatedAt, updatedBy: undefined },
      ])
      expect(await permissions.policies.remove('peek')).to.equal(true)
      expect(test.app.tools.list({}).map((entry) => entry.definition.name)).to.include('peek')
    })

    it('a policy change never interrupts a call in flight; it applies from the next call', async () => {
      let release: () => void
      test.app.tools.define({ name: 'slow', description: 'Slow.', traits: { effect: 'read' }, run: () => new Promise<string>((resolve) => release = () => resolve('done')) })
      const running = test.app.tools.call({ name: 'slow' })
      while (!release) await new Promise((resolve) => setImmediate(resolve))
      await test.app.tools.permissions.policies.set('slow', 'disabled')
      release()
      expect((await running).ok).to.equal(true)
      expect((await test.app.tools.call({ name: 'slow' })).error.code).to.equal('not-available')
    })
  })
})
