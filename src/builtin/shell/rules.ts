import { posix } from 'path'
import { compileGlob } from '../../visibility/glob'
import { ToolAction } from '../../types'
import { BashMode } from '../config'
import { analyzeCommandLine, FoundCommand, ShellAnalysis } from './analyze'
import { reasonText, ShellReason, shellReason } from './reasons'
import { outsidePaths, Workspace } from './workspace'

/** One part of a command pattern after the name. */
type ArgPattern =
  | { kind: 'flags'; letters: string[] }
  | { kind: 'long'; option: string }
  | { kind: 'number'; option: string }
  | { kind: 'word'; test: (value: string) => boolean }

/**
 * Long options and the short option each spells, per program (GNU
 * coreutils, git): `rm --recursive --force` is `rm -rf` to a deny rule.
 */
const longSynonyms: Record<string, Record<string, string>> = {
  rm: { '--recursive': 'r', '--force': 'f', '--dir': 'd', '--interactive': 'i', '--verbose': 'v' },
  chmod: { '--recursive': 'R', '--changes': 'c', '--silent': 'f', '--quiet': 'f', '--verbose': 'v' },
  chown: { '--recursive': 'R', '--changes': 'c', '--silent': 'f', '--quiet': 'f', '--verbose': 'v' },
  chgrp: { '--recursive': 'R', '--changes': 'c', '--silent': 'f', '--quiet': 'f', '--verbose': 'v' },
  cp: { '--recursive': 'r', '--force': 'f' },
  git: { '--force': 'f' },
  kill: { '--signal': 's' },
}

/**
 * A path-like operand in a canonical spelling (`of=//dev/./sda` →
 * `of=/dev/sda`), or undefined when it has no `/`: the part after a
 * `key=` prefix with repeated slashes, `.` and `..` segments resolved.
 */
function canonicalPath(value: string): string | undefined {
  if (!value.includes('/')) return
  const eq = value.indexOf('=')
  const key = eq > 0 && !value.slice(0, eq).includes('/') ? value.slice(0, eq + 1) : ''
  const path = value.slice(key.length).replace(/\/{2,}/g, '/')
  return key + posix.normalize(path)
}

/**
 * A command pattern of the config (`mkfs*`, `rm -rf`, `git push --force`,
 * `dd of=/dev/*`): a name glob, then argument patterns that must all
 * appear, in any order. A short-option cluster matches when every letter
 * appears in the command's short options (`-rf` matches `-fr`, `-r -f`,
 * `-Rrf`); a long option matches itself or `--opt=value`; `-9`-style
 * numbers match exactly; any other word is a glob matched against each
 * operand. Words are separated by spaces (this is config syntax, not a
 * shell line).
 *
 * The command's own spelling does not matter: a long option abbreviated
 * the way getopt accepts (`--recur` for `--recursive`), a long option
 * that spells a short one (`rm --force` is `-f`, see
 * {@link longSynonyms}), and an operand path written another way
 * (`//dev/./sda`) all match.
 */
export class CommandPattern {
  readonly name: (value: string) => boolean
  readonly args: ArgPattern[]

  constructor(readonly source: string) {
    const [name = '', ...rest] = source.trim().split(/\s+/)
    this.name = compileGlob(name || '\0')
    this.args = rest.map((word): ArgPattern => {
      if (/^-\d+$/.test(word)) return { kind: 'number', option: word }
      if (word.startsWith('--') && word.length > 2) return { kind: 'long', option: word }
      if (word.startsWith('-') && word.length > 1) return { kind: 'flags', letters: [...word.slice(1)] }
      const glob = compileGlob(word)
      return { kind: 'word', test: (value) => value === word || glob(value) }
    })
  }

  /** Whether the pattern's name matches a command name. */
  matchesName(name: string) {
    return !!name && this.name(name)
  }

  /** Whether a command (name and static arguments) matches the whole pattern. */
  matches(command: FoundCommand): boolean {
    if (!this.matchesName(command.name)) return false
    if (!this.args.length) return true
    const synonyms = longSynonyms[command.name] ?? {}
    // Long options a written one may abbreviate: the program's known ones and this pattern's.
    const known = [...new Set([...Object.keys(synonyms), ...this.args.flatMap((arg) => arg.kind === 'long' ? [arg.option] : [])])]
    const letters = new Set<string>()
    const longs: string[] = []
    const numbers = new Set<string>()
    const operands: string[] = []
    let optionsDone = false
    for (const arg of command.args) {
      if (arg === undefined) continue
      if (!optionsDone && arg === '--') {
        optionsDone = true
      } else if (!optionsDone && /^-\d+$/.test(arg)) {
        numbers.add(arg)
      } else if (!optionsDone && arg.startsWith('--')) {
        const eq = arg.indexOf('=')
        const written = eq === -1 ? arg : arg.slice(0, eq)
        const expanded = known.includes(written) ? [written] : known.filter((option) => option.startsWith(written))
        const option = expanded.length === 1 ? expanded[0] : written
        if (synonyms[option]) letters.add(synonyms[option])
        longs.push(eq === -1 ? option : option + arg.slice(eq))
      } else if (!optionsDone && arg.startsWith('-') && arg.length > 1) {
        for (const letter of arg.slice(1)) letters.add(letter)
      } else {
        operands.push(arg)
        const canonical = canonicalPath(arg)
        if (canonical !== undefined && canonical !== arg) operands.push(canonical)
      }
    }
    return this.args.every((pattern) => {
      switch (pattern.kind) {
        case 'flags': return pattern.letters.every((letter) => letters.has(letter))
        case 'long': return longs.some((arg) => arg === pattern.option || arg.startsWith(pattern.option + '='))
          || (!!synonyms[pattern.option] && letters.has(synonyms[pattern.option]))
        case 'number': return numbers.has(pattern.option)
        case 'word': return operands.some(pattern.test)
      }
    })
  }
}

