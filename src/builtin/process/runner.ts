import { accessSync, closeSync, constants as fsConstants, existsSync, mkdirSync, openSync, rmSync, writeFileSync } from 'fs'
import { randomBytes } from 'crypto'
import { constants, tmpdir } from 'os'
import { basename, join } from 'path'
import type * as Pty from 'node-pty'
import { CollectedOutput, OutputCollector } from './output'
import { canListProcesses, commandLineOf, familyMembers, killFamily, processStart, ProcessFamily } from './processes'

let loaded: typeof Pty | Error | undefined

/**
 * node-pty, loaded on first use: it is a native addon, and a host where it
 * did not build (no compiler, another platform) should lose the `bash` tool,
 * not the whole plugin. Returns the module, or the load error.
 */
export function loadPty(): typeof Pty | Error {
  if (!loaded) {
    try {
      loaded = require('node-pty') as typeof Pty
    } catch (error) {
      loaded = error instanceof Error ? error : new Error(String(error))
    }
  }
  return loaded
}

/** Environment variable marking every process of one run. */
export const markerVariable = 'CHATLUNA_TOOLS_RUN'

/** Shells tried in order when `shellPath` is empty. */
const shellCandidates = ['/bin/bash', '/usr/bin/bash', '/usr/local/bin/bash', '/bin/sh', '/usr/bin/sh']

/** The configured shell, or the first of bash / sh found. */
export function detectShell(configured?: string): string {
  if (configured) return configured
  return shellCandidates.find((path) => existsSync(path)) ?? 'sh'
}

/** Whether a shell path can be executed (a bare name is looked up by the system at spawn). */
export function shellAvailable(shell: string) {
  if (!shell.includes('/')) return true
  try {
    accessSync(shell, fsConstants.X_OK)
    return true
  } catch {
    return false
  }
}

/** Variables passed to commands when `inheritEnv` is off: nothing secret, enough to work. */
const safeVariables = ['PATH', 'HOME', 'USER', 'LOGNAME', 'LANG', 'LANGUAGE', 'TZ', 'TMPDIR', 'TMP', 'TEMP', 'HTTP_PROXY', 'HTTPS_PROXY', 'NO_PROXY', 'http_proxy', 'https_proxy', 'no_proxy']

/**
 * The environment of a command: a safe subset of Koishi's (or all of it
 * with `inherit`), without start-up files (`BASH_ENV`, `ENV`), with a
 * terminal type, pagers that do not wait for keys, no colours where
 * programs honour `NO_COLOR`, and the run's marker.
 */
export function commandEnvironment(shell: string, marker: string, inherit: boolean): Record<string, string> {
  const env: Record<string, string> = {}
  for (const [key, value] of Object.entries(process.env)) {
    if (value === undefined) continue
    if (inherit || safeVariables.includes(key) || key.startsWith('LC_')) env[key] = value
  }
  delete env.BASH_ENV
  delete env.ENV
  env.PATH ||= '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'
  Object.assign(env, {
    SHELL: shell,
    TERM: 'xterm-256color',
    NO_COLOR: '1',
    PAGER: 'cat',
    GIT_PAGER: 'cat',
    GIT_TERMINAL_PROMPT: '0',
    DEBIAN_FRONTEND: 'noninteractive',
  })
  const [key, value] = marker.split('=')
  env[key] = value
  return env
}

/** Options of one {@link ShellRunner.run}. */
export interface RunOptions {
  cwd: string
  /** Time limit in ms; the family is killed when it passes. */
  timeout: number
  /** Bytes of output shown; more is spooled (see {@link OutputCollector}). */
  maxOutputSize: number
  /** File for the whole output when it is too large. */
  spoolPath: () => string
  signal?: AbortSignal
  /** New complete output lines while the command runs. */
  onLines?: (lines: string[]) => void
}

/** How a command ended. */
export interface RunResult {
  /** Exit code of the shell; `undefined` when killed. */
  exitCode?: number
  /** Signal that ended the shell (e.g. `SIGKILL`). */
  signal?: string
  timedOut: boolean
  aborted: boolean
  /** Wall time in ms. */
  duration: number
  output: CollectedOutput
  /** Processes the command left running in the background: pid and command line. */
  background: { pid: number; command: string }[]
}

