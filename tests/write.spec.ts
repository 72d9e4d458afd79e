import { expect } from 'chai'
import { spawn } from 'child_process'
import { chmod, mkdir, readdir, readFile, stat, symlink, writeFile } from 'fs/promises'
import { join, resolve } from 'path'
import { createApp, TestApp } from './helpers/app'
import { resultText } from '../src/pipeline/result'
import { timestampLine } from '../src/builtin/write'

describe('builtin write', () => {
  let test: TestApp
  let work: string
  beforeEach(async () => {
    test = await createApp({ workDir: 'work', extraDirs: ['shared'], write: { maxFileSize: 64 } })
    work = join(test.baseDir, 'work')
    await mkdir(join(work, 'dir'), { recursive: true })
    await mkdir(join(test.baseDir, 'outside'), { recursive: true })
    await mkdir(join(test.baseDir, 'shared'), { recursive: true })
    await writeFile(join(work, 'old.txt'), 'old\n')
    await symlink(join(test.baseDir, 'outside'), join(work, 'out'))
  })
  afterEach(() => test.dispose())

  const write = (args: object, authority = 5) => test.app.tools.call({ name: 'write', args, scope: { authority } })

  it('creates a file with missing parent directories, and refuses to create over an existing one', async () => {
    const result = await write({ path: 'new/deeper/a.txt', content: 'hello\nworld\n' })
    expect(resultText(result)).to.equal('Created "new/deeper/a.txt" (12 bytes, 2 lines).')
    expect(await readFile(join(work, 'new/deeper/a.txt'), 'utf8')).to.equal('hello\nworld\n')
    const again = await write({ path: 'new/deeper/a.txt', content: 'other' })
    expect(again).to.include({ ok: false, status: 'error' })
    expect(again.error.code).to.equal('file-exists')
    expect(again.error.hint).to.contain('overwrite')
    expect(await readFile(join(work, 'new/deeper/a.txt'), 'utf8')).to.equal('hello\nworld\n')
  })

  it('overwrites atomically and keeps the permission bits', async () => {
    await chmod(join(work, 'old.txt'), 0o640)
    const result = await write({ path: 'old.txt', content: 'new content', operation: 'overwrite' })
    expect(resultText(result)).to.equal('Overwrote "old.txt" (11 bytes, 1 line).')
    expect(await readFile(join(work, 'old.txt'), 'utf8')).to.equal('new content')
    expect((await stat(join(work, 'old.txt'))).mode & 0o777).to.equal(0o640)
    expect((await readdir(work)).filter((name) => name.endsWith('.tmp'))).to.deep.equal([])
  })

  it('appends after a timestamp line, and creates the file when it is missing', async () => {
    await write({ path: 'log.md', content: 'first', operation: 'append' })
    expect(await readFile(join(work, 'log.md'), 'utf8')).to.equal('first')
    await write({ path: 'log.md', content: 'second\n', operation: 'append' })
    const text = await readFile(join(work, 'log.md'), 'utf8')
    expect(text).to.match(/^first\n--- \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z ---\nsecond\n$/)
    expect(timestampLine(new Date('2025-01-02T03:04:05.678Z'))).to.equal('--- 2025-01-02T03:04:05.678Z ---')
  })

  it('appends with CRLF to a CRLF file, and without a timestamp when configured so', async () => {
    await writeFile(join(work, 'crlf.txt'), 'a\r\nb')
    await write({ path: 'crlf.txt', content: 'c', operation: 'append' })
    expect(await readFile(join(work, 'crlf.txt'), 'utf8')).to.match(/^a\r\nb\r\n--- .* ---\r\nc$/)
    await test.dispose()
    test = await createApp({ workDir: 'work', write: { appendTimestamp: false } })
    work = join(test.baseDir, 'work')
    await mkdir(work, { recursive: true })
    await writeFile(join(work, 'plain.txt'), 'a')
    await write({ path: 'plain.txt', content: 'b', operation: 'append' })
    expect(await readFile(join(work, 'plain.txt'), 'utf8')).to.equal('a\nb')
  })

  it('refuses files over maxFileSize, directories and paths outside, changing nothing', async () => {
    const big = await write({ path: 'big.txt', content: 'x'.repeat(65) })
    expect(big.error).to.include({ code: 'too-large' })
    expect(big.error.message).to.equal('The file would be 65 B; at most 64 B may be written.')
    await write({ path: 'old.txt', content: 'y'.repeat(60), operation: 'append' }).then((result) => expect(result.error.code).to.equal('too-large'))
    expect(await readFile(join(work, 'old.txt'), 'utf8')).to.equal('old\n')
    expect((await write({ path: 'dir', content: 'x', operation: 'overwrite' })).error).to.include({ code: 'is-directory' })
    expect((await write({ path: '.', content: 'x', operation: 'overwrite' })).error).to.include({ code: 'is-directory' })
    for (const path of ['../escape.txt', 'out/escape.txt', join(test.baseDir, 'outside/escape.txt')]) {
      const result = await write({ path, content: 'x' })
      expect(result, path).to.include({ status: 'denied' })
      expect(result.error.code).to.equal('outside-workdir')
    }
    expect(await readdir(join(test.baseDir, 'outside'))).to.deep.equal([])
  })

  it('declares effect write and an fs:write action on the resolved path, riskier outside the workDir', async () => {
    const entry = test.app.tools.get('write')
    expect(entry.definition.traits.effect).to.equal('write')
    const permission = entry.definition.permission as Function
    const inside = await permission({ path: 'a/b.txt' })
    expect(inside).to.deep.equal({ name: 'fs:write', target: { path: join(resolve(work), 'a/b.txt') }, risk: undefined })
    const extra = await permission({ path: join(test.baseDir, 'shared/x.txt') })
    expect(extra).to.include({ name: 'fs:write', risk: 'review' })
    const outside = await permission({ path: '../x.txt' })
    expect(outside).to.deep.include({ name: 'fs:write', target: { path: '../x.txt' }, risk: 'dangerous' })
    // A user below the write authority is refused before anything is written.
    expect((await write({ path: 'low.txt', content: 'x' }, 1)).error.code).to.equal('mode-deny')
  })

  it('never leaves a half-written target when the writing process is killed', async function () {
    this.timeout(20000)
    const target = join(work, 'big.bin')
    const old = 'OLD'.repeat(1000)
    await writeFile(target, old)
    // A child process overwrites the file with 64 MB through atomicWrite and is killed mid-write.
    const script = `
      require('esbuild-register/dist/node').register()
      const { atomicWrite } = require(${JSON.stringify(resolve(__dirname, '../src/builtin/atomic.ts'))})
      process.send('start')
      atomicWrite(${JSON.stringify(target)}, Buffer.alloc(64 * 1024 * 1024, 78)).then(() => process.send('done'))
    `
    const child = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'], cwd: resolve(__dirname, '..') })
    await new Promise<void>((done) => child.on('message', (message) => message === 'start' && done()))
    // Wait until the write is under way (a temp file, or the target itself, changing), then kill it.
    for (let i = 0; i < 400; i++) {
      const temps = (await readdir(work)).filter((name) => name.startsWith('.big.bin.'))
      const tempSize = temps.length ? (await stat(join(work, temps[0])).catch(() => undefined))?.size : 0
      const targetSize = (await stat(target)).size
      if (tempSize > 0 || targetSize !== old.length) break
      await new Promise((done) => setTimeout(done, 2))
    }
    child.kill('SIGKILL')
    await new Promise((done) => child.on('exit', done))
    const content = await readFile(target)
    const complete = content.length === 64 * 1024 * 1024 && content.every((byte) => byte === 78)
    expect(complete || content.toString() === old, `target has ${content.length} bytes`).to.equal(true)
  })
})
