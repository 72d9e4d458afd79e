import { expect } from 'chai'
import { mkdir, writeFile } from 'fs/promises'
import { join } from 'path'
import { Schema } from 'koishi'
import { createApp, TestApp } from './helpers/app'
import { ReplayServer, startReplayServer } from './helpers/replay-server'
import { answer, calls } from './helpers/completions'

/*
 * Sub-agent tools (issue "Agent runner", item 6): a configured agent is a
 * tool with source `agent`, `{ task }` in and its final text out; its own
 * loop runs in the caller's scope, so nested calls meet the same pipeline
 * and permissions.
 */

describe('agent: sub-agent tools', () => {
  let server: ReplayServer
  let test: TestApp
  let saved: string[]

  before(async () => {
    server = await startReplayServer()
    test = await createApp({
      workDir: 'workspace',
      agent: {
        enabled: true,
        baseURL: server.baseURL,
        model: 'replay-model',
        progress: 'never',
        subAgents: [
          { name: 'researcher', description: 'Finds facts in the workspace.', systemPrompt: 'You research files.', tools: { include: ['read', 'save', 'research*'] }, maxSteps: 2 },
          { name: 'helper', description: 'Does small jobs.', tools: {}, maxSteps: 2 },
        ],
      },
    }, { database: true, http: true, locale: 'en-US' })
    await mkdir(join(test.baseDir, 'workspace'), { recursive: true })
    await writeFile(join(test.baseDir, 'workspace/notes.txt'), 'milk\n')
    test.app.tools.define({
      name: 'save', description: 'Saves text.', args: Schema.object({ text: Schema.string().required() }), traits: { effect: 'write' },
      run: ({ text }) => {
        saved.push(text)
        return 'saved'
      },
    })
    await test.app.mock.initUser('member', 1)
    // Authority 5: allowed to write under the default gate and under the permission service's default modes.
    await test.app.mock.initUser('admin', 5)
  })
  after(async () => {
    await test.dispose()
    await server.close()
  })
  beforeEach(() => {
    saved = []
    server.requests.length = 0
  })
  afterEach(() => {
    expect(server.requests.filter((request) => request.rejected).map((request) => request.rejected)).to.deep.equal([])
    expect(server.pending()).to.equal(0)
  })

  const toolNames = (index: number) => server.requests[index].body.tools.map((tool) => tool.function.name).sort()

  it('is a tool with source agent; it runs its own loop with its prompt and tool set, and returns its final text', async () => {
    expect(test.app.tools.get('researcher').source).to.equal('agent')
    server.enqueue(
      calls({ id: 'call_sub', name: 'researcher', arguments: '{"task":"What is in notes.txt?"}' }),
      calls({ id: 'call_read', name: 'read', arguments: '{"path":"notes.txt"}' }),
      answer('notes.txt says: milk'),
      answer('Your notes say milk.'),
    )
    expect(await test.app.mock.client('member').receive('agent what do my notes say?')).to.deep.equal(['Your notes say milk.'])
    expect(toolNames(0)).to.include.members(['researcher', 'helper', 'read', 'save'])
    // The sub-agent's request: its own prompt and task, and never itself or another sub-agent.
    expect(server.requests[1].body.messages).to.deep.equal([
      { role: 'system', content: 'You research files.' },
      { role: 'user', content: 'What is in notes.txt?' },
    ])
    expect(toolNames(1)).to.deep.equal(['read', 'save'])
    expect(server.requests[3].body.messages.at(-1)).to.deep.equal({ role: 'tool', tool_call_id: 'call_sub', content: 'notes.txt says: milk' })
    const [read, sub] = test.app.tools.history.slice(-2)
    expect(read).to.deep.include({ tool: 'read', agent: 'researcher', userId: 'member', status: 'success' })
    expect(sub).to.deep.include({ tool: 'researcher', agent: 'agent', userId: 'member', status: 'success' })
  })

  it('nested calls are judged with the outer caller\'s authority', async () => {
    const task = '{"task":"Save the word hello."}'
    for (const user of ['member', 'admin']) {
      server.enqueue(
        calls({ id: 'call_sub', name: 'researcher', arguments: task }),
        calls({ id: 'call_save', name: 'save', arguments: '{"text":"hello"}' }),
        answer('done'),
        answer('finished'),
      )
      await test.app.mock.client(user).receive('agent save hello')
    }
    expect(saved).to.deep.equal(['hello'])
    const denied = server.requests[2].body.messages.at(-1)
    expect(denied.content).to.match(/^This call was denied and did not run\..*\nError \[[a-z-]+\]: The call was not allowed/s)
    expect(server.requests[6].body.messages.at(-1)).to.deep.equal({ role: 'tool', tool_call_id: 'call_save', content: 'saved' })
  })

  it('a sub-agent that runs out of steps fails with max-steps', async () => {
    server.enqueue(
      calls({ id: 'call_sub', name: 'helper', arguments: '{"task":"loop"}' }),
      calls({ name: 'read', arguments: '{"path":"notes.txt"}' }),
      calls({ name: 'read', arguments: '{"path":"notes.txt"}' }),
      answer('The helper gave up.'),
    )
    expect(await test.app.mock.client('member').receive('agent go')).to.deep.equal(['The helper gave up.'])
    expect(server.requests[1].body.messages[0]).to.deep.equal({ role: 'system', content: 'You are a sub-agent: another agent gave you the task below. Use your tools to complete it, then reply with the result only, in plain text.' })
    expect(server.requests[3].body.messages.at(-1).content).to.equal('Error [max-steps]: The sub-agent "helper" used all 2 steps without finishing.\nHint: Give it a smaller, more precise task.')
  })
})