/**
 * Runs shell command lines in a pseudo-terminal (node-pty) and makes sure
 * nothing they start outlives their welcome (issue "Built-in tools", item
 * 5). Each run is a process family: the shell leads its own session and
 * process group, and every process gets a marker variable. On timeout or
 * abort the family is killed at once; background processes a command
 * leaves (`sleep 300 &`, `nohup …`, `setsid …`) are kept until
 * {@link ShellRunner.killAll} (the plugin's unload), which kills them.
 * Commands read an empty standard input (`/dev/null`).
 */
export class ShellRunner {
  /** Families with processes still alive (running, or left in the background). */
  private families = new Set<ProcessFamily>()
  private counter = 0

  constructor(private shell: () => string, private inheritEnv: () => boolean) {}

  /** The shell commands run with. */
  get shellPath() {
    return this.shell()
  }

  /** Runs one command line; never rejects for the command's own failure. Throws if the shell cannot start. */
  run(command: string, options: RunOptions): Promise<RunResult> {
    const shell = this.shell()
    const token = randomBytes(8).toString('hex')
    const marker = `${markerVariable}=${process.pid}-${++this.counter}-${token}`
    mkdirSync(options.cwd, { recursive: true })
    const start = Date.now()
    const collector = new OutputCollector({ limit: options.maxOutputSize, spoolPath: options.spoolPath, onLines: options.onLines })
    const pty = loadPty()
    if (pty instanceof Error) throw new Error(`node-pty could not be loaded (${pty.message}); run "npm rebuild node-pty"`)
    const descriptor = descriptorFile(token)
    let child: Pty.IPty
    try {
      child = pty.spawn(shell, ['-c', wrapCommand(command, token, descriptor && { path: descriptor, fd: descriptorNumber(shell) })], {
        name: 'xterm-256color',
        cols: 200,
        rows: 50,
        cwd: options.cwd,
        env: commandEnvironment(shell, marker, this.inheritEnv()),
      })
    } catch (error) {
      if (descriptor) rmSync(descriptor, { force: true })
      throw error
    }
    const family: ProcessFamily = { pid: child.pid, marker, exited: false, known: new Map(), descriptor, start: processStart(child.pid) }
    this.families.add(family)
    // Holding the terminal's other end open keeps the last output of a command
    // from being lost: Linux may report the terminal closed to a reader that
    // has not drained it yet. The exit sentinel then says when all is read.
    let slave: number | undefined
    try {
      slave = openSync((child as any).ptsName, fsConstants.O_RDWR | fsConstants.O_NOCTTY)
    } catch {}
    const release = () => {
      if (slave === undefined) return
      try {
        closeSync(slave)
      } catch {}
      slave = undefined
    }
    const sentinel = new RegExp(`\\x1b\\]777;${token};(\\d+)\\x07`)

    return new Promise<RunResult>((resolve) => {
      let timedOut = false
      let aborted = false
      let settled = false
      let seen = ''
      let fallback: NodeJS.Timeout | undefined
      const kill = () => {
        killFamily(family)
        release()
        // The exit event may never come once the terminal is gone: settle anyway.
        fallback ??= setTimeout(() => finish(undefined, 'SIGKILL'), 2000)
      }
      const timer = setTimeout(() => {
        timedOut = true
        kill()
      }, options.timeout)
      const onAbort = () => {
        aborted = true
        kill()
      }
      if (options.signal?.aborted) onAbort()
      else options.signal?.addEventListener('abort', onAbort, { once: true })

      const data = child.onData((chunk) => {
        collector.write(chunk)
        seen = (seen + chunk).slice(-80)
        const match = seen.match(sentinel)
        if (!match) return
        seen = ''
        // Every output of the shell came before its exit sentinel; wait until it is gone.
        waitForExit(child.pid).then(() => finish(Number(match[1]), undefined))
      })
      const exit = child.onExit(({ exitCode, signal }) => finish(exitCode, signal ? signalName(signal) : undefined))

      const finish = async (exitCode: number | undefined, signal: string | undefined) => {
        if (settled) return
        settled = true
        clearTimeout(timer)
        clearTimeout(fallback)
        options.signal?.removeEventListener('abort', onAbort)
        data.dispose()
        exit.dispose()
        const background = this.settleFamily(family, timedOut || aborted)
        release()
        // Processes still holding it keep it open (shown as deleted); the name stays unique.
        if (descriptor) rmSync(descriptor, { force: true })
        const output = await collector.finish()
        resolve({
          exitCode: timedOut || aborted ? undefined : exitCode,
          signal: timedOut || aborted ? signal ?? 'SIGKILL' : signal,
          timedOut,
          aborted,
          duration: Date.now() - start,
          output,
          background,
        })
      }
    })
  }

