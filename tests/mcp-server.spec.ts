import { expect } from 'chai'
import { App, Logger, Schema } from 'koishi'
import memory from '@koishijs/plugin-database-memory'
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js'
import { freePort, sleep, waitFor } from './helpers/mcp'
import { connect, ServerApp, startServerApp, token } from './helpers/mcp-server'
// Our MCP server ("self"), tested with the SDK's own client over HTTP on
// 127.0.0.1 (issue "MCP", item 7 and acceptance).

function defineTools(app: App) {
  const events: string[] = []
  app.tools.define({ name: 'clock', description: 'Tell the time.', traits: { effect: 'read' }, run: () => 'noon' })
  app.tools.define({
    name: 'greet',
    description: 'Greets someone.',
    args: Schema.object({ name: Schema.string().required().description('Who to greet') }),
    traits: { effect: 'read' },
    run: ({ name }, call) => `hello ${name} (user ${call.scope.userId}, authority ${call.scope.authority}, agent ${call.scope.agent})`,
  })
  app.tools.define({ name: 'secret_notes', description: 'Hidden by the served tool set.', traits: { effect: 'read' }, run: () => 'secret' })
  app.tools.define({ name: 'mcp__remote__echo', description: 'A tool of a connected MCP server.', traits: { effect: 'read' }, run: () => 'echo' }, { source: 'mcp' })
  app.tools.define({ name: 'deploy', description: 'Runs a deployment.', traits: { effect: 'exec', risk: 'dangerous' }, run: () => 'deployed' })
  app.tools.define({
    name: 'shell_like',
    description: 'Needs a human for every call.',
    traits: { effect: 'read' },
    permission: () => ({ name: 'shell', verdict: 'ask', reason: 'this command line cannot be judged statically' }),
    run: () => 'ran',
  })
  app.tools.define({
    name: 'wait',
    description: 'Waits, reporting progress, until aborted.',
    traits: { effect: 'read' },
    run: (args, call) => new Promise((resolve) => {
      let step = 0
      const timer = setInterval(() => call.progress({ progress: ++step, total: 100, message: `step ${step}` }), 30)
      call.signal.addEventListener('abort', () => {
        clearInterval(timer)
        events.push('aborted')
        resolve('stopped')
      })
    }),
  })
  return events
}

