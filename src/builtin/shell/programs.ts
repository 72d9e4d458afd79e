import { ArgWord, isOption } from './words'
import { awkRunsCommands, sedRunsCommands } from './scripts'
import { escapeReason } from './escapes'
import { ShellReason, shellReason } from './reasons'

/**
 * What the analysis learns from one command's name and arguments, beyond
 * the command itself (issue "Built-in tools", item 6).
 */
export interface ProgramInsight {
  /** Why the command cannot be judged statically: the call asks. */
  asks: ShellReason[]
  /** Shell code it runs, to analyse like the line (`bash -c '…'`, `eval …`); `undefined`: built at run time. */
  scripts: (string | undefined)[]
  /** Commands it runs from its own arguments (`find -exec cmd … ;`): argument ranges `[start, end)`. */
  commands: { start: number; end: number; openArgs: boolean }[]
}

/** Shells: any use but `--version`/`--help` runs code from `-c`, a file or standard input. */
export const shells = new Set(['sh', 'bash', 'dash', 'zsh', 'ksh', 'mksh', 'ash', 'fish', 'csh', 'tcsh', 'rbash', 'yash', 'posh'])

/** Interpreters: they run code from `-c`/`-e`, a script file or standard input. */
const interpreterName = /^(python[0-9.]*|pypy[0-9.]*|node|nodejs|deno|bun|perl[0-9.]*|ruby[0-9.]*|irb|php[0-9.]*|lua[0-9.]*|luajit|rscript|r|julia|tclsh[0-9.]*|wish|osascript|pwsh|powershell|ts-node|tsx|jshell|groovy|guile|racket|sbcl|ghci|runghc|elixir|escript|expect)$/i

/** Options that only print information. */
const informational = new Set(['--version', '-V', '--help', '-h', '-v', '-version', '-help'])

/** Shell builtins that evaluate strings again (arithmetic, array subscripts, callbacks). */
const reevaluating = new Set(['let', 'declare', 'typeset', 'local', 'export', 'readonly', 'printf', 'read', 'unset', 'test', '[', 'mapfile', 'readarray'])

function onlyInformational(args: ArgWord[]) {
  return args.length > 0 && args.every((arg) => arg.value !== undefined && informational.has(arg.value))
}

/** Joins static words with spaces, or undefined when one is built at run time. */
function joined(args: ArgWord[]): string | undefined {
  if (args.some((arg) => arg.value === undefined)) return undefined
  return args.map((arg) => arg.value).join(' ')
}

/** `bash -c 'code' name args`, `bash script.sh`, `bash < file`, … */
function shellInsight(name: string, args: ArgWord[], insight: ProgramInsight) {
  if (onlyInformational(args)) return
  let command = false
  let index = 0
  for (; index < args.length; index++) {
    const value = args[index].value
    // A word built at run time is taken as the operand: the command string or the script.
    if (value === undefined) break
    if (value === '--' || value === '-') {
      index++
      break
    }
    if (['--rcfile', '--init-file'].includes(value)) {
      insight.asks.push(shellReason('shell-startup-file', { name, option: value }))
      index++
      continue
    }
    if (value.startsWith('--')) continue
    if (/^[-+][A-Za-z]+$/.test(value)) {
      if (value.includes('c') && value[0] === '-') command = true
      // -o / -O take a value.
      if (/[oO]$/.test(value)) index++
      continue
    }
    break
  }
  if (command) {
    const code = args[index]
    insight.scripts.push(code?.value)
    insight.asks.push(shellReason('shell-command-string', { name }))
  } else if (index < args.length) {
    insight.asks.push(shellReason('shell-script-file', { name, file: args[index].value ?? args[index].text }))
  } else {
    insight.asks.push(shellReason('shell-stdin', { name }))
  }
}

