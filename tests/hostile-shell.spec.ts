import { expect } from 'chai'
import { chmod, mkdir, stat, writeFile } from 'fs/promises'
import { join } from 'path'
import { Dict } from 'koishi'
import { commandParts, compileRules } from '../src/builtin/shell/rules'
import { defaultDeny, defaultDenyArgs } from '../src/builtin/config'
import { resultText } from '../src/pipeline/result'
import { ToolAction } from '../src'
import { createApp, TestApp } from './helpers/app'

/*
 * Hostile command lines found by a review of the bash analysis, beyond the
 * issue's list: wrappers read with options the analysis did not know
 * (`env -`, `xargs -0`, abbreviated long options), wrappers and programs
 * it did not know at all, and shell functions that are not what they seem
 * in allow mode. Each must not run chmod (or a command off the allow
 * list) without a human.
 */

const denyChmod = compileRules({ mode: 'deny', allow: [], deny: ['chmod'], denyArgs: [] })
const defaults = compileRules({ mode: 'deny', allow: [], deny: defaultDeny, denyArgs: defaultDenyArgs })
const verdicts = (parts: ToolAction[]) => parts.map((part) => part.verdict).filter(Boolean)

/** Wrappers whose options hid the command: chmod must be found and denied. */
const hiddenByOptions = [
  'env - chmod 777 f', 'env -i - chmod 777 f', 'printf "f\\0" | xargs -0 chmod 777', 'xargs --null -r chmod 777',
  'xargs -i{} chmod 777 {}', 'xargs -l1 chmod 777', 'xargs -e chmod 777', 'timeout --foreground 5 chmod 777 f',
  'timeout --kill 1 5 chmod 777 f', 'env --split "chmod 777 f"', 'env --chdir /tmp chmod 777 f', 'sudo --user root chmod 777 f',
  'toybox chmod 777 f', 'chrt -f 1 chmod 777 f', 'chrt 1 chmod 777 f', 'prlimit --nofile=10 chmod 777 f', 'prlimit -n10 chmod 777 f',
  'setpriv --reuid 1000 chmod 777 f', 'fakeroot -- chmod 777 f', 'numactl -N 0 chmod 777 f', 'valgrind --tool=none chmod 777 f',
  'catchsegv chmod 777 f', 'xvfb-run -a chmod 777 f', 'sshpass -p pw chmod 777 f', 'torsocks chmod 777 f', 'proxychains4 -q chmod 777 f',
  'firejail chmod 777 f', 'unbuffer -p chmod 777 f', 'nice -n 1 ionice -c 3 chmod 777 f',
]

/** Deny rules written with short options, met with long ones, abbreviations or another spelling of the path. */
const respelled = [
  'rm --recursive --force /x', 'rm --recur --forc /x', 'rm --rec -f x', 'rm -r --forc x', 'rm --no-pres -rf /',
  'chmod --recursive 777 x', 'chown --recursive u x', 'git push --forc origin main', 'git clean --force -d', 'git reset --har HEAD~1',
  'git push origin +main', 'dd if=x of=//dev/sda', 'dd if=x of=/dev/../dev/sda', 'dd if=x of=/dev/./sda',
]

/** Lines that must ask: options or programs the analysis cannot see through. */
const mustAsk: [string, RegExp][] = [
  ['timeout --mystery 5 chmod 777 f', /option --mystery of timeout is not known/],
  ['env -Z chmod 777 f', /option -Z of env is not known/],
  ['timeout -5 chmod 777 f', /option -5 of timeout is not known/],
  ['firejail --private chmod 777 f', /option --private of firejail is not known/],
  ['dbus-run-session --dbus-daemon=./x chmod 777 f', /dbus-run-session --dbus-daemon runs the program/],
  [`tmux new -d 'chmod 777 f'`, /tmux runs commands/],
  ['screen -dm chmod 777 f', /screen runs commands/],
  [`sg wheel -c 'chmod 777 f'`, /sg runs a command string/],
  ['runcon x chmod 777 f', /runcon runs a command/],
  ['bwrap --bind / / chmod 777 f', /bwrap runs a command/],
  ['perf stat chmod 777 f', /perf runs the command it measures/],
  ['entr chmod 777 f', /entr runs a command/],
  ['npx chmod 777 f', /npx runs a command of a package/],
  ['npm exec -- chmod 777 f', /npm exec runs a command of a package/],
  ['pnpm dlx cowsay', /pnpm dlx runs a command of a package/],
  ['docker run --rm -v /:/h alpine chmod 777 /h/f', /docker runs commands in a container/],
  ['git --exec-path=. x', /git --exec-path/],
  [`git rebase -x 'chmod 777 f' HEAD~1`, /git rebase --exec/],
  [`git rebase --exec='chmod 777 f' HEAD~1`, /git rebase --exec/],
  [`git difftool -x 'chmod 777 f'`, /git difftool --extcmd/],
  ['git bisect run chmod 777 f', /git bisect run/],
  [`git submodule foreach 'chmod 777 f'`, /git submodule foreach/],
  [`git filter-branch --tree-filter 'chmod 777 f'`, /git filter-branch/],
  [`git fetch --upload-pack='chmod 777 f' origin`, /--upload-pack/],
  [`git grep -O'chmod 777 f' x`, /git grep -O/],
  [`man -P 'chmod 777 f' ls`, /man runs the pager/],
  [`ed f <<< '!chmod 777 f'`, /ed runs the editing commands/],
  [`dc -e '!chmod 777 f'`, /dc runs the program/],
  ['m4 x.m4', /m4 runs syscmd/],
  ['awk -E prog.awk', /awk -E runs awk code from a file/],
  ['gawk --exec=prog.awk', /gawk --exec=prog.awk runs awk code from a file/],
  ['script out.log', /script without a command opens an interactive shell/],
  [`apt-get -o APT::Update::Pre-Invoke::='chmod 777 f' update`, /apt runs a command given in its -o options/],
]

