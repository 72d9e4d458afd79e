import { Context, Logger } from 'koishi'
import { isLive, normalizeRule, PermissionRule, persistentValidities, RuleInput } from './rules'
import { RuleRow } from './database'
import { shortId } from './ids'

const logger = new Logger('chatluna-tools')

type Database = Context['database']

function toRow(rule: PermissionRule): RuleRow {
  return {
    id: rule.id,
    effect: rule.effect,
    action: rule.action,
    target: rule.target ?? '',
    exact: !!rule.exact,
    validity: rule.validity,
    expiresAt: rule.expiresAt === undefined ? null : new Date(rule.expiresAt),
    userId: rule.userId ?? '',
    platform: rule.platform ?? '',
    guildId: rule.guildId ?? '',
    channelId: rule.channelId ?? '',
    agent: rule.agent ?? '',
    kind: rule.kind ?? '',
    minLevel: rule.minLevel ?? null,
    maxLevel: rule.maxLevel ?? null,
    final: !!rule.final,
    createdAt: new Date(rule.createdAt),
    createdBy: rule.createdBy ?? '',
    source: rule.source,
    approval: rule.approval ?? '',
  }
}

function fromRow(row: RuleRow): RuleInput & { id: string } {
  const time = (value: Date | null | undefined) => value ? +new Date(value) : undefined
  const level = (value: number | null | undefined) => typeof value === 'number' ? value : undefined
  return {
    id: row.id,
    effect: row.effect as any,
    action: row.action,
    target: row.target || undefined,
    exact: !!row.exact,
    validity: row.validity as any,
    expiresAt: time(row.expiresAt),
    userId: row.userId || undefined,
    platform: row.platform || undefined,
    guildId: row.guildId || undefined,
    channelId: row.channelId || undefined,
    agent: row.agent || undefined,
    kind: (row.kind || undefined) as any,
    minLevel: level(row.minLevel),
    maxLevel: level(row.maxLevel),
    final: !!row.final,
    createdAt: time(row.createdAt) ?? 0,
    createdBy: row.createdBy || undefined,
    source: (row.source || 'api') as any,
    approval: row.approval || undefined,
  }
}

/**
 * The permission rules (issue 3, item 5): in memory for every decision,
 * and — for `once`, `until` and `permanent` rules — in the table
 * `chatluna_tools_rule` when a database is loaded (loaded at start; rules
 * made before the database came are written to it then). Without a
 * database every rule lives in memory until the process ends. `turn` and
 * `session` grants never reach the database.
 */
export class RuleStore {
  private rules: PermissionRule[] = []
  private database?: Database
  private listeners = new Set<() => void>()

  constructor(private now: () => number = Date.now) {}

  /** Every rule still in force, oldest first. Expired rules are dropped on the way. */
  list(): PermissionRule[] {
    this.prune()
    return this.rules.slice()
  }

  /** The same as {@link list} without copying; for the decision's hot path. */
  live(): readonly PermissionRule[] {
    this.prune()
    return this.rules
  }

  /** A rule in memory by its exact id, expired or not. */
  get(id: string): PermissionRule | undefined {
    return this.rules.find((rule) => rule.id === id)
  }

  /**
   * Adds a rule and returns it with its id. Stored rules are written to the
   * database first, so a database error rejects and nothing is added.
   * Throws `PermissionInputError` for an invalid rule.
   */
  async add(input: RuleInput): Promise<PermissionRule> {
    const rule = normalizeRule(input, this.newId(), this.now())
    if (this.database && persistentValidities.includes(rule.validity)) {
      await this.database.create('chatluna_tools_rule', toRow(rule))
    }
    this.rules.push(rule)
    this.changed()
    return rule
  }

  /** Adds a memory-only rule at once (approval grants); returns it. */
  grant(input: RuleInput): PermissionRule {
    const rule = normalizeRule(input, this.newId(), this.now())
    this.rules.push(rule)
    this.changed()
    return rule
  }

  /** Removes a rule by id; false when there is none. */
  async remove(id: string): Promise<boolean> {
    const rule = this.get(id)
    if (!rule) return false
    if (this.database && persistentValidities.includes(rule.validity)) {
      await this.database.remove('chatluna_tools_rule', { id })
    }
    this.drop(rule)
    return true
  }

  /** Uses up a `once` rule: gone from memory at once, from the database soon after. */
  consume(rule: PermissionRule) {
    if (rule.validity !== 'once' || !this.rules.includes(rule)) return
    this.drop(rule)
    this.database?.remove('chatluna_tools_rule', { id: rule.id }).catch((error) => {
      logger.warn('could not remove used rule %s: %s', rule.id, error)
    })
  }

  /** Calls `listener` after every change; returns an unsubscribe function. */
  subscribe(listener: () => void) {
    this.listeners.add(listener)
    return () => this.listeners.delete(listener)
  }

  /**
   * Starts using a database: loads its rules (dropping expired ones) and
   * writes the stored kinds of rules made before it was there.
   */
  async attach(database: Database) {
    const rows = await database.get('chatluna_tools_rule', {})
    const now = this.now()
    const loaded: PermissionRule[] = []
    const expired: string[] = []
    for (const row of rows) {
      const input = fromRow(row)
      try {
        const rule = normalizeRule(input, input.id, now, true)
        if (!isLive(rule, now)) expired.push(rule.id)
        else loaded.push(rule)
      } catch (error) {
        logger.warn('skipping stored rule %s: %s', row.id, error?.message ?? error)
      }
    }
    if (expired.length) await database.remove('chatluna_tools_rule', { id: expired })
    const known = new Set(loaded.map((rule) => rule.id))
    const unsaved = this.rules.filter((rule) => !known.has(rule.id) && persistentValidities.includes(rule.validity))
    for (const rule of unsaved) await database.create('chatluna_tools_rule', toRow(rule))
    const memoryOnly = this.rules.filter((rule) => !known.has(rule.id))
    this.rules = [...loaded, ...memoryOnly].sort((a, b) => a.createdAt - b.createdAt)
    this.database = database
    this.changed()
  }

  /** Stops using the database; the rules stay in memory. */
  detach() {
    this.database = undefined
  }

  private newId() {
    return shortId((id) => this.rules.some((rule) => rule.id === id), 5)
  }

  private prune() {
    if (!this.rules.length) return
    const now = this.now()
    if (this.rules.every((rule) => isLive(rule, now))) return
    const expired = this.rules.filter((rule) => !isLive(rule, now))
    this.rules = this.rules.filter((rule) => isLive(rule, now))
    const stored = expired.filter((rule) => persistentValidities.includes(rule.validity)).map((rule) => rule.id)
    if (stored.length) {
      this.database?.remove('chatluna_tools_rule', { id: stored }).catch((error) => {
        logger.warn('could not remove expired rules: %s', error)
      })
    }
    this.changed()
  }

  private drop(rule: PermissionRule) {
    this.rules = this.rules.filter((item) => item !== rule)
    this.changed()
  }

  private changed() {
    for (const listener of this.listeners) listener()
  }
}
