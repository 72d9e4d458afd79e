import { ArgWord } from './words'
import { ShellReason, shellReason } from './reasons'

/**
 * How a wrapper command reads its own options before the command it runs
 * (issue "Built-in tools", item 6: `env`, `sudo`, `command`, `builtin`,
 * `exec`, `nice`, `nohup`, `timeout`, `time`, `stdbuf`, `xargs`, … are
 * looked through). Every option a wrapper accepts is listed: an option the
 * analysis does not know might take the next word as its value, so the
 * command it runs could not be found — the reading then fails and the
 * call asks.
 */
export interface WrapperSpec {
  /** Options that take a value, short (`-u`) or long (`--user`); `-uroot` and `--user=root` work too. */
  valued?: string[]
  /** Options without a value (`-i`, `--foreground`); long ones may still be given `=value` when optional. */
  flags?: string[]
  /** Short options whose value, if any, is the rest of their word (`xargs -i{}`, `-l5`), never the next word. */
  attached?: string[]
  /** `-5`-style numbers are options (`nice -5`). */
  numeric?: boolean
  /** Words before the command that are not options (`timeout 5 cmd`, `chroot /root cmd`). */
  positional?: number
  /** Options meaning no command runs (`command -v x` only looks `x` up). */
  noRun?: string[]
  /** Options whose value is a shell command line (`su -c`, `flock -c`). */
  script?: string[]
  /** Options whose value is split into a command (`env -S 'cmd args'`). */
  split?: string[]
  /** Options whose value is a program the wrapper runs (`dbus-run-session --dbus-daemon=x`): ask. */
  programs?: string[]
  /** `NAME=value` words may come before the command (`env`). */
  assignments?: boolean
  /** The command runs as another user (`sudo`, `doas`, `pkexec`): risk critical. */
  elevated?: boolean
  /** Options that open a shell when no command follows (`sudo -s`, `sudo -i`). */
  shellOptions?: string[]
  /** Without a command it opens a shell (reading standard input): ask. */
  bareShell?: boolean
  /** Its operands are not a command (`script out.log`): only `script` options run one. */
  noCommand?: boolean
  /** The command gets more arguments at run time (`xargs`). */
  openArgs?: boolean
}

/** `--help` and `--version`: accepted by nearly every wrapper, and nothing runs. */
const informational = ['--help', '--version']

