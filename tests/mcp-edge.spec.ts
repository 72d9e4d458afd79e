import { expect } from 'chai'
import { existsSync, readFileSync } from 'fs'
import { mkdtemp, readFile, rm } from 'fs/promises'
import { tmpdir } from 'os'
import { join } from 'path'
import { Logger } from 'koishi'
import { ToolProgress } from '../src'
import { toolNamePattern } from '../src/registry/names'
import { createApp, onlyRead, TestApp } from './helpers/app'
import { fixtureBin, isAlive, sleep, stdioServer, waitFor } from './helpers/mcp'

// Edge cases with our fixture server (tests/fixtures/mcp-fixture.cjs),
// including every "input from public reports" of the issue.

const scope = { authority: 3 }
const long = 'x'.repeat(50)

function captureWarnings() {
  const lines: string[] = []
  const target = { colors: 0, record: (record: Logger.Record) => { if (record.type === 'warn') lines.push(record.content) } }
  Logger.targets.push(target as any)
  return { lines, stop: () => Logger.targets.splice(Logger.targets.indexOf(target as any), 1) }
}

describe('MCP client: edge cases (fixture server)', function () {
  this.timeout(20000)
  let dir: string
  let log: string
  let test: TestApp | undefined

  const logLines = () => existsSync(log) ? readFileSync(log, 'utf8').trim().split('\n') : []
  const fixture = (extra: Record<string, unknown> = {}, args: string[] = []) =>
    stdioServer('fixture', fixtureBin, args, { env: { FIXTURE_LOG: log }, ...extra })

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'chatluna-tools-mcp-'))
    log = join(dir, 'fixture.log')
  })
  afterEach(async () => {
    await test?.dispose()
    test = undefined
    await rm(dir, { recursive: true, force: true })
  })

  async function start(servers: any[], options: Record<string, unknown> = {}) {
    test = await createApp({ ...onlyRead, mcp: { retryDelay: 100, servers, ...options } })
    await test.app.tools.mcp.settled()
    return test.app
  }

  it('sanitises names, keeps them unique and skips a collision with a warning naming both', async () => {
    const warnings = captureWarnings()
    let app: TestApp['app']
    try {
      app = await start([fixture()])
    } finally {
      warnings.stop()
    }
    const [status] = app.tools.mcp.servers
    expect(status.state, status.error).to.equal('connected')
    expect(status.tools).to.deep.equal([
      'mcp__fixture__get-sum',
      'mcp__fixture__tool_with_dots',
      `mcp__fixture__${long}`,
      'mcp__fixture__slow',
      'mcp__fixture__pid',
      'mcp__fixture__fail',
      'mcp__fixture__broken-schema',
      'mcp__fixture__destroy',
      'mcp__fixture__add-tool',
      'mcp__fixture__blobs',
    ])
    for (const name of status.tools) expect(name).to.match(toolNamePattern)
    expect(status.skipped).to.deep.equal([
      { tool: 'tool_with_dots', reason: 'its name becomes "mcp__fixture__tool_with_dots", the same as the name of tool "tool.with.dots" of this server, which was listed first' },
      { tool: `${'x'.repeat(70)}B`, reason: `its name becomes "mcp__fixture__${long}", the same as the name of tool "${'x'.repeat(70)}A" of this server, which was listed first` },
      { tool: 'bad-tool', reason: 'not a valid MCP tool: inputSchema.type: Invalid input: expected "object"' },
    ])
    expect(warnings.lines).to.include('MCP server fixture: tool "tool_with_dots" is skipped: its name becomes "mcp__fixture__tool_with_dots", the same as the name of tool "tool.with.dots" of this server, which was listed first')
    expect(warnings.lines.some((line) => line.includes('tool mcp__fixture__broken-schema: the argument schema cannot be compiled'))).to.equal(true)
    // The sanitised names call the server's own tools.
    const dots = await app.tools.call({ name: 'mcp__fixture__tool_with_dots', scope })
    expect(dots.content).to.deep.equal([{ type: 'text', text: 'dots' }])
    const sum = await app.tools.call({ name: 'mcp__fixture__get-sum', args: { a: 1, b: 2 }, scope })
    expect(sum.content).to.deep.equal([{ type: 'text', text: '3' }])
  })

  it('registers a tool whose input schema cannot be compiled, without pre-validation', async () => {
    const app = await start([fixture()])
    const result = await app.tools.call({ name: 'mcp__fixture__broken-schema', args: { a: [1, 'two'] }, scope })
    expect(result.ok).to.equal(true)
    expect(JSON.parse((result.content[0] as any).text)).to.deep.equal({ a: [1, 'two'] })
  })

  it('maps isError to ok: false, and annotations to effect and risk', async () => {
    const app = await start([fixture()])
    const failed = await app.tools.call({ name: 'mcp__fixture__fail', scope })
    expect(failed).to.deep.include({ ok: false, status: 'error' })
    expect(failed.error).to.deep.equal({ code: 'mcp-tool-error', message: 'the fixture failed on purpose' })
    expect(app.tools.get('mcp__fixture__destroy').definition.traits).to.include({ effect: 'exec', risk: 'dangerous' })
    expect(app.tools.get('mcp__fixture__get-sum').definition.traits).to.include({ effect: 'read' })
    expect(app.tools.get('mcp__fixture__get-sum').definition.traits.risk).to.equal(undefined)
    // Authority 1 has the permission mode "read-only": exec is denied.
    const low = await app.tools.call({ name: 'mcp__fixture__destroy', scope: { authority: 1 } })
    expect(low.error.code).to.equal('mode-deny')
  })

  it('maps binary resources, resource links and audio without losing data', async () => {
    const app = await start([fixture()])
    const result = await app.tools.call({ name: 'mcp__fixture__blobs', scope })
    expect(result.ok).to.equal(true)
    const [file, image, link, audio] = result.content as any[]
    expect(file).to.deep.include({ type: 'file', name: 'report.bin', mimeType: 'application/octet-stream', size: 13 })
    expect(file.path).to.equal(join(app.tools.outputDir, 'mcp', `${result.meta.callId}-report.bin`))
    expect(await readFile(file.path, 'utf8')).to.equal('binary report')
    expect(image).to.deep.equal({ type: 'image', mimeType: 'image/png', data: Buffer.from('png bytes').toString('base64') })
    expect(link).to.deep.equal({ type: 'resource', uri: 'fixture://docs/readme', mimeType: 'text/markdown', name: 'readme', description: 'The readme' })
    expect(audio).to.deep.equal({ type: 'audio', mimeType: 'audio/wav', data: Buffer.from('wav bytes').toString('base64') })
  })

  it('re-lists the tools on notifications/tools/list_changed', async () => {
    const app = await start([fixture()])
    expect(app.tools.get('mcp__fixture__added')).to.equal(undefined)
    const result = await app.tools.call({ name: 'mcp__fixture__add-tool', scope })
    expect(result.ok).to.equal(true)
    await waitFor(() => app.tools.get('mcp__fixture__added'), 3000, 'the added tool')
    const added = await app.tools.call({ name: 'mcp__fixture__added', scope })
    expect(added.content).to.deep.equal([{ type: 'text', text: 'the added tool works' }])
    expect(app.tools.mcp.servers[0].tools).to.include('mcp__fixture__added')
  })

  it('a timeout sends notifications/cancelled to the server', async () => {
    const app = await start([fixture({ timeout: 300 })])
    const events: ToolProgress[] = []
    const result = await app.tools.call({ name: 'mcp__fixture__slow', args: { ms: 5000 }, scope, onProgress: (event) => events.push(event) })
    expect(result.status).to.equal('timeout')
    expect(result.error.message).to.equal('the tool did not finish within 300 ms')
    expect(events[0]).to.include({ progress: 1, message: 'step 1' })
    // At once, not when the SDK's own request timeout (1 s later) would cancel.
    await waitFor(() => logLines().some((line) => line.startsWith('cancelled ')), 500, 'the server to hear the cancellation')
  })

  it('an abort sends notifications/cancelled to the server', async () => {
    const app = await start([fixture()])
    const controller = new AbortController()
    setTimeout(() => controller.abort(), 150)
    const result = await app.tools.call({ name: 'mcp__fixture__slow', args: { ms: 5000 }, scope, signal: controller.signal })
    expect(result.status).to.equal('aborted')
    await waitFor(() => logLines().some((line) => line.startsWith('cancelled ')), 3000, 'the server to hear the cancellation')
  })

  it('a server killed during a call: the call fails within a second, the server is reconnected, the next call works', async () => {
    const app = await start([fixture()])
    const pid = app.tools.mcp.servers[0].pid
    expect(isAlive(pid)).to.equal(true)
    const events: ToolProgress[] = []
    const call = app.tools.call({ name: 'mcp__fixture__slow', args: { ms: 10000 }, scope, onProgress: (event) => events.push(event) })
    await waitFor(() => events.length, 3000, 'the call to be running')
    const killed = Date.now()
    process.kill(pid, 'SIGKILL')
    const result = await call
    expect(Date.now() - killed).to.be.below(1000)
    expect(result).to.deep.include({ ok: false, status: 'error' })
    expect(result.error.code).to.equal('mcp-connection-lost')
    expect(result.error.message).to.equal('The call was cut off: the MCP server "fixture" stopped: its process exited.')
    expect(result.error.hint).to.equal('The server is reconnected automatically; call the tool again in a moment.')
    await waitFor(() => app.tools.mcp.servers[0].state === 'connected', 5000, 'the reconnection')
    const again = await app.tools.call({ name: 'mcp__fixture__pid', scope })
    expect(again.ok).to.equal(true)
    const newPid = Number((again.content[0] as any).text)
    expect(newPid).to.not.equal(pid)
    expect(app.tools.mcp.servers[0].pid).to.equal(newPid)
  })

  it('a stdio server that never answers initialize: the startup timeout fires, Koishi keeps running', async () => {
    test = await createApp({ mcp: { retryDelay: 5000, servers: [fixture({ startupTimeout: 800 }, ['hang'])] } })
    // Koishi's start did not wait for the MCP server.
    const app = test.app
    expect(app.tools.mcp.servers[0].state).to.equal('connecting')
    await app.tools.mcp.settled()
    const [status] = app.tools.mcp.servers
    expect(status.state).to.equal('retrying')
    expect(status.error).to.equal('the MCP server "fixture" did not answer within the startup timeout of 800 ms')
    expect(status.tools).to.deep.equal([])
    // The app still serves calls and the hanging process is stopped.
    const read = await app.tools.call({ name: 'read', args: { path: 'missing.txt' }, scope })
    expect(read.error.code).to.not.equal('internal-error')
    const pid = Number((await waitFor(() => logLines()[0], 3000, 'the fixture to start')).split(' ')[1])
    await waitFor(() => !isAlive(pid), 6000, 'the hanging server to be stopped')
  })

  it('a server that exits at start reports its last output, and retries with capped exponential backoff', async () => {
    const warnings = captureWarnings()
    try {
      test = await createApp({ mcp: { retryDelay: 50, maxRetryDelay: 200, servers: [fixture({}, ['crash'])] } })
      await waitFor(() => test.app.tools.mcp.servers[0].attempts >= 4, 5000, 'four attempts')
    } finally {
      warnings.stop()
    }
    const [status] = test.app.tools.mcp.servers
    expect(status.state).to.be.oneOf(['retrying', 'connecting'])
    expect(status.error).to.equal('connecting to the MCP server "fixture" failed: MCP error -32000: Connection closed (last output: fixture: cannot start, config missing)')
    const delays = warnings.lines.map((line) => Number(/reconnecting in (\d+) ms/.exec(line)?.[1])).filter(Boolean)
    expect(delays.slice(0, 4)).to.deep.equal([50, 100, 200, 200])
  })

  it('a command that does not exist is a clear error', async () => {
    const app = await start([{ id: 'missing', command: 'chatluna-tools-no-such-command', enabled: true }], { retryDelay: 60000 })
    expect(app.tools.mcp.servers[0].error).to.equal('the command "chatluna-tools-no-such-command" of MCP server "missing" was not found')
  })

  it('disable hides the tools and stops the process; enable brings both back', async () => {
    const app = await start([fixture()])
    const pid = app.tools.mcp.servers[0].pid
    const disabled = await app.tools.mcp.disable('fixture')
    expect(disabled.state).to.equal('disabled')
    expect(app.tools.list(scope).map((entry) => entry.definition.name)).to.deep.equal(['read'])
    const explanation = app.tools.explain('mcp__fixture__get-sum', scope)
    expect(explanation.visible).to.equal(false)
    expect(explanation.layers.find((layer) => !layer.passed)).to.deep.include({ layer: 'owner', code: 'owner-disabled' })
    const refused = await app.tools.call({ name: 'mcp__fixture__get-sum', args: { a: 1, b: 1 }, scope })
    expect(refused.error.code).to.equal('not-available')
    await waitFor(() => !isAlive(pid), 5000, 'the server process to exit')

    const enabled = await app.tools.mcp.enable('fixture')
    expect(enabled.state).to.equal('connected')
    expect(enabled.pid).to.not.equal(pid)
    const sum = await app.tools.call({ name: 'mcp__fixture__get-sum', args: { a: 1, b: 1 }, scope })
    expect(sum.content).to.deep.equal([{ type: 'text', text: '2' }])
    expect(await app.tools.mcp.enable('nope')).to.equal(undefined)
    expect(await app.tools.mcp.disable('nope')).to.equal(undefined)
  })

  it('disabling during a call fails the call at once', async () => {
    const app = await start([fixture()])
    const events: ToolProgress[] = []
    const call = app.tools.call({ name: 'mcp__fixture__slow', args: { ms: 10000 }, scope, onProgress: (event) => events.push(event) })
    await waitFor(() => events.length, 3000, 'the call to be running')
    // Not awaited: closing waits for the busy process to exit (up to 2 s).
    app.tools.mcp.disable('fixture')
    const result = await call
    expect(result.error).to.deep.equal({ code: 'mcp-connection-lost', message: 'The call was cut off: the MCP server "fixture" was disabled.' })
    expect(app.tools.mcp.servers[0].state).to.equal('disabled')
  })

  it('a server disabled in the config is not started and its tools are hidden', async () => {
    const app = await start([fixture({ enabled: false })])
    await sleep(100)
    expect(app.tools.mcp.servers[0]).to.deep.include({ state: 'disabled', tools: [] })
    expect(logLines()).to.deep.equal([])
    expect(app.tools.owners.isEnabled({ kind: 'mcp', id: 'fixture' })).to.equal(false)
  })

  it('disposing the plugin closes every connection and leaves no child process', async () => {
    const app = await start([fixture(), stdioServer('second', fixtureBin, [], { env: { FIXTURE_LOG: log } })])
    const pids = app.tools.mcp.servers.map((status) => status.pid)
    expect(pids.every(isAlive)).to.equal(true)
    await test.dispose()
    test = undefined
    await waitFor(() => pids.every((pid) => !isAlive(pid)), 5000, 'every server process to exit')
  })

  it('the test report lists tools without changing a disabled server', async () => {
    const app = await start([fixture({ enabled: false })])
    const report = await app.tools.mcp.test('fixture')
    expect(report).to.deep.include({ id: 'fixture', ok: true, protocol: 'stdio' })
    expect(report.tools).to.have.length(10)
    expect(report.skipped).to.have.length(3)
    expect(app.tools.mcp.servers[0].state).to.equal('disabled')
    expect(app.tools.get('mcp__fixture__get-sum')).to.equal(undefined)
    const pid = Number((await waitFor(() => logLines()[0], 3000, 'the fixture to start')).split(' ')[1])
    await waitFor(() => !isAlive(pid), 5000, 'the test process to exit')
    expect(await app.tools.mcp.test('nope')).to.equal(undefined)
  })

  it('a server id configured twice is used once', async () => {
    const warnings = captureWarnings()
    try {
      await start([fixture(), fixture()])
    } finally {
      warnings.stop()
    }
    expect(test.app.tools.mcp.servers).to.have.length(1)
    expect(warnings.lines).to.include('MCP server id "fixture" is configured twice; only the first entry is used')
  })
})
