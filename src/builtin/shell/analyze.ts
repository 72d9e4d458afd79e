import { forEachChild, parse } from 'unbash'
import type { Assignment, Command, Redirect, SyntaxNode, Word } from 'unbash'
import { ArgWord, argWord, basename, isSystemPath, literalStart, staticValue } from './words'
import { readWrapper, wrappers } from './wrappers'
import { inspectProgram } from './programs'
import { ArithmeticTaint } from './arithmetic'
import { ShellReason, shellReason } from './reasons'

/** One command a shell line would run (issue "Built-in tools", item 6). */
export interface FoundCommand {
  /** Program base name after unquoting (`/bin/rm`, `\rm`, `r'm'` → `rm`); `''` when built at run time. */
  name: string
  /** Arguments after the name: text after quote removal, `undefined` where built at run time. */
  args: (string | undefined)[]
  /** The command as written, from its name to its end. */
  text: string
  /** Why it cannot be judged statically; non-empty → the call asks. */
  asks: ShellReason[]
  /** Wrappers it was found in, outermost first (`sudo`, `find -exec`, `bash -c`). */
  via: string[]
  /** Runs as another user (inside or as `sudo`, `su`, `doas`, `pkexec`). */
  elevated: boolean
  /** More arguments arrive at run time (`xargs`, `find -exec`). */
  openArgs: boolean
  /**
   * It surely calls a shell function of the line, not a program: called by
   * its bare name after an unconditional definition at the top of the line
   * (not in a subshell, a branch, a pipeline or the background), and the
   * line never says `unset`. Its body is analysed where it is defined.
   */
  callsFunction: boolean
  /**
   * Its words as far as they are literal, for the workspace heuristic:
   * each argument after quote removal, or the literal start of one built at
   * run time (`../*.txt` → `../`), and the targets of its redirections.
   */
  literals: string[]
}

/** The commands of a shell line and what keeps it from being judged. */
export interface ShellAnalysis {
  commands: FoundCommand[]
  /** Problems of the line as a whole (parse errors, prompt expansion, risky variables). */
  problems: ShellReason[]
  /** Names of the functions the line defines (anywhere, even where they may not exist when called). */
  functions: Set<string>
}

/** Nesting of re-analysed command strings (`bash -c 'bash -c …'`) before giving up. */
const maxDepth = 8

/**
 * Variables that make later commands run other code: the dynamic loader,
 * shell start-up files and prompts, pagers and editors, interpreter
 * options. Setting one of them asks.
 */
const riskyVariable = /^(LD_[A-Z_]+|DYLD_[A-Z_]+|BASH_ENV|ENV|PATH|PROMPT_COMMAND|PS[0-4]|SHELLOPTS|BASHOPTS|BASH_FUNC_.*|PAGER|GIT_PAGER|MANPAGER|SYSTEMD_PAGER|EDITOR|VISUAL|GIT_EDITOR|GIT_SSH|GIT_SSH_COMMAND|GIT_EXTERNAL_DIFF|GIT_ASKPASS|SSH_ASKPASS|SUDO_ASKPASS|GIT_CONFIG_.*|LESSOPEN|LESSCLOSE|NODE_OPTIONS|NODE_PATH|PYTHONSTARTUP|PYTHONPATH|PYTHONHOME|PERL5OPT|PERL5LIB|PERLLIB|RUBYOPT|RUBYLIB|BROWSER|TERMINAL|SHELL)$/

interface Frame {
  depth: number
  via: string[]
  elevated: boolean
}

/**
 * Parses a shell line with unbash and collects every command it would run
 * (issue "Built-in tools", item 6): pipelines, lists (`;` `&&` `||` `&`,
 * newlines), subshells, brace groups, `if`/`for`/`while`/`case`, function
 * bodies, `$(…)`, backticks, `<(…)`/`>(…)`, expansions inside double
 * quotes and parameter defaults, here-documents and here-strings,
 * arithmetic. Wrappers are looked through (`sudo chmod` finds `sudo` and
 * `chmod`), command strings of `bash -c`, `su -c`, `eval`, `env -S`,
 * `watch` and `trap` are analysed too. Arithmetic that reads a variable
 * whose value comes from run time is a problem of the line
 * ({@link ArithmeticTaint}). Never throws: a parse error is a problem of
 * the line (the call then asks).
 */
