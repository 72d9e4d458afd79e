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

/*
 * Edits built to exhaust memory: a line range of a billion lines, a global
 * replacement of every character of a large file (one object per match
 * used to be kept: 370 MB of heap per million matches, a fatal
 * out-of-memory for the default 10 MB file limit).
 */
describe('hostile input: edits that would exhaust memory', function () {
  this.timeout(10000)
  let test: TestApp
  let work: string
  beforeEach(async () => {
    test = await createApp({ workDir: 'work', bash: { enabled: false }, edit: { maxFileSize: 4 * 1024 * 1024 } })
    work = join(test.baseDir, 'work')
    await mkdir(work, { recursive: true })
    await writeFile(join(work, 'notes.txt'), 'one\ntwo\nthree\n')
  })
  afterEach(() => test.dispose())
  const edit = (args: object) => test.app.tools.call({ name: 'edit', args, scope: { authority: 5 } })

  it('refuses a delete range past the end without listing a billion lines', async () => {
    const result = await edit({ operation: 'delete', path: 'notes.txt', line_from: 2, line_to: 1e9 })
    expect(result).to.include({ ok: false, status: 'invalid' })
    expect(result.error.code).to.equal('invalid-lines')
    expect(result.error.message).to.equal('Nothing was deleted: lines 2-1000000000 reach past the end (the file has 3 lines).')
    expect(resultText(await edit({ operation: 'delete', path: 'notes.txt', line_from: 2, line_to: 3 }))).to.match(/^Edited "notes.txt": deleted 2 lines \(2-3\)/)
  })

  it('stops a global replacement with too many matches, and one whose result is too large, changing nothing', async () => {
    await writeFile(join(work, 'big.txt'), 'a'.repeat(3 * 1024 * 1024))
    const many = await edit({ operation: 'search', path: 'big.txt', search: '.', regex: true, replace: 'b', global: true })
    expect(many.error?.code).to.equal('too-many-matches')
    const large = await edit({ operation: 'search', path: 'big.txt', search: 'a'.repeat(1000), replace: 'b'.repeat(2000), global: true })
    expect(large.error?.code).to.equal('too-large')
    expect((await test.app.tools.call({ name: 'read', args: { path: 'big.txt', line_to: 1 }, scope: { authority: 5 } })).ok).to.equal(true)
    const few = await edit({ operation: 'search', path: 'notes.txt', search: 'o', replace: '0', global: true })
    expect(resultText(few)).to.match(/replaced 2 occurrences/)
  })
})
