import { expect } from 'chai'
import { mkdtempSync, rmSync } from 'fs'
import { tmpdir } from 'os'
import { join } from 'path'
import { BrowserContext, Page } from 'playwright-core'
import { Context, Schema } from 'koishi'
import { ConsoleApp } from '../helpers/console'
import { demoTools } from '../helpers/demo-tools'
import { createPageApp, openBrowser, toolItem, screenshots } from '../helpers/browser'
import { approvalAnswers } from '../../src/permission/answers'
import { ConsoleAuthorityError } from '../../src/console'

// What the page tells the admin about edge cases and after an action, in
// headless Chromium against the built page (as page.spec.ts). Screenshots
// go to tests/output/console/.

const output = screenshots

/** Tools without arguments: none at all, an empty Schemastery object, and an MCP-style JSON Schema with none. */
const argumentless = {
  name: 'argumentless-tools',
  inject: ['tools'],
  apply(ctx: Context) {
    ctx.tools.define({ name: 'get_time', description: 'The current time.', traits: { effect: 'read' }, run: () => 'noon' })
    ctx.tools.define({ name: 'get_date', description: 'Today.', args: Schema.object({}), traits: { effect: 'read' }, run: () => 'today' })
    ctx.tools.define({ name: 'mcp__clock__now', description: 'Now.', parameters: { type: 'object', properties: {} }, traits: { effect: 'read' }, run: () => 'now' }, { source: 'mcp' })
    ctx.tools.define({
      name: 'mcp__clock__zone',
      description: 'A time zone.',
      parameters: { type: 'object', properties: { zone: { type: 'string' } }, required: ['zone'] },
      traits: { effect: 'read' },
      run: () => 'UTC',
    }, { source: 'mcp' })
  },
}

