import { ToolScope } from '../types'
import { ToolPolicy } from '../permission/policy'
import { toolPolicies } from '../permission/policy-store'
import { ApprovalAnswer, approvalAnswers, isApprovalAnswer } from '../permission/answers'
import { ConsoleScopeInput } from './types'

/**
 * Thrown for malformed input from the page (or anyone speaking the console
 * protocol). The message starts with the stable code `invalid-input`.
 */
export class ConsoleInputError extends Error {
  readonly code = 'invalid-input'

  constructor(message: string) {
    super(`invalid-input: ${message}`)
  }
}

/** Longest id, pattern or name accepted from the page, in characters. */
const maxText = 200
/** Most patterns in an agent's include or exclude list. */
const maxPatterns = 50

function text(value: unknown, field: string): string | undefined {
  if (value === undefined || value === null || value === '') return
  if (typeof value !== 'string') throw new ConsoleInputError(`${field} must be a string`)
  if (value.length > maxText) throw new ConsoleInputError(`${field} is longer than ${maxText} characters`)
  return value.trim() || undefined
}

function patterns(value: unknown, field: string): string[] | undefined {
  if (value === undefined || value === null) return
  if (!Array.isArray(value) || value.length > maxPatterns) throw new ConsoleInputError(`${field} must be a list of at most ${maxPatterns} patterns`)
  const list = value.map((item, index) => text(item, `${field}[${index}]`)).filter(Boolean)
  return list.length ? list : undefined
}

/** A scope from the page's scope bar, checked field by field. */
export interface ParsedScope {
  scope: ToolScope
  /** Undefined: the config's mode. */
  mode?: string
  /** The page's locale first, then the app's fallbacks. */
  locale?: string
}

/**
 * Turns the page's scope into a `ToolScope`: a private chat gets the channel
 * `private:<userId>` when none is given; `authority` must be an integer
 * 0–5 (default 0, as for a chat user without a record). Throws
 * `ConsoleInputError` for anything malformed.
 */
export function parseScope(input: unknown): ParsedScope {
  if (input === undefined || input === null) input = {}
  if (typeof input !== 'object' || Array.isArray(input)) throw new ConsoleInputError('the scope must be an object')
  const raw = input as ConsoleScopeInput
  if (raw.kind !== undefined && raw.kind !== 'group' && raw.kind !== 'private') {
    throw new ConsoleInputError('kind must be "group" or "private"')
  }
  const authority = raw.authority ?? 0
  if (!Number.isInteger(authority) || authority < 0 || authority > 5) {
    throw new ConsoleInputError('authority must be an integer from 0 to 5')
  }
  const isPrivate = raw.kind === 'private'
  const userId = text(raw.userId, 'userId')
  const scope: ToolScope = {
    platform: text(raw.platform, 'platform'),
    guildId: isPrivate ? undefined : text(raw.guildId, 'guildId'),
    channelId: text(raw.channelId, 'channelId') ?? (isPrivate && userId ? `private:${userId}` : undefined),
    userId,
    private: isPrivate,
    authority,
    agent: text(raw.agent, 'agent'),
  }
  const include = patterns(raw.include, 'include')
  const exclude = patterns(raw.exclude, 'exclude')
  if (include || exclude) scope.tools = { include, exclude }
  const locale = parseLocale(raw.locale)
  if (locale) scope.locale = locale
  for (const key of Object.keys(scope) as (keyof ToolScope)[]) {
    if (scope[key] === undefined) delete scope[key]
  }
  return { scope, mode: text(raw.mode, 'mode'), locale }
}

/** A tool-name pattern for a policy: a non-empty string of at most 200 characters. */
export function parsePattern(value: unknown): string {
  const pattern = text(value, 'pattern')
  if (!pattern) throw new ConsoleInputError('pattern must be a tool name or a wildcard pattern')
  return pattern
}

/** `auto`, `approval`, `disabled`, or null to remove the console's policy. */
export function parsePolicy(value: unknown): ToolPolicy | null {
  if (value === null || value === undefined || value === '') return null
  if (!toolPolicies.includes(value as ToolPolicy)) {
    throw new ConsoleInputError(`policy must be one of ${toolPolicies.join(', ')}, or null to remove it`)
  }
  return value as ToolPolicy
}

/** An approval answer: one of {@link approvalAnswers}. */
export function parseAnswer(value: unknown): ApprovalAnswer {
  if (!isApprovalAnswer(value)) {
    throw new ConsoleInputError(`answer must be one of ${approvalAnswers.join(', ')}`)
  }
  return value
}

/** The page's locale (e.g. `zh-CN`), or undefined for the app's default. */
export function parseLocale(value: unknown): string | undefined {
  return text(value, 'locale')
}

/** A non-empty id or name (a finite number is taken as its text), at most 200 characters; `field` names it in the error. */
export function parseId(value: unknown, field = 'id'): string {
  if (typeof value === 'number' && Number.isFinite(value)) return String(value)
  const id = text(value, field)
  if (!id) throw new ConsoleInputError(`${field} is missing`)
  return id
}

/** A count from 1 to `max` (default `fallback`). */
export function parseLimit(value: unknown, fallback: number, max: number): number {
  if (value === undefined || value === null) return fallback
  if (!Number.isInteger(value) || (value as number) < 1) throw new ConsoleInputError('limit must be a positive integer')
  return Math.min(value as number, max)
}
