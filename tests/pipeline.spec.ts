import { expect } from 'chai'
import { readFile, writeFile, mkdir } from 'fs/promises'
import { join } from 'path'
import { Schema, sleep } from 'koishi'
import { createApp, onlyRead, TestApp } from './helpers/app'
import { formatForModel } from '../src'

describe('pipeline', () => {
  let test: TestApp
  beforeEach(async () => {
    test = await createApp({ workDir: 'work', ...onlyRead })
    await mkdir(join(test.baseDir, 'work'), { recursive: true })
    await writeFile(join(test.baseDir, 'work/notes.txt'), 'line one\nline two\n')
    await writeFile(join(test.baseDir, 'secret.txt'), 'the secret\n')
  })
  afterEach(() => test.dispose())

  const echo = {
    name: 'echo',
    description: 'Echo a text.',
    args: Schema.object({ text: Schema.string().required(), times: Schema.natural().default(1) }),
    traits: { effect: 'read' as const },
    run: (args: { text: string; times: number }) => args.text.repeat(args.times),
  }

  describe('inputs from public reports', () => {
    it('answers an empty tool name five times in a row with invalid results naming the closest tools', async () => {
      test.app.tools.define(echo)
      for (let i = 0; i < 5; i++) {
        const result = await test.app.tools.call({ name: '' })
        expect(result).to.include({ ok: false, status: 'invalid' })
        expect(result.error.code).to.equal('unknown-tool')
        expect(result.error.hint).to.equal('Call one of the available tools, e.g. echo, read.')
        expect(formatForModel(result)).to.contain('The tool call has no tool name.')
      }
    })

    it('answers truncated JSON arguments with invalid, stating the parse problem, and the next call works', async () => {
      const bad = await test.app.tools.call({ name: 'read', args: '{"path": "READ' })
      expect(bad).to.include({ ok: false, status: 'invalid' })
      expect(bad.error.code).to.equal('invalid-json')
      expect(bad.error.message).to.match(/^The arguments are not valid JSON: .*(Unterminated string|end of JSON)/i)
      const good = await test.app.tools.call({ name: 'read', args: '{"path": "notes.txt"}' })
      expect(good.ok).to.equal(true)
      expect(good.content).to.deep.equal([{ type: 'text', text: '1\tline one\n2\tline two' }])
    })

    it('turns a ReferenceError thrown by run into an error result and keeps working', async () => {
      test.app.tools.define({
        name: 'broken',
        description: 'Always fails.',
        traits: { effect: 'read' },
        // eslint-disable-next-line no-undef
        run: () => (globalThis as any).undefinedFunction(),
      })
      test.app.tools.define({
        name: 'reference',
        description: 'Throws a ReferenceError.',
        traits: { effect: 'read' },
        run: () => { throw new ReferenceError('missingVariable is not defined') },
      })
      const result = await test.app.tools.call({ name: 'reference' })
      expect(result).to.include({ ok: false, status: 'error' })
      expect(result.error).to.deep.equal({
        code: 'run-error',
        message: 'ReferenceError: missingVariable is not defined',
        text: { path: 'chatluna-tools.error.run-error', params: { error: 'ReferenceError: missingVariable is not defined' } },
      })
      expect((await test.app.tools.call({ name: 'broken' })).error.message).to.match(/^TypeError: .*undefinedFunction is not a function/)
      expect((await test.app.tools.call({ name: 'read', args: { path: 'notes.txt' } })).ok).to.equal(true)
    })

    it('checks arguments rewritten by a before-hook again: notes.txt → ../secret.txt is refused by the workDir guard', async () => {
      test.app.on('chatluna/tool-before', (call) => {
        if (call.name === 'read') call.args.path = '../secret.txt'
      })
      const result = await test.app.tools.call({ name: 'read', args: { path: 'notes.txt' } })
      expect(result).to.include({ ok: false, status: 'denied' })
      expect(result.error.code).to.equal('outside-workdir')
      expect(JSON.stringify(result)).not.to.contain('the secret')
    })
  })

  describe('arguments', () => {
    it('reports wrong types with the field path, expected and got', async () => {
      test.app.tools.define(echo)
      const result = await test.app.tools.call({ name: 'echo', args: { text: 3 } })
      expect(result.status).to.equal('invalid')
      expect(result.error.issues).to.deep.equal([{ path: 'text', expected: 'string', got: 'number 3', message: result.error.issues[0].message }])
      expect(formatForModel(result)).to.contain('- text: expected string, got number 3')
    })

    it('applies defaults and accepts an object or a JSON string', async () => {
      test.app.tools.define(echo)
      expect((await test.app.tools.call({ name: 'echo', args: { text: 'a', times: 3 } })).content[0]).to.deep.equal({ type: 'text', text: 'aaa' })
      expect((await test.app.tools.call({ name: 'echo', args: '{"text":"b"}' })).content[0]).to.deep.equal({ type: 'text', text: 'b' })
    })
  })

  describe('hooks', () => {
    it('runs before-hooks in registration order on the same mutable call', async () => {
      const order: string[] = []
      test.app.tools.define(echo)
      test.app.on('chatluna/tool-before', (call) => { order.push('first'); call.args.text += '-1' })
      test.app.on('chatluna/tool-before', (call) => { order.push('second'); call.args.text += '-2' })
      const result = await test.app.tools.call({ name: 'echo', args: { text: 'x' } })
      expect(order).to.deep.equal(['first', 'second'])
      expect(result.content[0]).to.deep.equal({ type: 'text', text: 'x-1-2' })
    })

    it('blocks a call when a before-hook returns a reason, and later hooks do not run', async () => {
      let ran = false
      test.app.tools.define({ ...echo, run: () => { ran = true; return 'ran' } })
      test.app.on('chatluna/tool-before', () => 'quiet hours')
      test.app.on('chatluna/tool-before', () => { throw new Error('must not run') })
      const result = await test.app.tools.call({ name: 'echo', args: { text: 'x' } })
      expect(result).to.include({ ok: false, status: 'denied' })
      expect(result.error.code).to.equal('blocked-by-hook')
      expect(result.error.message).to.contain('quiet hours')
      expect(ran).to.equal(false)
    })

    it('fails closed when a before-hook throws', async () => {
      let ran = false
      test.app.tools.define({ ...echo, run: () => { ran = true; return 'ran' } })
      test.app.on('chatluna/tool-before', () => { throw new Error('hook crashed') })
      const result = await test.app.tools.call({ name: 'echo', args: { text: 'x' } })
      expect(result).to.include({ ok: false, status: 'denied' })
      expect(result.error.code).to.equal('hook-error')
      expect(result.error.message).to.contain('hook crashed')
      expect(ran).to.equal(false)
    })

    it('validates rewritten arguments again', async () => {
      test.app.tools.define(echo)
      test.app.on('chatluna/tool-before', (call) => { call.args.text = 42 })
      const result = await test.app.tools.call({ name: 'echo', args: { text: 'x' } })
      expect(result.status).to.equal('invalid')
      expect(result.error.issues[0]).to.include({ path: 'text', expected: 'string' })
    })

    it('authorises rewritten arguments again: a hook cannot turn a read into an unchecked exec', async () => {
      let ran = ''
      test.app.tools.define({
        name: 'shell',
        description: 'Reads or runs.',
        args: Schema.object({ command: Schema.string().required() }),
        traits: { effect: 'read' },
        permission: (args) => ({ name: 'exec', effect: args.command === 'cat' ? 'read' : 'exec', target: args.command }),
        run: (args) => { ran = args.command; return 'ok' },
      })
      test.app.on('chatluna/tool-before', (call) => { call.args.command = 'rm' })
      const result = await test.app.tools.call({ name: 'shell', args: { command: 'cat' }, scope: { authority: 1 } })
      expect(result).to.include({ ok: false, status: 'denied' })
      expect(result.error.code).to.equal('mode-deny')
      expect(ran).to.equal('')
    })

    it('lets after-hooks redact content and append messages; a throwing after-hook becomes a message', async () => {
      test.app.tools.define({ ...echo, run: () => 'token=abc123 and more' })
      test.app.on('chatluna/tool-after', (_call, result) => {
        result.content = result.content.map((block) => block.type === 'text' ? { ...block, text: block.text.replace(/token=\w+/, 'token=[redacted]') } : block)
        result.messages.push('redacted one token')
      })
      test.app.on('chatluna/tool-after', () => { throw new Error('after failed') })
      const result = await test.app.tools.call({ name: 'echo', args: { text: 'x' } })
      expect(result.ok).to.equal(true)
      expect(result.content[0]).to.deep.equal({ type: 'text', text: 'token=[redacted] and more' })
      expect(result.messages[0]).to.equal('redacted one token')
      expect(result.messages[1]).to.match(/after-hook of plugin .* failed: after failed/)
      expect(formatForModel(result)).to.equal('token=[redacted] and more\nNote: redacted one token\n' + `Note: ${result.messages[1]}`)
    })
  })

  describe('running', () => {
    function timed(name: string, parallel: boolean, log: [string, number, number][]) {
      return {
        name,
        description: name,
        traits: { effect: 'write' as const, parallel },
        async run() {
          const start = Date.now()
          await sleep(60)
          log.push([name, start, Date.now()])
          return name
        },
      }
    }

    it('never overlaps tools whose parallel trait is false', async () => {
      const log: [string, number, number][] = []
      test.app.tools.define(timed('write_a', false, log))
      test.app.tools.define(timed('write_b', false, log))
      const results = await Promise.all([
        test.app.tools.call({ name: 'write_a', scope: { authority: 5 } }),
        test.app.tools.call({ name: 'write_b', scope: { authority: 5 } }),
        test.app.tools.call({ name: 'write_a', scope: { authority: 5 } }),
      ])
      expect(results.map((result) => result.status)).to.deep.equal(['success', 'success', 'success'])
      const sorted = log.sort((a, b) => a[1] - b[1])
      for (let i = 1; i < sorted.length; i++) expect(sorted[i][1]).to.be.at.least(sorted[i - 1][2])
    })

    it('lets parallel tools overlap', async () => {
      const log: [string, number, number][] = []
      test.app.tools.define(timed('par_a', true, log))
      test.app.tools.define(timed('par_b', true, log))
      await Promise.all([
        test.app.tools.call({ name: 'par_a', scope: { authority: 5 } }),
        test.app.tools.call({ name: 'par_b', scope: { authority: 5 } }),
      ])
      const [a, b] = log.sort((x, y) => x[1] - y[1])
      expect(b[1]).to.be.below(a[2])
    })

    it('aborts a run through its AbortSignal at the timeout and returns status timeout', async () => {
      let aborted = false
      test.app.tools.define({
        name: 'slow',
        description: 'Waits until aborted.',
        traits: { effect: 'read', timeout: 80 },
        run: (_args, call) => new Promise((resolve) => {
          call.signal.addEventListener('abort', () => { aborted = true; resolve('aborted') })
        }),
      })
      const start = Date.now()
      const result = await test.app.tools.call({ name: 'slow' })
      expect(result).to.include({ ok: false, status: 'timeout' })
      expect(result.error.message).to.equal('the tool did not finish within 80 ms')
      expect(aborted).to.equal(true)
      expect(Date.now() - start).to.be.below(1000)
    })

    it('returns timeout even when run ignores the signal, and frees the lock for the next call', async () => {
      test.app.tools.define({ name: 'stuck', description: 'Never ends.', traits: { effect: 'write', timeout: 50 }, run: () => new Promise(() => {}) })
      test.app.tools.define({ name: 'after', description: 'Quick.', traits: { effect: 'write' }, run: () => 'done' })
      const [stuck, after] = await Promise.all([
        test.app.tools.call({ name: 'stuck', scope: { authority: 5 } }),
        test.app.tools.call({ name: 'after', scope: { authority: 5 } }),
      ])
      expect(stuck.status).to.equal('timeout')
      expect(after.content).to.deep.equal([{ type: 'text', text: 'done' }])
    })

    it('returns aborted when the caller aborts', async () => {
      test.app.tools.define({ name: 'wait', description: 'Waits.', traits: { effect: 'read' }, run: () => sleep(5000) })
      const controller = new AbortController()
      setTimeout(() => controller.abort(), 30)
      const result = await test.app.tools.call({ name: 'wait', signal: controller.signal })
      expect(result.status).to.equal('aborted')
    })

    it('spools output above maxOutputLength to a file and gives the head, the size and the path', async () => {
      const text = Array.from({ length: 3000 }, (_, i) => `row ${i}`).join('\n')
      test.app.tools.define({ name: 'big', description: 'Big output.', traits: { effect: 'read' }, run: () => text })
      const result = await test.app.tools.call({ name: 'big' })
      const limit = 8000
      expect(result.ok).to.equal(true)
      expect(result.meta.truncated).to.equal(true)
      expect(result.meta.spooled.size).to.equal(text.length)
      expect(result.meta.spooled.path.startsWith(join(test.baseDir, 'data/chatluna-tools/outputs/'))).to.equal(true)
      expect(await readFile(result.meta.spooled.path, 'utf8')).to.equal(text)
      const shown = (result.content[0] as any).text as string
      expect(shown.startsWith(text.slice(0, limit))).to.equal(true)
      expect(shown).to.contain(`[output truncated: ${text.length} characters in total; the full output is saved at ${result.meta.spooled.path}]`)
      expect(shown.length).to.be.below(limit + 300)
    })

    it('leaves output at the limit alone', async () => {
      test.app.tools.define({ name: 'exact', description: 'Exact.', traits: { effect: 'read' }, run: () => 'x'.repeat(8000) })
      const result = await test.app.tools.call({ name: 'exact' })
      expect(result.meta.truncated).to.equal(undefined)
      expect((result.content[0] as any).text.length).to.equal(8000)
    })
  })

  describe('definition fields', () => {
    it('forwards a call to another tool, with a loop guard', async () => {
      test.app.tools.define(echo)
      test.app.tools.define({
        name: 'shout',
        description: 'Echo in capitals.',
        args: Schema.object({ text: Schema.string().required() }),
        traits: { effect: 'read' },
        forward: (args) => ({ name: 'echo', args: { text: args.text.toUpperCase() } }),
      })
      const result = await test.app.tools.call({ name: 'shout', args: { text: 'hi' } })
      expect(result.content).to.deep.equal([{ type: 'text', text: 'HI' }])
      expect(result.meta).to.include({ tool: 'echo', forwardedFrom: 'shout' })

      test.app.tools.define({ name: 'ping', description: 'p', traits: { effect: 'read' }, forward: () => ({ name: 'pong' }) })
      test.app.tools.define({ name: 'pong', description: 'p', traits: { effect: 'read' }, forward: () => ({ name: 'ping' }) })
      const loop = await test.app.tools.call({ name: 'ping' })
      expect(loop).to.include({ ok: false, status: 'error' })
      expect(loop.error.code).to.equal('forward-loop')
      expect(loop.error.message).to.contain('ping → pong → ping')
    })

    it('validates what run returns against the result schema', async () => {
      test.app.tools.define({
        name: 'count',
        description: 'Counts.',
        traits: { effect: 'read' },
        result: Schema.object({ count: Schema.natural().required() }),
        run: (_args, call) => call.scope.userId === 'bad' ? { count: -1 } : { count: 2 },
      })
      const good = await test.app.tools.call({ name: 'count' })
      expect(good.ok).to.equal(true)
      expect(JSON.parse((good.content[0] as any).text)).to.deep.equal({ count: 2 })
      const bad = await test.app.tools.call({ name: 'count', scope: { userId: 'bad' } })
      expect(bad).to.include({ ok: false, status: 'error' })
      expect(bad.error.code).to.equal('invalid-result')
      expect(bad.error.issues[0].path).to.equal('count')
    })

    it('uses describe(caller) for the declared description', () => {
      test.app.tools.define({
        ...echo,
        describe: (caller) => caller.scope.private ? 'Echo (private chat).' : undefined,
      })
      const find = (scope) => test.app.tools.declarations(scope).find((d) => d.function.name === 'echo').function.description
      expect(find({ private: true })).to.equal('Echo (private chat).')
      expect(find({ private: false })).to.equal('Echo a text.')
    })

    it('keeps the structured output of a tool that reports its own failure', async () => {
      test.app.tools.define({
        name: 'lookup',
        description: 'Looks up.',
        traits: { effect: 'read' },
        run: () => ({ ok: false, content: [{ type: 'text', text: 'no such key' }], error: { code: 'no-key', message: 'no such key' } }),
      })
      const result = await test.app.tools.call({ name: 'lookup' })
      expect(result).to.include({ ok: false, status: 'error' })
      expect(result.error).to.deep.equal({ code: 'no-key', message: 'no such key' })
    })
  })

  describe('permission gate', () => {
    const writer = {
      name: 'save',
      description: 'Saves.',
      traits: { effect: 'write' as const },
      run: () => 'saved',
    }

    it('allows read tools for everyone, including callers without a user record', async () => {
      expect((await test.app.tools.call({ name: 'read', args: { path: 'notes.txt' } })).ok).to.equal(true)
    })

    it('denies write tools in the read-only mode of levels 0-2, with a reason; level 5 writes', async () => {
      test.app.tools.define(writer)
      const result = await test.app.tools.call({ name: 'save', scope: { authority: 2 } })
      expect(result).to.include({ ok: false, status: 'denied' })
      expect(result.error.message).to.equal('The call was not allowed: the permission mode "read-only" (authority 2) does not allow write actions such as "tool:save".')
      expect((await test.app.tools.call({ name: 'save' })).status).to.equal('denied')
      expect((await test.app.tools.call({ name: 'save', scope: { authority: 5 } })).ok).to.equal(true)
    })

    it('treats a tool without a declared effect as exec', async () => {
      test.app.tools.define({ name: 'mystery', description: 'No effect declared.', run: () => 'ran' })
      expect((await test.app.tools.call({ name: 'mystery', scope: { authority: 2 } })).error.message).to.contain('does not allow exec actions')
    })

    it('denies, fail closed, when a permission function throws', async () => {
      test.app.tools.define({ ...writer, name: 'odd', traits: { effect: 'read' }, permission: () => { throw new Error('bad target') } })
      const result = await test.app.tools.call({ name: 'odd', scope: { authority: 5 } })
      expect(result.status).to.equal('denied')
      expect(result.error.code).to.equal('permission-error')
    })
  })

  describe('visibility at call time', () => {
    it('refuses a tool the model was not shown', async () => {
      test.app.tools.define(echo)
      const result = await test.app.tools.call({ name: 'echo', args: { text: 'x' }, shown: ['read'] })
      expect(result).to.include({ ok: false, status: 'denied' })
      expect(result.error.code).to.equal('not-available')
    })

    it('refuses a tool hidden in the scope', async () => {
      test.app.tools.define(echo)
      const result = await test.app.tools.call({ name: 'echo', args: { text: 'x' }, scope: { tools: { exclude: ['echo'] } } })
      expect(result.error.code).to.equal('not-available')
    })
  })

  describe('records', () => {
    it('keeps a call log and emits chatluna/tool-call and progress events', async () => {
      const seen: string[] = []
      const progress: string[] = []
      test.app.on('chatluna/tool-call', (entry) => seen.push(`${entry.tool}:${entry.status}`))
      test.app.on('chatluna/tool-progress', (event) => progress.push(event.message))
      test.app.tools.define({ ...echo, run: (args, call) => { call.progress({ message: 'halfway' }); return args.text } })
      const received: string[] = []
      await test.app.tools.call({ name: 'echo', args: { text: 'x' }, onProgress: (event) => received.push(event.message) })
      await test.app.tools.call({ name: 'nope' })
      expect(seen).to.deep.equal(['echo:success', 'nope:invalid'])
      expect(progress).to.deep.equal(['halfway'])
      expect(received).to.deep.equal(['halfway'])
      expect(test.app.tools.history.slice(-2).map((entry) => entry.tool)).to.deep.equal(['echo', 'nope'])
    })

    it('uses the model-given call id, or generates one for an empty id', async () => {
      test.app.tools.define(echo)
      expect((await test.app.tools.call({ name: 'echo', args: { text: 'x' }, id: 'call_1' })).meta.callId).to.equal('call_1')
      expect((await test.app.tools.call({ name: 'echo', args: { text: 'x' }, id: '' })).meta.callId).to.match(/^call_\w+$/)
    })
  })
})

describe('permission gate: tool verdicts', () => {
  let test: TestApp
  beforeEach(async () => test = await createApp())
  afterEach(() => test.dispose())

  for (const [verdict, code] of [['deny', 'tool-deny'], ['ask', 'approval-unavailable']] as const) {
    it(`denies a part with the tool verdict "${verdict}" even for authority 5`, async () => {
      let ran = false
      test.app.tools.define({
        name: 'runner',
        description: 'Runs.',
        traits: { effect: 'exec' },
        permission: () => ({ name: 'exec', parts: [{ name: 'exec:ls' }, { name: 'exec:chmod', verdict, reason: 'chmod is refused here' }] }),
        run: () => { ran = true; return 'ran' },
      })
      const result = await test.app.tools.call({ name: 'runner', scope: { authority: 5 } })
      expect(result).to.include({ ok: false, status: 'denied' })
      expect(result.error.code).to.equal(code)
      expect(result.error.message).to.contain('chmod is refused here')
      expect(ran).to.equal(false)
    })
  }
})