/** Arithmetic that reads a variable whose value comes from run time (a file may hold `a[$(chmod 777 f)]`). */
const taintedArithmetic: [string, string][] = [
  ['x=$(cat f); echo $((x))', 'the variable x'],
  ['read n < f; echo $((n + 1))', 'the variable n'],
  ['read n < f; [[ $n -gt 0 ]]', 'the variable n'],
  ['x=$(cat f); a[$x]=1', 'the variable x'],
  ['x=$(cat f); echo ${a[x]}', 'the variable x'],
  ['x=$(cat f); echo ${s:x}', 'the variable x'],
  ['mapfile -t a < f; echo $(( a[0] ))', 'the variable a'],
  ['for f in *; do (( f )); done', 'the variable f'],
  ['x=$(cat f); let y=x', 'the variable x'],
  ['x=$(cat f); declare -i y=$x', 'the variable x'],
  [`export X=$(cat f); bash -c 'echo $((X))'`, 'the variable X'],
  ['set -- $(cat f); echo $(($1))', 'the positional parameter $1'],
  ['x=$(<f); (( x ))', 'the variable x'],
  [`printf -v x %s "$(cat f)"; echo $((x))`, 'the variable x'],
  ['x=$(cat f); for ((i = 0; i < x; i++)); do echo; done', 'the variable x'],
]

/** Lines these changes must not start asking about. */
const stillHarmless = [
  'env -i HOME=/tmp ls', 'xargs -0 -n 1 echo < f', 'timeout 5 ls', 'timeout --preserve-status 5s ls', 'nice -5 ls', 'git rebase main',
  'git fetch origin', 'git grep -n x', 'man ls', 'docker ps', 'npm test', 'perf --version', `script -q -c 'ls' /dev/null`,
  'command -pv ls', 'sudo -l',
  'n=$(wc -l < f); echo "$n"', 'i=0; while (( i < 3 )); do i=$((i + 1)); done', 'for i in 1 2 3; do echo $((i * 2)); done',
  'len=${#s}; echo $((len + 1))', 'x=$(cat f); [[ $x == y ]]', 'echo $((RANDOM % 5))',
]

/** In allow mode, a name the line defines as a function counts as a function only where it surely is one. */
const notFunctions = [
  'chmod 777 f; chmod() { true; }',
  '(chmod() { true; }); chmod 777 f',
  'true || chmod() { true; }; chmod 777 f',
  'if true; then chmod() { true; }; fi; chmod 777 f',
  'echo | chmod() { true; }; chmod 777 f',
  'chmod() { true; } & chmod 777 f',
  'chmod() { true; }; unset -f chmod; chmod 777 f',
  'chmod() { true; }; eval "unset -f chmod"; chmod 777 f',
  'chmod() { true; }; env chmod 777 f',
  'chmod() { true; }; echo f | xargs chmod 777',
  'chmod() { true; }; find . -exec chmod 777 {} +',
  `chmod() { true; }; bash -c 'chmod 777 f'`,
]

