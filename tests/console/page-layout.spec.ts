import { expect } from 'chai'
import { mkdtempSync, rmSync } from 'fs'
import { tmpdir } from 'os'
import { join } from 'path'
import { BrowserContext, Page } from 'playwright-core'
import { Context } from 'koishi'
import { ConsoleApp } from '../helpers/console'
import { demoTools, noBashInGroups } from '../helpers/demo-tools'
import { createPageApp, openBrowser, toolItem, screenshots } from '../helpers/browser'

// The page as a person sees it, in both languages (headless Chromium against
// the built page, as page.spec.ts): long names, empty states, dates and the
// reasons of approvals. Screenshots of every tab in zh-CN and en-US go to
// tests/output/console/look-<locale>-<tab>.png.

const output = screenshots
const longName = 'summarize_the_conversation_history_of_this_channel_in_detail'

const longTool = {
  name: 'long-names',
  inject: ['tools'],
  apply(ctx: Context) {
    ctx.tools.define({ name: longName, description: 'A tool with a long name. '.repeat(8), traits: { effect: 'write' }, run: () => 'ok' })
  },
}

describe('console: the page in both languages (Chromium)', function () {
  this.timeout(60000)

  let env: ConsoleApp
  const contexts: BrowserContext[] = []
  const profiles: string[] = []
  const pages: Record<string, Page> = {}
  let reply: Promise<string[]>

  before(async function () {
    env = await createPageApp({
      config: { scenes: [noBashInGroups] },
      plugins: [[demoTools], [longTool]],
      locale: 'en-US',
    })
    // A finished call for the call log, and an approval waiting.
    await env.app.mock.initUser('asker', 4)
    await env.app.mock.client('asker').receive('tools.call get_weather {"city":"Paris"}')
    await env.app.tools.permissions.policies.set('get_weather', 'approval', 'console:owner')
    reply = env.app.mock.client('asker').receive('tools.call get_weather {"city":"Rome"}')
    while (!env.app.tools.permissions.approvals.pending().length) await new Promise((resolve) => setTimeout(resolve, 20))
    for (const locale of ['en-US', 'zh-CN']) {
      const profile = mkdtempSync(join(tmpdir(), 'chatluna-tools-chromium-'))
      profiles.push(profile)
      const context = await openBrowser(profile, locale)
      contexts.push(context)
      const page = pages[locale] = await context.newPage()
      await page.goto(env.url + 'chatluna-tools')
      await toolItem(page, 'bash').waitFor()
    }
  })

  afterEach(async function () {
    if (this.currentTest?.state === 'failed') {
      for (const [locale, page] of Object.entries(pages)) {
        await page.screenshot({ path: join(output, `failed-${locale}-${this.currentTest.title.slice(0, 40).replace(/\W+/g, '-')}.png`) }).catch(() => {})
      }
    }
  })

  after(async () => {
    const [approval] = env?.app.tools.permissions.approvals.pending() ?? []
    if (approval) await env.app.tools.permissions.approvals.answer(approval.id, 'reject', { platform: 'console', userId: 'owner', authority: 5, private: true })
    await reply?.catch(() => {})
    for (const context of contexts) await context.close()
    for (const profile of profiles) rmSync(profile, { recursive: true, force: true })
    await env?.dispose()
  })

  for (const locale of ['en-US', 'zh-CN']) {
    it(`${locale}: every tab, screenshotted`, async () => {
      const page = pages[locale]
      await page.setViewportSize({ width: 1440, height: 1200 })
      await toolItem(page, 'get_weather').click()
      await page.locator('.tool-detail[data-tool="get_weather"]').waitFor()
      // The form sits under the section title "Arguments", without k-form's own "Basic Settings".
      await page.locator('.args-form .k-form').waitFor()
      expect(await page.locator('.args-form .k-schema-header').isVisible()).to.equal(false)
      for (const tab of ['detail', 'model', 'approvals', 'calls', 'policies']) {
        await page.locator(`[data-tab="${tab}"]`).click()
        await page.locator('.tab-content > *').first().waitFor()
        await page.waitForTimeout(200)
        await page.screenshot({ path: join(output, `look-${locale}-${tab}.png`) })
      }
      await page.setViewportSize({ width: 1440, height: 900 })
    })
  }

  it('a long tool name wraps in the list and in the detail, even in a narrow window; the effect label stays on one line', async () => {
    for (const [locale, page] of Object.entries(pages)) {
      await page.setViewportSize({ width: 900, height: 800 })
      await page.locator('[data-tab="detail"]').click()
      await toolItem(page, longName).click()
      const title = page.locator(`.tool-detail[data-tool="${longName}"] .title`)
      await title.waitFor()
      const overflow = await title.evaluate((element) => element.scrollWidth - element.clientWidth)
      expect(overflow, `${locale}: detail title overflow`).to.be.at.most(0)
      const heights = await Promise.all([longName, 'read'].map((name) => toolItem(page, name).locator('.effect').evaluate((element) => element.getBoundingClientRect().height)))
      expect(heights[0], `${locale}: effect label height`).to.equal(heights[1])
      await page.screenshot({ path: join(output, `look-${locale}-narrow.png`) })
      await page.setViewportSize({ width: 1440, height: 900 })
    }
  })

  it('a search without matches says so', async () => {
    const texts = { 'en-US': 'No tool matches "zzz".', 'zh-CN': '没有匹配“zzz”的工具。' }
    for (const [locale, page] of Object.entries(pages)) {
      const input = page.locator('.tool-list .search-input input')
      await input.fill('zzz')
      const empty = page.locator('.tool-list .search-empty')
      await empty.waitFor()
      expect(await empty.innerText(), locale).to.equal(texts[locale])
      await input.fill('')
      await empty.waitFor({ state: 'detached' })
    }
  })

  it('an approval gives its reason in the page\'s language', async () => {
    const [approval] = env.app.tools.permissions.approvals.pending()
    const reasons = {
      'en-US': 'The policy of "get_weather" requires an approval for the tool get_weather.',
      'zh-CN': '"get_weather" 的策略要求工具 get_weather 经过审批。',
    }
    for (const [locale, page] of Object.entries(pages)) {
      await page.locator('[data-tab="approvals"]').click()
      const reason = page.locator(`.approval[data-approval="${approval.id}"] .reason`)
      await reason.waitFor()
      expect(await reason.innerText(), locale).to.equal(reasons[locale])
    }
  })

  it('an approval of a compound shell line lists every part with its decision', async () => {
    const asked = env.app.mock.client('asker').receive('tools.call bash {"command":"ls | wc -l"}')
    let approval = env.app.tools.permissions.approvals.pending().find((item) => item.tool === 'bash')
    while (!approval) {
      await new Promise((resolve) => setTimeout(resolve, 20))
      approval = env.app.tools.permissions.approvals.pending().find((item) => item.tool === 'bash')
    }
    const expected = { 'en-US': ['ls needs approval', 'wc -l needs approval'], 'zh-CN': ['ls 需要审批', 'wc -l 需要审批'] }
    try {
      for (const [locale, page] of Object.entries(pages)) {
        await page.locator('[data-tab="approvals"]').click()
        const card = page.locator(`.approval[data-approval="${approval.id}"]`)
        await card.locator('.part').first().waitFor()
        expect(await card.locator('.part').allInnerTexts(), locale).to.deep.equal(expected[locale])
        await card.screenshot({ path: join(output, `approval-parts-${locale}.png`) })
      }
    } finally {
      await env.app.tools.permissions.approvals.answer(approval.id, 'reject', { platform: 'console', userId: 'owner', authority: 5, private: true })
      await asked
    }
  })

  it('the call log gives times in the page\'s language', async () => {
    const times = { 'en-US': /^\d{1,2}:\d{2}:\d{2} [AP]M$/, 'zh-CN': /^\d{2}:\d{2}:\d{2}$/ }
    for (const [locale, page] of Object.entries(pages)) {
      await page.locator('[data-tab="calls"]').click()
      const time = page.locator('.calls tr[data-status="success"] td').first()
      await time.waitFor()
      expect(await time.innerText(), locale).to.match(times[locale])
    }
  })
})