export function analyzeCommandLine(line: string): ShellAnalysis {
  const analysis: ShellAnalysis = { commands: [], problems: [], functions: new Set() }
  const taint = new ArithmeticTaint()
  taints.set(analysis, taint)
  try {
    analyzeSource(line, analysis, { depth: 0, via: [], elevated: false })
  } catch (error) {
    // Thousands of nested substitutions overflow the parser's or the walk's stack.
    analysis.problems.push(shellReason('analysis-failed', { error: String(error?.message ?? error) }))
  }
  analysis.problems.push(...taint.problems())
  return analysis
}

/** The arithmetic taint of each analysis in progress (shared by its nested command strings). */
const taints = new WeakMap<ShellAnalysis, ArithmeticTaint>()

function analyzeSource(source: string, analysis: ShellAnalysis, frame: Frame) {
  if (frame.depth > maxDepth) {
    analysis.problems.push(shellReason('nested-too-deep', { depth: maxDepth }))
    return
  }
  let script: SyntaxNode
  try {
    script = parse(source)
  } catch (error) {
    analysis.problems.push(shellReason('parse-failed', { error: String(error?.message ?? error) }))
    return
  }
  const sources: string[] = [source]
  const functions = frame.depth === 0 ? firmFunctions(script, source) : new Map<string, number>()
  let nested = 0
  const visit = (node: SyntaxNode) => {
    const owned = node.type === 'Script' && typeof node.source === 'string'
    if (owned) sources.push((node as any).source)
    const inner = owned && node !== script
    if (inner) nested++
    if (node.type === 'Script' && (node as any).errors?.length) {
      for (const error of (node as any).errors) analysis.problems.push(shellReason('parse-error', { error: String(error.message), position: error.pos + 1 }))
    }
    const text = sources[sources.length - 1]
    taints.get(analysis)?.visit(node, text)
    switch (node.type) {
      case 'Command': {
        const name = staticValue(node.name)
        const defined = name === undefined || nested ? undefined : functions.get(name)
        onCommand(node, text, analysis, frame, defined !== undefined && defined <= node.pos)
        break
      }
      case 'Function':
        if (node.name.value) analysis.functions.add(node.name.value)
        break
      case 'Assignment':
        onAssignment(node, analysis)
        break
      case 'ParameterExpansion':
        if (node.operation?.type === 'Transform' && /P/.test(node.operation.operand?.value ?? '')) {
          analysis.problems.push(shellReason('prompt-expansion'))
        }
        break
      case 'TestCommand':
        checkReevaluated(node, analysis, '[[ … ]]')
        break
    }
    const first = analysis.commands.length
    forEachChild(node, visit)
    if (node.type === 'Redirected') {
      // `{ …; } > file`, `while …; done < file`: the file is a word of every command inside.
      const targets: string[] = []
      for (const item of node.redirects) if (item.type === 'Redirect') redirectTarget(item, targets)
      if (targets.length) for (const found of analysis.commands.slice(first)) found.literals.push(...targets)
    }
    if (owned) sources.pop()
    if (inner) nested--
  }
  visit(script)
}

/**
 * Functions the line surely defines before running on: `name() { … }`
 * statements at the top level of the line, not in the background, with the
 * offset where each first definition ends. None when the line says `unset`
 * anywhere (it could remove one, even through `builtin` or `eval`).
 */
function firmFunctions(script: SyntaxNode, source: string): Map<string, number> {
  const firm = new Map<string, number>()
  if (/\bunset\b/.test(source)) return firm
  for (const statement of (script as any).commands ?? []) {
    const command = statement?.command
    if (statement?.type !== 'Statement' || statement.background || command?.type !== 'Function') continue
    const name = command.name?.value
    if (typeof name === 'string' && name && !firm.has(name)) firm.set(name, command.end)
  }
  return firm
}