/** Wrapper commands and their options (GNU coreutils, util-linux, sudo, findutils, …). */
export const wrappers: Record<string, WrapperSpec> = {
  env: {
    valued: ['-u', '--unset', '-C', '--chdir', '-a', '--argv0', '-P'],
    flags: ['-', '-i', '--ignore-environment', '-0', '--null', '-v', '--debug', '--block-signal', '--default-signal',
      '--ignore-signal', '--list-signal-handling'],
    split: ['-S', '--split-string'],
    noRun: informational,
    assignments: true,
  },
  sudo: {
    valued: ['-u', '--user', '-g', '--group', '-h', '--host', '-p', '--prompt', '-C', '--close-from', '-D', '--chdir',
      '-r', '--role', '-t', '--type', '-T', '--command-timeout', '-U', '--other-user', '-R', '--chroot'],
    flags: ['-A', '--askpass', '-B', '--bell', '-b', '--background', '-E', '--preserve-env', '-H', '--set-home',
      '-n', '--non-interactive', '-P', '--preserve-groups', '-S', '--stdin', '-N', '--no-update'],
    noRun: ['-l', '--list', '-v', '--validate', '-k', '-K', '--reset-timestamp', '--remove-timestamp', '-V', '--version',
      '-e', '--edit', '--help'],
    elevated: true,
    shellOptions: ['-s', '--shell', '-i', '--login'],
    assignments: true,
  },
  doas: { valued: ['-u', '-C'], flags: ['-n'], noRun: ['-L'], elevated: true, shellOptions: ['-s'] },
  pkexec: { valued: ['--user'], flags: ['--disable-internal-agent', '--keep-cwd'], noRun: informational, elevated: true, bareShell: true },
  command: { flags: ['-p'], noRun: ['-v', '-V'] },
  builtin: {},
  exec: { valued: ['-a'], flags: ['-c', '-l'] },
  nice: { valued: ['-n', '--adjustment'], numeric: true, noRun: informational },
  nohup: { noRun: informational },
  timeout: {
    valued: ['-s', '--signal', '-k', '--kill-after'],
    flags: ['--preserve-status', '--foreground', '-v', '--verbose', '-p'],
    noRun: informational,
    positional: 1,
  },
  time: {
    valued: ['-f', '--format', '-o', '--output'],
    flags: ['-a', '--append', '-p', '--portability', '-v', '--verbose', '-q', '--quiet'],
    noRun: ['-V', ...informational],
  },
  stdbuf: { valued: ['-i', '--input', '-o', '--output', '-e', '--error'], noRun: informational },
  xargs: {
    valued: ['-a', '--arg-file', '-d', '--delimiter', '-E', '-I', '-L', '--max-lines', '-n', '--max-args', '-P', '--max-procs',
      '-s', '--max-chars', '--process-slot-var'],
    flags: ['-0', '--null', '--eof', '--replace', '-o', '--open-tty', '-p', '--interactive', '-r', '--no-run-if-empty',
      '-t', '--verbose', '-x', '--exit'],
    attached: ['-e', '-i', '-l'],
    noRun: ['--show-limits', ...informational],
    openArgs: true,
  },
  setsid: { flags: ['-c', '--ctty', '-f', '--fork', '-w', '--wait'], noRun: ['-h', '-V', ...informational] },
  chroot: { valued: ['--userspec', '--groups'], flags: ['--skip-chdir'], noRun: informational, positional: 1, bareShell: true },
  ionice: {
    valued: ['-c', '--class', '-n', '--classdata'],
    flags: ['-t', '--ignore'],
    noRun: ['-p', '--pid', '-P', '--pgid', '-u', '--uid', '-h', '-V', ...informational],
  },
  taskset: { flags: ['-a', '--all-tasks', '-c', '--cpu-list'], noRun: ['-p', '--pid', '-h', '-V', ...informational], positional: 1 },
  flock: {
    valued: ['-w', '--wait', '--timeout', '-E', '--conflict-exit-code'],
    flags: ['-s', '--shared', '-x', '-e', '--exclusive', '-u', '--unlock', '-n', '--nb', '--nonblock', '-o', '--close',
      '-F', '--no-fork', '--verbose'],
    script: ['-c', '--command'],
    noRun: ['-h', '-V', ...informational],
    positional: 1,
  },
  script: {
    valued: ['-E', '--echo', '-I', '--log-in', '-O', '--log-out', '-B', '--log-io', '-T', '--log-timing', '-m', '--logging-format'],
    flags: ['-a', '--append', '-e', '--return', '-f', '--flush', '--force', '-q', '--quiet', '--timing'],
    attached: ['-t'],
    script: ['-c', '--command'],
    noRun: ['-h', '-V', ...informational],
    noCommand: true,
    bareShell: true,
  },
  unbuffer: { flags: ['-p'] },
  strace: {
    valued: ['-o', '-e', '-s', '-u', '-E', '-a', '-P', '-S', '-X', '-O', '-I', '-b', '-U'],
    flags: ['-c', '-C', '-d', '-D', '-f', '-F', '-i', '-k', '-n', '-N', '-q', '-r', '-t', '-T', '-v', '-w', '-x', '-y', '-z', '-Z'],
    noRun: ['-p', '-h', '-V', ...informational],
  },
  ltrace: {
    valued: ['-o', '-e', '-s', '-u', '-a', '-n', '-x', '-A', '-D', '-F', '-L', '-l', '-w'],
    flags: ['-b', '-c', '-C', '-f', '-i', '-r', '-S', '-t', '-T'],
    noRun: ['-p', '-h', '-V', ...informational],
  },
  busybox: { noRun: ['--list', '--list-full', '--install', ...informational] },
  toybox: { noRun: ['--long', ...informational] },
  chrt: {
    valued: ['-T', '--sched-runtime', '-P', '--sched-period', '-D', '--sched-deadline'],
    flags: ['-a', '--all-tasks', '-b', '--batch', '-d', '--deadline', '-f', '--fifo', '-i', '--idle', '-o', '--other',
      '-r', '--rr', '-R', '--reset-on-fork', '-v', '--verbose', '-e', '--ext'],
    noRun: ['-m', '--max', '-p', '--pid', '-h', '-V', ...informational],
    positional: 1,
  },
  prlimit: {
    valued: ['-o', '--output'],
    flags: ['--noheadings', '--raw', '--verbose', '--as', '--core', '--cpu', '--data', '--fsize', '--locks', '--memlock',
      '--msgqueue', '--nice', '--nofile', '--nproc', '--rss', '--rtprio', '--rttime', '--sigpending', '--stack'],
    attached: ['-v', '-c', '-t', '-d', '-f', '-x', '-l', '-q', '-e', '-n', '-u', '-m', '-r', '-y', '-i', '-s'],
    noRun: ['-p', '--pid', '-h', '-V', ...informational],
  },
  setpriv: {
    valued: ['--ruid', '--euid', '--rgid', '--egid', '--reuid', '--regid', '--groups', '--inh-caps', '--ambient-caps',
      '--bounding-set', '--securebits', '--pdeathsig', '--selinux-label', '--apparmor-profile', '--landlock-access', '--landlock-rule'],
    flags: ['--nnp', '--no-new-privs', '--clear-groups', '--keep-groups', '--init-groups', '--reset-env'],
    noRun: ['-d', '--dump', '--list-caps', '-h', '-V', ...informational],
  },
  fakeroot: { valued: ['-l', '--lib', '--faked', '-s', '-i', '-b'], flags: ['-u', '--unknown-is-real'], noRun: ['-h', '-v', ...informational] },
  numactl: {
    valued: ['-i', '--interleave', '-N', '--cpunodebind', '-m', '--membind', '-p', '--preferred', '-C', '--physcpubind',
      '-P', '--preferred-many', '-w', '--weighted-interleave'],
    flags: ['-a', '--all', '-l', '--localalloc', '-b', '--balancing'],
    noRun: ['-s', '--show', '-H', '--hardware', '-h', '-V', ...informational],
  },
  valgrind: { flags: ['-q', '--quiet', '-v', '--verbose', '-s'], noRun: ['-h', ...informational] },
  catchsegv: { noRun: informational },
  'dbus-run-session': { valued: ['--config-file'], programs: ['--dbus-daemon'], noRun: informational },
  'xvfb-run': {
    valued: ['-e', '--error-file', '-f', '--auth-file', '-n', '--server-num', '-p', '--xauth-protocol', '-s', '--server-args', '-w', '--wait'],
    flags: ['-a', '--auto-servernum', '-l', '--listen-tcp'],
    noRun: ['-h', '--help'],
  },
  sshpass: { valued: ['-p', '-f', '-d', '-P'], flags: ['-e', '-v'], noRun: ['-h', '-V'] },
  torsocks: {
    valued: ['-u', '--user', '-p', '--pass', '-a', '--address', '-P', '--port'],
    flags: ['-i', '--isolate', '-d', '--debug', '-q', '--quiet'],
    shellOptions: ['--shell'],
    noRun: ['-h', ...informational],
  },
  proxychains: { valued: ['-f'], flags: ['-q'] },
  proxychains4: { valued: ['-f'], flags: ['-q'] },
  firejail: { noRun: informational },
}

