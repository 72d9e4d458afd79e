import { join } from 'path'
import { Schema } from 'koishi'
import { ToolCall, ToolDefinition } from '../types'
import { ToolRunError, toolErrorText } from '../pipeline/errors'
import { BashConfig } from './config'
import { commandParts, CommandRules, compileRules } from './shell/rules'
import { normalizeWorkspace } from './shell/workspace'
import { RunResult, shellAvailable, ShellRunner } from './process/runner'
import { describeIn, localizedArgs, toolDescription } from './texts'

/** Arguments of `bash` (RuleGo seed, "bash — 行动力"). */
export interface BashArgs {
  command: string
  /** Time limit in ms, at most the configured `timeout` (which is also the default). */
  timeout?: number
}

/** What the bash tool needs from the plugin. */
export interface BashToolOptions {
  runner: ShellRunner
  config: () => BashConfig
  /** Absolute workDir: commands run there. */
  workDir: () => string
  /** More absolute directories a command may name without its risk being raised (extra dirs, the outputs folder). */
  allowedDirs?: () => string[]
  /** Absolute folder for output too large to show. */
  outputDir: () => string
  /** The pipeline's `maxOutputLength` (characters): the shown output stays below it. */
  maxOutputLength: () => number
}

/** Room the footer and notes of a result take beside the output, in characters. */
const footerRoom = 600
/** Least time between two progress events, in ms. */
const progressInterval = 100
/** Longest progress message, in characters (the end is kept). */
const progressLength = 2000

/** Compiles the command lists once per config object. */
function rulesCache(config: () => BashConfig) {
  let source: BashConfig | undefined
  let rules: CommandRules
  return () => {
    const current = config()
    if (current !== source) {
      source = current
      rules = compileRules(current)
    }
    return rules
  }
}

/** Emits the lines a command prints as progress events, at most one per {@link progressInterval}. */
function progressReporter(call: ToolCall) {
  let pending: string[] = []
  let last = 0
  let timer: NodeJS.Timeout | undefined
  const flush = () => {
    clearTimeout(timer)
    timer = undefined
    if (!pending.length) return
    const message = pending.join('\n')
    pending = []
    last = Date.now()
    call.progress({ message: message.length > progressLength ? message.slice(-progressLength) : message })
  }
  return {
    lines(lines: string[]) {
      pending.push(...lines)
      const wait = progressInterval - (Date.now() - last)
      if (wait <= 0) flush()
      else timer ??= setTimeout(flush, wait)
    },
    flush,
  }
}

/** The text the model reads for a finished command: output, then how it ended. */
export function formatRun(result: RunResult, notes: string[] = []) {
  const lines = [result.output.text || '(no output)', '']
  const ending = result.exitCode !== undefined ? `exit code ${result.exitCode}` : `ended by ${result.signal ?? 'a signal'}`
  lines.push(`[${ending} · ${result.duration} ms]`)
  if (result.background.length) {
    const list = result.background.slice(0, 5).map((item) => `${item.pid} (${item.command.slice(0, 80)})`).join(', ')
    const more = result.background.length > 5 ? ` and ${result.background.length - 5} more` : ''
    lines.push(`[still running in the background: ${list}${more}; they are stopped when the plugin unloads]`)
  }
  lines.push(...notes.map((note) => `[${note}]`))
  return lines.join('\n')
}

/**
 * The built-in `bash` tool (issue "Built-in tools", items 5, 6 and 8):
 * runs one command line in a pseudo-terminal in the workDir, with a time
 * limit, output limits (head and tail shown, the whole saved to a file),
 * ANSI sequences stripped, `\r` frames folded, exit code and duration
 * reported, progress events while it runs, and every process it started
 * killed on timeout, abort and plugin unload. Before it runs, the line is
 * parsed and every command found becomes a part of the permission action
 * (`exec:<name>`), denied or asked by the allow/deny lists and by what
 * cannot be judged statically; a command naming a path outside the workDir
 * and the allowed dirs gets risk `dangerous` (a heuristic on its words).
 * A deny list is not a sandbox.
 */
export function createBashTool(options: BashToolOptions): ToolDefinition<BashArgs> {
  const { runner, config, workDir, outputDir, maxOutputLength, allowedDirs = () => [] } = options
  const rules = rulesCache(config)
  return {
    name: 'bash',
    description: toolDescription('bash'),
    describe: describeIn('bash'),
    args: localizedArgs('bash', Schema.object({
      command: Schema.string().required(),
      timeout: Schema.natural().role('ms').min(1),
    })),
    traits: {
      effect: 'exec',
      // The tool enforces its own limit and reports the output so far; the pipeline's is a safety net.
      get timeout() {
        return config().timeout + 10000
      },
    },
    permission: (args) => ({
      name: 'exec',
      target: { command: args.command, cwd: workDir() },
      parts: commandParts(args.command, rules(), { workspace: normalizeWorkspace(workDir(), allowedDirs()) }),
    }),
    render: {
      call: (args) => `$ ${args.command}`,
    },
    async run(args, call) {
      if (!args.command.trim()) {
        throw new ToolRunError('empty-command', 'The command is empty.', { status: 'invalid', text: toolErrorText('empty-command') })
      }
      if (!shellAvailable(runner.shellPath)) {
        throw new ToolRunError('shell-not-found', `The shell ${JSON.stringify(runner.shellPath)} cannot be run.`, {
          hint: 'The bot owner should check the bash.shellPath setting.',
          text: toolErrorText('shell-not-found', { name: runner.shellPath }),
        })
      }
      const current = config()
      const notes: string[] = []
      let timeout = args.timeout ?? current.timeout
      if (timeout > current.timeout) {
        notes.push(`the time limit was lowered from ${timeout} ms to the configured maximum of ${current.timeout} ms`)
        timeout = current.timeout
      }
      const progress = progressReporter(call)
      const stamp = new Date().toISOString().replace(/[:.]/g, '-')
      const result = await runner.run(args.command, {
        cwd: workDir(),
        timeout,
        maxOutputSize: Math.max(200, Math.min(current.maxOutputSize, maxOutputLength() - footerRoom)),
        spoolPath: () => join(outputDir(), `${stamp}-bash-${call.id.replace(/[^A-Za-z0-9_-]/g, '_')}.log`),
        signal: call.signal,
        onLines: progress.lines,
      })
      progress.flush()
      if (result.timedOut || result.aborted) {
        const output = result.output.text ? `\nOutput so far:\n${result.output.text}` : ''
        if (result.timedOut) {
          throw new ToolRunError('timeout', `The command did not finish within ${timeout} ms; it was stopped with every process it started.${output}`, {
            status: 'timeout',
            hint: 'Run something shorter, give a larger timeout (up to the configured maximum), or put a long task in the background with output to a file.',
          })
        }
        throw new ToolRunError('aborted', `The command was aborted and stopped with every process it started.${output}`, { status: 'aborted' })
      }
      return {
        content: [{ type: 'text', text: formatRun(result, notes) }],
        meta: {
          exitCode: result.exitCode,
          signal: result.signal,
          commandDuration: result.duration,
          outputBytes: result.output.bytes,
          outputFile: result.output.spoolPath,
        },
      }
    },
  }
}
