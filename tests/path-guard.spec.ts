import { expect } from 'chai'
import { promises as fs } from 'fs'
import { tmpdir } from 'os'
import { join, sep } from 'path'
import { contains, PathGuard, PathGuardCode, PathGuardError, ResolvedPath } from '../src/builtin/path-guard'

// Layout under a fresh temp dir `base` (real path):
//   work/file.txt  work/sub/inner.txt  work/ro-in/r.txt
//   work/link-in -> sub/inner.txt        work/linkdir-in -> sub
//   work/link-out -> ../outside/secret.txt
//   work/linkdir-out -> ../outside
//   work/dangling-out -> ../outside/missing-dir   (target does not exist)
//   work/dangling-in -> new-dir                   (target does not exist)
//   work/loop-a -> loop-b  work/loop-b -> loop-a
//   work-evil/x.txt  outside/secret.txt  extra/e.txt  ro/r.txt
//   work-link -> work
let base: string
let work: string

async function layout(root: string) {
  const files = ['work/file.txt', 'work/sub/inner.txt', 'work/ro-in/r.txt',
    'work-evil/x.txt', 'outside/secret.txt', 'extra/e.txt', 'ro/r.txt']
  for (const file of files) {
    await fs.mkdir(join(root, file, '..'), { recursive: true })
    await fs.writeFile(join(root, file), file)
  }
  const links: [string, string][] = [
    ['work/link-in', 'sub/inner.txt'],
    ['work/linkdir-in', 'sub'],
    ['work/link-out', '../outside/secret.txt'],
    ['work/linkdir-out', '../outside'],
    ['work/dangling-out', '../outside/missing-dir'],
    ['work/dangling-in', 'new-dir'],
    ['work/loop-a', 'loop-b'],
    ['work/loop-b', 'loop-a'],
    ['work-link', 'work'],
  ]
  for (const [link, target] of links) await fs.symlink(target, join(root, link))
}

function guard(extra: Partial<ConstructorParameters<typeof PathGuard>[0]> = {}) {
  return new PathGuard({
    workDir: work,
    extraDirs: [join(base, 'extra')],
    readOnlyDirs: [join(base, 'ro'), join(work, 'ro-in')],
    ...extra,
  })
}

async function refusal(promise: Promise<unknown>): Promise<PathGuardError> {
  try {
    await promise
  } catch (error) {
    expect(error).to.be.instanceOf(PathGuardError)
    expect(error).to.be.instanceOf(Error)
    return error as PathGuardError
  }
  throw new Error('expected a PathGuardError, got a resolved path')
}

interface Case {
  name: string
  input: () => string
  write?: boolean
  // Expected result (paths relative to `base`), or the refusal code.
  expect: { path: string, relative: string, root: string, exists: boolean } | PathGuardCode
}