describe('MCP server (self) over Streamable HTTP', function () {
  this.timeout(20000)
  let test: ServerApp
  let events: string[]

  before(async () => {
    test = await startServerApp({ userId: 'mcp-bot', authority: 1, tools: { include: [], exclude: ['mcp__*', 'secret_*'] } })
    events = defineTools(test.app)
  })
  after(() => test?.dispose())

  it('refuses a client without a token or with a wrong one', async () => {
    for (const bearer of ['', 'wrong-token', `${token}x`]) {
      let error: any
      await connect(test.url, bearer).catch((caught) => error = caught)
      expect(error, bearer).to.be.an('error')
      expect(error.code, bearer).to.equal(401)
      expect(error.message).to.include('Unauthorized: send the token of mcp.server as \\"Authorization: Bearer <token>\\".')
    }
    const response = await fetch(test.url, { method: 'POST', headers: { 'content-type': 'application/json', authorization: 'Basic abc' }, body: '{}' })
    expect(response.status).to.equal(401)
    expect(response.headers.get('www-authenticate')).to.equal('Bearer realm="chatluna-tools"')
  })

  it('tools/list shows only the tools visible to the configured scope', async () => {
    const client = await connect(test.url)
    try {
      const { tools: listed } = await client.listTools()
      expect(listed.map((tool) => tool.name)).to.deep.equal(['clock', 'deploy', 'greet', 'read', 'shell_like', 'wait'])
      const greet = listed.find((tool) => tool.name === 'greet')
      expect(greet.description).to.equal('Greets someone.')
      expect(greet.inputSchema).to.deep.include({ type: 'object', required: ['name'] })
      expect(greet.annotations).to.deep.equal({ readOnlyHint: true, destructiveHint: false })
      expect(listed.find((tool) => tool.name === 'deploy').annotations).to.deep.equal({ readOnlyHint: false, destructiveHint: true })
    } finally {
      await client.close()
    }
  })

  it('calls go through the pipeline as the configured identity', async () => {
    const client = await connect(test.url)
    try {
      const result = await client.callTool({ name: 'greet', arguments: { name: 'Ada' } })
      expect(result).to.deep.equal({ content: [{ type: 'text', text: 'hello Ada (user mcp-bot, authority 1, agent mcp-server)' }] })
      const entry = test.app.tools.history.at(-1)
      expect(entry).to.include({ tool: 'greet', userId: 'mcp-bot', platform: 'mcp', agent: 'mcp-server', status: 'success' })
      const invalid = await client.callTool({ name: 'greet', arguments: { name: 42 } })
      expect(invalid.isError).to.equal(true)
      expect((invalid.content as any)[0].text).to.match(/^Error \[invalid-arguments\]/)
    } finally {
      await client.close()
    }
  })

  it('a call of a tool that needs approval is denied when no approval channel is set', async () => {
    const client = await connect(test.url)
    try {
      const asked = await client.callTool({ name: 'shell_like', arguments: {} })
      expect(asked.isError).to.equal(true)
      expect((asked.content as any)[0].text).to.equal('Error [approval-unavailable]: The call was not allowed: this command line cannot be judged statically, but there is no chat to ask in (no session and no approval channel).')
      // An exec tool is denied too: authority 1 has the permission mode "read-only".
      const deploy = await client.callTool({ name: 'deploy', arguments: {} })
      expect(deploy.isError).to.equal(true)
      expect((deploy.content as any)[0].text).to.equal('Error [mode-deny]: The call was not allowed: the permission mode "read-only" (authority 1) does not allow exec actions such as "tool:deploy".')
    } finally {
      await client.close()
    }
  })

  it('a tool outside the served set cannot be called', async () => {
    const client = await connect(test.url)
    try {
      for (const name of ['secret_notes', 'mcp__remote__echo']) {
        const result = await client.callTool({ name, arguments: {} })
        expect(result.isError, name).to.equal(true)
        expect((result.content as any)[0].text).to.equal(`Error [not-available]: The tool "${name}" is not available in this conversation.\nHint: Use only the tools you were given.`)
      }
    } finally {
      await client.close()
    }
  })

  it('sends progress, and a cancelled request aborts the tool', async () => {
    const client = await connect(test.url)
    try {
      const progress: any[] = []
      const controller = new AbortController()
      const call = client.callTool({ name: 'wait', arguments: {} }, undefined, {
        signal: controller.signal,
        onprogress: (event) => progress.push(event),
      })
      await waitFor(() => progress.length >= 2, 3000, 'progress')
      expect(progress[0]).to.deep.include({ progress: 1, total: 100, message: 'step 1' })
      controller.abort()
      await call.catch(() => {})
      await waitFor(() => events.includes('aborted'), 3000, 'the tool to see the abort')
    } finally {
      await client.close()
    }
  })

  it('tells connected clients when the tool list changes', async () => {
    const client = await connect(test.url)
    try {
      let changed = 0
      client.setNotificationHandler(ToolListChangedNotificationSchema, async () => { changed++ })
      // The notification needs the client's GET stream, which it opens after initialising.
      await sleep(200)
      const dispose = test.app.tools.define({ name: 'late', description: 'Defined later.', traits: { effect: 'read' }, run: () => 'late' })
      await waitFor(() => changed, 3000, 'notifications/tools/list_changed')
      expect((await client.listTools()).tools.map((tool) => tool.name)).to.include('late')
      dispose()
    } finally {
      await client.close()
    }
  })

  it('an unknown session id gets 404, and a request without a session that is not initialize gets 400', async () => {
    const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' }
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} })
    const unknown = await fetch(test.url, { method: 'POST', headers: { ...headers, 'mcp-session-id': 'nope' }, body })
    expect(unknown.status).to.equal(404)
    const noSession = await fetch(test.url, { method: 'POST', headers, body })
    expect(noSession.status).to.equal(400)
    const get = await fetch(test.url, { method: 'GET', headers })
    expect(get.status).to.equal(400)
  })

  it('the in-process provider lists and calls without the network', async () => {
    const self = test.app.tools.mcp.self
    expect(self.list().map((tool) => tool.name)).to.deep.equal(['clock', 'deploy', 'greet', 'read', 'shell_like', 'wait'])
    expect(self.list({ tools: { include: ['c*'] } }).map((tool) => tool.name)).to.deep.equal(['clock'])
    expect(await self.call('clock', {})).to.deep.equal({ content: [{ type: 'text', text: 'noon' }] })
    const denied = await self.call('deploy', {})
    expect(denied.isError).to.equal(true)
    // Authority 5 has the permission mode "allow"; 3 would be asked, with no chat to ask in.
    const allowed = await self.call('deploy', {}, { authority: 5 })
    expect(allowed).to.deep.equal({ content: [{ type: 'text', text: 'deployed' }] })
  })
})