/** What {@link readWrapper} found. */
export interface WrapperReading {
  /** Index of the wrapped command's name in the arguments, if a command follows. */
  inner?: number
  /** Values of `script` options (undefined: built at run time). */
  scripts: (string | undefined)[]
  /** Values of `split` options. */
  splits: (string | undefined)[]
  /** `NAME=value` words before the command. */
  assignments: string[]
  /** A `noRun` option was given. */
  noRun: boolean
  /** A `shellOptions` option was given. */
  shell: boolean
  /** Why the options could not be read statically. */
  problem?: ShellReason
}

/** How an option of a wrapper is read. */
type OptionKind = 'valued' | 'flag' | 'attached'

function optionKind(spec: WrapperSpec, option: string): OptionKind | undefined {
  if (spec.valued?.includes(option) || spec.script?.includes(option) || spec.split?.includes(option) || spec.programs?.includes(option)) return 'valued'
  if (spec.attached?.includes(option)) return 'attached'
  if (spec.flags?.includes(option) || spec.noRun?.includes(option) || spec.shellOptions?.includes(option)) return 'flag'
}

/** Every long option of a spec, for abbreviations. */
function longOptions(spec: WrapperSpec): string[] {
  const all = [spec.valued, spec.flags, spec.attached, spec.noRun, spec.script, spec.split, spec.programs, spec.shellOptions].flat()
  return [...new Set(all.filter((option) => option?.startsWith('--')))]
}

