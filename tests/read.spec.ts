import { expect } from 'chai'
import { mkdir, symlink, writeFile } from 'fs/promises'
import { join } from 'path'
import { createApp, TestApp } from './helpers/app'
import { resultText } from '../src/pipeline/result'

describe('builtin read (file mode)', () => {
  let test: TestApp
  let work: string
  beforeEach(async () => {
    test = await createApp({ workDir: 'work', read: { maxReadLines: 5 } })
    work = join(test.baseDir, 'work')
    await mkdir(join(work, 'sub'), { recursive: true })
    await mkdir(join(test.baseDir, 'work-evil'), { recursive: true })
    await writeFile(join(work, 'ten.txt'), Array.from({ length: 10 }, (_, i) => `line ${i + 1}`).join('\n') + '\n')
    await writeFile(join(work, 'crlf.txt'), 'a\r\nb\r\n')
    await writeFile(join(work, 'empty.txt'), '')
    await writeFile(join(work, 'image.png'), Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0x01, 0x02]))
    await writeFile(join(test.baseDir, 'secret.txt'), 'TOP-SECRET-CONTENT')
    await writeFile(join(test.baseDir, 'work-evil/x.txt'), 'EVIL-CONTENT')
    await symlink(join(test.baseDir, 'secret.txt'), join(work, 'link-out.txt'))
    await symlink(join(work, 'ten.txt'), join(work, 'link-in.txt'))
    await symlink(test.baseDir, join(work, 'sub/up'))
  })
  afterEach(() => test.dispose())

  const read = (args: object) => test.app.tools.call({ name: 'read', args })

  it('reads numbered lines, at most maxReadLines, with a footer saying how to continue', async () => {
    const result = await read({ path: 'ten.txt' })
    expect(resultText(result)).to.equal('1\tline 1\n2\tline 2\n3\tline 3\n4\tline 4\n5\tline 5\n\n[showing lines 1-5 of 10; call read with line_from=6 to continue]')
    const capped = await read({ path: 'ten.txt', line_from: 2, line_to: 10 })
    expect(resultText(capped)).to.equal('2\tline 2\n3\tline 3\n4\tline 4\n5\tline 5\n6\tline 6\n\n[showing lines 2-6 of 10 (at most 5 lines per call); call read with line_from=7 to continue]')
  })

  it('reads a line range and pads numbers to the same width', async () => {
    const result = await read({ path: 'ten.txt', line_from: 8, line_to: 10 })
    expect(resultText(result)).to.equal(' 8\tline 8\n 9\tline 9\n10\tline 10')
  })

  it('says when a range ends before the file does, without the cap note', async () => {
    expect(resultText(await read({ path: 'ten.txt', line_from: 2, line_to: 3 }))).to.equal('2\tline 2\n3\tline 3\n\n[showing lines 2-3 of 10; call read with line_from=4 to continue]')
  })

  it('strips CRLF line endings', async () => {
    expect(resultText(await read({ path: 'crlf.txt' }))).to.equal('1\ta\n2\tb')
  })

  it('answers binary files with a message instead of bytes', async () => {
    const result = await read({ path: 'image.png' })
    expect(result.ok).to.equal(true)
    expect(resultText(result)).to.equal('"image.png" is a binary file (7 bytes); it is not shown as text.')
  })

  it('reports empty files, missing files, directories and bad ranges clearly', async () => {
    expect(resultText(await read({ path: 'empty.txt' }))).to.equal('"empty.txt" is empty.')
    expect((await read({ path: 'missing.txt' })).error).to.include({ code: 'not-found' })
    expect((await read({ path: 'sub' })).error).to.include({ code: 'is-directory' })
    const past = await read({ path: 'ten.txt', line_from: 50 })
    expect(past).to.include({ status: 'invalid' })
    expect(past.error.message).to.equal('line_from (50) is past the end of the file (10 lines).')
    expect((await read({ path: 'ten.txt', line_from: 5, line_to: 2 })).error.code).to.equal('invalid-range')
  })

  it('follows a symlink that stays inside the workDir', async () => {
    expect(resultText(await read({ path: 'link-in.txt', line_to: 1 }))).to.contain('1\tline 1')
  })

  for (const [label, path] of [
    ['..', '../secret.txt'],
    ['a nested ..', 'sub/../../secret.txt'],
    ['an absolute path', '/etc/passwd'],
    ['a symlinked file pointing out', 'link-out.txt'],
    ['a symlinked directory pointing out', 'sub/up/secret.txt'],
    ['a prefix-sibling directory', '../work-evil/x.txt'],
  ]) {
    it(`cannot escape the workDir through ${label}`, async () => {
      const result = await read({ path })
      expect(result).to.include({ ok: false, status: 'denied' })
      expect(result.error.code).to.equal('outside-workdir')
      expect(JSON.stringify(result)).not.to.match(/SECRET-CONTENT|EVIL-CONTENT/)
    })
  }

  it('can read a spooled output file, which lives outside the workDir', async () => {
    test.app.tools.define({ name: 'big', description: 'Big.', traits: { effect: 'read' }, run: () => 'y\n'.repeat(6000) })
    const big = await test.app.tools.call({ name: 'big' })
    const result = await read({ path: big.meta.spooled.path, line_from: 2, line_to: 2 })
    expect(resultText(result)).to.equal('2\ty\n\n[showing lines 2-2 of 6000; call read with line_from=3 to continue]')
  })
})
