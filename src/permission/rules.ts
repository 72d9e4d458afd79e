import { isAbsolute, posix, relative, resolve, sep } from 'path'
import { Dict } from 'koishi'
import { ToolAction, ToolEffect } from '../types'
import { matchName, matchText, specificity } from '../visibility/patterns'
import { contains } from '../builtin/path-guard'
import { targetText } from './action'
import { PermissionSubject, sessionKey } from './subject'

/** What a rule says about the actions it matches (issue 3, item 5). */
export type RuleEffect = 'allow' | 'ask' | 'deny'

/**
 * How long a rule holds: `once` (the next matching call, then removed),
 * `turn` (calls of one agent turn, `scope.turn`), `session` (one user in one
 * channel with one agent, until the plugin restarts), `until` (a time,
 * `expiresAt`), `permanent`.
 */
export type RuleValidity = 'once' | 'turn' | 'session' | 'until' | 'permanent'

/** Validities stored in the database; `turn` and `session` live in memory only. */
export const persistentValidities: readonly RuleValidity[] = ['once', 'until', 'permanent']

/** Who a rule applies to; every empty field matches anyone. Levels are inclusive, 0–5. */
export interface RuleWho {
  userId?: string
  platform?: string
  guildId?: string
  channelId?: string
  agent?: string
  kind?: 'private' | 'group'
  minLevel?: number
  maxLevel?: number
}

/**
 * A permission rule (issue 3, item 5; DESIGN.md "Permissions"). `action` is
 * a glob pattern on action names (`tool:*`, `exec:git`); `target` a
 * pattern on the target: for `exec` actions a command prefix (`git status`
 * matches `git status -s`; with wildcards, `*` also crosses `/`), otherwise
 * a path (matched as given, relative to the workDir and absolute).
 * `exact` rules (made from approvals) compare both literally. `final`
 * stops the evaluation: more specific rules cannot override it.
 */
export interface PermissionRule extends RuleWho {
  id: string
  effect: RuleEffect
  action: string
  target?: string
  exact?: boolean
  validity: RuleValidity
  /** For `until`: when the rule stops applying (ms since epoch). Turn grants expire too. */
  expiresAt?: number
  /** For `turn`: the turn id. */
  turn?: string
  /** For `session`: the session key ({@link sessionKey}). */
  session?: string
  final?: boolean
  /** When it was made (ms since epoch). */
  createdAt: number
  /** `platform:userId` of whoever made it. */
  createdBy?: string
  /** Where it came from: a command, an approval answer, or the API. */
  source: 'command' | 'approval' | 'api'
  /** The approval it was made from. */
  approval?: string
}

/** A rule as `rules.add` takes it: the id, time and source are filled in. */
export type RuleInput = Omit<PermissionRule, 'id' | 'createdAt' | 'source' | 'validity'>
  & Partial<Pick<PermissionRule, 'source' | 'validity' | 'createdAt'>>

/** A rule, an approval answer or a policy that cannot be accepted; `code` names the problem, `params` fill its text. */
export class PermissionInputError extends Error {
  constructor(public code: string, message: string, public params: Dict = {}) {
    super(message)
  }
}

/** What rule matching needs besides the rule, the part and the subject. */
export interface MatchContext {
  /**
   * Absolute workDir, for path targets; or several spellings of it (its
   * real path first, then the path as configured when a symbolic link lies
   * on the way): a target counts as inside when it is inside any of them.
   */
  workDir: string | readonly string[]
  now: number
  turn?: string
}

/**
 * Checks and completes a rule input; throws {@link PermissionInputError}.
 * `stored` skips the "expiry in the future" check for rules read back from
 * the database (expired ones are dropped by the caller).
 */
