import { expect } from 'chai'
import { mkdir, mkdtemp, rm, writeFile } from 'fs/promises'
import { tmpdir } from 'os'
import { join } from 'path'
import { ToolProgress } from '../src'
import { createApp, TestApp } from './helpers/app'
import { everythingBin, filesystemBin, startEverythingHttp, stdioServer, waitFor } from './helpers/mcp'

// Against real MCP servers from npm (dev dependencies), over stdio and
// Streamable HTTP (issue "MCP", acceptance).

const scope = { authority: 3 }

describe('MCP client: server-everything over stdio', function () {
  this.timeout(20000)
  let test: TestApp

  before(async () => {
    test = await createApp({ mcp: { servers: [stdioServer('everything', everythingBin, ['stdio'], { timeout: 600 })] } })
    await test.app.tools.mcp.settled()
  })
  after(() => test?.dispose())

  it('lists its tools as deferred mcp__everything__* tools with their schemas and annotations', () => {
    const [status] = test.app.tools.mcp.servers
    expect(status.state).to.equal('connected')
    expect(status.protocol).to.equal('stdio')
    expect(status.server.name).to.equal('mcp-servers/everything')
    expect(status.tools).to.include.members([
      'mcp__everything__echo',
      'mcp__everything__get-sum',
      'mcp__everything__get-tiny-image',
      'mcp__everything__get-structured-content',
      'mcp__everything__trigger-long-running-operation',
    ])
    const echo = test.app.tools.get('mcp__everything__echo')
    expect(echo.source).to.equal('mcp')
    expect(echo.plugin).to.equal('chatluna-tools')
    expect(echo.definition.description).to.equal('Echoes back the input string')
    expect(echo.definition.owner).to.deep.equal({ kind: 'mcp', id: 'everything' })
    expect(echo.definition.traits).to.include({ effect: 'read', deferred: true, timeout: 600 })
    expect(echo.definition.annotations).to.include({ readOnlyHint: true, title: 'Echo Tool' })
    const declaration = test.app.tools.declarations(scope).find((item) => item.function.name === 'mcp__everything__echo')
    expect(declaration.function.parameters.properties.message.type).to.equal('string')
    expect(declaration.function.parameters.required).to.deep.equal(['message'])
    // A tool that is not read-only is an exec tool.
    expect(test.app.tools.get('mcp__everything__toggle-simulated-logging').definition.traits.effect).to.equal('exec')
  })

  it('echo answers through the pipeline', async () => {
    const result = await test.app.tools.call({ name: 'mcp__everything__echo', args: '{"message":"hi"}', scope })
    expect(result.ok).to.equal(true)
    expect(result.content).to.deep.equal([{ type: 'text', text: 'Echo: hi' }])
    expect(result.meta.source).to.equal('mcp')
  })

  it('get-sum adds, and wrong argument types come back invalid before reaching the server', async () => {
    const sum = await test.app.tools.call({ name: 'mcp__everything__get-sum', args: { a: 2, b: 40 }, scope })
    expect(sum.content[0]).to.deep.equal({ type: 'text', text: 'The sum of 2 and 40 is 42.' })
    const wrong = await test.app.tools.call({ name: 'mcp__everything__get-sum', args: { a: 2, b: 'forty' }, scope })
    expect(wrong.status).to.equal('invalid')
    expect(wrong.error.code).to.equal('invalid-arguments')
    expect(wrong.error.issues).to.deep.equal([{ path: 'b', expected: 'number', got: 'string "forty"', message: '"b" should be number, but got string "forty"' }])
  })

  it('get-tiny-image returns an image block', async () => {
    const result = await test.app.tools.call({ name: 'mcp__everything__get-tiny-image', args: {}, scope })
    expect(result.ok).to.equal(true)
    const image = result.content.find((block) => block.type === 'image') as any
    expect(image.mimeType).to.equal('image/png')
    expect(Buffer.from(image.data, 'base64').subarray(1, 4).toString()).to.equal('PNG')
    expect(result.content.filter((block) => block.type === 'text')).to.have.length(2)
  })

  it('get-structured-content keeps structuredContent in meta', async () => {
    const result = await test.app.tools.call({ name: 'mcp__everything__get-structured-content', args: { location: 'Chicago' }, scope })
    expect(result.ok).to.equal(true)
    expect(result.meta.structured).to.deep.equal({ temperature: 36, conditions: 'Light rain / drizzle', humidity: 82 })
    expect(JSON.parse((result.content[0] as any).text)).to.deep.equal(result.meta.structured)
  })

  it('a long-running operation reports progress events', async () => {
    const events: ToolProgress[] = []
    const result = await test.app.tools.call({
      name: 'mcp__everything__trigger-long-running-operation',
      args: { duration: 0.3, steps: 3 },
      scope,
      onProgress: (event) => events.push(event),
    })
    expect(result.ok).to.equal(true)
    expect((result.content[0] as any).text).to.equal('Long running operation completed. Duration: 0.3 seconds, Steps: 3.')
    // The SDK may deliver the last notification after the answer.
    expect(events.length).to.be.at.least(2)
    expect(events[0]).to.include({ progress: 1, total: 3, tool: 'mcp__everything__trigger-long-running-operation', callId: result.meta.callId })
    expect(events[1].progress).to.equal(2)
  })

  it('a long-running operation past the server timeout ends as timeout, and the server keeps working', async () => {
    const started = Date.now()
    const result = await test.app.tools.call({ name: 'mcp__everything__trigger-long-running-operation', args: { duration: 5, steps: 5 }, scope })
    expect(result.status).to.equal('timeout')
    expect(result.error.message).to.equal('the tool did not finish within 600 ms')
    expect(Date.now() - started).to.be.below(1500)
    const echo = await test.app.tools.call({ name: 'mcp__everything__echo', args: { message: 'still here' }, scope })
    expect(echo.ok).to.equal(true)
  })

  it('in search mode its tools are deferred: tool_search finds and loads them, then they can be called', async () => {
    const chat = { platform: 'mock', channelId: 'room', userId: 'u', authority: 3 }
    const first = test.app.tools.declarations(chat, { mode: 'search' }).map((item) => item.function.name)
    expect(first).to.include('tool_search').and.not.include('mcp__everything__echo')
    const found = await test.app.tools.call({ name: 'tool_search', args: { query: 'echo back the input string', limit: 1 }, scope: chat, shown: first })
    expect(found.ok, test.app.tools.format(found)).to.equal(true)
    expect(test.app.tools.format(found)).to.include('mcp__everything__echo')
    const next = test.app.tools.declarations(chat, { mode: 'search' }).map((item) => item.function.name)
    expect(next).to.include('mcp__everything__echo')
    const echo = await test.app.tools.call({ name: 'mcp__everything__echo', args: { message: 'found' }, scope: chat, shown: first })
    expect(echo.content).to.deep.equal([{ type: 'text', text: 'Echo: found' }])
  })

  it('an abort from the caller ends the call as aborted', async () => {
    const controller = new AbortController()
    setTimeout(() => controller.abort(), 100)
    const result = await test.app.tools.call({ name: 'mcp__everything__trigger-long-running-operation', args: { duration: 5, steps: 5 }, scope, signal: controller.signal })
    expect(result.status).to.equal('aborted')
  })
})