const cases: Case[] = [
  { name: 'plain relative file', input: () => 'file.txt',
    expect: { path: 'work/file.txt', relative: 'file.txt', root: 'work', exists: true } },
  { name: './ prefix and redundant segments', input: () => './sub//./inner.txt',
    expect: { path: 'work/sub/inner.txt', relative: 'sub/inner.txt', root: 'work', exists: true } },
  { name: 'nested new file, parent exists', input: () => 'sub/new.txt', write: true,
    expect: { path: 'work/sub/new.txt', relative: 'sub/new.txt', root: 'work', exists: false } },
  { name: 'deeply new path, parents missing', input: () => 'a/b/c/d.txt', write: true,
    expect: { path: 'work/a/b/c/d.txt', relative: 'a/b/c/d.txt', root: 'work', exists: false } },
  { name: '.. that stays inside', input: () => 'sub/../file.txt',
    expect: { path: 'work/file.txt', relative: 'file.txt', root: 'work', exists: true } },
  { name: '.. escape', input: () => '../outside/secret.txt', expect: 'outside-workdir' },
  { name: 'a/../../x', input: () => 'a/../../x', expect: 'outside-workdir' },
  { name: '.. escape of a new file through a missing dir', input: () => 'missing/../../../x.txt',
    write: true, expect: 'outside-workdir' },
  { name: '.. out and back in', input: () => '../work/file.txt',
    expect: { path: 'work/file.txt', relative: 'file.txt', root: 'work', exists: true } },
  { name: 'absolute path inside', input: () => join(work, 'sub', 'inner.txt'),
    expect: { path: 'work/sub/inner.txt', relative: 'sub/inner.txt', root: 'work', exists: true } },
  { name: 'absolute path outside', input: () => join(base, 'outside', 'secret.txt'),
    expect: 'outside-workdir' },
  { name: 'absolute system path', input: () => '/etc/passwd', expect: 'outside-workdir' },
  { name: 'prefix-sibling work-evil', input: () => join(base, 'work-evil', 'x.txt'),
    expect: 'outside-workdir' },
  { name: 'prefix-sibling via ..', input: () => '../work-evil/x.txt', expect: 'outside-workdir' },
  { name: 'prefix-sibling dir itself', input: () => join(base, 'work-evil'), expect: 'outside-workdir' },
  { name: 'symlink file inside -> inside', input: () => 'link-in',
    expect: { path: 'work/sub/inner.txt', relative: 'sub/inner.txt', root: 'work', exists: true } },
  { name: 'symlink dir inside -> inside, new file', input: () => 'linkdir-in/new.txt', write: true,
    expect: { path: 'work/sub/new.txt', relative: 'sub/new.txt', root: 'work', exists: false } },
  { name: 'symlink file -> outside', input: () => 'link-out', expect: 'outside-workdir' },
  { name: 'symlink file -> outside, write', input: () => 'link-out', write: true,
    expect: 'outside-workdir' },
  { name: 'symlink parent dir -> outside, existing file', input: () => 'linkdir-out/secret.txt',
    expect: 'outside-workdir' },
  { name: 'symlink parent dir -> outside, new file', input: () => 'linkdir-out/new.txt',
    write: true, expect: 'outside-workdir' },
  { name: 'dangling symlink -> missing outside path as parent', input: () => 'dangling-out/new.txt',
    write: true, expect: 'outside-workdir' },
  { name: 'dangling symlink -> missing outside path itself', input: () => 'dangling-out',
    write: true, expect: 'outside-workdir' },
  { name: 'dangling symlink -> missing inside path as parent', input: () => 'dangling-in/x.txt',
    write: true,
    expect: { path: 'work/new-dir/x.txt', relative: 'new-dir/x.txt', root: 'work', exists: false } },
  { name: 'symlink loop', input: () => 'loop-a/x', expect: 'unresolvable' },
  { name: 'NUL byte', input: () => 'file.txt\0.png', expect: 'nul-byte' },
  { name: 'NUL byte alone', input: () => '\0', expect: 'nul-byte' },
  { name: 'over-long path', input: () => 'a/'.repeat(2049), expect: 'too-long' },
  { name: 'empty string', input: () => '', expect: 'empty-path' },
  { name: 'whitespace only', input: () => '  \t', expect: 'empty-path' },
  { name: '. is the workDir itself', input: () => '.',
    expect: { path: 'work', relative: '.', root: 'work', exists: true } },
  { name: 'absolute workDir itself', input: () => work,
    expect: { path: 'work', relative: '.', root: 'work', exists: true } },
  { name: 'extra dir, read', input: () => join(base, 'extra', 'e.txt'),
    expect: { path: 'extra/e.txt', relative: 'e.txt', root: 'extra', exists: true } },
  { name: 'extra dir, write new', input: () => '../extra/new.txt', write: true,
    expect: { path: 'extra/new.txt', relative: 'new.txt', root: 'extra', exists: false } },
  { name: 'read-only dir, read', input: () => join(base, 'ro', 'r.txt'),
    expect: { path: 'ro/r.txt', relative: 'r.txt', root: 'ro', exists: true } },
  { name: 'read-only dir, write', input: () => join(base, 'ro', 'r.txt'), write: true,
    expect: 'read-only' },
  { name: 'read-only dir, write new file', input: () => '../ro/new.txt', write: true,
    expect: 'read-only' },
  { name: 'read-only dir inside workDir, read', input: () => 'ro-in/r.txt',
    expect: { path: 'work/ro-in/r.txt', relative: 'r.txt', root: 'work/ro-in', exists: true } },
  { name: 'read-only dir inside workDir, write', input: () => 'ro-in/r.txt', write: true,
    expect: 'read-only' },
  { name: 'backslashes are plain characters', input: () => '..\\outside\\secret.txt', write: true,
    expect: { path: 'work/..\\outside\\secret.txt', relative: '..\\outside\\secret.txt',
      root: 'work', exists: false } },
  { name: 'file used as a directory', input: () => 'file.txt/x',
    expect: { path: 'work/file.txt/x', relative: 'file.txt/x', root: 'work', exists: false } },
]