/** `su [-] [user] -c 'code'`. */
function suInsight(args: ArgWord[], insight: ProgramInsight) {
  let found = false
  for (let index = 0; index < args.length; index++) {
    const value = args[index].value
    if (value === '-c' || value === '--command' || value === '--session-command') {
      insight.scripts.push(args[index + 1]?.value)
      found = true
      index++
    } else if (value?.startsWith('--command=') || value?.startsWith('--session-command=')) {
      insight.scripts.push(value.slice(value.indexOf('=') + 1))
      found = true
    } else if (value === undefined) {
      insight.asks.push(shellReason('dynamic-argument', { name: 'su' }))
    }
  }
  if (!found) insight.asks.push(shellReason('su-shell'))
}

/** Short options of awk that take a value. */
const awkValued = new Set(['-F', '-v', '-f', '-E', '-e', '-i', '-l', '-W'])

function awkInsight(name: string, args: ArgWord[], insight: ProgramInsight) {
  const programs: (string | undefined)[] = []
  let index = 0
  for (; index < args.length; index++) {
    const value = args[index].value
    if (value === undefined) {
      insight.asks.push(shellReason('dynamic-argument', { name }))
      return
    }
    if (value === '--') {
      index++
      break
    }
    if (value.startsWith('--')) {
      if (/^--(file|include|load|exec)(=|$)/.test(value)) insight.asks.push(shellReason('awk-file', { name, option: value }))
      if (/^--source=/.test(value)) programs.push(value.slice(9))
      if (/^--(file|include|load|exec|source|assign|field-separator)$/.test(value)) {
        if (value === '--source') programs.push(args[index + 1]?.value)
        index++
      }
      continue
    }
    if (isOption(value)) {
      const option = value.slice(0, 2)
      if (awkValued.has(option)) {
        const optionValue = value.length > 2 ? value.slice(2) : args[++index]?.value
        if (option === '-f' || option === '-E' || option === '-i' || option === '-l') insight.asks.push(shellReason('awk-file', { name, option }))
        if (option === '-e') programs.push(optionValue)
      }
      continue
    }
    break
  }
  if (!programs.length && !insight.asks.length && index < args.length) programs.push(args[index].value)
  for (const program of programs) {
    if (program === undefined) insight.asks.push(shellReason('awk-dynamic-program', { name }))
    else if (awkRunsCommands(program)) insight.asks.push(shellReason('awk-runs-commands', { name }))
  }
}

function sedInsight(name: string, args: ArgWord[], insight: ProgramInsight) {
  const scripts: (string | undefined)[] = []
  let explicit = false
  let sandbox = false
  let index = 0
  const operands: ArgWord[] = []
  for (; index < args.length; index++) {
    const value = args[index].value
    if (value === undefined) {
      operands.push(args[index])
      continue
    }
    if (value === '--sandbox') sandbox = true
    else if (value === '-e' || value === '--expression') {
      scripts.push(args[++index]?.value)
      explicit = true
    } else if (value.startsWith('--expression=')) {
      scripts.push(value.slice(13))
      explicit = true
    } else if (value === '-f' || value === '--file' || value.startsWith('--file=') || /^-[^-]*f/.test(value)) {
      insight.asks.push(shellReason('sed-file', { name }))
      explicit = true
    } else if (value === '-l' || value === '--line-length') {
      index++
    } else if (/^-[^-]*e$/.test(value)) {
      scripts.push(args[++index]?.value)
      explicit = true
    } else if (!isOption(value)) {
      operands.push(args[index])
    }
  }
  if (!explicit) scripts.push(operands[0]?.value)
  if (sandbox) return
  for (const script of scripts) {
    if (script === undefined) insight.asks.push(shellReason('sed-dynamic-script', { name }))
    else if (sedRunsCommands(script)) insight.asks.push(shellReason('sed-runs-commands', { name }))
  }
}

