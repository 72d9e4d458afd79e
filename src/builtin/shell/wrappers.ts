import { ArgWord, isOption } from './words'

/**
 * How a wrapper command reads its own options before the command it runs
 * (issue "Built-in tools", item 6: `env`, `sudo`, `command`, `builtin`,
 * `exec`, `nice`, `nohup`, `timeout`, `time`, `stdbuf`, `xargs`, … are
 * looked through).
 */
export interface WrapperSpec {
  /** Options that take a value, short (`-u`) or long (`--user`); `-uroot` and `--user=root` work too. */
  valued?: string[]
  /** Words before the command that are not options (`timeout 5 cmd`, `chroot /root cmd`). */
  positional?: number
  /** Options meaning no command runs (`command -v x` only looks `x` up). */
  noRun?: string[]
  /** Options whose value is a shell command line (`su -c`, `flock -c`). */
  script?: string[]
  /** Options whose value is split into a command (`env -S 'cmd args'`). */
  split?: string[]
  /** `NAME=value` words may come before the command (`env`). */
  assignments?: boolean
  /** The command runs as another user (`sudo`, `doas`, `pkexec`): risk critical. */
  elevated?: boolean
  /** Options that open a shell when no command follows (`sudo -s`, `sudo -i`). */
  shellOptions?: string[]
  /** Without a command it opens a shell (reading standard input): ask. */
  bareShell?: boolean
  /** The command gets more arguments at run time (`xargs`). */
  openArgs?: boolean
}

/** Wrapper commands and their options. */
export const wrappers: Record<string, WrapperSpec> = {
  env: {
    valued: ['-u', '--unset', '-C', '--chdir', '-S', '--split-string', '-P'],
    split: ['-S', '--split-string'],
    assignments: true,
  },
  sudo: {
    valued: ['-u', '--user', '-g', '--group', '-h', '--host', '-p', '--prompt', '-C', '--close-from', '-D', '--chdir',
      '-r', '--role', '-t', '--type', '-T', '--command-timeout', '-U', '--other-user', '-R', '--chroot'],
    noRun: ['-l', '--list', '-v', '--validate', '-k', '-K', '--reset-timestamp', '--remove-timestamp', '-V', '--version'],
    elevated: true,
    shellOptions: ['-s', '--shell', '-i', '--login'],
    assignments: true,
  },
  doas: { valued: ['-u', '-C'], elevated: true, shellOptions: ['-s'] },
  pkexec: { valued: ['--user'], elevated: true, bareShell: true },
  command: { noRun: ['-v', '-V'] },
  builtin: {},
  exec: { valued: ['-a'] },
  nice: { valued: ['-n', '--adjustment'] },
  nohup: {},
  timeout: { valued: ['-s', '--signal', '-k', '--kill-after'], positional: 1 },
  time: { valued: ['-f', '--format', '-o', '--output'] },
  stdbuf: { valued: ['-i', '--input', '-o', '--output', '-e', '--error'] },
  xargs: {
    valued: ['-a', '--arg-file', '-d', '--delimiter', '-E', '-I', '-L', '--max-lines', '-n', '--max-args', '-P', '--max-procs',
      '-s', '--max-chars', '--process-slot-var'],
    openArgs: true,
  },
  setsid: {},
  chroot: { valued: ['--userspec', '--groups'], positional: 1, bareShell: true },
  ionice: { valued: ['-c', '--class', '-n', '--classdata'], noRun: ['-p', '--pid', '-P', '--pgid', '-u', '--uid'] },
  taskset: { positional: 1, noRun: ['-p', '--pid'] },
  flock: { valued: ['-w', '--timeout', '-E', '--conflict-exit-code'], script: ['-c', '--command'], positional: 1 },
  script: { valued: ['-E', '--echo', '-I', '--log-in', '-O', '--log-out', '-B', '--log-io', '-T', '--log-timing', '-m', '--logging-format'], script: ['-c', '--command'] },
  unbuffer: {},
  strace: { valued: ['-o', '-e', '-s', '-u', '-E', '-a', '-P', '-S', '-X', '-O', '-I', '-b'], noRun: ['-p'] },
  ltrace: { valued: ['-o', '-e', '-s', '-u', '-a', '-n', '-x', '-A', '-D', '-F', '-L'], noRun: ['-p'] },
  busybox: {},
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
  problem?: string
}

/**
 * Reads a wrapper's options and finds where the wrapped command starts.
 * Short options may be clustered (`-ni`); a valued short option takes the
 * rest of its cluster or the next word; long options take `=value` or the
 * next word. `--` ends the options. A word built at run time where an
 * option or the command name could be makes the reading fail (`problem`).
 */
export function readWrapper(name: string, spec: WrapperSpec, args: ArgWord[]): WrapperReading {
  const reading: WrapperReading = { scripts: [], splits: [], assignments: [], noRun: false, shell: false }
  const valued = new Set(spec.valued ?? [])
  const record = (option: string, value: string | undefined) => {
    if (spec.script?.includes(option)) reading.scripts.push(value)
    if (spec.split?.includes(option)) reading.splits.push(value)
    if (spec.noRun?.includes(option)) reading.noRun = true
    if (spec.shellOptions?.includes(option)) reading.shell = true
  }
  let positional = spec.positional ?? 0
  let optionsDone = false
  for (let index = 0; index < args.length; index++) {
    const value = args[index].value
    if (value === undefined) {
      reading.problem = `an argument of ${name} is built at run time, so the command it runs cannot be known`
      return reading
    }
    if (!optionsDone) {
      if (value === '--') {
        optionsDone = true
        continue
      }
      if (value.startsWith('--')) {
        const eq = value.indexOf('=')
        const option = eq === -1 ? value : value.slice(0, eq)
        if (valued.has(option) || spec.script?.includes(option) || spec.split?.includes(option)) {
          if (eq === -1) {
            record(option, args[index + 1]?.value)
            index++
          } else {
            record(option, value.slice(eq + 1))
          }
        } else {
          record(option, undefined)
        }
        continue
      }
      if (isOption(value) || (name === 'nice' && /^-\d+$/.test(value))) {
        for (let at = 1; at < value.length; at++) {
          const option = `-${value[at]}`
          if (valued.has(option) || spec.script?.includes(option) || spec.split?.includes(option)) {
            const rest = value.slice(at + 1)
            if (rest) {
              record(option, rest)
            } else {
              record(option, args[index + 1]?.value)
              index++
            }
            break
          }
          record(option, undefined)
        }
        continue
      }
      if (spec.assignments && /^[A-Za-z_][A-Za-z0-9_]*=/.test(value)) {
        reading.assignments.push(value)
        continue
      }
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
