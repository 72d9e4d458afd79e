import { expect } from 'chai'
import { ToolResult } from '../src'
import { fromMcpResult, toMcpResult } from '../src/mcp/content'
import { planTools, traitsOf } from '../src/mcp/tools'
import { errorMessage } from '../src/mcp/errors'

// The mappings between MCP and our records, without a server.

const meta = { tool: 'demo', callId: 'call_1', duration: 1 }
const noBlobs = async () => { throw new Error('no blob expected') }

describe('MCP mappings', () => {
  it('our results become MCP results: blocks by kind, notes, structured content', () => {
    const result: ToolResult = {
      ok: true,
      status: 'success',
      content: [
        { type: 'text', text: 'hello' },
        { type: 'image', data: 'aW1n', mimeType: 'image/png' },
        { type: 'image', url: 'https://example.com/a.png', mimeType: 'image/png' },
        { type: 'resource', uri: 'file:///notes.txt', text: 'notes', mimeType: 'text/plain' },
        { type: 'resource', uri: 'https://example.com/doc', name: 'doc' },
        { type: 'file', path: '/data/out.bin', size: 12 },
      ],
      meta: { ...meta, structured: { answer: 42 } },
      messages: ['redacted by a hook'],
    }
    expect(toMcpResult(result)).to.deep.equal({
      content: [
        { type: 'text', text: 'hello' },
        { type: 'image', data: 'aW1n', mimeType: 'image/png' },
        { type: 'text', text: '[image image/png https://example.com/a.png]' },
        { type: 'resource', resource: { uri: 'file:///notes.txt', mimeType: 'text/plain', text: 'notes' } },
        { type: 'resource_link', uri: 'https://example.com/doc', name: 'doc', mimeType: undefined, description: undefined },
        { type: 'text', text: '[file /data/out.bin, 12 bytes]' },
        { type: 'text', text: 'Note: redacted by a hook' },
      ],
      structuredContent: { answer: 42 },
    })
  })

  it('a failed result becomes isError with the text a model reads', () => {
    const result: ToolResult = {
      ok: false,
      status: 'denied',
      content: [{ type: 'text', text: 'no' }],
      meta,
      messages: [],
      error: { code: 'rule-deny', message: 'The call was not allowed: a rule denies it.', hint: 'Ask an admin.' },
    }
    expect(toMcpResult(result)).to.deep.equal({
      content: [{ type: 'text', text: 'Error [rule-deny]: The call was not allowed: a rule denies it.\nHint: Ask an admin.' }],
      isError: true,
    })
  })

  it('MCP results become ours; a malformed block is kept as a note, never dropped', async () => {
    const output = await fromMcpResult({ content: [{ type: 'text', text: 'a' }, { type: 'image' } as any, { type: 'video', url: 'x' } as any] }, noBlobs)
    expect(output.content).to.deep.equal([
      { type: 'text', text: 'a' },
      { type: 'text', text: '[unsupported MCP content block: {"type":"image"}]' },
      { type: 'text', text: '[unsupported MCP content block: {"type":"video","url":"x"}]' },
    ])
    const structuredOnly = await fromMcpResult({ content: [], structuredContent: { n: 1 } }, noBlobs)
    expect(structuredOnly.content).to.deep.equal([{ type: 'text', text: '{\n  "n": 1\n}' }])
    expect(structuredOnly.meta).to.deep.equal({ structured: { n: 1 } })
    const emptyError = await fromMcpResult({ content: [], isError: true }, noBlobs)
    expect(emptyError.error).to.deep.equal({ code: 'mcp-tool-error', message: 'The MCP server reported that the tool failed.' })
  })

  it('annotations: read-only → read; explicit destructive → dangerous; nothing → exec without risk', () => {
    const tool = (annotations?: any) => ({ name: 't', inputSchema: { type: 'object' as const }, annotations })
    expect(traitsOf(tool({ readOnlyHint: true, destructiveHint: true }), 5)).to.deep.equal({ effect: 'read', risk: undefined, deferred: true, timeout: 5 })
    expect(traitsOf(tool({ destructiveHint: true }), 5)).to.deep.include({ effect: 'exec', risk: 'dangerous' })
    expect(traitsOf(tool(), 5)).to.deep.include({ effect: 'exec', risk: undefined })
  })

  it('plans names: illegal characters replaced, cut to 64, filters on the tool or the full name', () => {
    const tool = (name: string) => ({ name, inputSchema: { type: 'object' } })
    const plan = planTools('srv.1', [tool('a b/c'), tool('é'), tool('keep'), tool('drop')], ['keep', 'mcp__srv_1__a*', 'mcp__srv_1___'])
    expect(plan.tools.map((planned) => planned.name)).to.deep.equal(['mcp__srv_1__a_b_c', 'mcp__srv_1___', 'mcp__srv_1__keep'])
    expect(plan.filtered).to.equal(1)
    const long = planTools('s', [tool('y'.repeat(100))])
    expect(long.tools[0].name).to.have.length(64)
  })

  it('says why fetch failed', () => {
    const error = Object.assign(new TypeError('fetch failed'), { cause: { code: 'ECONNREFUSED' } })
    expect(errorMessage(error)).to.equal('fetch failed (ECONNREFUSED)')
  })
})