/** `find … -exec cmd args ;` / `+`, `-execdir`, `-ok`, `-okdir`; `-delete`. */
function findInsight(args: ArgWord[], insight: ProgramInsight) {
  for (let index = 0; index < args.length; index++) {
    const value = args[index].value
    if (value === '-delete') {
      insight.asks.push(shellReason('find-delete'))
    } else if (value === '-exec' || value === '-execdir' || value === '-ok' || value === '-okdir') {
      const start = index + 1
      let end = start
      while (end < args.length && args[end].value !== ';' && args[end].value !== '+') end++
      if (end >= args.length) {
        insight.asks.push(shellReason('find-unterminated', { option: value }))
        return
      }
      if (end > start) insight.commands.push({ start, end, openArgs: true })
      index = end
    } else if (value === undefined && args[index - 1]?.value?.startsWith('-exec')) {
      insight.asks.push(shellReason('find-dynamic-command'))
    }
  }
}

/**
 * What a program does beyond its name: shells, interpreters, `eval`,
 * `source`, `awk` with `system()`, `sed` with `e`, `find -exec`/`-delete`,
 * `watch`, `parallel`, `alias`, `trap`, `hash -p`, builtins that evaluate
 * strings again. `name` is the base name after unquoting.
 */
export function inspectProgram(name: string, args: ArgWord[]): ProgramInsight {
  const insight: ProgramInsight = { asks: [], scripts: [], commands: [] }
  const lower = name.toLowerCase()
  if (shells.has(lower)) {
    shellInsight(name, args, insight)
  } else if (interpreterName.test(lower)) {
    if (!onlyInformational(args)) {
      insight.asks.push(shellReason('interpreter-code', { name }))
    }
  } else {
    switch (lower) {
      case 'eval':
        insight.scripts.push(joined(args))
        insight.asks.push(shellReason('eval'))
        break
      case 'source':
      case '.':
        insight.asks.push(shellReason('source', { name }))
        break
      case 'su':
        suInsight(args, insight)
        break
      case 'awk': case 'gawk': case 'mawk': case 'nawk':
        awkInsight(name, args, insight)
        break
      case 'sed': case 'gsed':
        sedInsight(name, args, insight)
        break
      case 'find':
        findInsight(args, insight)
        break
      case 'watch': {
        let start = -1
        for (let index = 0; index < args.length; index++) {
          const value = args[index].value
          if (value === undefined || !isOption(value)) {
            start = index
            break
          }
          if (['-n', '--interval', '-q', '--equexit'].includes(value)) index++
        }
        if (args.some((arg) => arg.value === '-x' || arg.value === '--exec')) {
          insight.asks.push(shellReason('watch-exec'))
        } else if (start !== -1) {
          insight.scripts.push(joined(args.slice(start)))
        }
        break
      }
      case 'parallel':
        insight.asks.push(shellReason('parallel'))
        break
      case 'alias':
        if (args.some((arg) => arg.value === undefined || arg.value.includes('='))) insight.asks.push(shellReason('alias'))
        break
      case 'trap': {
        const action = args.find((arg) => arg.value === undefined || !isOption(arg.value))
        if (action && args.length > 1) insight.scripts.push(action.value)
        break
      }
      case 'hash':
        if (args.some((arg) => arg.value === undefined || /^-[^-]*p/.test(arg.value))) insight.asks.push(shellReason('hash-path'))
        break
      case 'enable':
        if (args.some((arg) => arg.value === undefined || /^-[^-]*f/.test(arg.value))) insight.asks.push(shellReason('enable-file'))
        break
      case 'fc':
        insight.asks.push(shellReason('fc'))
        break
      case 'mapfile': case 'readarray':
        if (args.some((arg) => arg.value === undefined || /^-[^-]*C/.test(arg.value))) insight.asks.push(shellReason('array-callback', { name }))
        break
    }
  }
  const escape = escapeReason(lower, args)
  if (escape) insight.asks.push(escape)
  if (reevaluating.has(lower) && args.some((arg) => arg.value !== undefined && /\$\(|`/.test(arg.value))) {
    insight.asks.push(shellReason('reevaluated-substitution', { name }))
  }
  return insight
}