const at = (rel: string) => join(base, ...rel.split('/'))

describe('builtin/path-guard', () => {
  before(async function () {
    if (process.platform === 'win32') this.skip()
    base = await fs.realpath(await fs.mkdtemp(join(tmpdir(), 'path-guard-')))
    work = join(base, 'work')
    await layout(base)
  })

  after(async () => {
    if (base) await fs.rm(base, { recursive: true, force: true })
  })

  describe('resolve', () => {
    for (const c of cases) {
      it(`${c.name} → ${typeof c.expect === 'string' ? c.expect : 'allowed'}`, async () => {
        const input = c.input()
        const promise = guard().resolve(input, { write: c.write })
        if (typeof c.expect === 'string') {
          const error = await refusal(promise)
          expect(error.code).to.equal(c.expect)
          expect(error.path).to.equal(input)
          expect(error.message).to.be.a('string').and.not.empty
        } else {
          const result: ResolvedPath = await promise
          expect(result).to.deep.equal({
            path: at(c.expect.path),
            relative: c.expect.relative,
            root: at(c.expect.root),
            exists: c.expect.exists,
            readOnly: ['ro', 'work/ro-in'].includes(c.expect.root),
          })
        }
      })
    }
  })

  describe('messages', () => {
    it('say why and never show where an outside link points', async () => {
      for (const input of ['link-out', 'linkdir-out/secret.txt', 'dangling-out/new.txt']) {
        const error = await refusal(guard().resolve(input))
        expect(error.message).to.include('symbolic link').and.include('outside')
        expect(error.message).to.not.include(base)
        expect(error.message).to.not.include('missing-dir')
        expect(error.message).to.not.include('../outside')
      }
    })

    it('name .. and absolute escapes', async () => {
      expect((await refusal(guard().resolve('../x'))).message).to.include('".."')
      expect((await refusal(guard().resolve('/etc/passwd'))).message).to.include('absolute')
      expect((await refusal(guard().resolve('../ro/r.txt', { write: true }))).message)
        .to.include('read-only')
    })

    it('escape a NUL byte and cut a long input', async () => {
      const nul = await refusal(guard().resolve('a\0b'))
      expect(nul.message).to.include('"a\\u0000b"')
      const long = await refusal(guard({ maxPathLength: 300 }).resolve('x'.repeat(301)))
      expect(long.message.length).to.be.below(200)
    })
  })

  describe('options', () => {
    it('honours maxPathLength in characters', async () => {
      const small = guard({ maxPathLength: 8 })
      expect((await small.resolve('file.txt')).relative).to.equal('file.txt')
      expect((await refusal(small.resolve('sub/x.txt'))).code).to.equal('too-long')
    })

    it('maps ENAMETOOLONG from the OS to too-long', async () => {
      const error = await refusal(guard({ maxPathLength: 100000 }).resolve('x'.repeat(5000)))
      expect(error.code).to.equal('too-long')
    })

    it('accepts a workDir given as a symlink and resolves it once', async () => {
      const linked = new PathGuard({ workDir: join(base, 'work-link') })
      const roots = await linked.getRoots()
      expect(roots).to.deep.equal([{ path: work, readOnly: false, workDir: true }])
      const viaRelative = await linked.resolve('sub/inner.txt')
      expect(viaRelative).to.include({ path: at('work/sub/inner.txt'), root: work, relative: 'sub/inner.txt' })
      const viaLink = await linked.resolve(join(base, 'work-link', 'file.txt'))
      expect(viaLink).to.include({ path: at('work/file.txt'), relative: 'file.txt', exists: true })
      expect((await linked.resolve('.')).path).to.equal(work)
      expect((await refusal(linked.resolve('../work-evil/x.txt'))).code).to.equal('outside-workdir')
      expect((await refusal(linked.resolve('link-out'))).code).to.equal('outside-workdir')
    })

    it('works when os.tmpdir() itself is reached through a symlink', async () => {
      // The guard is given the unresolved temp path; results are real paths.
      const raw = join(tmpdir(), base.split(sep).pop()!, 'work')
      const result = await new PathGuard({ workDir: raw }).resolve(join(raw, 'file.txt'))
      expect(result.path).to.equal(at('work/file.txt'))
    })

    it('create() makes a missing workDir (mkdir -p)', async () => {
      const dir = join(base, 'fresh', 'a', 'b')
      const created = await PathGuard.create({ workDir: dir })
      expect((await fs.stat(dir)).isDirectory()).to.equal(true)
      expect(await created.resolve('.')).to.deep.equal({
        path: dir, relative: '.', root: dir, exists: true, readOnly: false,
      })
    })

    it('resolves a missing workDir through its nearest existing ancestor', async () => {
      const dir = join(base, 'later')
      const lazy = new PathGuard({ workDir: dir })
      expect(await lazy.resolve('x.txt')).to.include({ path: join(dir, 'x.txt'), exists: false })
      await fs.mkdir(dir)
      await fs.writeFile(join(dir, 'x.txt'), '')
      expect(await lazy.resolve('x.txt')).to.include({ path: join(dir, 'x.txt'), exists: true })
    })

    it('lets a dir listed as both extra and read-only be read-only', async () => {
      const both = guard({ extraDirs: [join(base, 'ro')] })
      expect((await both.resolve('../ro/r.txt')).readOnly).to.equal(true)
      expect((await refusal(both.resolve('../ro/r.txt', { write: true }))).code).to.equal('read-only')
    })

    it('rejects relative root directories', () => {
      expect(() => new PathGuard({ workDir: 'relative/dir' })).to.throw(TypeError)
      expect(() => new PathGuard({ workDir: work, readOnlyDirs: ['ro'] })).to.throw(TypeError)
    })

    it('reports empty-path for a non-string input', async () => {
      expect((await refusal(guard().resolve(undefined as any))).code).to.equal('empty-path')
    })
  })

  describe('contains', () => {
    const table: [string, string, boolean][] = [
      ['/w/work', '/w/work', true],
      ['/w/work', '/w/work/', true],
      ['/w/work', '/w/work/a/b', true],
      ['/w/work', '/w/work/..foo', true],
      ['/w/work', '/w/work-evil', false],
      ['/w/work', '/w/work-evil/x', false],
      ['/w/work', '/w', false],
      ['/w/work', '/w/other', false],
      ['/w/work', '/', false],
      ['/', '/anything', true],
    ]
    for (const [root, path, inside] of table) {
      it(`${path} ${inside ? 'is' : 'is not'} inside ${root}`, () => {
        expect(contains(root, path)).to.equal(inside)
      })
    }
  })
})
