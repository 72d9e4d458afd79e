import { expect } from 'chai'
import { mkdir, symlink, utimes, writeFile } from 'fs/promises'
import { join } from 'path'
import { createApp, TestApp } from './helpers/app'
import { resultText } from '../src/pipeline/result'

describe('builtin read (search and list)', () => {
  let test: TestApp
  let work: string
  beforeEach(async () => {
    test = await createApp({ workDir: 'work', extraDirs: ['shared'], read: { maxSearchResults: 4, maxListEntries: 6 } })
    work = join(test.baseDir, 'work')
    await mkdir(join(work, 'src/deep/er'), { recursive: true })
    await mkdir(join(work, 'node_modules/pkg'), { recursive: true })
    await mkdir(join(work, '.git'), { recursive: true })
    await mkdir(join(test.baseDir, 'shared'), { recursive: true })
    await mkdir(join(test.baseDir, 'outside'), { recursive: true })
    await writeFile(join(work, 'notes.txt'), 'alpha\nbeta\nTODO one\ngamma\ndelta\nTODO two\nepsilon\n')
    await writeFile(join(work, 'src/a.ts'), 'const a = 1 // TODO a\n')
    await writeFile(join(work, 'src/deep/er/b.ts'), 'x\ny\nTODO b\n')
    await writeFile(join(work, 'src/c.js'), 'TODO c\n')
    await writeFile(join(work, 'node_modules/pkg/index.ts'), 'TODO in a dependency\n')
    await writeFile(join(work, '.git/HEAD'), 'TODO git\n')
    await writeFile(join(work, 'image.bin'), Buffer.from([0, 1, 2, 84, 79, 68, 79]))
    await writeFile(join(test.baseDir, 'shared/s.txt'), 'TODO shared\n')
    await writeFile(join(test.baseDir, 'outside/secret.txt'), 'TODO SECRET-CONTENT\n')
    await symlink(join(test.baseDir, 'outside'), join(work, 'src/link-out'))
    const when = new Date('2025-01-02T03:04:05Z')
    for (const path of ['notes.txt', 'src', 'image.bin', 'node_modules', '.git']) await utimes(join(work, path), when, when)
  })
  afterEach(() => test.dispose())

  const read = (args: object) => test.app.tools.call({ name: 'read', args })
  const text = async (args: object) => resultText(await read(args))

  describe('search', () => {
    it('finds a literal in one file, grep style with line numbers', async () => {
      expect(await text({ operation: 'search', path: 'notes.txt', query: 'TODO' })).to.equal('notes.txt:3:TODO one\nnotes.txt:6:TODO two')
    })

    it('shows context lines and separates distant blocks with --', async () => {
      expect(await text({ operation: 'search', path: 'notes.txt', query: 'TODO', context: 1 })).to.equal([
        'notes.txt-2-beta', 'notes.txt:3:TODO one', 'notes.txt-4-gamma',
        'notes.txt-5-delta', 'notes.txt:6:TODO two', 'notes.txt-7-epsilon',
      ].join('\n'))
      expect(await text({ operation: 'search', path: 'notes.txt', query: 'alpha|epsilon', regex: true, context_after: 1 })).to.equal(
        'notes.txt:1:alpha\nnotes.txt-2-beta\n--\nnotes.txt:7:epsilon')
      expect(await text({ operation: 'search', path: 'notes.txt', query: 'gamma', context_before: 2, context: 0 })).to.equal(
        'notes.txt-2-beta\nnotes.txt-3-TODO one\nnotes.txt:4:gamma')
    })

    it('walks directories in name order, skipping .git, node_modules, binary files and links', async () => {
      expect(await text({ operation: 'search', path: '.', query: 'TODO', output_mode: 'files_with_matches' })).to.equal(
        'notes.txt\nsrc/a.ts\nsrc/c.js\nsrc/deep/er/b.ts')
    })

    it('filters files with a glob: basename patterns at any depth, ** recursion', async () => {
      expect(await text({ operation: 'search', path: '.', query: 'TODO', pattern: '*.ts', output_mode: 'files_with_matches' })).to.equal('src/a.ts\nsrc/deep/er/b.ts')
      expect(await text({ operation: 'search', path: 'src', query: 'TODO', pattern: 'deep/**/*.ts' })).to.equal('src/deep/er/b.ts:3:TODO b')
    })

    it('counts matches per file', async () => {
      expect(await text({ operation: 'search', path: '.', query: 'todo', ignore_case: true, output_mode: 'count', pattern: '*.txt' })).to.equal(
        'notes.txt:2\nTotal: 2 matches in 1 files.')
    })

    it('stops at head_limit and at maxSearchResults and says so', async () => {
      expect(await text({ operation: 'search', path: '.', query: 'TODO', head_limit: 2 })).to.equal([
        'notes.txt:3:TODO one', 'notes.txt:6:TODO two', '',
        '[showing the first 2 matching lines; more exist. Narrow the search with path or pattern, or use output_mode "count".]',
      ].join('\n'))
      const capped = await text({ operation: 'search', path: '.', query: 'TODO', head_limit: 100 })
      expect(capped.split('\n').filter((line) => /:\d+:/.test(line))).to.have.length(4)
      expect(capped).to.contain('[showing the first 4 matching lines; more exist.')
    })

    it('searches an extra allowed dir and shows its absolute paths', async () => {
      const shared = join(test.baseDir, 'shared')
      expect(await text({ operation: 'search', path: shared, query: 'TODO' })).to.equal(`${join(shared, 's.txt')}:1:TODO shared`)
    })

    it('says when nothing matches, and refuses bad input clearly', async () => {
      expect(await text({ operation: 'search', path: '.', query: 'no such text' })).to.equal('No matches for "no such text" in ".".')
      expect((await read({ operation: 'search', path: '.' })).error).to.include({ code: 'missing-query' })
      const bad = await read({ operation: 'search', path: '.', query: '(unclosed', regex: true })
      expect(bad).to.include({ status: 'invalid' })
      expect(bad.error.code).to.equal('invalid-regex')
      expect((await read({ operation: 'search', path: '.', query: 'x'.repeat(1001) })).error.code).to.equal('pattern-too-long')
      const outside = await read({ operation: 'search', path: '../outside', query: 'TODO' })
      expect(outside).to.include({ status: 'denied' })
      expect(JSON.stringify(outside)).not.to.contain('SECRET-CONTENT')
    })

    it('answers a catastrophic regex on a huge line within a second (linear-time engine)', async () => {
      await writeFile(join(work, 'redos.txt'), 'a'.repeat(50000) + 'b\n')
      const start = Date.now()
      const result = await read({ operation: 'search', path: 'redos.txt', query: '(a+)+$', regex: true })
      expect(Date.now() - start).to.be.below(1000)
      expect(resultText(result)).to.equal('No matches for "(a+)+$" in "redos.txt".')
    })
  })

  describe('list', () => {
    it('lists entries with type, size and modified time, directories first', async () => {
      expect(await text({ operation: 'list', path: '.' })).to.equal([
        'Directory ".": 5 entries (type, size in bytes, modified UTC, name)',
        'dir\t-\t2025-01-02T03:04:05Z\t.git/ (not listed: skipped by default)',
        'dir\t-\t2025-01-02T03:04:05Z\tnode_modules/ (not listed: skipped by default)',
        'dir\t-\t2025-01-02T03:04:05Z\tsrc/',
        'file\t7\t2025-01-02T03:04:05Z\timage.bin',
        'file\t49\t2025-01-02T03:04:05Z\tnotes.txt',
      ].join('\n'))
    })

    it('descends with depth, shows links without following them, and cuts at maxListEntries', async () => {
      const listing = await text({ operation: 'list', path: 'src', depth: 3 })
      const names = listing.split('\n').slice(1).map((line) => line.split('\t').slice(0, 1).concat(line.split('\t')[3]).join(' '))
      expect(names).to.deep.equal(['dir deep/', 'dir deep/er/', 'file deep/er/b.ts', 'file a.ts', 'file c.js', 'link→dir link-out'])
      expect(listing).not.to.contain('secret')
      const cut = await text({ operation: 'list', path: '.', depth: 5 })
      expect(cut.split('\n')[0]).to.equal('Directory ".": 6 entries (type, size in bytes, modified UTC, name)')
      expect(cut).to.match(/\[showing the first 6 entries; more exist\. Use a pattern or a smaller depth\.\]$/)
    })

    it('filters with a pattern and reports empty results and files clearly', async () => {
      expect((await text({ operation: 'list', path: '.', depth: 4, pattern: '*.ts' })).split('\n').slice(1).map((line) => line.split('\t')[3])).to.deep.equal(['src/deep/er/b.ts', 'src/a.ts'])
      expect(await text({ operation: 'list', path: '.', pattern: '*.none' })).to.equal('Nothing in "." matches "*.none".')
      await mkdir(join(work, 'empty'))
      expect(await text({ operation: 'list', path: 'empty' })).to.equal('Directory "empty" is empty.')
      expect((await read({ operation: 'list', path: 'notes.txt' })).error).to.include({ code: 'not-a-directory' })
      expect((await read({ operation: 'list', path: '../outside' })).error).to.include({ code: 'outside-workdir' })
    })

    it('treats a workspace that was never written to as empty', async () => {
      await test.dispose()
      test = await createApp({ workDir: 'fresh' })
      expect(await text({ operation: 'list', path: '.' })).to.equal('Directory "." is empty.')
      expect(await text({ operation: 'search', path: '.', query: 'x' })).to.equal('No matches for "x" in ".".')
      expect((await read({ operation: 'list', path: 'missing' })).error.code).to.equal('not-found')
    })
  })
})
