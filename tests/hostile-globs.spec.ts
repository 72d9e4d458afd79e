import { expect } from 'chai'
import { mkdir, writeFile } from 'fs/promises'
import { join } from 'path'
import { compileGlob } from '../src/visibility/glob'
import { matchTarget } from '../src/permission/rules'
import { createApp, TestApp } from './helpers/app'
import { resultText } from '../src/pipeline/result'

/*
 * Globs against hostile text: rule patterns with several stars against a
 * model's long command line or action name, a model's own search glob
 * against a long file name (backtracking regexes froze the bot for
 * minutes), and command lines whose paths hold `/./` or `/../` (picomatch's
 * path rules made `rm *` miss them).
 */
describe('hostile input: glob patterns', function () {
  this.timeout(5000)

  describe('the glob syntax', () => {
    const cases: [string, object, string[], string[]][] = [
      ['mcp__*', {}, ['mcp__a__b', 'mcp__'], ['mcp_a', 'x/mcp__a']],
      ['fs_{read,write}', {}, ['fs_read', 'fs_write'], ['fs_exec', 'fs_{read,write}']],
      ['src/**/*.ts', {}, ['src/a.ts', 'src/x/y/a.ts', 'src/.hidden/a.ts'], ['src/a.js', 'lib/a.ts']],
      ['**/x', {}, ['x', 'a/x', 'a/b/x'], ['a/xy']],
      ['notes/**', {}, ['notes', 'notes/a', 'notes/a/b'], ['notesx', 'other/notes/a']],
      ['*.ts', { basename: true }, ['a.ts', 'src/a/b.ts', '.x.ts'], ['a.tsx']],
      ['[abc]x', {}, ['ax', 'cx'], ['dx', 'abx']],
      ['[!a]x', {}, ['bx'], ['ax', '/x']],
      ['a\\*b', {}, ['a*b'], ['axb']],
      ['a/*/b', {}, ['a/x/b', 'a/.x/b'], ['a/../b', 'a/./b', 'a/x/y/b']],
      ['rm *', { mode: 'text' }, ['rm -rf /tmp/../etc', 'rm x/./y', 'rm a/b'], ['rmdir x']],
      ['exec:git*', {}, ['exec:git', 'exec:gitk'], ['exec:hg']],
    ]
    for (const [pattern, options, yes, no] of cases) {
      it(`reads ${JSON.stringify(pattern)} ${JSON.stringify(options)}`, () => {
        const match = compileGlob(pattern, options)
        for (const text of yes) expect(match(text), text).to.equal(true)
        for (const text of no) expect(match(text), text).to.equal(false)
      })
    }
  })

  it('matches a rule target with many stars against a 45 kB command line in linear time', () => {
    const line = 'git push '.repeat(5000)
    expect(matchTarget('*git*push*origin*', line, 'exec', '/w')).to.equal(false)
    expect(matchTarget('*a*a*a*a*a*a*a*a*b', 'a'.repeat(100000), 'exec', '/w')).to.equal(false)
  })

  it('applies a deny rule with a star to command lines whose paths hold /./ or /../', () => {
    for (const line of ['rm -rf /tmp/../etc', 'rm x/./y', 'curl http://h/a/../b']) {
      expect(matchTarget(line.startsWith('curl') ? 'curl *' : 'rm *', line, 'exec', '/w'), line).to.equal(true)
    }
  })

  describe('through the tools', () => {
    let test: TestApp
    afterEach(() => test?.dispose())

    it('decides a call whose action name is 50 000 characters against a rule with many stars', async () => {
      test = await createApp({ workDir: 'work', bash: { mode: 'deny', deny: [] } }, { database: true })
      await test.app.tools.permissions.rules.add({ effect: 'deny', action: 'exec:*a*a*a*a*a*a*a*a*b' })
      const name = 'a'.repeat(50000)
      const decision = test.app.tools.permissions.decide({ name: `exec:${name}`, effect: 'exec' }, test.app.tools.permissions.subjectOf({ authority: 5 }))
      expect(decision.decision).to.equal('allow')
    })

    it('runs a model\'s search glob with many stars against a long file name in linear time', async () => {
      test = await createApp({ workDir: 'work', bash: { enabled: false } })
      await mkdir(join(test.baseDir, 'work'), { recursive: true })
      await writeFile(join(test.baseDir, 'work', 'a'.repeat(60)), 'needle\n')
      await writeFile(join(test.baseDir, 'work', 'aaaaaaaaaab.txt'), 'needle\n')
      const result = await test.app.tools.call({
        name: 'read',
        args: { operation: 'search', path: '.', query: 'needle', pattern: '*a*a*a*a*a*a*a*a*a*a*b*', output_mode: 'files_with_matches' },
        scope: { authority: 1 },
      })
      expect(result.ok, resultText(result)).to.equal(true)
      expect(resultText(result)).to.contain('aaaaaaaaaab.txt')
    })
  })
})
