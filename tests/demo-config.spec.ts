import { expect } from 'chai'
import { existsSync, readFileSync } from 'fs'
import { join, resolve } from 'path'
import { load } from 'js-yaml'
import { Dict, interpolate, Schema } from 'koishi'
import { Config } from '../src'
import { createApp, TestApp } from './helpers/app'

/*
 * `npm start` runs Koishi on a copy of koishi.yml.example; Koishi's loader
 * expands `${{ … }}` with `env` (Loader#interpolate, the same function and
 * pattern as here) before the plugin's Config schema sees the values. The
 * agent must switch on exactly when OPENAI_BASE_URL, OPENAI_API_KEY and
 * OPENAI_MODEL are all set.
 */

function demoConfig(env: Dict<string>) {
  const yaml = load(readFileSync(resolve(__dirname, '../koishi.yml.example'), 'utf8')) as Dict
  const expand = (value: unknown): unknown => {
    if (typeof value === 'string') return interpolate(value, { env }, /\$\{\{(.+?)\}\}/g)
    if (Array.isArray(value)) return value.map(expand)
    if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, expand(inner)]))
    return value
  }
  return new (Schema as any)(Config)(expand(yaml.plugins['chatluna-tools:demo'])) as Config
}

describe('koishi.yml.example: the agent in the demo', () => {
  it('stays off without the OPENAI_* variables', () => {
    expect(demoConfig({}).agent.enabled).to.equal(false)
    expect(demoConfig({ OPENAI_BASE_URL: 'https://api.deepseek.com', OPENAI_MODEL: 'deepseek-chat' }).agent.enabled).to.equal(false)
  })

  it('is on against that endpoint when all three are set', () => {
    const { agent } = demoConfig({ OPENAI_BASE_URL: 'https://api.deepseek.com', OPENAI_API_KEY: 'sk-test', OPENAI_MODEL: 'deepseek-chat' })
    expect(agent).to.deep.include({ enabled: true, baseURL: 'https://api.deepseek.com', apiKey: 'sk-test', model: 'deepseek-chat', replyInPrivate: true })
  })
})

describe('koishi.yml.example: permissions in the demo (issue 3 demo acceptance)', () => {
  let test: TestApp
  beforeEach(async () => {
    // The demo's plugin config, with its workspace in a temp folder and no MCP server process.
    const config = { ...demoConfig({}), mcp: { servers: [] } }
    test = await createApp(config, { database: true, locale: 'en-US' })
    await test.app.mock.initUser('member', 1)
    await test.app.mock.initUser('admin', 3)
  })
  afterEach(() => test.dispose())

  it('opens tools.call to authority 1, so the permission service decides', () => {
    expect(demoConfig({}).callAuthority).to.equal(1)
  })

  it("denies an authority-1 user's write; asks an authority-3 user's write in chat and runs it after tools.approve", async () => {
    const file = join(test.baseDir, 'demo-workspace/hello.txt')
    const member = test.app.mock.client('member', 'sandbox-group')
    const [denied] = await member.receive('tools.call write {"path":"hello.txt","content":"hi"}')
    expect(denied).to.match(/^\[denied\] .*read-only/)
    expect(existsSync(file)).to.equal(false)

    const admin = test.app.mock.client('admin', 'sandbox-group')
    const requested = new Promise<any>((resolve) => test.app.once('chatluna/approval-requested', resolve))
    const replies = admin.receive('tools.call write {"path":"hello.txt","content":"hi"}')
    const approval = await requested
    expect(existsSync(file)).to.equal(false)
    const answer = await admin.receive(`tools.approve ${approval.id}`)
    expect([...await replies, ...answer]).to.deep.equal([
      [
        `Approval needed #${approval.id}: admin (authority 3) wants to run the tool write.`,
        'Action: fs:write',
        `Target: ${file}`,
        'Risk: none',
        'Why: The permission mode auto asks before write actions.',
        `Approve: tools.approve ${approval.id} [once|turn|session|always] · refuse: tools.deny ${approval.id} [reject|never] · expires in 120 s.`,
      ].join('\n'),
      `Approved #${approval.id} (once): the tool write runs now.`,
      'Created "hello.txt" (2 bytes, 1 line).',
    ])
    expect(readFileSync(file, 'utf8')).to.equal('hi')
  })
})