describe('MCP client: server-filesystem over stdio', function () {
  this.timeout(20000)
  let test: TestApp
  let root: string

  before(async () => {
    root = await mkdtemp(join(tmpdir(), 'chatluna-tools-fs-'))
    await mkdir(join(root, 'allowed'))
    await writeFile(join(root, 'allowed/hello.txt'), 'hello from the filesystem server\n')
    await writeFile(join(root, 'secret.txt'), 'do not read\n')
    test = await createApp({ mcp: { servers: [stdioServer('fs', filesystemBin, [join(root, 'allowed')], { tools: ['read_text_file', 'list_*'] })] } })
    await test.app.tools.mcp.settled()
  })
  after(async () => {
    await test?.dispose()
    await rm(root, { recursive: true, force: true })
  })

  it('takes only the tools its filter names', () => {
    const [status] = test.app.tools.mcp.servers
    expect(status.tools).to.deep.equal([
      'mcp__fs__read_text_file',
      'mcp__fs__list_directory',
      'mcp__fs__list_directory_with_sizes',
      'mcp__fs__list_allowed_directories',
    ])
    expect(status.filtered).to.be.above(5)
    expect(test.app.tools.get('mcp__fs__write_file')).to.equal(undefined)
  })

  it('reads a file inside its allowed directory', async () => {
    const result = await test.app.tools.call({ name: 'mcp__fs__read_text_file', args: { path: join(root, 'allowed/hello.txt') }, scope })
    expect(result.ok).to.equal(true)
    expect((result.content[0] as any).text).to.equal('hello from the filesystem server\n')
    expect(result.meta.structured).to.deep.equal({ content: 'hello from the filesystem server\n' })
  })

  it('a path outside its allowed directory comes back ok: false with the server\'s reason', async () => {
    const result = await test.app.tools.call({ name: 'mcp__fs__read_text_file', args: { path: join(root, 'secret.txt') }, scope })
    expect(result.ok).to.equal(false)
    expect(result.status).to.equal('error')
    expect(result.error.code).to.equal('mcp-tool-error')
    expect(result.error.message).to.match(/^Access denied - path outside allowed directories: /)
    expect(test.app.tools.format(result)).to.include('Error [mcp-tool-error]: Access denied')
  })
})

