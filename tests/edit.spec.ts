import { expect } from 'chai'
import { chmod, mkdir, readdir, readFile, stat, writeFile } from 'fs/promises'
import { join, relative, resolve, sep } from 'path'
import { createApp, TestApp } from './helpers/app'
import { resultText } from '../src/pipeline/result'
import { sessionKey } from '../src/builtin/backups'
import { ToolScope } from '../src'

describe('builtin edit', () => {
  let test: TestApp
  let work: string
  let backups: string
  const scope: ToolScope = { platform: 'sandbox', channelId: 'c1', userId: 'alice', authority: 5 }
  beforeEach(async () => {
    test = await createApp({ workDir: 'work', edit: { maxHistory: 3 } })
    work = join(test.baseDir, 'work')
    backups = join(test.baseDir, 'data/chatluna-tools/backups')
    await mkdir(work, { recursive: true })
    await writeFile(join(work, 'a.txt'), 'one\ntwo\nthree\nfour\nfive\n')
  })
  afterEach(() => test.dispose())

  const edit = (args: object, callScope: ToolScope = scope) => test.app.tools.call({ name: 'edit', args, scope: callScope })
  const content = (name = 'a.txt') => readFile(join(work, name), 'utf8')

  describe('line', () => {
    it('replaces a line range, shows a numbered preview and names the backup', async () => {
      const result = await edit({ operation: 'line', path: 'a.txt', line_from: 2, line_to: 3, content: 'TWO\nTHREE\nTHREE-B' })
      expect(await content()).to.equal('one\nTWO\nTHREE\nTHREE-B\nfour\nfive\n')
      expect(resultText(result)).to.match(/^Edited "a\.txt": replaced lines 2-3 with 3 lines\. Backup: \d{8}-\d{6}-\d{3}-\d+\.\n\n1\tone\n2\tTWO\n3\tTHREE\n4\tTHREE-B\n5\tfour\n6\tfive$/)
    })

    it('reports bad ranges without changing the file', async () => {
      expect((await edit({ operation: 'line', path: 'a.txt', line_from: 9, content: 'x' })).error.message).to.equal('The file has 5 lines; line 9 does not exist.')
      expect((await edit({ operation: 'line', path: 'a.txt', line_from: 3, line_to: 2, content: 'x' })).error.code).to.equal('invalid-range')
      expect((await edit({ operation: 'line', path: 'a.txt', line_from: 1 })).error).to.include({ code: 'missing-argument' })
      expect(await content()).to.equal('one\ntwo\nthree\nfour\nfive\n')
    })
  })

  describe('search', () => {
    it('replaces a unique literal; several matches need global; none is an error', async () => {
      await writeFile(join(work, 'b.txt'), 'cost: $5\ncost: $5\nprice: $7\n')
      await edit({ operation: 'search', path: 'b.txt', search: 'price: $7', replace: 'price: $$8 $1 $&' })
      expect(await content('b.txt')).to.equal('cost: $5\ncost: $5\nprice: $$8 $1 $&\n')
      const ambiguous = await edit({ operation: 'search', path: 'b.txt', search: 'cost: $5', replace: 'x' })
      expect(ambiguous.error).to.include({ code: 'ambiguous-match', message: 'The text "cost: $5" occurs 2 times (lines 1, 2); it must occur exactly once.' })
      await edit({ operation: 'search', path: 'b.txt', search: 'cost: $5', replace: 'cost: $&', global: true })
      // Literal replacement text is inserted as is, for one match and for all of them alike.
      expect(await content('b.txt')).to.equal('cost: $&\ncost: $&\nprice: $$8 $1 $&\n')
      expect((await edit({ operation: 'search', path: 'b.txt', search: 'missing', replace: 'x' })).error.code).to.equal('no-match')
    })

    it('expands regex groups the same way for one match and for all', async () => {
      await writeFile(join(work, 'c.txt'), 'name=ann\nname=bob\n')
      await edit({ operation: 'search', path: 'c.txt', search: '^name=(?<who>a\\w+)$', regex: true, replace: 'user=${who} ($1, $<who>, $&, $$)' })
      expect(await content('c.txt')).to.equal('user=ann (ann, ann, name=ann, $)\nname=bob\n')
      await edit({ operation: 'search', path: 'c.txt', search: '(\\w+)=(\\w+)', regex: true, global: true, replace: '$2:$1' })
      expect(await content('c.txt')).to.equal('ann:user (ann, ann, ann:name, $)\nbob:name\n')
    })

    it('runs a catastrophic regex on 50 000 characters within a second (linear-time engine)', async () => {
      await writeFile(join(work, 'redos.txt'), 'a'.repeat(50000) + 'b')
      const start = Date.now()
      const result = await edit({ operation: 'search', path: 'redos.txt', search: '(a+)+$', regex: true, replace: 'x' })
      expect(Date.now() - start).to.be.below(1000)
      expect(result.error.code).to.equal('no-match')
      const invalid = await edit({ operation: 'search', path: 'redos.txt', search: '(a)\\1', regex: true, replace: 'x' })
      expect(invalid).to.include({ status: 'invalid' })
      expect(invalid.error.hint).to.contain('RE2')
    })
  })

  describe('insert and delete', () => {
    it('inserts on its own line before or after a unique anchor, or a line number', async () => {
      await edit({ operation: 'insert', path: 'a.txt', anchor: 'hre', position: 'before', content: 'before three' })
      await edit({ operation: 'insert', path: 'a.txt', anchor: 'four', content: 'after four\n' })
      await edit({ operation: 'insert', path: 'a.txt', line: 1, position: 'before', content: 'zero' })
      expect(await content()).to.equal('zero\none\ntwo\nbefore three\nthree\nfour\nafter four\nfive\n')
      expect((await edit({ operation: 'insert', path: 'a.txt', anchor: 'o', content: 'x' })).error.code).to.equal('ambiguous-match')
      expect((await edit({ operation: 'insert', path: 'a.txt', content: 'x' })).error.code).to.equal('missing-argument')
    })

    it('inserts after the last line of a file without a final newline', async () => {
      await writeFile(join(work, 'd.txt'), 'a\nb')
      await edit({ operation: 'insert', path: 'd.txt', anchor: 'b', content: 'c' })
      expect(await content('d.txt')).to.equal('a\nb\nc')
    })

    it('deletes distinct lines; duplicates and out-of-range numbers are reported and nothing changes', async () => {
      const bad = await edit({ operation: 'delete', path: 'a.txt', lines: [2, 2, 7, 9] })
      expect(bad.error.message).to.equal('Nothing was deleted: line 2 listed more than once; lines 7, 9 out of range (the file has 5 lines).')
      expect(await content()).to.equal('one\ntwo\nthree\nfour\nfive\n')
      const result = await edit({ operation: 'delete', path: 'a.txt', lines: [5, 1, 2] })
      expect(resultText(result)).to.match(/^Edited "a\.txt": deleted 3 lines \(1-2, 5\)\./)
      expect(await content()).to.equal('three\nfour\n')
      await edit({ operation: 'delete', path: 'a.txt', line_from: 1, line_to: 2 })
      expect(await content()).to.equal('')
    })
  })

  it('keeps CRLF line endings, a BOM and the mode bits', async () => {
    await writeFile(join(work, 'win.txt'), '\uFEFFalpha\r\nbeta\r\ngamma\r\n')
    await chmod(join(work, 'win.txt'), 0o600)
    await edit({ operation: 'search', path: 'win.txt', search: 'alpha\nbeta', replace: 'A\nB\nB2' })
    await edit({ operation: 'insert', path: 'win.txt', anchor: 'gamma', content: 'delta\nepsilon' })
    await edit({ operation: 'line', path: 'win.txt', line_from: 1, content: 'a' })
    expect(await content('win.txt')).to.equal('\uFEFFa\r\nB\r\nB2\r\ngamma\r\ndelta\r\nepsilon\r\n')
    expect((await stat(join(work, 'win.txt'))).mode & 0o777).to.equal(0o600)
    await writeFile(join(work, 'lf.txt'), 'x\ny\n')
    await edit({ operation: 'line', path: 'lf.txt', line_from: 2, content: 'Y\r\nZ' })
    expect(await content('lf.txt')).to.equal('x\nY\nZ\n')
  })

  describe('backups', () => {
    it('restores the latest backup, backing up the current content first; keeps maxHistory', async () => {
      for (const word of ['A', 'B', 'C', 'D']) {
        await edit({ operation: 'line', path: 'a.txt', line_from: 1, content: word })
      }
      const listed = resultText(await edit({ operation: 'list_backups', path: 'a.txt' })).split('\n')
      expect(listed[0]).to.equal('Backups of "a.txt" in this session, newest first (id, time UTC, size in bytes):')
      expect(listed).to.have.length(4)
      const restored = await edit({ operation: 'restore', path: 'a.txt' })
      expect(resultText(restored)).to.match(/^Restored "a\.txt" from backup \S+ \(22 bytes\)\. The content it replaced was backed up as \S+\.$/)
      expect(await content()).to.equal('C\ntwo\nthree\nfour\nfive\n')
      // Backups hold the content before each edit: C, B, A (the original was pruned, maxHistory 3).
      const ids = listed.slice(1).map((line) => line.split('\t')[0])
      await edit({ operation: 'restore', path: 'a.txt', backup: ids[1] })
      expect(await content()).to.equal('B\ntwo\nthree\nfour\nfive\n')
      // The restore before backed up D and pruned A.
      const after = resultText(await edit({ operation: 'list_backups', path: 'a.txt' })).split('\n').slice(1).map((line) => line.split('\t')[0])
      expect(after).to.have.length(3)
      expect(after).not.to.include(ids[2])
      expect((await edit({ operation: 'restore', path: 'a.txt', backup: ids[2] })).error.code).to.equal('no-backup')
      expect((await edit({ operation: 'restore', path: 'a.txt', backup: 'nope' })).error.code).to.equal('no-backup')
    })

    it('keeps backups per session: another user sees none', async () => {
      await edit({ operation: 'line', path: 'a.txt', line_from: 1, content: 'X' })
      expect(resultText(await edit({ operation: 'list_backups' }))).to.match(/^Backups in this session, newest first \(id, time UTC, size in bytes, file\):\n\S+\t\S+\t24\ta\.txt$/)
      const bob = { ...scope, userId: 'bob' }
      expect(resultText(await edit({ operation: 'list_backups', path: 'a.txt' }, bob))).to.equal('No backups of "a.txt" in this session.')
      expect((await edit({ operation: 'restore', path: 'a.txt' }, bob)).error.code).to.equal('no-backup')
    })

    for (const [label, hostile] of [
      ['user', { userId: '../../escape' }],
      ['channel', { channelId: '../../../../tmp/escape' }],
      ['platform', { platform: '..' }],
      ['agent', { agent: '/etc/passwd' }],
      ['every field', { platform: '..', channelId: '..', userId: '..', agent: '..' }],
    ] as const) {
      it(`keeps the backups inside the backups folder for a hostile ${label} in the session key`, async () => {
        const hostileScope = { ...hostile, authority: 5 }
        await edit({ operation: 'line', path: 'a.txt', line_from: 1, content: 'X' }, hostileScope)
        const sessions = await readdir(backups)
        expect(sessions).to.have.length(1)
        expect(sessions[0]).to.equal(sessionKey(hostileScope))
        expect(sessions[0]).to.match(/^[A-Za-z0-9_.-]+$/)
        expect(sessions[0]).not.to.match(/^\.\.?$/)
        const rel = relative(resolve(backups), resolve(backups, sessions[0]))
        expect(rel.startsWith('..') || rel.includes(sep)).to.equal(false)
        expect(await readdir(join(test.baseDir, 'data/chatluna-tools'))).to.deep.equal(['backups'])
        await edit({ operation: 'restore', path: 'a.txt' }, hostileScope)
        expect(await content()).to.equal('one\ntwo\nthree\nfour\nfive\n')
      })
    }

    it('gives sessions that sanitise alike different folders', () => {
      expect(sessionKey({ userId: 'a/b' })).not.to.equal(sessionKey({ userId: 'a_b' }))
      expect(sessionKey({ userId: 'x'.repeat(500) }).length).to.be.below(120)
    })
  })

  it('refuses binary files, missing files and paths outside the workDir', async () => {
    await writeFile(join(work, 'bin.dat'), Buffer.from([1, 0, 2]))
    expect((await edit({ operation: 'line', path: 'bin.dat', line_from: 1, content: 'x' })).error.code).to.equal('binary-file')
    expect((await edit({ operation: 'line', path: 'none.txt', line_from: 1, content: 'x' })).error.code).to.equal('not-found')
    const outside = await edit({ operation: 'line', path: '../x.txt', line_from: 1, content: 'x' })
    expect(outside).to.include({ status: 'denied' })
  })
})
