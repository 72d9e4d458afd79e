import { expect } from 'chai'
import { mkdir, writeFile } from 'fs/promises'
import { join } from 'path'
import { Schema } from 'koishi'
import { createApp } from './helpers/app'
import { startReplayServer } from './helpers/replay-server'
import { answer, calls } from './helpers/completions'

/*
 * The acceptance round trip with an approval (issue "Agent runner", item 4
 * and "Acceptance"): in one turn the model reads a workspace file and calls
 * an exec tool; the exec call waits inside `ctx.tools.call` until an
 * authority-3 user answers `tools.approve <id>` in the channel, then the
 * turn continues with its outcome. The approval flow is the permission
 * service of the permissions issue; the default gate of this branch cannot
 * ask anyone.
 */

const waitFor = async <T>(probe: () => T, ms = 3000): Promise<T> => {
  const end = Date.now() + ms
  for (;;) {
    const value = probe()
    if (value) return value
    if (Date.now() > end) throw new Error('timed out waiting')
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
}

describe('agent: approvals inside a turn', () => {
  // enable when the permissions issue lands
  it.skip('an exec tool in the same turn waits for tools.approve', async () => {
    const server = await startReplayServer()
    const test = await createApp({
      workDir: 'workspace',
      agent: { enabled: true, baseURL: server.baseURL, model: 'replay-model', progress: 'never' },
    }, { database: true, http: true, locale: 'en-US' })
    try {
      await mkdir(join(test.baseDir, 'workspace'), { recursive: true })
      await writeFile(join(test.baseDir, 'workspace/notes.txt'), 'Buy milk.\n')
      const ran: string[] = []
      test.app.tools.define({
        name: 'run_command', description: 'Runs a shell command.', args: Schema.object({ command: Schema.string().required() }),
        traits: { effect: 'exec' },
        run: ({ command }) => {
          ran.push(command)
          return 'hi'
        },
      })
      await test.app.mock.initUser('alice', 3)
      await test.app.mock.initUser('admin', 3)
      await test.app.mock.initChannel('group')
      const sent: string[] = []
      test.app.on('before-send', (session) => {
        sent.push(session.content)
      })

      server.enqueue(
        calls({ id: 'call_read', name: 'read', arguments: '{"path":"notes.txt"}' }, { id: 'call_exec', name: 'run_command', arguments: '{"command":"echo hi"}' }),
        answer('Your notes say to buy milk, and echo printed hi.'),
      )
      const turn = test.app.mock.client('alice', 'group').receive('agent read my notes, then run echo hi')
      const id = await waitFor(() => sent.join('\n').match(/tools\.approve (\S+)/)?.[1])
      expect(ran).to.deep.equal([])
      const answered = await test.app.mock.client('admin', 'group').receive(`tools.approve ${id}`)
      expect(answered.join('\n')).to.contain(`Approved #${id}`)
      expect(await turn).to.include('Your notes say to buy milk, and echo printed hi.')
      expect(ran).to.deep.equal(['echo hi'])
      const tools = server.requests[1].body.messages.filter((message) => message.role === 'tool')
      expect(tools).to.deep.equal([
        { role: 'tool', tool_call_id: 'call_read', content: '1\tBuy milk.' },
        { role: 'tool', tool_call_id: 'call_exec', content: 'hi' },
      ])
    } finally {
      await test.dispose()
      await server.close()
    }
  })
})
