import { expect } from 'chai'
import { chmod, mkdir, readFile, stat, writeFile } from 'fs/promises'
import { join } from 'path'
import { Dict } from 'koishi'
import * as tools from '../src'
import { createApp, TestApp } from './helpers/app'
import { resultText } from '../src/pipeline/result'
import { ToolProgress, ToolResult } from '../src'
import { chmodBypasses, harmless } from './fixtures/shell-inputs'
import { processesWith, uniqueSleep } from './helpers/processes'
import { settles } from './helpers/wait'

describe('builtin bash', function () {
  this.timeout(15000)
  let test: TestApp
  let work: string
  const open = async (bash: Dict = {}, extra: Dict = {}) => {
    test = await createApp({ workDir: 'work', bash: { timeout: 5000, ...bash }, ...extra })
    work = join(test.baseDir, 'work')
    await mkdir(work, { recursive: true })
  }
  afterEach(() => test?.dispose())

  const bash = (command: string, { signal, ...extra }: Dict = {}, onProgress?: (event: ToolProgress) => void) =>
    test.app.tools.call({ name: 'bash', args: { command, ...extra }, scope: { authority: 5 }, onProgress, signal })

  describe('inputs from public reports', () => {
    for (const [line, allow] of chmodBypasses) {
      it(`does not change a file's mode with ${JSON.stringify(line)}`, async () => {
        await open(allow ? { mode: 'allow', allow: [allow] } : { mode: 'deny', deny: ['chmod'] })
        await writeFile(join(work, 'f'), 'data')
        await chmod(join(work, 'f'), 0o644)
        const result = await bash(line)
        expect(result, resultText(result)).to.include({ ok: false, status: 'denied' })
        expect(['tool-deny', 'approval-unavailable']).to.include(result.error.code)
        expect((await stat(join(work, 'f'))).mode & 0o777).to.equal(0o644)
      })
    }

    it('changes the mode when chmod is not denied (the harness can see a change)', async () => {
      await open({ mode: 'deny', deny: [] })
      await writeFile(join(work, 'f'), 'data')
      await chmod(join(work, 'f'), 0o644)
      expect((await bash('chmod 777 f')).ok).to.equal(true)
      expect((await stat(join(work, 'f'))).mode & 0o777).to.equal(0o777)
    })

    for (const line of harmless) {
      it(`runs ${JSON.stringify(line)} and returns its output`, async () => {
        await open({ mode: 'deny', deny: ['chmod'] })
        await writeFile(join(work, 'f'), 'chmod is mentioned here\n')
        const result = await bash(line)
        expect(result, resultText(result)).to.include({ ok: true, status: 'success' })
        const text = resultText(result)
        expect(text).to.match(/\n\n\[exit code 0 · \d+ ms\]$/)
        expect(text.split('\n\n[exit code')[0].trim()).not.to.equal('(no output)')
      })
    }

    it('leaves no process behind when the plugin unloads: background, nohup and setsid children', async () => {
      await open()
      const [a, b, c] = [uniqueSleep(), uniqueSleep(), uniqueSleep()]
      const result = await bash(`sleep ${a} & nohup sleep ${b} >/dev/null 2>&1 & setsid sleep ${c} >/dev/null 2>&1 & sleep 0.2; echo started`)
      expect(resultText(result)).to.match(/^started\n\n\[exit code 0 · \d+ ms\]\n\[still running in the background: .*sleep/)
      // nohup and setsid survive the end of the shell on their own.
      expect(processesWith(`sleep ${b}`)).to.have.length(1)
      expect(processesWith(`sleep ${c}`)).to.have.length(1)
      test.app.registry.delete(tools)
      expect(await settles(() => [a, b, c].every((needle) => !processesWith(`sleep ${needle}`).length))).to.equal(true)
    })
  })

  describe('running commands', () => {
    beforeEach(() => open())

    it('runs in the workDir, reports exit code and duration, with empty standard input', async () => {
      const result = await bash('pwd; cat; echo done; exit 3')
      expect(result.ok).to.equal(true)
      const realWork = await import('fs/promises').then((fs) => fs.realpath(work))
      expect(resultText(result)).to.match(new RegExp(`^${realWork.replace(/[/.]/g, '\\$&')}\\ndone\\n\\n\\[exit code 3 · \\d+ ms\\]$`))
      expect(result.meta).to.include({ exitCode: 3 })
    })

    it('strips ANSI sequences and folds carriage-return progress frames', async () => {
      const result = await bash(`printf '\\033[31mred\\033[0m plain\\n'; printf 'progress 10%%\\rprogress 50%%\\rprogress 100%%\\n'; printf 'abcdef\\rXY\\n'`)
      expect(resultText(result).split('\n\n[')[0]).to.equal('red plain\nprogress 100%\nXYcdef')
    })

    it('streams output as progress events while the command runs', async () => {
      const events: ToolProgress[] = []
      const result = await bash('echo first; sleep 0.3; echo second', {}, (event) => events.push(event))
      expect(result.ok).to.equal(true)
      expect(events.map((event) => event.message)).to.deep.equal(['first', 'second'])
      expect(events[0]).to.include({ tool: 'bash', callId: result.meta.callId })
    })

    it('stops a command at its timeout with everything it started, and shows the output so far', async () => {
      const marker = uniqueSleep()
      const start = Date.now()
      const result = await bash(`echo begun; sleep ${marker} & sleep ${marker}`, { timeout: 300 })
      expect(Date.now() - start).to.be.below(3000)
      expect(result).to.include({ ok: false, status: 'timeout' })
      expect(result.error.message).to.equal('The command did not finish within 300 ms; it was stopped with every process it started.\nOutput so far:\nbegun')
      expect(await settles(() => !processesWith(`sleep ${marker}`).length)).to.equal(true)
    })

    it('never waits longer than the configured timeout', async () => {
      await test.dispose()
      await open({ timeout: 400 })
      const result = await bash('sleep 10', { timeout: 60000 })
      expect(result.status).to.equal('timeout')
      expect(result.error.message).to.contain('within 400 ms')
      const quick = await bash('echo ok', { timeout: 60000 })
      expect(resultText(quick)).to.match(/\[the time limit was lowered from 60000 ms to the configured maximum of 400 ms\]$/)
    })

    it('honours the abort signal and kills the process group', async () => {
      const marker = uniqueSleep()
      const controller = new AbortController()
      setTimeout(() => controller.abort(), 300)
      const result = await bash(`sleep ${marker}`, { signal: controller.signal })
      expect(result.status).to.equal('aborted')
      expect(await settles(() => !processesWith(`sleep ${marker}`).length)).to.equal(true)
    })

    it('passes only a safe environment unless inheritEnv is on', async () => {
      process.env.CHATLUNA_TEST_SECRET = 'hunter2'
      try {
        expect(resultText(await bash('echo "[$CHATLUNA_TEST_SECRET] $TERM"'))).to.match(/^\[\] xterm-256color\n/)
        await test.dispose()
        await open({ inheritEnv: true })
        expect(resultText(await bash('echo "[$CHATLUNA_TEST_SECRET]"'))).to.match(/^\[hunter2\]\n/)
      } finally {
        delete process.env.CHATLUNA_TEST_SECRET
      }
    })
  })

  describe('large output', () => {
    it('shows head and tail and saves the whole output to a file', async () => {
      await open({ maxOutputSize: 1000 })
      const result = await bash('seq 1 20000')
      const text = resultText(result)
      expect(text.startsWith('1\n2\n3\n')).to.equal(true)
      expect(text).to.match(/19999\n20000\n\n\[exit code 0 · \d+ ms\]$/)
      const note = text.match(/\[… (\d+) bytes omitted \((\d+) bytes in total\); the whole output is saved at (\S+) …\]/)
      expect(note, text).to.not.equal(null)
      expect(Number(note[2])).to.equal(108894)
      expect(Buffer.byteLength(text)).to.be.below(1400)
      const saved = await readFile(note[3], 'utf8')
      expect(saved.split('\n')).to.have.length(20001)
      expect(saved.startsWith('1\n2\n')).to.equal(true)
      expect(result.meta.outputFile).to.equal(note[3])
      // The saved file lies in the outputs folder, which read may open.
      expect(note[3].startsWith(join(test.baseDir, 'data/chatluna-tools/outputs'))).to.equal(true)
      const read = await test.app.tools.call({ name: 'read', args: { path: note[3], line_from: 20000 } })
      expect(resultText(read)).to.equal('20000\t20000')
    })

    it('keeps the shown output under the pipeline limit, so it is never cut twice', async () => {
      await open({ maxOutputSize: 50000 }, { maxOutputLength: 3000 })
      const result = await bash('seq 1 20000')
      expect(result.meta.truncated).to.equal(undefined)
      expect(resultText(result)).to.match(/20000\n\n\[exit code 0/)
    })
  })

  describe('declaration', () => {
    it('declares effect exec and one permission part per command', async () => {
      await open({ deny: ['chmod'] })
      const entry = test.app.tools.get('bash')
      expect(entry.definition.traits.effect).to.equal('exec')
      const action = await (entry.definition.permission as Function)({ command: 'ls | sudo chmod 1 f' })
      expect(action.name).to.equal('exec')
      expect(action.target).to.deep.equal({ command: 'ls | sudo chmod 1 f', cwd: join(test.baseDir, 'work') })
      expect(action.parts.map((part: any) => [part.name, part.verdict, part.risk])).to.deep.equal([
        ['exec:ls', undefined, undefined], ['exec:sudo', undefined, 'critical'], ['exec:chmod', 'deny', 'critical'],
      ])
    })

    it('refuses callers below the exec authority, and an empty command', async () => {
      await open()
      const low: ToolResult = await test.app.tools.call({ name: 'bash', args: { command: 'echo hi' }, scope: { authority: 1 } })
      expect(low.error.code).to.equal('mode-deny')
      expect((await bash('   ')).error.code).to.equal('empty-command')
    })

    it('says clearly when the configured shell cannot be run', async () => {
      await open({ shellPath: '/nonexistent/sh' })
      const result = await bash('echo hi')
      expect(result.error).to.include({ code: 'shell-not-found', message: 'The shell "/nonexistent/sh" cannot be run.' })
    })
  })
})