describe('hostile input: shell analysis', () => {
  describe('wrappers whose options hid the command', () => {
    for (const line of hiddenByOptions) {
      it(`finds and denies chmod in ${JSON.stringify(line)}`, () => {
        const parts = commandParts(line, denyChmod)
        const verdict = parts.find((part) => part.name === 'exec:chmod')?.verdict
          ?? (parts.some((part) => part.verdict === 'ask') ? 'ask' : undefined)
        expect(verdict, JSON.stringify(parts)).to.be.oneOf(['deny', 'ask'])
      })
    }
  })

  describe('deny rules and other spellings of the same arguments', () => {
    for (const line of respelled) {
      it(`denies ${JSON.stringify(line)} by the default rules`, () => {
        expect(commandParts(line, defaults).some((part) => part.verdict === 'deny'), line).to.equal(true)
      })
    }

    for (const line of ['git push --force-with-lease origin main', 'rm -r build', 'rm --dir x', 'chmod 644 x', 'git push origin main', 'dd if=/dev/zero of=out.img', 'git reset --soft HEAD~1']) {
      it(`still passes ${JSON.stringify(line)}`, () => {
        expect(verdicts(commandParts(line, defaults))).to.deep.equal([])
      })
    }
  })

  describe('options and programs that cannot be seen through', () => {
    for (const [line, reason] of mustAsk) {
      it(`asks for ${JSON.stringify(line)}`, () => {
        const asked = commandParts(line, defaults).filter((part) => part.verdict === 'ask')
        expect(asked, line).not.to.be.empty
        expect(asked.map((part) => part.reason).join(' | ')).to.match(reason)
      })
    }

    for (const [line, name] of taintedArithmetic) {
      it(`asks when arithmetic reads a run-time value in ${JSON.stringify(line)}`, () => {
        const asked = commandParts(line, defaults).filter((part) => part.verdict === 'ask')
        expect(asked.map((part) => part.reason).join(' | ')).to.contain(`arithmetic evaluates ${name}, whose value is only known at run time`)
      })
    }

    it('asks for a line nested too deeply to analyse, instead of throwing', () => {
      const line = '$('.repeat(3000) + 'chmod 777 f' + ')'.repeat(3000)
      const asked = commandParts(line, defaults).filter((part) => part.verdict === 'ask')
      expect(asked.map((part) => part.reason).join(' | ')).to.match(/could not be (analysed|parsed)/)
    })

    for (const line of stillHarmless) {
      it(`still passes ${JSON.stringify(line)}`, () => {
        expect(verdicts(commandParts(line, defaults))).to.deep.equal([])
      })
    }
  })

  describe('allow mode and shell functions', () => {
    const rules = compileRules({ mode: 'allow', allow: ['true', 'echo', 'env', 'xargs', 'find', 'bash', 'eval', 'unset'], deny: [], denyArgs: [] })
    for (const line of notFunctions) {
      it(`judges chmod by the allow list in ${JSON.stringify(line)}`, () => {
        const parts = commandParts(line, rules).filter((part) => part.name === 'exec:chmod')
        expect(parts, line).not.to.be.empty
        expect(parts.some((part) => part.verdict === 'deny'), JSON.stringify(parts)).to.equal(true)
      })
    }

    it('still lets a function defined first be called by its name, also from a command substitution', () => {
      for (const line of ['f() { echo; }; f', 'f() { echo; }; f; f x', 'f() { echo; }; echo "$(f)"', 'f() { echo; }\nf']) {
        expect(verdicts(commandParts(line, rules)), line).to.deep.equal([])
      }
    })
  })

  describe('end to end, with real processes', function () {
    this.timeout(15000)
    let test: TestApp
    let work: string
    afterEach(() => test?.dispose())

    const run = async (bash: Dict, line: string) => {
      test = await createApp({ workDir: 'work', bash: { timeout: 5000, ...bash } })
      work = join(test.baseDir, 'work')
      await mkdir(work, { recursive: true })
      await writeFile(join(work, 'f'), 'data')
      await chmod(join(work, 'f'), 0o644)
      return test.app.tools.call({ name: 'bash', args: { command: line }, scope: { authority: 5 } })
    }

    for (const line of ['env - chmod 777 f', 'printf "f\\0" | xargs -0 chmod 777', `env --split 'chmod 777 f'`, 'timeout --kill 1 5 chmod 777 f']) {
      it(`does not change the mode with ${JSON.stringify(line)} (chmod denied)`, async () => {
        const result = await run({ mode: 'deny', deny: ['chmod'] }, line)
        expect(result, resultText(result)).to.include({ ok: false, status: 'denied' })
        expect((await stat(join(work, 'f'))).mode & 0o777).to.equal(0o644)
      })
    }

    it('does not run a command hidden in a file that arithmetic evaluates (allow mode: cat and echo)', async () => {
      test = await createApp({ workDir: 'work', bash: { timeout: 5000, mode: 'allow', allow: ['cat', 'echo'] } })
      work = join(test.baseDir, 'work')
      await mkdir(work, { recursive: true })
      await writeFile(join(work, 'f'), 'data')
      await chmod(join(work, 'f'), 0o644)
      await writeFile(join(work, 'n'), 'a[$(chmod 777 f)]')
      const result = await test.app.tools.call({ name: 'bash', args: { command: 'x=$(cat n); echo $((x))' }, scope: { authority: 5 } })
      expect(result, resultText(result)).to.include({ ok: false, status: 'denied' })
      expect((await stat(join(work, 'f'))).mode & 0o777).to.equal(0o644)
    })

    it('does not change the mode with a function defined after the call (allow mode without chmod)', async () => {
      const result = await run({ mode: 'allow', allow: ['true'] }, 'chmod 777 f; chmod() { true; }')
      expect(result, resultText(result)).to.include({ ok: false, status: 'denied' })
      expect((await stat(join(work, 'f'))).mode & 0o777).to.equal(0o644)
    })
  })
})
