import { expect } from 'chai'
import { Element } from 'koishi'
import { createApp, TestApp } from './helpers/app'
import { callText, defineTestTools, nextApproval } from './helpers/permissions'

/*
 * Approvals against a platform or a model that misbehaves: a chat platform
 * that never confirms the posted prompt, and model-chosen text full of
 * Koishi element markup.
 */
describe('hostile input: approvals', function () {
  this.timeout(10000)
  let test: TestApp
  let ran: string[]
  beforeEach(async () => {
    test = await createApp({ callAuthority: 1, approvalTimeout: 300 }, { database: true, locale: 'en-US' })
    ran = []
    defineTestTools(test.app, ran)
    await test.app.mock.initUser('admin', 3)
    await test.app.mock.initUser('owner', 5)
  })
  afterEach(() => test.dispose())

  /** Makes the mock bot never confirm a message that `matches`; other messages go out. */
  function stallPosts(matches: (content: string) => boolean) {
    const bot = test.app.bots[0]
    const send = bot.sendMessage.bind(bot)
    bot.sendMessage = (channelId, content, ...rest) => matches(String(content)) ? new Promise(() => {}) : send(channelId, content, ...rest)
  }

  it('denies the call when the platform does not confirm the prompt within the approval timeout', async () => {
    stallPosts((content) => content.includes('tools.approve'))
    const started = Date.now()
    const replies = await test.app.mock.client('admin', 'group').receive(callText('shell', { command: 'ls' }))
    expect(Date.now() - started).to.be.below(2000)
    expect(replies).to.deep.equal(['[denied] This needs a person\'s approval, but there is no chat to ask in.'])
    expect(ran).to.deep.equal([])
    expect(test.app.tools.permissions.approvals.pending()).to.deep.equal([])
  })

  it('ends the call as aborted when its caller gives up while the prompt is being posted', async () => {
    stallPosts((content) => content.includes('tools.approve'))
    const session = test.app.mock.session({ userId: 'admin', channelId: 'group', guildId: 'group' })
    const controller = new AbortController()
    const result = test.app.tools.call({
      name: 'shell',
      args: { command: 'ls' },
      scope: { ...test.app.tools.scope(session), authority: 3 },
      session,
      signal: controller.signal,
    } as any)
    setTimeout(() => controller.abort(), 50)
    const started = Date.now()
    expect(await result).to.deep.include({ ok: false, status: 'aborted' })
    expect(Date.now() - started).to.be.below(250)
  })

  it('posts a target full of element markup as text, and answers with odd ids as text too', async () => {
    const sent: Element[][] = []
    test.app.on('before-send', (session) => {
      sent.push(session.elements)
    })
    // As a model would send it (a user typing markup in chat sends escaped text on real platforms).
    const command = 'echo <at type="all"/><image url="http://127.0.0.1:9/x.png"/> &amp 1 < 2'
    const session = test.app.mock.session({ userId: 'admin', channelId: 'group', guildId: 'group' })
    // Where the mock bot delivers what this session sends.
    session['client'] = test.app.mock.client('admin', 'group')
    const asked = nextApproval(test.app)
    const result = test.app.tools.call({ name: 'shell', args: { command }, scope: { ...test.app.tools.scope(session), authority: 3 }, session } as any)
    await asked
    const odd = await test.app.mock.client('owner', 'group').receive('tools.approve <at type="all"/>')
    expect(odd).to.deep.equal(['There is no pending approval #<at type="all"/>.'])
    expect((await result).status).to.equal('timeout')
    const prompt = sent.find((elements) => elements.some((element) => String(element.attrs.content).includes('Approval needed')))
    expect(prompt.map((element) => element.attrs.content).join('')).to.contain(`Target: ${command}`)
    expect(sent.flat().map((element) => element.type).filter((type) => type !== 'text')).to.deep.equal([])
  })
})
