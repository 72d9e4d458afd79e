import { expect } from 'chai'
import { analyzeCommandLine } from '../src/builtin/shell/analyze'
import { CommandPattern, commandParts, compileRules } from '../src/builtin/shell/rules'
import { awkRunsCommands, sedRunsCommands } from '../src/builtin/shell/scripts'
import { defaultDeny, defaultDenyArgs } from '../src/builtin/config'
import { ToolAction } from '../src'
import { chmodBypasses, harmless } from './fixtures/shell-inputs'

const denyChmod = compileRules({ mode: 'deny', allow: [], deny: ['chmod'], denyArgs: [] })
const defaults = compileRules({ mode: 'deny', allow: [], deny: defaultDeny, denyArgs: defaultDenyArgs })

/** Names of the commands found, in order. */
const names = (line: string) => analyzeCommandLine(line).commands.map((command) => command.name)
const verdicts = (parts: ToolAction[]) => parts.map((part) => part.verdict).filter(Boolean)

describe('shell analysis', () => {
  describe('inputs from public reports: chmod on the deny list', () => {
    for (const [line, allow] of chmodBypasses) {
      it(`does not let ${JSON.stringify(line)} through`, () => {
        const parts = commandParts(line, denyChmod)
        expect(verdicts(parts), JSON.stringify(parts)).not.to.be.empty
        if (allow) {
          const allowMode = commandParts(line, compileRules({ mode: 'allow', allow: [allow], deny: [], denyArgs: [] }))
          expect(allowMode.find((part) => part.name === 'exec:chmod')).to.include({ verdict: 'deny' })
          expect(allowMode.find((part) => part.name === 'exec:git')).not.to.have.property('verdict')
        }
      })
    }

    for (const line of harmless) {
      it(`lets ${JSON.stringify(line)} run unasked`, () => {
        expect(verdicts(commandParts(line, denyChmod))).to.deep.equal([])
      })
    }
  })

  describe('finding every command', () => {
    for (const [line, expected] of [
      ['a | b |& c', ['a', 'b', 'c']],
      ['a; b && c || d & e\nf', ['a', 'b', 'c', 'd', 'e', 'f']],
      ['(a; (b)) && { c; }', ['a', 'b', 'c']],
      ['if a; then b; elif c; then d; else e; fi', ['a', 'b', 'c', 'd', 'e']],
      ['for x in $(a); do b; done; while c; do d; done; until e; do f; done', ['a', 'b', 'c', 'd', 'e', 'f']],
      ['case $(a) in x) b;; *) c;; esac', ['a', 'b', 'c']],
      ['fn() { a; }; function g { b; }', ['a', 'b']],
      ['echo "x $(a) ${V:-$(b)} `c`"', ['echo', 'a', 'b', 'c']],
      ['diff <(a) >(b)', ['diff', 'a', 'b']],
      ['cat <<EOF\n$(a) `b`\nEOF', ['cat', 'a', 'b']],
      ['cat <<< "$(a)" > "$(b)"', ['cat', 'a', 'b']],
      ['X=$(a) Y=`b` c', ['c', 'a', 'b']],
      ['echo $(( $(a) + 1 )); (( x[$(b)] ))', ['echo', 'a', 'b']],
      ['time a | b; ! c', ['a', 'b', 'c']],
      ['coproc a', ['a']],
      ['echo $(echo $(echo $(a)))', ['echo', 'echo', 'echo', 'a']],
    ] as [string, string[]][]) {
      it(`finds ${expected.join(', ')} in ${JSON.stringify(line)}`, () => {
        expect(names(line)).to.deep.equal(expected)
      })
    }

    for (const line of ['/bin/rm x', '\\rm x', `r'm' x`, '"rm" x', `$'\\x72m' x`, '/usr/bin//rm x']) {
      it(`compares ${JSON.stringify(line)} as rm`, () => {
        expect(names(line)).to.deep.equal(['rm'])
      })
    }
  })

  describe('looking through wrappers', () => {
    for (const line of [
      'env A=1 -u B chmod 1 f', 'env -S "chmod 1 f"', 'sudo -u root -E chmod 1 f', 'command chmod 1 f', 'builtin chmod 1 f',
      'exec -a x chmod 1 f', 'nice -n 5 chmod 1 f', 'nice -5 chmod 1 f', 'nohup chmod 1 f', 'timeout -s KILL 5 chmod 1 f',
      'timeout --kill-after=1 5s chmod 1 f', '/usr/bin/time -f %e chmod 1 f', 'stdbuf -oL chmod 1 f', 'stdbuf -o L chmod 1 f',
      'xargs -n 1 -I{} chmod 1 {}', 'find . -execdir chmod 1 {} +', 'find . -ok chmod 1 {} \\;', 'setsid chmod 1 f',
      'busybox chmod 1 f', 'nohup env nice chmod 1 f', 'doas chmod 1 f', 'flock /tmp/l chmod 1 f', 'flock /tmp/l -c "chmod 1 f"',
      'watch -n 1 chmod 1 f', `script -c 'chmod 1 f' /dev/null`,
    ]) {
      it(`finds chmod in ${JSON.stringify(line)}`, () => {
        const parts = commandParts(line, denyChmod)
        expect(parts.find((part) => part.name === 'exec:chmod'), JSON.stringify(parts)).to.include({ verdict: 'deny' })
      })
    }

    it('does not count "command -v" as running the command', () => {
      expect(verdicts(commandParts('command -v chmod', denyChmod))).to.deep.equal([])
    })

    it('marks everything run through sudo, su, doas or pkexec as critical', () => {
      for (const line of ['sudo ls', 'echo x | sudo tee f', 'su -c ls', 'doas ls', 'pkexec ls', 'echo $(sudo ls)']) {
        const parts = commandParts(line, defaults)
        expect(parts.some((part) => part.risk === 'critical'), line).to.equal(true)
      }
      const parts = commandParts('sudo env ls', defaults)
      expect(parts.map((part) => [part.name, part.risk])).to.deep.equal([['exec:sudo', 'critical'], ['exec:env', 'critical'], ['exec:ls', 'critical']])
      expect(commandParts('ls', defaults)[0]).not.to.have.property('risk')
    })
  })

  describe('asking when it cannot judge', () => {
    for (const [line, reason] of [
      ['echo "unterminated', /could not be parsed/],
      ['if true; then', /could not be parsed/],
      ['$CMD x', /built at run time/],
      ['"$(printf rm)" -rf /', /built at run time/],
      ['{ch,}mod 1 f', /built at run time/],
      ['r? x', /built at run time/],
      ['eval "ls"', /eval runs a string/],
      ['source ./x.sh', /runs the commands of a file/],
      ['. ./x.sh', /runs the commands of a file/],
      [`sh -c 'ls'`, /sh -c runs a command string/],
      ['bash -xc ls', /bash -c runs a command string/],
      ['bash x.sh', /runs the script file "x.sh"/],
      ['bash < x.sh', /standard input/],
      ['zsh', /standard input/],
      ['python3 -c "import os"', /python3 runs program code/],
      ['python script.py', /python runs program code/],
      ['node -e "1"', /node runs program code/],
      ['perl -e "1"', /perl runs program code/],
      ['ruby -e 1', /ruby runs program code/],
      [`awk 'BEGIN { system("ls") }'`, /awk program runs commands/],
      [`awk '{ print | "sh" }'`, /awk program runs commands/],
      [`gawk '{ "date" | getline d }'`, /program runs commands/],
      ['awk -f prog.awk x', /awk code from a file/],
      [`sed 's/x/ls/e' f`, /sed script runs commands/],
      [`sed -e '1e ls' f`, /sed script runs commands/],
      ['find . -name "*.log" -delete', /find -delete/],
      ['./build.sh', /outside the system directories/],
      ['~/bin/tool', /outside the system directories/],
      ['PATH=.:$PATH ls', /setting PATH/],
      ['LD_PRELOAD=/tmp/x.so ls', /setting LD_PRELOAD/],
      ['env BASH_ENV=x bash --version', /setting BASH_ENV/],
      [`x='a[$(id)]'; echo $((x))`, /holds a command substitution/],
      [`[[ -v 'a[$(id)]' ]]`, /evaluates a string holding a command substitution/],
      [`let 'a[$(id)]=1'`, /let evaluates a string/],
      ['echo ${x@P}', /prompt expansion/],
      [`alias ls='rm -rf /'`, /alias defines a command/],
      ['hash -p /tmp/x ls', /hash -p/],
      ['sudo -s', /opens an interactive shell/],
      ['su', /su without -c/],
      ['parallel rm ::: a', /parallel runs its input/],
      ['xargs $CMD', /built at run time/],
      ['rm $FLAGS x', /deny rule "rm -rf" cannot be checked/],
      ['find . | xargs rm', /deny rule "rm -rf" cannot be checked/],
      ['bash -c "$X"', /command string of bash is built at run time/],
      [`git -c alias.x='!chmod 777 f' x`, /git -c sets an option whose value is a command/],
      [`git config core.pager 'sh x.sh'`, /git config sets an option/],
      ['tar -cf a.tar --checkpoint=1 --checkpoint-action=exec=sh x.sh .', /tar runs a command/],
      [`rsync -e 'sh -c x' a b:`, /rsync runs a command/],
      [`ssh -o ProxyCommand='chmod 777 f' host`, /ssh -o runs a local command/],
      [`vim -c '!chmod 777 f' x`, /editor runs commands/],
      [`compgen -C 'chmod 777 f' x`, /compgen -C/],
      ['echo chmod 777 f | at now', /at runs commands from its input later/],
      ['run-parts ./hooks', /run-parts runs every script/],
    ] as [string, RegExp][]) {
      it(`asks for ${JSON.stringify(line)}`, () => {
        const parts = commandParts(line, defaults)
        const asked = parts.filter((part) => part.verdict === 'ask')
        expect(asked, JSON.stringify(parts)).not.to.be.empty
        expect(asked.map((part) => part.reason).join(' | ')).to.match(reason)
        expect(asked.every((part) => part.reason.endsWith('a human must approve'))).to.equal(true)
      })
    }

    for (const line of [
      'node --version', 'python3 -V', 'bash --version', 'awk \'{ print $1 }\' f', `awk -F: '/a|b/ { n++ } END { print n || 0 }' f`,
      `sed -i 's/a/b/g' f`, `sed -n '/x/,/y/p;$=' f`, 'find . -name "*.ts" -type f', 'git log --oneline | head -n 5',
      'while IFS= read -r line; do echo "$line"; done < f', 'ls -la /bin/sh', 'npm test 2>&1 | tail -n 20', 'git -c color.ui=never log', 'tar -czf out.tgz src', 'ssh -o BatchMode=yes host uptime', `echo "$HOME" '$(not run)'`, 'cat <<EOF\nplain text\nEOF',
    ]) {
      it(`passes ${JSON.stringify(line)} without asking`, () => {
        expect(verdicts(commandParts(line, defaults))).to.deep.equal([])
      })
    }
  })

  describe('rules', () => {
    it('matches option clusters in any order and form, long options and operand globs', () => {
      const rm = new CommandPattern('rm -rf')
      const check = (line: string) => rm.matches(analyzeCommandLine(line).commands[0])
      for (const line of ['rm -rf x', 'rm -fr x', 'rm -r -f x', 'rm -vrf x', '/bin/rm -f -r x']) expect(check(line), line).to.equal(true)
      for (const line of ['rm -r x', 'rm x', 'rm -- -rf', 'rmdir -rf x']) expect(check(line), line).to.equal(false)
      const dd = new CommandPattern('dd of=/dev/*')
      expect(dd.matches(analyzeCommandLine('dd if=x of=/dev/sda').commands[0])).to.equal(true)
      expect(dd.matches(analyzeCommandLine('dd if=/dev/zero of=out.img').commands[0])).to.equal(false)
      const push = new CommandPattern('git push --force')
      expect(push.matches(analyzeCommandLine('git push origin main --force').commands[0])).to.equal(true)
      expect(push.matches(analyzeCommandLine('git push --force-with-lease').commands[0])).to.equal(false)
      expect(new CommandPattern('mkfs*').matches(analyzeCommandLine('mkfs.ext4 /dev/sdb1').commands[0])).to.equal(true)
    })

    it('denies by the default lists and names the rule', () => {
      const [part] = commandParts('rm -fr build', defaults)
      expect(part).to.deep.equal({
        name: 'exec:rm', target: 'rm -fr build', verdict: 'deny', reason: '"rm -fr build" matches the deny rule "rm -rf"',
        reasonText: [{ path: 'chatluna-tools.shell.deny-rule', params: { command: 'rm -fr build', rule: 'rm -rf' } }],
      })
      expect(commandParts('shutdown -h now', defaults)[0]).to.include({ verdict: 'deny', reason: '"shutdown" is on the deny list (rule "shutdown")' })
      expect(verdicts(commandParts('rm -r build && git push origin', defaults))).to.deep.equal([])
    })

    it('denies in allow mode what matches no allow rule, and still applies deny rules', () => {
      const rules = compileRules({ mode: 'allow', allow: ['git', 'ls', 'rm'], deny: [], denyArgs: ['rm -rf'] })
      expect(verdicts(commandParts('git status; ls -la', rules))).to.deep.equal([])
      expect(commandParts('cat x', rules)[0]).to.include({ verdict: 'deny', reason: '"cat" is not on the allow list (the bash tool is in allow mode)' })
      expect(commandParts('rm -rf x', rules)[0]).to.include({ verdict: 'deny' })
      expect(verdicts(commandParts('f() { ls; }; f', rules))).to.deep.equal([])
    })

    it('gives each part the command as written, and the line for line-level problems', () => {
      expect(commandParts('echo $(id -u) | sudo tee /x', defaults).map((part) => [part.name, part.target])).to.deep.equal([
        ['exec:echo', 'echo $(id -u)'], ['exec:id', 'id -u'], ['exec:sudo', 'sudo tee /x'], ['exec:tee', 'tee /x'],
      ])
      expect(commandParts('echo "x', defaults)[0]).to.include({ name: 'exec:?', target: 'echo "x', verdict: 'ask' })
    })
  })

  describe('awk and sed scanners', () => {
    it('finds system(), pipes and getline from commands in awk programs, not in strings or regexes', () => {
      for (const program of ['{ system("x") }', '{ print | "cat" }', '{ "date" | getline }', '{ print |& "x" }', '@load "x"', '{ print "unterminated }']) {
        expect(awkRunsCommands(program), program).to.equal(true)
      }
      for (const program of ['{ print $1 }', '/a|b/ { print }', '{ print "a|b" } # system', '$1 ~ /x|y/ || $2 == "system"', '{ x = a / b | 0 }'.replace(' | 0', '')]) {
        expect(awkRunsCommands(program), program).to.equal(false)
      }
    })

    it('finds the e command and the e flag in sed scripts', () => {
      for (const script of ['s/a/b/e', '1e ls', '/x/ e', 's|a|b|ge', '$!{e date\n}', 'unknown-command']) {
        expect(sedRunsCommands(script), script).to.equal(true)
      }
      for (const script of ['s/e/E/g', 's/a/b/w out.txt', '/e/d', 'y/abc/xyz/', '1,/end/{p;d}', 'a text with e', '$=', 's/\\//e/']) {
        expect(sedRunsCommands(script), script).to.equal(false)
      }
    })
  })
})