describe('MCP server (self): configuration', function () {
  this.timeout(20000)

  it('is off by default: the path is not served', async () => {
    const test = await startServerApp({ enabled: false })
    try {
      const response = await fetch(test.url, { method: 'POST', headers: { authorization: `Bearer ${token}` }, body: '{}' })
      expect(response.status).to.equal(404)
    } finally {
      await test.dispose()
    }
  })

  it('without a token it is not served, and says why', async () => {
    const lines: string[] = []
    const target = { colors: 0, record: (record: Logger.Record) => { if (record.type === 'warn') lines.push(record.content) } }
    Logger.targets.push(target as any)
    let test: ServerApp
    try {
      test = await startServerApp({ token: '' })
    } finally {
      Logger.targets.splice(Logger.targets.indexOf(target as any), 1)
    }
    try {
      expect(lines).to.include('the MCP server (mcp.server) is enabled but has no token, so it is not served; set mcp.server.token')
      const response = await fetch(test.url, { method: 'POST', body: '{}' })
      expect(response.status).to.equal(404)
    } finally {
      await test.dispose()
    }
  })

  it('serves a configured path and approval channel scope', async () => {
    const test = await startServerApp({ path: '/custom/mcp', approvalChannel: { platform: 'mock', channelId: 'admins' } })
    try {
      expect(test.app.tools.mcp.self.scope().approvalChannel).to.deep.equal({ platform: 'mock', channelId: 'admins' })
      const client = await connect(test.url)
      const { tools: listed } = await client.listTools()
      expect(listed.map((tool) => tool.name)).to.deep.equal(['read'])
      await client.close()
    } finally {
      await test.dispose()
    }
  })
})

describe('MCP client and server together', function () {
  this.timeout(20000)

  it('a client sends its configured headers: with the token it connects to our own server, without it gets 401', async () => {
    const port = await freePort()
    const url = `http://127.0.0.1:${port}/chatluna-tools/mcp`
    const test = await startServerApp({}, {
      mcp: {
        retryDelay: 100,
        servers: [
          { id: 'self', transport: 'http', url, headers: { Authorization: `Bearer ${token}` } },
          { id: 'nokey', transport: 'http', url },
        ],
      },
    }, port)
    try {
      test.app.tools.define({ name: 'clock', description: 'Tell the time.', traits: { effect: 'read' }, run: () => 'noon' })
      await waitFor(() => test.app.tools.mcp.server('self').state === 'connected', 5000, 'the connection to our own server')
      await waitFor(() => test.app.tools.get('mcp__self__clock'), 3000, 'the served clock tool')
      const result = await test.app.tools.call({ name: 'mcp__self__clock', scope: { authority: 3 } })
      expect(result.content).to.deep.equal([{ type: 'text', text: 'noon' }])
      // The served set excludes mcp__*, so the tools do not loop back.
      expect(test.app.tools.mcp.server('self').tools).to.not.include('mcp__self__mcp__self__clock')
      const nokey = await waitFor(() => test.app.tools.mcp.server('nokey').error, 3000, 'the refused connection')
      expect(test.app.tools.mcp.server('nokey').state).to.be.oneOf(['retrying', 'connecting'])
      expect(nokey).to.match(/^connecting to the MCP server "nokey" failed: Streamable HTTP error: Error POSTing to endpoint: .*Unauthorized/)
    } finally {
      await test.dispose()
    }
  })
})