/**
 * A long option as written (`--kill` for `--kill-after`): the option itself
 * when the spec lists it, else the one listed option it abbreviates (getopt
 * accepts any unambiguous prefix), else undefined.
 */
function resolveLong(spec: WrapperSpec, written: string): string | undefined {
  if (optionKind(spec, written)) return written
  const matches = longOptions(spec).filter((option) => option.startsWith(written))
  return matches.length === 1 ? matches[0] : undefined
}

/**
 * Reads a wrapper's options and finds where the wrapped command starts.
 * Short options may be clustered (`-ni`); a valued short option takes the
 * rest of its cluster or the next word; long options take `=value` or the
 * next word, and may be abbreviated to any unambiguous prefix. `--` ends
 * the options. An option the spec does not know, a word built at run time
 * where an option or the command name could be, or an option whose value
 * is a program makes the reading fail (`problem`): the call then asks.
 */
export function readWrapper(name: string, spec: WrapperSpec, args: ArgWord[]): WrapperReading {
  const reading: WrapperReading = { scripts: [], splits: [], assignments: [], noRun: false, shell: false }
  const record = (option: string, value: string | undefined) => {
    if (spec.script?.includes(option)) reading.scripts.push(value)
    if (spec.split?.includes(option)) reading.splits.push(value)
    if (spec.noRun?.includes(option)) reading.noRun = true
    if (spec.shellOptions?.includes(option)) reading.shell = true
    if (spec.programs?.includes(option)) reading.problem = shellReason('wrapper-program', { name, option, program: value ?? '' })
  }
  const unknown = (option: string) => {
    reading.problem = shellReason('unknown-option', { name, option })
    return reading
  }
  let positional = spec.positional ?? 0
  let optionsDone = false
  for (let index = 0; index < args.length; index++) {
    const value = args[index].value
    if (value === undefined) {
      reading.problem = shellReason('wrapper-dynamic-argument', { name })
      return reading
    }
    if (!optionsDone && value.startsWith('-')) {
      if (value === '--') {
        optionsDone = true
        continue
      }
      if (value === '-') {
        if (!optionKind(spec, '-')) return unknown('-')
        continue
      }
      if (spec.numeric && /^-\d+$/.test(value)) continue
      if (value.startsWith('--')) {
        const eq = value.indexOf('=')
        const option = resolveLong(spec, eq === -1 ? value : value.slice(0, eq))
        if (!option) return unknown(eq === -1 ? value : value.slice(0, eq))
        if (optionKind(spec, option) === 'valued' && eq === -1) {
          record(option, args[index + 1]?.value)
          index++
        } else {
          record(option, eq === -1 ? undefined : value.slice(eq + 1))
        }
        if (reading.problem) return reading
        continue
      }
      for (let at = 1; at < value.length; at++) {
        const option = `-${value[at]}`
        const kind = optionKind(spec, option)
        if (!kind) return unknown(option)
        if (kind === 'valued') {
          const rest = value.slice(at + 1)
          if (rest) {
            record(option, rest)
          } else {
            record(option, args[index + 1]?.value)
            index++
          }
          break
        }
        if (kind === 'attached') {
          record(option, value.slice(at + 1) || undefined)
          break
        }
        record(option, undefined)
      }
      if (reading.problem) return reading
      continue
    }
    if (!optionsDone && spec.assignments && /^[A-Za-z_][A-Za-z0-9_]*=/.test(value)) {
      reading.assignments.push(value)
      continue
    }
    if (spec.noCommand) {
      // Operands (a log file) until the end; options may follow them.
      continue
    }
    if (positional > 0) {
      positional--
      continue
    }
    reading.inner = index
    return reading
  }
  return reading
}