export function normalizeRule(input: RuleInput, id: string, now: number, stored = false): PermissionRule {
  if (!input || typeof input !== 'object') throw new PermissionInputError('rule-invalid', 'a rule must be an object')
  if (!['allow', 'ask', 'deny'].includes(input.effect)) {
    throw new PermissionInputError('rule-effect', `the effect must be allow, ask or deny, not ${JSON.stringify(input.effect)}`, { effect: String(input.effect) })
  }
  const action = typeof input.action === 'string' ? input.action.trim() : ''
  if (!action || action.length > 200) throw new PermissionInputError('rule-action', 'the action pattern must be 1 to 200 characters')
  const target = typeof input.target === 'string' && input.target.trim() ? input.target.trim().replace(/\s+/g, ' ') : undefined
  if (target && target.length > 500) throw new PermissionInputError('rule-target', 'the target pattern must be at most 500 characters')
  for (const key of ['minLevel', 'maxLevel'] as const) {
    const value = input[key]
    if (value !== undefined && (!Number.isInteger(value) || value < 0 || value > 5)) {
      throw new PermissionInputError('rule-level', `${key} must be an integer from 0 to 5`)
    }
  }
  if (input.minLevel !== undefined && input.maxLevel !== undefined && input.minLevel > input.maxLevel) {
    throw new PermissionInputError('rule-level', 'minLevel must not exceed maxLevel')
  }
  const validity = input.validity ?? (input.expiresAt !== undefined ? 'until' : 'permanent')
  if (!['once', 'turn', 'session', 'until', 'permanent'].includes(validity)) {
    throw new PermissionInputError('rule-validity', `unknown validity ${JSON.stringify(validity)}`)
  }
  if (validity === 'until' && !(Number.isFinite(input.expiresAt) && (stored || input.expiresAt > now))) {
    throw new PermissionInputError('rule-expired', 'an `until` rule needs an expiry time in the future')
  }
  if (validity === 'turn' && !input.turn) throw new PermissionInputError('rule-validity', 'a `turn` rule needs the turn id')
  if (validity === 'session' && !input.session) throw new PermissionInputError('rule-validity', 'a `session` rule needs the session key')
  const rule: PermissionRule = {
    id,
    effect: input.effect,
    action,
    validity,
    createdAt: input.createdAt ?? now,
    source: input.source ?? 'api',
  }
  if (target) rule.target = target
  if (input.exact) rule.exact = true
  if (input.final) rule.final = true
  if (input.kind === 'private' || input.kind === 'group') rule.kind = input.kind
  for (const key of ['userId', 'platform', 'guildId', 'channelId', 'agent', 'turn', 'session', 'createdBy', 'approval'] as const) {
    if (typeof input[key] === 'string' && input[key]) rule[key] = input[key]
  }
  for (const key of ['minLevel', 'maxLevel', 'expiresAt'] as const) {
    if (input[key] !== undefined && input[key] !== null) rule[key] = input[key]
  }
  return rule
}

/** Whether a rule still applies at `now` (an expiry in the past ends it). */
export function isLive(rule: PermissionRule, now: number) {
  return rule.expiresAt === undefined || rule.expiresAt > now
}

/**
 * Whether a rule applies to this subject, turn and session ({@link sessionKey})
 * at this time. A rule naming an agent applies to that agent; a deny or ask
 * rule also to the sub-agents it delegated to (`subject.delegatedBy`).
 */
export function ruleAppliesTo(rule: PermissionRule, subject: PermissionSubject, context: MatchContext): boolean {
  if (!isLive(rule, context.now)) return false
  if (rule.validity === 'turn' && (!context.turn || rule.turn !== context.turn)) return false
  if (rule.validity === 'session' && rule.session !== sessionKey(subject)) return false
  if (rule.userId && rule.userId !== subject.userId) return false
  if (rule.platform && rule.platform !== subject.platform) return false
  if (rule.guildId && rule.guildId !== subject.guildId) return false
  if (rule.channelId && rule.channelId !== subject.channelId) return false
  // Deny and ask rules of an agent also bind the sub-agents it delegates to; allow rules only the agent itself.
  if (rule.agent && rule.agent !== subject.agent && (rule.effect === 'allow' || !subject.delegatedBy?.includes(rule.agent))) return false
  if (rule.kind === 'private' && !subject.private) return false
  if (rule.kind === 'group' && subject.private) return false
  if (rule.minLevel !== undefined && subject.authority < rule.minLevel) return false
  if (rule.maxLevel !== undefined && subject.authority > rule.maxLevel) return false
  return true
}

/**
 * Whether a rule covers this action (or part): its action and target
 * patterns. The action pattern matches the action's name (`fs:write`,
 * `exec:git`, …) or `tool:<name>` of the tool that asked, so a rule can
 * name a tool without knowing its action names (`tool:write`,
 * `tool:mcp__*`). Exact rules (from approval answers) match the action name
 * only.
 */
export function ruleMatchesAction(rule: PermissionRule, part: ToolAction, workDir: string | readonly string[], tool?: string): boolean {
  const target = targetText(part.target)
  if (rule.exact) return rule.action === part.name && (rule.target ?? '') === target
  if (!matchName(rule.action, part.name) && !(tool && matchName(rule.action, `tool:${tool}`))) return false
  if (!rule.target) return true
  return matchTarget(rule.target, target, part.effect ?? 'exec', workDir)
}