/** The bash tool's command lists, compiled (RuleGo seed, "bash — 行动力" security options). */
export interface CommandRules {
  mode: BashMode
  allow: CommandPattern[]
  deny: CommandPattern[]
  denyArgs: CommandPattern[]
}

/** Compiles the config lists; empty entries are ignored. */
export function compileRules(config: { mode: BashMode; allow: string[]; deny: string[]; denyArgs: string[] }): CommandRules {
  const compile = (list: string[] = []) => list.filter((item) => item?.trim()).map((item) => new CommandPattern(item))
  return {
    mode: config.mode,
    allow: compile(config.allow),
    deny: compile(config.deny),
    denyArgs: compile(config.denyArgs),
  }
}

/** The verdict of the rules on one command: deny (with the rule), ask (why), or nothing. */
function judgeCommand(command: FoundCommand, rules: CommandRules): { verdict?: 'ask' | 'deny'; reasons: ShellReason[] } {
  const { name } = command
  if (name) {
    const denied = rules.deny.find((pattern) => pattern.matches(command))
    if (denied) return { verdict: 'deny', reasons: [shellReason('deny-list', { name, rule: denied.source })] }
    const deniedArgs = rules.denyArgs.find((pattern) => pattern.matches(command))
    if (deniedArgs) return { verdict: 'deny', reasons: [shellReason('deny-rule', { command: command.text, rule: deniedArgs.source })] }
    if (rules.mode === 'allow' && !command.callsFunction && !rules.allow.some((pattern) => pattern.matches(command))) {
      return { verdict: 'deny', reasons: [shellReason('not-allowed', { name })] }
    }
  }
  const asks = [...command.asks]
  if (name && (command.openArgs || command.args.includes(undefined))) {
    const rule = rules.denyArgs.find((pattern) => pattern.matchesName(name))
    if (rule) asks.push(shellReason('deny-rule-unchecked', { name, rule: rule.source }))
  }
  return asks.length ? { verdict: 'ask', reasons: asks } : { reasons: asks }
}

/** The English reason of a part for the model: a refusal as it is; asks joined, then who must decide. */
function partReason(verdict: 'ask' | 'deny' | undefined, reasons: ShellReason[]): string {
  const text = reasons.map((reason) => reason.text).join('; ')
  return verdict === 'ask' ? `${text}: a human must approve` : text
}

/** Options of {@link commandParts}. */
export interface CommandPartsOptions {
  /** Where commands run: with it, a command naming a path outside gets risk `dangerous` ({@link leavesWorkspace}). */
  workspace?: Workspace
  /** The analysis of the line, when the caller has it already. */
  analysis?: ShellAnalysis
}

/**
 * The permission parts of a shell line (issue "Built-in tools", items 6
 * and 8): one part per command found, `exec:<name>` on the command as
 * written. A command on the deny list, matching a `denyArgs` rule, or
 * (mode `allow`) matching no `allow` rule gets `verdict: 'deny'` with the
 * rule; anything that cannot be judged statically gets `verdict: 'ask'`
 * with the reason; a command run as another user (`sudo`, `su`, …) gets
 * risk `critical`; with a `workspace`, a command whose literal words name
 * a path outside it gets at least risk `dangerous`, said in its reason (a
 * heuristic, not confinement: {@link leavesWorkspace}). Problems of the
 * whole line (a parse error) become a part `exec:?` that asks. Deny rules
 * apply whatever the mode. Each reason is an English sentence (`reason`,
 * for the model) and locale texts (`reasonText`, `chatluna-tools.shell.<code>`,
 * for chat).
 */
export function commandParts(line: string, rules: CommandRules, options: CommandPartsOptions = {}): ToolAction[] {
  const analysis = options.analysis ?? analyzeCommandLine(line)
  const parts: ToolAction[] = []
  const seen = new Set<string>()
  for (const problem of analysis.problems) {
    if (seen.has(problem.text)) continue
    seen.add(problem.text)
    parts.push({ name: 'exec:?', target: line, verdict: 'ask', reason: partReason('ask', [problem]), reasonText: [reasonText(problem)] })
  }
  for (const command of analysis.commands) {
    const part: ToolAction = { name: `exec:${command.name || '?'}`, target: command.text }
    const { verdict, reasons } = judgeCommand(command, rules)
    if (command.elevated) part.risk = 'critical'
    if (options.workspace && verdict !== 'deny') {
      const outside = outsidePaths(command.literals, options.workspace)
      if (outside.length) {
        if (!part.risk) part.risk = 'dangerous'
        reasons.unshift(shellReason('outside-workspace', { command: command.text, paths: outside.map((path) => JSON.stringify(path)).join(', ') }))
      }
    }
    if (verdict) part.verdict = verdict
    if (reasons.length) {
      part.reason = partReason(verdict, reasons)
      part.reasonText = reasons.map(reasonText)
    }
    parts.push(part)
  }
  return parts
}
