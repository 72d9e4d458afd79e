import { expect } from 'chai'
import { mkdir } from 'fs/promises'
import { join } from 'path'
import { Dict } from 'koishi'
import { createApp, TestApp } from './helpers/app'
import { resultText } from '../src/pipeline/result'
import * as tools from '../src'
import { processesWith, uniqueSleep } from './helpers/processes'
import { settles, sleep } from './helpers/wait'

/*
 * Processes a hostile command line starts to outlive the plugin: they leave
 * the session, clear their environment (the run's marker) and are
 * re-parented, or they delay the escape past the end of the command. And
 * output built to hurt: floods, binary bytes, a closed standard output.
 */

describe('hostile input: processes and output of bash', function () {
  this.timeout(20000)
  let test: TestApp
  const leftovers: string[] = []
  const open = async (bash: Dict = {}) => {
    test = await createApp({ workDir: 'work', bash: { timeout: 5000, ...bash } })
    await mkdir(join(test.baseDir, 'work'), { recursive: true })
  }
  const bash = (command: string) => test.app.tools.call({ name: 'bash', args: { command }, scope: { authority: 5 } })
  afterEach(async () => {
    await test?.dispose()
    // Never leave a stray sleep on the machine, even when a test fails.
    for (const needle of leftovers.splice(0)) for (const pid of processesWith(`sleep ${needle}`)) process.kill(pid, 'SIGKILL')
  })

  for (const [label, line] of [
    // The short sleep lets the child detach before the shell ends (else the terminal's hangup may kill it first).
    ['a new session with an empty environment', (n: string) => `setsid -f env -i sleep ${n}; sleep 0.2`],
    ['the same, with every standard stream redirected', (n: string) => `setsid -f env -i sleep ${n} </dev/null >/dev/null 2>&1; sleep 0.2`],
    ['an escape delayed past the end of the command', (n: string) => `(trap '' HUP; sleep 0.3; setsid -f env -i sleep ${n} >/dev/null 2>&1) >/dev/null 2>&1 & sleep 0.1`],
  ] as const) {
    it(`kills ${label} when the plugin unloads`, async () => {
      await open()
      const needle = uniqueSleep()
      leftovers.push(needle)
      const result = await bash(line(needle))
      expect(result.ok, resultText(result)).to.equal(true)
      expect(await settles(() => processesWith(`sleep ${needle}`).length === 1)).to.equal(true)
      // Give a delayed escape time to happen before the unload.
      await sleep(400)
      test.app.registry.delete(tools)
      expect(await settles(() => !processesWith(`sleep ${needle}`).length), 'the process outlived the plugin').to.equal(true)
    })
  }

  it('stops a command flooding its output at the time limit, keeping the output bounded', async () => {
    await open({ timeout: 1000, maxOutputSize: 2000 })
    const result = await bash('yes')
    expect(result).to.include({ ok: false, status: 'timeout' })
    expect(resultText(result).length).to.be.below(12000)
  })

  it('shows the head and the tail of a flood that ends, and saves the whole output', async () => {
    await open({ maxOutputSize: 2000 })
    const result = await bash('yes | head -c 3000000; echo; echo END')
    expect(result.ok).to.equal(true)
    const text = resultText(result)
    expect(text.length).to.be.below(12000)
    expect(text).to.contain('END')
    expect(result.meta.outputFile).to.be.a('string')
  })

  it('answers binary output with text, and a command that closes its standard output', async () => {
    await open()
    const binary = await bash('head -c 4096 /dev/urandom; echo; echo after')
    expect(binary.ok).to.equal(true)
    expect(resultText(binary)).to.contain('after')
    const closed = await bash('exec 1>&- 2>&-; sleep 0.1; exit 4')
    expect(closed).to.include({ ok: true })
    expect(resultText(closed)).to.match(/exit code 4/)
  })
})