describe('console: what the page tells the admin (Chromium)', function () {
  this.timeout(60000)

  let env: ConsoleApp
  let profiles: string[] = []
  let contexts: BrowserContext[] = []
  let page: Page

  async function open(locale: string) {
    const profile = mkdtempSync(join(tmpdir(), 'chatluna-tools-chromium-'))
    profiles.push(profile)
    const context = await openBrowser(profile, locale)
    contexts.push(context)
    const opened = await context.newPage()
    await opened.goto(env.url + 'chatluna-tools')
    await toolItem(opened, 'read').waitFor()
    return opened
  }

  async function showDetail(target: Page, name: string) {
    await target.locator('[data-tab="detail"]').click()
    await toolItem(target, name).click()
    const detail = target.locator(`.tool-detail[data-tool="${name}"]`)
    await detail.waitFor()
    return detail
  }

  /** Asks for an approval of get_weather from chat; resolves with the chat's reply once answered. */
  async function pendingApproval(user: string, city: string) {
    await env.app.tools.permissions.policies.set('get_weather', 'approval')
    await env.app.mock.initUser(user, 4)
    const reply = env.app.mock.client(user).receive(`tools.call get_weather {"city":"${city}"}`)
    while (!env.app.tools.permissions.approvals.pending().length) await new Promise((resolve) => setTimeout(resolve, 20))
    return { approval: env.app.tools.permissions.approvals.pending()[0], reply }
  }

  before(async function () {
    env = await createPageApp({
      plugins: [[demoTools], [argumentless]],
      locale: 'en-US',
    })
    page = await open('en-US')
  })

  afterEach(async function () {
    if (this.currentTest?.state === 'failed' && page) {
      await page.screenshot({ path: join(output, `failed-${this.currentTest.title.slice(0, 40).replace(/\W+/g, '-')}.png`) }).catch(() => {})
    }
  })

  after(async () => {
    for (const context of contexts) await context.close()
    for (const profile of profiles) rmSync(profile, { recursive: true, force: true })
    await env?.dispose()
  })

  it('a tool without arguments says so instead of an empty form or JSON Schema', async () => {
    for (const name of ['get_time', 'get_date', 'mcp__clock__now']) {
      const detail = await showDetail(page, name)
      expect(await detail.locator('.args-none').innerText(), name).to.equal('This tool takes no arguments.')
      expect(await detail.locator('.k-form').count(), name).to.equal(0)
      expect(await detail.locator('.json-schema').count(), name).to.equal(0)
      expect(await detail.locator('.args-mcp').count(), name).to.equal(0)
    }
    await page.locator('.tool-detail .args-none').scrollIntoViewIfNeeded()
    await page.screenshot({ path: join(output, 'args-none-en-US.png') })

    // Tools with arguments keep their form or their JSON Schema.
    const weather = await showDetail(page, 'get_weather')
    expect(await weather.locator('.k-form').innerText()).to.include('City name, e.g. Paris')
    expect(await weather.locator('.args-none').count()).to.equal(0)
    const zone = await showDetail(page, 'mcp__clock__zone')
    expect(await zone.locator('.args-mcp').innerText()).to.equal('This tool only has a JSON Schema for its arguments (e.g. an MCP tool).')
    expect(JSON.parse(await zone.locator('.json-schema').innerText()).required).to.deep.equal(['zone'])

    const zh = await open('zh-CN')
    const detail = await showDetail(zh, 'get_time')
    expect(await detail.locator('.args-none').innerText()).to.equal('此工具没有参数。')
    await detail.locator('.args-none').scrollIntoViewIfNeeded()
    await zh.screenshot({ path: join(output, 'args-none-zh-CN.png') })
  })

  it('an approval offers every answer the permission service accepts, labelled; a click answers with its word', async () => {
    const { approval, reply } = await pendingApproval('asker', 'Paris')
    await page.locator('[data-tab="approvals"]').click()
    const card = page.locator(`.approval[data-approval="${approval.id}"]`)
    await card.waitFor()
    const buttons = card.locator('button[data-answer]')
    expect(await buttons.evaluateAll((items) => items.map((item) => item.getAttribute('data-answer')))).to.deep.equal([...approvalAnswers])
    expect(await buttons.allInnerTexts()).to.deep.equal(['Approve once', 'Approve for this turn', 'Approve for the session', 'Always allow', 'Deny', 'Always deny'])
    expect(await card.locator('button[data-answer="always"]').getAttribute('title')).to.equal('Stores a permanent rule allowing this action for the requester.')
    await page.screenshot({ path: join(output, 'approval-answers-en-US.png') })
    await card.locator('button[data-answer="session"]').click()
    expect((await reply).join('\n')).to.include('Paris: 21 °C')
    expect(env.app.tools.permissions.approvals.get(approval.id)).to.include({ status: 'approved', answer: 'session' })
    await card.waitFor({ state: 'detached' })
    await env.app.tools.permissions.policies.remove('get_weather')
  })

  it('says what an approval answer did in the console user\'s language, not the bot\'s default', async () => {
    const zh = await open('zh-CN')
    const { approval, reply } = await pendingApproval('asker-zh', 'Rome')
    await zh.locator('[data-tab="approvals"]').click()
    const card = zh.locator(`.approval[data-approval="${approval.id}"]`)
    await card.waitFor()
    expect(await card.locator('button[data-answer]').allInnerTexts()).to.deep.equal(['批准一次', '本轮内批准', '本会话内批准', '始终允许', '拒绝', '始终拒绝'])
    await card.locator('button[data-answer="once"]').click()
    const success = zh.locator('.el-message--success')
    await success.waitFor()
    expect(await success.innerText()).to.equal(`已批准 #${approval.id}（once）：工具 get_weather 开始运行。`)
    await zh.screenshot({ path: join(output, 'approval-answered-zh-CN.png') })
    expect((await reply).join('\n')).to.include('Rome: 21 °C')

    // The same answer in the en-US page reads in English.
    const next = await pendingApproval('asker-en', 'Oslo')
    await page.locator('[data-tab="approvals"]').click()
    await page.locator(`.approval[data-approval="${next.approval.id}"] button[data-answer="reject"]`).click()
    const refused = page.locator('.el-message--success', { hasText: `#${next.approval.id}` })
    await refused.waitFor()
    expect(await refused.innerText()).to.equal(`Refused #${next.approval.id} (reject).`)
    await next.reply
    await env.app.tools.permissions.policies.remove('get_weather')
  })

  describe('setting a policy says "Saved." only when it was saved', () => {
    /** Sets `pattern` to disabled from the policy list's add row. */
    async function addPolicy(target: Page, pattern: string) {
      await target.locator('[data-tab="policies"]').click()
      await target.locator('.policy-list .pattern-input input').fill(pattern)
      await target.locator('.policy-list .add-policy').click()
    }

    /** The error shown for the last action (waits for one with `text`), and no "Saved." beside it. */
    async function expectRefused(target: Page, text: string, saved = 'Saved.') {
      const error = target.locator('.el-message--error', { hasText: text })
      await error.waitFor()
      expect(await error.innerText()).to.equal(text)
      expect(await target.locator('.el-message--success', { hasText: saved }).count()).to.equal(0)
    }

    it('a pattern the permission service refuses: its reason, in the page\'s language', async () => {
      await addPolicy(page, 'two words')
      await expectRefused(page, 'Failed: The pattern "two words" must be 1 to 255 characters without spaces.')
      expect(await page.locator('.policies tr[data-pattern="two words"]').count()).to.equal(0)

      const zh = await open('zh-CN')
      await addPolicy(zh, 'two words')
      await expectRefused(zh, '操作失败：模式 "two words" 的长度必须为 1 到 255 个字符，且不含空格。', '已保存。')
      await zh.screenshot({ path: join(output, 'policy-refused-zh-CN.png') })
    })

    it('removing a policy that is no longer stored (removed meanwhile)', async () => {
      const policies = env.app.tools.permissions.policies
      await policies.set('get_date', 'disabled', 'console:owner')
      await page.locator('[data-tab="policies"]').click()
      const row = page.locator('.policies tr[data-pattern="get_date"][data-origin="stored"]')
      await row.waitFor()
      // Someone else removes it first; the page still shows the row when the admin clicks.
      const remove = policies.remove
      policies.remove = async (pattern: string) => (await remove.call(policies, pattern), false)
      try {
        await row.locator('button').click()
        await expectRefused(page, 'Failed: No policy set at run time for "get_date", so there is nothing to remove.')
      } finally {
        delete (policies as any).remove
      }
    })

    it('a server error and a refused console user', async () => {
      const policies = env.app.tools.permissions.policies
      policies.set = async () => { throw new Error('database is locked') }
      try {
        await addPolicy(page, 'get_date')
        await expectRefused(page, 'Failed: database is locked')
      } finally {
        delete (policies as any).set
      }

      const listener = env.app.console.listeners['chatluna-tools/set-policy']
      const callback = listener.callback
      listener.callback = () => { throw new ConsoleAuthorityError('the console login has expired; log in again', 4, 4) }
      try {
        await addPolicy(page, 'get_date')
        await expectRefused(page, 'This page needs authority 4. Log in to the console (plugin @koishijs/plugin-auth) as a user with enough authority.')
      } finally {
        listener.callback = callback
      }
      expect(env.app.tools.policies.resolve('get_date')).to.equal(undefined)

      // And when it is saved, it says so.
      await addPolicy(page, 'get_date')
      await page.locator('.el-message--success', { hasText: 'Saved.' }).waitFor()
      await page.locator('.policies tr[data-pattern="get_date"][data-origin="stored"]').waitFor()
      await env.app.tools.permissions.policies.remove('get_date')
    })
  })
})
