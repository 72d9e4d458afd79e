import { expect } from 'chai'
import { mkdirSync, mkdtempSync, rmSync } from 'fs'
import { tmpdir } from 'os'
import { join } from 'path'
import { BrowserContext, Page } from 'playwright-core'
import { Context, Schema } from 'koishi'
import { ConsoleApp, createConsoleApp } from '../helpers/console'
import { demoTools } from '../helpers/demo-tools'
import { root, stagePackage } from '../helpers/stage'
import { assertChromium, openBrowser, toolItem } from '../helpers/browser'

// What the page tells the admin about edge cases and after an action, in
// headless Chromium against the built page (as page.spec.ts). Screenshots
// go to tests/output/console/.

const output = join(root, 'tests/output/console')

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

  before(async function () {
    assertChromium()
    mkdirSync(output, { recursive: true })
    const folder = stagePackage(join(root, 'tests/output/stage'))
    env = await createConsoleApp({
      plugin: require(folder),
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
})