/** Asks when a word evaluated again by `[[ -v … ]]` or arithmetic holds a command substitution as text. */
function checkReevaluated(node: SyntaxNode, analysis: ShellAnalysis, what: string) {
  const scan = (child: SyntaxNode) => {
    if (child.type === 'Word') {
      const value = staticValue(child)
      if (value !== undefined && /\$\(|`/.test(value)) {
        analysis.problems.push(shellReason('reevaluated-substitution', { name: what }))
      }
    }
    forEachChild(child, scan)
  }
  forEachChild(node, scan)
}

function onAssignment(node: Assignment, analysis: ShellAnalysis) {
  if (riskyVariable.test(node.name)) {
    analysis.problems.push(shellReason('risky-variable', { name: node.name }))
  }
  if (node.value.type === 'Word') {
    const value = staticValue(node.value)
    if (value !== undefined && /\$\(|`/.test(value)) {
      analysis.problems.push(shellReason('substitution-in-variable', { name: node.name }))
    }
  }
}

function onCommand(command: Command, source: string, analysis: ShellAnalysis, frame: Frame, callsFunction: boolean) {
  if (!command.name) return
  const words: ArgWord[] = [argWord(command.name)]
  const redirects: string[] = []
  for (const item of command.suffix) {
    if (item.type === 'Word' || item.type === 'Assignment') words.push(argWord(item as Word | Assignment))
    else if (item.type === 'Redirect') redirectTarget(item, redirects)
  }
  for (const item of command.prefix) if (item.type === 'Redirect') redirectTarget(item, redirects)
  const first = analysis.commands.length
  record(words, command.end, source, analysis, frame, false, callsFunction)
  if (redirects.length) analysis.commands[first].literals.push(...redirects)
}

/** The file a redirection reads or writes, as far as it is literal; none for `>&2` and `<&-`. */
function redirectTarget(redirect: Redirect, targets: string[]) {
  const { operator, target } = redirect
  const literal = literalStart(target)
  if (!literal) return
  if ((operator === '>&' || operator === '<&') && /^(\d+-?|-)$/.test(literal)) return
  targets.push(literal)
}

/**
 * Records the command whose name is `words[0]` (its arguments follow),
 * then looks into it: wrappers, command strings, `find -exec`.
 */
function record(words: ArgWord[], end: number, source: string, analysis: ShellAnalysis, frame: Frame, openArgs: boolean, callsFunction = false) {
  const [nameWord, ...args] = words
  const found: FoundCommand = {
    name: '',
    args: args.map((arg) => arg.value),
    literals: args.map((arg) => arg.value ?? arg.literal),
    text: source.slice(nameWord.pos, end),
    asks: [],
    via: frame.via,
    elevated: frame.elevated,
    openArgs,
    callsFunction,
  }
  analysis.commands.push(found)
  if (nameWord.value === undefined) {
    found.asks.push(shellReason('dynamic-name', { name: nameWord.text }))
    return
  }
  if (nameWord.value === '') {
    found.asks.push(shellReason('empty-name'))
    return
  }
  found.name = basename(nameWord.value)
  if (!isSystemPath(nameWord.value)) {
    found.asks.push(shellReason('program-path', { path: nameWord.value }))
  }

  const wrapper = wrappers[found.name]
  if (wrapper) {
    if (wrapper.elevated) found.elevated = true
    const reading = readWrapper(found.name, wrapper, args)
    if (reading.problem) found.asks.push(reading.problem)
    for (const assignment of reading.assignments) {
      const name = assignment.slice(0, assignment.indexOf('='))
      if (riskyVariable.test(name)) found.asks.push(shellReason('command-variable', { name }))
    }
    const inner: Frame = { depth: frame.depth, via: [...frame.via, found.name], elevated: found.elevated }
    for (const script of reading.scripts) nested(script, `${found.name} -c`, analysis, { ...inner, depth: frame.depth + 1 }, found)
    for (const split of reading.splits) nested(split, `${found.name} -S`, analysis, { ...inner, depth: frame.depth + 1 }, found)
    if (reading.noRun) return
    if (reading.inner !== undefined) {
      record(args.slice(reading.inner), end, source, analysis, inner, openArgs || !!wrapper.openArgs)
    } else if ((reading.shell || wrapper.bareShell) && !reading.problem && !reading.scripts.length && !reading.splits.length) {
      found.asks.push(shellReason('interactive-shell', { name: found.name }))
    }
    return
  }

  const insight = inspectProgram(found.name, args)
  found.asks.push(...insight.asks)
  const inner: Frame = { depth: frame.depth + 1, via: [...frame.via, found.name], elevated: frame.elevated || found.name === 'su' }
  if (found.name === 'su') found.elevated = true
  for (const script of insight.scripts) nested(script, found.name, analysis, inner, found)
  for (const range of insight.commands) {
    const slice = args.slice(range.start, range.end)
    const last = args[range.end - 1]
    record(slice, last.end, source, analysis, { ...inner, depth: frame.depth, via: [...frame.via, `${found.name} -exec`] }, range.openArgs)
  }
}

/** Analyses a command string run by `owner`; one built at run time makes `owner` ask. */
function nested(code: string | undefined, label: string, analysis: ShellAnalysis, frame: Frame, owner: FoundCommand) {
  if (code === undefined) {
    owner.asks.push(shellReason('dynamic-command-string', { label }))
    return
  }
  analyzeSource(code, analysis, frame)
}