describe('MCP client and server: a session the server forgets', function () {
  this.timeout(20000)
  const realFetch = globalThis.fetch
  afterEach(() => globalThis.fetch = realFetch)

  it('the client starts a new session and calls work again', async () => {
    const port = await freePort()
    const url = `http://127.0.0.1:${port}/chatluna-tools/mcp`
    const sessions: string[] = []
    globalThis.fetch = async (input: any, init?: any) => {
      const response = await realFetch(input, init)
      const id = response.headers.get('mcp-session-id')
      if (id && !sessions.includes(id)) sessions.push(id)
      return response
    }
    const test = await startServerApp({}, { mcp: { retryDelay: 100, servers: [{ id: 'self', transport: 'http', url, headers: { Authorization: `Bearer ${token}` } }] } }, port)
    try {
      test.app.tools.define({ name: 'clock', description: 'Tell the time.', traits: { effect: 'read' }, run: () => 'noon' })
      await waitFor(() => test.app.tools.get('mcp__self__clock'), 5000, 'the served clock tool')
      expect(sessions).to.have.length(1)
      const deleted = await realFetch(url, { method: 'DELETE', headers: { authorization: `Bearer ${token}`, 'mcp-session-id': sessions[0] } })
      expect(deleted.status).to.equal(200)
      const result = await waitFor(async () => {
        const result = await test.app.tools.call({ name: 'mcp__self__clock', scope: { authority: 3 } })
        if (!result.ok) expect(result.error.code).to.be.oneOf(['mcp-connection-lost', 'mcp-unavailable'])
        return result.ok && result
      }, 5000, 'a call on a new session')
      expect(result.content).to.deep.equal([{ type: 'text', text: 'noon' }])
      expect(sessions).to.have.length(2)
    } finally {
      await test.dispose()
    }
  })
})

describe('MCP server (self): approvals in the configured channel', function () {
  this.timeout(20000)
  let test: ServerApp

  before(async () => {
    test = await startServerApp(
      { userId: 'mcp-bot', authority: 3, approvalChannel: { platform: 'mock', channelId: 'ops', guildId: 'ops' } },
      {},
    )
    test.app.plugin(memory)
    await waitFor(() => test.app.database, 5000, 'the database')
    await test.app.mock.initUser('admin', 3)
    await test.app.mock.initUser('member', 1)
    defineTools(test.app)
  })
  after(() => test?.dispose())

  it('an MCP client call that needs approval waits for tools.approve in the channel, then runs', async () => {
    // The mock bot can only reply inside its own sessions: record what it posts to the channel.
    const bot = test.app.bots[0]
    const original = bot.sendMessage.bind(bot)
    const posted: string[] = []
    bot.sendMessage = async (channelId: string, content: any, guildId?: string, options?: any) => {
      if (options?.session) return original(channelId, content, guildId, options)
      posted.push(`${channelId}: ${content}`)
      return ['1']
    }
    const requested = new Promise<any>((resolve) => test.app.once('chatluna/approval-requested', resolve))
    const client = await connect(test.url)
    try {
      const pending = client.callTool({ name: 'deploy', arguments: {} })
      const approval = await requested
      expect(posted).to.have.length(1)
      expect(posted[0]).to.match(new RegExp(`^ops: .*#${approval.id}: mcp-bot \\(authority 3\\) wants to run the tool deploy`))
      // An authority-1 member cannot answer; an authority-3 admin in the channel can.
      await test.app.mock.client('member', 'ops').receive(`tools.approve ${approval.id}`)
      expect(test.app.tools.permissions.approvals.get(approval.id).status).to.equal('pending')
      await test.app.mock.client('admin', 'ops').receive(`tools.approve ${approval.id}`)
      expect(await pending).to.deep.equal({ content: [{ type: 'text', text: 'deployed' }] })
    } finally {
      await client.close()
    }
  })

  it('an unanswered approval ends the MCP call with isError when the client gives up', async () => {
    test.app.bots[0].sendMessage = async () => ['1']
    const requested = new Promise<any>((resolve) => test.app.once('chatluna/approval-requested', resolve))
    const client = await connect(test.url)
    try {
      const call = client.callTool({ name: 'deploy', arguments: {} }, undefined, { timeout: 1500 })
      const approval = await requested
      const error = await call.catch((caught) => caught)
      expect(error).to.be.an('error')
      await waitFor(() => test.app.tools.permissions.approvals.get(approval.id)?.status !== 'pending', 3000, 'the approval to end')
      expect(test.app.tools.permissions.approvals.get(approval.id).status).to.equal('aborted')
    } finally {
      await client.close()
    }
  })
})