describe('MCP client: server-everything over Streamable HTTP', function () {
  this.timeout(20000)
  let test: TestApp
  let server: Awaited<ReturnType<typeof startEverythingHttp>>

  before(async () => {
    server = await startEverythingHttp()
    test = await createApp({ mcp: { retryDelay: 100, servers: [{ id: 'remote', transport: 'http', url: server.url, headers: { 'X-Test': 'yes' }, timeout: 600 }] } })
    await test.app.tools.mcp.settled()
  })
  after(async () => {
    await test?.dispose()
    await server?.stop()
  })

  it('connects with Streamable HTTP and calls tools', async () => {
    const [status] = test.app.tools.mcp.servers
    expect(status.state, status.error).to.equal('connected')
    expect(status.protocol).to.equal('streamable-http')
    expect(status.tools).to.include('mcp__remote__echo')
    const echo = await test.app.tools.call({ name: 'mcp__remote__echo', args: { message: 'over http' }, scope })
    expect(echo.content).to.deep.equal([{ type: 'text', text: 'Echo: over http' }])
    const sum = await test.app.tools.call({ name: 'mcp__remote__get-sum', args: { a: 1, b: 2 }, scope })
    expect((sum.content[0] as any).text).to.equal('The sum of 1 and 2 is 3.')
  })

  it('reports progress and cancels on timeout over HTTP too', async () => {
    const events: ToolProgress[] = []
    const result = await test.app.tools.call({ name: 'mcp__remote__trigger-long-running-operation', args: { duration: 2, steps: 20 }, scope, onProgress: (event) => events.push(event) })
    expect(result.status).to.equal('timeout')
    expect(events.length).to.be.at.least(2)
  })

  it('a server that goes away fails the call in flight at once and is reconnected when it is back', async () => {
    const events: ToolProgress[] = []
    const call = test.app.tools.call({ name: 'mcp__remote__trigger-long-running-operation', args: { duration: 1, steps: 10 }, scope, onProgress: (event) => events.push(event) })
    await waitFor(() => events.length, 5000, 'the first progress event')
    const started = Date.now()
    const { port } = new URL(server.url)
    await server.stop()
    const result = await call
    expect(Date.now() - started).to.be.below(1000)
    expect(result.ok).to.equal(false)
    expect(result.error.code).to.equal('mcp-connection-lost')
    expect(result.error.message).to.match(/^The call was cut off: the MCP server "remote" stopped answering: /)
    expect(test.app.tools.mcp.servers[0].state).to.equal('retrying')
    // While it is away, calls fail at once with the reason.
    const meanwhile = await test.app.tools.call({ name: 'mcp__remote__echo', args: { message: 'x' }, scope })
    expect(meanwhile.error.code).to.equal('mcp-unavailable')
    server = await startEverythingHttp(Number(port))
    await waitFor(() => test.app.tools.mcp.servers[0].state === 'connected', 8000, 'the reconnection')
    const echo = await test.app.tools.call({ name: 'mcp__remote__echo', args: { message: 'back' }, scope })
    expect(echo.content).to.deep.equal([{ type: 'text', text: 'Echo: back' }])
  })
})

describe('MCP client: an old HTTP+SSE server', function () {
  this.timeout(20000)

  it('falls back to the HTTP+SSE transport when Streamable HTTP is refused with a 4xx', async () => {
    const server = await startEverythingHttp(undefined, 'sse')
    const test = await createApp({ mcp: { servers: [{ id: 'legacy', transport: 'http', url: server.url }] } })
    try {
      await test.app.tools.mcp.settled()
      const [status] = test.app.tools.mcp.servers
      expect(status.state, status.error).to.equal('connected')
      expect(status.protocol).to.equal('sse')
      const echo = await test.app.tools.call({ name: 'mcp__legacy__echo', args: { message: 'old' }, scope })
      expect(echo.content).to.deep.equal([{ type: 'text', text: 'Echo: old' }])
    } finally {
      await test.dispose()
      await server.stop()
    }
  })
})