  /**
   * After the shell exited: kills the family if the run was cut short,
   * otherwise records the processes it left running (kept for
   * {@link killAll}) and forgets the family when there are none.
   */
  private settleFamily(family: ProcessFamily, cut: boolean) {
    if (cut) {
      killFamily(family)
      family.exited = true
      this.families.delete(family)
      return []
    }
    const members = familyMembers(family)
    family.exited = true
    if (!members.length) {
      // Without a process table (not Linux) nothing can be tracked safely once the shell is gone.
      this.families.delete(family)
      return []
    }
    for (const member of members) family.known.set(member.pid, member.start)
    return members.map((member) => ({ pid: member.pid, command: commandLineOf(member.pid) }))
  }

  /** Processes left running by earlier commands, still alive. */
  background(): { pid: number; command: string }[] {
    const result: { pid: number; command: string }[] = []
    for (const family of this.families) {
      if (!family.exited) continue
      const members = familyMembers(family)
      if (!members.length) this.families.delete(family)
      for (const member of members) result.push({ pid: member.pid, command: commandLineOf(member.pid) })
    }
    return result
  }

  /** Kills every family, running or left in the background (plugin unload). Synchronous. */
  killAll() {
    for (const family of this.families) killFamily(family)
    this.families.clear()
  }
}

/**
 * A new empty file under the system's temp dir, unique to one run (its
 * name holds the run's random token): the shell opens it on a descriptor
 * every process it starts inherits ({@link ProcessFamily.descriptor}).
 * Undefined when it cannot be made, or without `/proc` to look for it.
 */
function descriptorFile(token: string): string | undefined {
  if (!canListProcesses) return
  const path = join(tmpdir(), `chatluna-tools-run-${token}`)
  try {
    writeFileSync(path, '', { flag: 'wx', mode: 0o600 })
    return path
  } catch {}
}

/** The descriptor number for the run's file: a high one where the shell allows it (bash, zsh, ksh), else 9. */
function descriptorNumber(shell: string) {
  return /^(bash|zsh|ksh|mksh|ksh93)$/.test(basename(shell)) ? 197 : 9
}

/** Quotes a word for any POSIX shell. */
function shellQuote(text: string) {
  return `'${text.replace(/'/g, `'\\''`)}'`
}

/**
 * The line the shell runs: an exit trap that writes a sentinel with the
 * exit status to the terminal (so the runner knows the shell's output is
 * complete, whatever `exit` the command calls), the run's file opened on
 * an inherited descriptor (when given), standard input from `/dev/null`,
 * then the command itself, on the same line so its line numbers stay as
 * written.
 */
export function wrapCommand(command: string, token: string, descriptor?: { path: string; fd: number }) {
  const open = descriptor ? `exec ${descriptor.fd}>>${shellQuote(descriptor.path)}; ` : ''
  return `trap 'printf "\\033]777;${token};%d\\007" "$?" >/dev/tty 2>/dev/null' EXIT; ${open}exec </dev/null; ${command}`
}

/** Resolves when `pid` no longer exists (reaped), polling every 2 ms, at most `limit` ms. */
async function waitForExit(pid: number, limit = 1000) {
  const start = Date.now()
  while (Date.now() - start < limit) {
    try {
      process.kill(pid, 0)
    } catch {
      return
    }
    await new Promise((resolve) => setTimeout(resolve, 2))
  }
}

/** `9` → `SIGKILL`. */
function signalName(signal: number) {
  const { signals } = constants
  return Object.keys(signals).find((name) => signals[name as keyof typeof signals] === signal) ?? `signal ${signal}`
}