/**
 * Whether a target pattern matches a target. For `exec` effects the target
 * is a command line: a pattern without wildcards is a prefix of whole words
 * (`git` matches `git status` but not `gitk`), one with wildcards is matched
 * with stars that match any characters, `/` and `..` included (a command
 * line is text, not a path), in linear time. Other targets are paths: the
 * pattern is tried on the target as given, relative to the workDir (when it
 * lies inside) and as an absolute path.
 */
export function matchTarget(pattern: string, target: string, effect: ToolEffect, workDir: string | readonly string[]): boolean {
  if (effect === 'exec') {
    const line = target.trim().replace(/\s+/g, ' ')
    if (!/[*?[\]{}]/.test(pattern)) return line === pattern || line.startsWith(pattern + ' ')
    return matchText(pattern, line)
  }
  return pathCandidates(target, workDir).some((candidate) => matchName(pattern, candidate))
}

/**
 * A path target as given, relative to the workDir (when inside) and
 * absolute, in POSIX form. With several spellings of the workDir (its real
 * path and the configured path through a symbolic link), a target inside
 * one is also given under each of the others, so a rule written with
 * either spelling, or relative, matches a tool's real path.
 */
export function pathCandidates(target: string, workDir: string | readonly string[]): string[] {
  if (!target) return ['']
  const dirs = typeof workDir === 'string' ? [workDir] : workDir
  const toPosix = (path: string) => path.split(sep).join('/')
  const candidates = new Set([toPosix(target), posix.normalize(toPosix(target))])
  for (const dir of dirs) {
    const absolute = resolve(dir, target)
    candidates.add(toPosix(absolute))
    if (!contains(dir, absolute)) continue
    const inside = relative(dir, absolute)
    candidates.add(toPosix(inside) || '.')
    for (const other of dirs) candidates.add(toPosix(resolve(other, inside)))
  }
  return [...candidates]
}

/** Whether a path target resolves inside the workDir, or one of its spellings (relative targets count from the workDir). */
export function insideWorkDir(target: string, workDir: string | readonly string[]): boolean {
  if (!target) return false
  const dirs = typeof workDir === 'string' ? [workDir] : workDir
  return dirs.some((dir) => contains(dir, isAbsolute(target) ? resolve(target) : resolve(dir, target)))
}

/**
 * How specific a rule is, for "most specific wins" (issue 3, item 1): the
 * literal characters of its action and target patterns first, then who it
 * names (a user beats a channel, a guild, a platform, an agent, a chat kind,
 * a level range).
 */
export function ruleSpecificity(rule: PermissionRule): number {
  const what = specificity(rule.action) + (rule.target ? specificity(rule.target) : 0)
  const who = (rule.userId ? 32 : 0) + (rule.channelId ? 16 : 0) + (rule.guildId ? 8 : 0)
    + (rule.platform ? 4 : 0) + (rule.agent ? 4 : 0) + (rule.kind ? 2 : 0)
    + (rule.minLevel !== undefined || rule.maxLevel !== undefined ? 1 : 0)
  return what * 100 + who
}

/**
 * Parses a level range for `tools.rule add --level`: `3`, `1-3`, `2+`
 * (2 and above), `-2` (up to 2). Throws {@link PermissionInputError}.
 */
export function parseLevelRange(text: string): { minLevel?: number; maxLevel?: number } {
  const match = /^\s*(\d)?\s*(-|\+)?\s*(\d)?\s*$/.exec(text ?? '')
  if (!match || (!match[1] && !match[3])) throw new PermissionInputError('rule-level-syntax', `cannot read the level range ${JSON.stringify(text)}`, { text })
  const [, low, sign, high] = match
  let range: { minLevel?: number; maxLevel?: number }
  if (!sign) range = high ? undefined : { minLevel: +low, maxLevel: +low }
  else if (sign === '+') range = high ? undefined : { minLevel: +low }
  else range = { minLevel: low ? +low : undefined, maxLevel: high ? +high : undefined }
  if (!range || (range.minLevel ?? 0) > 5 || (range.maxLevel ?? 0) > 5 || (range.minLevel ?? 0) > (range.maxLevel ?? 5)) {
    throw new PermissionInputError('rule-level-syntax', `cannot read the level range ${JSON.stringify(text)}`, { text })
  }
  return range
}
