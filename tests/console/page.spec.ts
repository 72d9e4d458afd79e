import { expect } from 'chai'
import { mkdtempSync, rmSync } from 'fs'
import { tmpdir } from 'os'
import { join } from 'path'
import { BrowserContext, Page } from 'playwright-core'
import * as sandbox from '@koishijs/plugin-sandbox'
import { ConsoleApp } from '../helpers/console'
import { demoTools, noBashInGroups } from '../helpers/demo-tools'
import { createPageApp, choose, openBrowser, toolItem, screenshots } from '../helpers/browser'

// The console page in headless Chromium, against a real Koishi app (server,
// console in production mode, sandbox, mock adapter, memory database) with
// this plugin installed as from npm: the built page is what is tested.
// Screenshots go to tests/output/console/.

const output = screenshots
const tool = toolItem

describe('console: the page in Chromium', function () {
  this.timeout(60000)

  let env: ConsoleApp
  let context: BrowserContext
  let page: Page
  let profile: string

  before(async function () {
    env = await createPageApp({
      config: { scenes: [noBashInGroups] },
      plugins: [[sandbox], [demoTools]],
      locale: 'en-US',
    })
    profile = mkdtempSync(join(tmpdir(), 'chatluna-tools-chromium-'))
    context = await openBrowser(profile, 'en-US')
    page = await context.newPage()
    await page.goto(env.url + 'chatluna-tools')
    await tool(page, 'bash').waitFor()
  })

  afterEach(async function () {
    if (this.currentTest?.state === 'failed' && page) {
      await page.screenshot({ path: join(output, `failed-${this.currentTest.title.slice(0, 40).replace(/\W+/g, '-')}.png`) }).catch(() => {})
    }
  })

  after(async () => {
    await context?.close()
    if (profile) rmSync(profile, { recursive: true, force: true })
    await env?.dispose()
  })

  it('(a) lists the demo tools, grouped by source, and the page is in the sidebar', async () => {
    for (const name of ['read', 'write', 'edit', 'bash', 'get_weather']) {
      await expect(await tool(page, name).count(), name).to.equal(1)
    }
    const groups = await page.locator('.tool-list .group-title').allInnerTexts()
    expect(groups.map((text) => text.split(/\s/)[0].toLowerCase())).to.deep.equal(['built-in', 'plugins'])
    expect(await page.locator('a[href$="/chatluna-tools"]').count(), 'sidebar link').to.be.greaterThan(0)
    // Seven entries: six tools (one hidden in this scope) and tool_search, which the count leaves out and names.
    expect(await page.locator('.tool-item').count()).to.equal(7)
    expect(await page.locator('.tool-list .summary').innerText()).to.equal('5 of 6 tools visible (not counted: the mode tool tool_search)')
    // Search by description, Chinese included.
    await page.locator('.tool-list .search-input input').fill('城市天气')
    await expect(await page.locator('.tool-item').count()).to.equal(1)
    await page.locator('.tool-list .search-input input').fill('')
    await page.screenshot({ path: join(output, 'a-tool-list.png') })
  })

  it('(b) a group scope marks bash as removed by the scene layer, naming the rule; level 1 marks exec tools "would be denied"', async () => {
    await page.locator('.scope-kind [data-kind="private"], .scope-kind label:has-text("Private")').first().click()
    await page.waitForFunction(() => !document.querySelector('.tool-item[data-tool="bash"] .hidden-badge'))
    await page.locator('.scope-kind label:has-text("Group")').click()
    const badge = tool(page, 'bash').locator('.hidden-badge[data-layer="scene"]')
    await badge.waitFor()
    expect(await badge.innerText()).to.include('layer 3: the scene rules')
    expect(await tool(page, 'bash').locator('.reason').innerText()).to.equal('Scene rule "no-bash-in-groups" hides tools matching "bash" here.')
    expect(await tool(page, 'get_weather').locator('.hidden-badge').count()).to.equal(0)

    // Level 1 (the default): exec and write tools would be denied, read tools not.
    await tool(page, 'bash').locator('.decision-badge[data-decision="deny"]').waitFor()
    expect(await tool(page, 'bash').locator('.decision-badge').innerText()).to.equal('would be denied')
    expect(await tool(page, 'write').locator('.decision-badge[data-decision="deny"]').count()).to.equal(1)
    expect(await tool(page, 'edit').locator('.decision-badge[data-decision="deny"]').count()).to.equal(1)
    expect(await tool(page, 'get_weather').locator('.decision-badge').count()).to.equal(0)

    // The detail panel names the layer and the rule too.
    await tool(page, 'bash').click()
    await page.locator('.tool-detail[data-tool="bash"] .layers li.failed[data-layer="scene"]').waitFor()
    expect(await page.locator('.tool-detail .layers li.failed').innerText()).to.include('no-bash-in-groups')
    await page.screenshot({ path: join(output, 'b-group-scope.png') })

    // Level 4: nothing would be denied.
    await choose(page, '.scope-level', '4')
    await page.waitForFunction(() => !document.querySelector('.decision-badge[data-decision="deny"]'))
  })

  it('shows the argument form, the JSON Schema and what the model would see with its size', async () => {
    await tool(page, 'get_weather').click()
    const detail = page.locator('.tool-detail[data-tool="get_weather"]')
    await detail.waitFor()
    expect(await detail.locator('.k-form').innerText()).to.include('City name, e.g. Paris')
    expect(JSON.parse(await detail.locator('.json-schema').innerText()).required).to.deep.equal(['city'])

    await page.locator('[data-tab="model"]').click()
    const summary = page.locator('.model-summary')
    await summary.waitFor()
    const expected = env.app.tools.declarations({ private: false, authority: 4 }, { mode: 'native', locales: ['en-US'] })
    expect(Number(await summary.getAttribute('data-bytes'))).to.equal(Buffer.byteLength(JSON.stringify(expected)))
    expect(await page.locator('[data-declaration]').evaluateAll((rows) => rows.map((row) => row.getAttribute('data-declaration'))))
      .to.deep.equal(expected.map((declaration) => declaration.function.name))
    await page.screenshot({ path: join(output, 'model-view.png') })
  })

  it('(c) setting a policy to disabled in the page hides the tool from `tools` in chat on the next call', async () => {
    await env.app.mock.initUser('chat-user', 1)
    const chat = env.app.mock.client('chat-user')
    expect((await chat.receive('tools')).join('\n')).to.include('get_weather')

    await page.locator('[data-tab="detail"]').click()
    await tool(page, 'get_weather').click()
    await page.locator('.tool-detail[data-tool="get_weather"]').waitFor()
    await choose(page, '.tool-detail .policy-select', 'disabled')
    await tool(page, 'get_weather').locator('.hidden-badge[data-layer="policy"]').waitFor()

    expect((await chat.receive('tools')).join('\n')).not.to.include('get_weather')
    await page.locator('[data-tab="policies"]').click()
    await page.locator('.policies tr[data-pattern="get_weather"][data-origin="stored"]').waitFor()
    await page.screenshot({ path: join(output, 'c-policy-disabled.png') })

    // Removing it from the policy list brings the tool back.
    await page.locator('.policies tr[data-pattern="get_weather"] button').click()
    await page.waitForFunction(() => !document.querySelector('.tool-item[data-tool="get_weather"] .hidden-badge'))
    expect((await chat.receive('tools')).join('\n')).to.include('get_weather')
  })

  it('shows a refused action as one clear line', async () => {
    await page.locator('[data-tab="policies"]').click()
    await page.locator('.policy-list .pattern-input input').fill('two words')
    await page.locator('.policy-list .add-policy').click()
    const error = page.locator('.el-message--error')
    await error.waitFor()
    expect(await error.innerText()).to.equal('Failed: The pattern "two words" must be 1 to 255 characters without spaces.')
    expect(await page.locator('.policies tr[data-pattern="two words"]').count()).to.equal(0)
    await page.locator('.policy-list .pattern-input input').fill('')
  })

  it('(d) a pending approval created from chat appears in the page; approving it there lets the call run', async () => {
    await page.locator('[data-tab="policies"]').click()
    await page.locator('.policy-list .pattern-input input').fill('get_weather')
    await choose(page, '.policy-list .policy-input', 'approval')
    await page.locator('.policy-list .add-policy').click()
    await page.locator('.policies tr[data-pattern="get_weather"][data-origin="stored"]').waitFor()

    await env.app.mock.initUser('asker', 4)
    const reply = env.app.mock.client('asker').receive('tools.call get_weather {"city":"Paris"}')
    await page.locator('[data-tab="approvals"] .count').waitFor()
    expect(await page.locator('[data-tab="approvals"] .count').innerText()).to.equal('1')
    await page.locator('[data-tab="approvals"]').click()
    const card = page.locator('.approval', { hasText: 'get_weather' })
    await card.waitFor()
    expect(await card.innerText()).to.include('mock:asker')
    await page.screenshot({ path: join(output, 'd-approval.png') })
    await card.locator('button[data-answer="once"]').click()

    expect((await reply).join('\n')).to.include('Paris: 21 °C')
    await page.waitForFunction(() => !document.querySelector('.approval'))
    const entry = (await env.app.tools.permissions.audit(1))[0]
    expect(entry).to.include({ tool: 'get_weather', decision: 'allow', approver: 'console:owner', answer: 'once' })
    await env.app.tools.permissions.policies.remove('get_weather')
  })

  it('lists permission rules', async () => {
    await env.app.tools.permissions.rules.add({ effect: 'deny', action: 'tool:bash', platform: 'mock', userId: 'mallory', createdBy: 'mock:admin' })
    await page.locator('[data-tab="calls"]').click()
    await page.locator('[data-tab="policies"]').click()
    const row = page.locator('table.rules tr[data-rule]')
    await row.waitFor()
    const text = await row.innerText()
    for (const part of ['deny', 'tool:bash', 'mock:mallory', 'permanent', 'mock:admin']) expect(text).to.include(part)
    await page.screenshot({ path: join(output, 'rules.png') })
  })

  it('shows finished calls in the call log as they happen', async () => {
    await env.app.mock.initUser('caller', 4)
    await env.app.mock.client('caller').receive('tools.call get_weather {"city":"Paris"}')
    await page.locator('[data-tab="calls"]').click()
    const row = page.locator('.calls tr[data-status="success"]', { hasText: 'mock:caller' })
    await row.waitFor()
    expect(await row.innerText()).to.include('get_weather')
  })

  it('speaks Chinese when the console is set to zh-CN', async () => {
    const zhProfile = mkdtempSync(join(tmpdir(), 'chatluna-tools-chromium-'))
    const zh = await openBrowser(zhProfile, 'zh-CN')
    try {
      const zhPage = await zh.newPage()
      await zhPage.goto(env.url + 'chatluna-tools')
      const badge = zhPage.locator('.tool-item[data-tool="bash"] .hidden-badge[data-layer="scene"]')
      await badge.waitFor()
      expect(await badge.innerText()).to.equal('已隐藏 · 第 3 层：场景规则')
      expect(await zhPage.locator('.tool-item[data-tool="bash"] .reason').innerText()).to.equal('场景规则 "no-bash-in-groups" 在此隐藏了匹配 "bash" 的工具。')
      expect(await zhPage.locator('[data-tab="model"]').innerText()).to.equal('模型所见')
      await zhPage.screenshot({ path: join(output, 'zh-CN.png') })
    } finally {
      await zh.close()
      rmSync(zhProfile, { recursive: true, force: true })
    }
  })
})
