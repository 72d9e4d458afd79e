import { expect } from 'chai'
import { resolve } from 'path'
import { Element, h } from 'koishi'
import { ToolRunError } from '../src'
import { createApp, onlyRead, TestApp, toolPlugin } from './helpers/app'
import { stdioServer } from './helpers/mcp'

/*
 * Text that plugins, MCP servers and models choose, shown in chat: a tool
 * description holding `<at type="all"/>` or `<image url=…>` (the hostile
 * fixture's `markup` tool) must reach the chat as those characters, never
 * as a live mention or an image the bot fetches and posts.
 */
const hostileBin = resolve(__dirname, 'fixtures/mcp-hostile.cjs')

describe('hostile input: chat markup in tool texts', function () {
  this.timeout(20000)
  let test: TestApp
  let sent: Element[][]
  before(async () => {
    test = await createApp({ ...onlyRead, mcp: { servers: [stdioServer('h', hostileBin)] } }, { database: true, locale: 'en-US' })
    await test.app.tools.mcp.settled()
    await test.app.mock.initUser('admin', 3)
    test.app.plugin(toolPlugin('cartoons', (ctx) => ctx.tools.define({
      name: 'cartoon',
      description: 'Fails with its own error.',
      traits: { effect: 'read' },
      run(args: { named?: boolean }) {
        // `named`: with a chat text that no locale file defines.
        throw new ToolRunError('no-cartoon', 'Tom & Jerry <3 is not on.', args.named ? { text: { path: 'cartoons.not-on' } } : {})
      },
    })))
    test.app.on('before-send', (session) => {
      sent.push(session.elements)
    })
  })
  after(() => test.dispose())
  beforeEach(() => {
    sent = []
  })
  const types = () => sent.flatMap((elements) => elements.map((element) => element.type))

  it('tools lists a description with markup as text (cut, as every description)', async () => {
    const [reply] = await test.app.mock.client('admin').receive('tools')
    expect(types()).to.deep.equal(['text'])
    // The listing cuts descriptions to 80 characters.
    expect(reply).to.contain('mcp__h__markup — Pings everyone <at id="all"/><at type="all"/> and sends <image url=')
  })

  it('tools.info shows the description and a schema with < and & as typed', async () => {
    const [reply] = await test.app.mock.client('admin').receive('tools.info mcp__h__markup')
    expect(types()).to.deep.equal(['text'])
    const lines = reply.split('\n')
    expect(lines[0]).to.equal('Tool mcp__h__markup (source: mcp, plugin: chatluna-tools)')
    expect(lines[1]).to.equal('Pings everyone <at id="all"/><at type="all"/> and sends <image url="http://127.0.0.1:9/track.png"/> & more.')
    expect(reply).to.contain('"pattern": "^<b>&amp;$"')
  })

  it('tools.call says a failure with < and & as typed, not as entities', async () => {
    const client = test.app.mock.client('admin')
    // The chat message itself is markup: a typed "<" or "&" arrives escaped.
    const [missing] = await client.receive(h.escape('tools.call read {"path":"a&b<c>.txt"}'))
    expect(missing).to.equal('[error] "a&b<c>.txt" does not exist.')
    const [unknown] = await client.receive(h.escape('tools.call read {"path":"x","a&b":1}'))
    expect(unknown).to.match(/^\[invalid call\] The arguments do not match the tool's schema: "a&b" is not a property of this tool \(it takes: /)
    const [own] = await client.receive('tools.call cartoon')
    expect(own).to.equal('[error] The tool reports no-cartoon: Tom & Jerry <3 is not on.')
    // A text the tool names but no locale defines: the same frame, never the bare i18n path.
    const [untranslated] = await client.receive('tools.call cartoon {"named":true}')
    expect(untranslated).to.equal(own)
    expect(types()).to.deep.equal(['text', 'text', 'text', 'text'])
  })
})
