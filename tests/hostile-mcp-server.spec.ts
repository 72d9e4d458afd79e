import { expect } from 'chai'
import { Logger } from 'koishi'
import * as plugin from '../src'
import { maxSessions } from '../src/mcp/server'
import { waitFor } from './helpers/mcp'
import { connect, ServerApp, startServerApp, token } from './helpers/mcp-server'

/*
 * Clients and configurations that try our MCP server (self): a token made
 * of spaces, a token in the query, guessed tokens, a storm of sessions, and
 * a call still running when the plugin stops.
 */
describe('hostile input: our MCP server', function () {
  this.timeout(20000)
  let test: ServerApp
  afterEach(() => test?.dispose())

  const headers = (bearer: string) => ({ authorization: bearer, 'content-type': 'application/json', accept: 'application/json, text/event-stream' })
  const initialize = JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-03-26', capabilities: {}, clientInfo: { name: 'storm', version: '1' } },
  })

  it('is not served with a token of spaces only, and says why', async () => {
    const warnings: string[] = []
    const target = { colors: 0, record: (record: Logger.Record) => { if (record.type === 'warn') warnings.push(record.content) } }
    Logger.targets.push(target as any)
    try {
      test = await startServerApp({ token: '   ' })
    } finally {
      Logger.targets.splice(Logger.targets.indexOf(target as any), 1)
    }
    expect(warnings).to.include('the MCP server (mcp.server) is enabled but has no token, so it is not served; set mcp.server.token')
    const response = await fetch(test.url, { method: 'POST', headers: headers('Bearer    '), body: initialize })
    expect(response.status).to.equal(404)
  })

  it('accepts a configured token pasted with spaces around it', async () => {
    test = await startServerApp({ token: `  ${token}\n` })
    const client = await connect(test.url)
    expect((await client.listTools()).tools).to.be.an('array')
    await client.close()
  })

  it('refuses the token in the query, another scheme, a prefix, an extension, and a token differing in case', async () => {
    test = await startServerApp({})
    const attempts: [string, string][] = [
      [`${test.url}?token=${token}`, ''],
      [`${test.url}?authorization=Bearer%20${token}`, ''],
      [test.url, `Basic ${Buffer.from(`user:${token}`).toString('base64')}`],
      [test.url, `Bearer ${token.slice(0, -1)}`],
      [test.url, `Bearer ${token}x`],
      [test.url, `Bearer ${token.toUpperCase()}`],
      [test.url, `Bearer ${token} ${token}`],
      [test.url, 'Bearer'],
    ]
    for (const [url, bearer] of attempts) {
      const response = await fetch(url, { method: 'POST', headers: headers(bearer), body: initialize })
      expect(response.status, `${url} ${bearer}`).to.equal(401)
    }
  })

  it(`keeps at most ${maxSessions} sessions through a storm of 150 concurrent initialize requests, each left working`, async () => {
    test = await startServerApp({})
    const ids = await Promise.all(Array.from({ length: 150 }, async () => {
      const response = await fetch(test.url, { method: 'POST', headers: headers(`Bearer ${token}`), body: initialize })
      await response.text()
      return response.headers.get('mcp-session-id')
    }))
    expect(ids.filter(Boolean)).to.have.length(150)
    let working = 0
    for (const id of ids) {
      const response = await fetch(test.url, {
        method: 'POST',
        headers: { ...headers(`Bearer ${token}`), 'mcp-session-id': id, 'mcp-protocol-version': '2025-03-26' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} }),
      })
      await response.text()
      expect(response.status).to.be.oneOf([200, 404])
      if (response.status === 200) working++
    }
    expect(working).to.equal(maxSessions)
  })

  it('aborts a call still running when the plugin stops, and serves nothing after', async () => {
    test = await startServerApp({ authority: 3 })
    let started = false
    let aborted = false
    test.app.tools.define({
      name: 'forever',
      description: 'Runs until aborted.',
      traits: { effect: 'read' },
      run: (args, call) => new Promise((resolve) => {
        started = true
        call.signal.addEventListener('abort', () => {
          aborted = true
          resolve('stopped')
        })
      }),
    })
    const client = await connect(test.url)
    client.callTool({ name: 'forever', arguments: {} }).catch(() => {})
    await waitFor(() => started, 3000, 'the call to start')
    test.app.registry.delete(plugin as any)
    await waitFor(() => aborted, 3000, 'the tool to see the abort')
    const response = await fetch(test.url, { method: 'POST', headers: headers(`Bearer ${token}`), body: initialize })
    expect(response.status).to.equal(404)
    await client.close().catch(() => {})
  })
})
