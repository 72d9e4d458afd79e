import { expect } from 'chai'
import { readdir, readFile } from 'fs/promises'
import { dirname, join, resolve } from 'path'
import { toolNamePattern } from '../src/registry/names'
import { createApp, onlyRead, TestApp } from './helpers/app'
import { stdioServer } from './helpers/mcp'

/*
 * A hostile MCP server (tests/fixtures/mcp-hostile.cjs): tool names with
 * path characters, thousands of tools, a catastrophic pattern, a recursive
 * schema and a huge enum, a binary resource and a model's tool-call id
 * built to climb out of the data folder, two resources of one call with the
 * same name, a flood of progress.
 */
const hostileBin = resolve(__dirname, 'fixtures/mcp-hostile.cjs')

describe('hostile input: an MCP server', function () {
  this.timeout(30000)
  let test: TestApp
  const scope = { authority: 3 }
  before(async () => {
    test = await createApp({ ...onlyRead, mcp: { servers: [stdioServer('h', hostileBin, ['2000'])] } })
    await test.app.tools.mcp.settled()
  })
  after(() => test.dispose())

  it('registers thousands of tools, every name legal and inside its server\'s prefix', () => {
    const [status] = test.app.tools.mcp.servers
    expect(status.state, status.error).to.equal('connected')
    const names = test.app.tools.registry.names().filter((name) => name.startsWith('mcp__'))
    expect(names).to.have.length(2010)
    expect(names.every((name) => toolNamePattern.test(name) && name.startsWith('mcp__h__'))).to.equal(true)
    expect(names).to.include.members(['mcp__h________escape', 'mcp__h____'])
  })

  it('keeps a binary resource inside the data folder whatever the call id and the resource name', async () => {
    const result = await test.app.tools.call({ name: 'mcp__h__blob', id: '../../../../escaped', scope })
    expect(result.ok).to.equal(true)
    const [block] = result.content as any[]
    const folder = join(test.baseDir, 'data/chatluna-tools/outputs/mcp')
    expect(dirname(block.path)).to.equal(folder)
    expect(await readdir(folder)).to.deep.equal(['.._.._.._.._escaped-..'])
    expect(await readdir(test.baseDir)).to.deep.equal(['data'])
  })

  it('keeps two different binary resources of one call that share a name, and the file of an earlier call with the same id', async () => {
    const first = await test.app.tools.call({ name: 'mcp__h__twin-blobs', id: 'call_0', scope })
    const second = await test.app.tools.call({ name: 'mcp__h__twin-blobs', id: 'call_0', scope })
    const blocks = [...first.content, ...second.content] as any[]
    expect(blocks.map((block) => block.type)).to.deep.equal(['file', 'file', 'file', 'file'])
    expect(new Set(blocks.map((block) => block.path)).size).to.equal(4)
    expect(await Promise.all(blocks.map((block) => readFile(block.path, 'utf8')))).to.deep.equal(['first', 'second', 'first', 'second'])
    expect(blocks.every((block) => dirname(block.path) === join(test.baseDir, 'data/chatluna-tools/outputs/mcp') && block.path.endsWith('.bin'))).to.equal(true)
  })

  it('checks a catastrophic pattern in linear time, and calls tools with a recursive schema or a huge enum', async function () {
    this.timeout(5000)
    const redos = await test.app.tools.call({ name: 'mcp__h__redos', args: { a: 'a'.repeat(50000) + 'b' }, scope })
    expect(redos).to.include({ ok: false, status: 'invalid' })
    expect((await test.app.tools.call({ name: 'mcp__h__recursive', args: { child: { child: {} } }, scope })).ok).to.equal(true)
    expect((await test.app.tools.call({ name: 'mcp__h__huge-enum', args: { a: 'v19999' }, scope })).ok).to.equal(true)
    expect((await test.app.tools.call({ name: 'mcp__h__huge-enum', args: { a: 'nope' }, scope })).status).to.equal('invalid')
  })

  it('survives a flood of progress notifications', async () => {
    let events = 0
    const result = await test.app.tools.call({ name: 'mcp__h__flood', scope, onProgress: () => events++ })
    expect(result.content).to.deep.equal([{ type: 'text', text: 'flooded' }])
    expect(events).to.be.above(0)
  })
})
