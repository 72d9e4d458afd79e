import { expect } from 'chai'
import { execFileSync } from 'child_process'
import { mkdir, writeFile } from 'fs/promises'
import { join } from 'path'
import { createApp, TestApp } from './helpers/app'
import { resultText } from '../src/pipeline/result'

/*
 * Files built to hang the file tools: a FIFO (opening one for reading
 * blocks a thread of libuv's small pool until a writer comes, so a few such
 * reads would stall every file operation of the bot) and other files that
 * are not regular.
 */
describe('hostile input: files that are not files', function () {
  this.timeout(5000)
  let test: TestApp
  let work: string
  beforeEach(async () => {
    test = await createApp({ workDir: 'work', bash: { enabled: false } })
    work = join(test.baseDir, 'work')
    await mkdir(work, { recursive: true })
    execFileSync('mkfifo', [join(work, 'pipe')])
    await writeFile(join(work, 'notes.txt'), 'hello\n')
  })
  afterEach(() => test.dispose())

  it('refuses to read a FIFO instead of blocking on it', async () => {
    // More reads than libuv has threads: blocking ones would stall the next file operation.
    const results = await Promise.all(Array.from({ length: 6 }, () => test.app.tools.call({ name: 'read', args: { path: 'pipe' }, scope: { authority: 1 } })))
    for (const result of results) {
      expect(result, resultText(result)).to.include({ ok: false, status: 'error' })
      expect(result.error.code).to.equal('not-a-file')
    }
    expect(resultText(await test.app.tools.call({ name: 'read', args: { path: 'notes.txt' }, scope: { authority: 1 } }))).to.equal('1\thello')
  })

  it('refuses to search a FIFO given as the path, and skips it inside a directory', async () => {
    const direct = await test.app.tools.call({ name: 'read', args: { operation: 'search', path: 'pipe', query: 'x' }, scope: { authority: 1 } })
    expect(direct.error?.code).to.equal('not-a-file')
    const walked = await test.app.tools.call({ name: 'read', args: { operation: 'search', path: '.', query: 'hello' }, scope: { authority: 1 } })
    expect(resultText(walked)).to.contain('notes.txt')
  })
})
