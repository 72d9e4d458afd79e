import { Context, Dict } from 'koishi'
import { PolicyTable, ToolPolicy, toolPolicies } from './policy'
import { PermissionInputError } from './rules'

type Database = Context['database']

/** A policy as `policies.list()` shows it. */
export interface PolicyEntry {
  pattern: string
  policy: ToolPolicy
  /** `stored` (set by command, console or API) or `config` (the plugin config). */
  source: 'stored' | 'config'
  updatedAt?: number
  updatedBy?: string
}

export { toolPolicies }

/**
 * Tool policies set at run time (issue 3, item 6), kept in the table
 * `chatluna_tools_policy` when a database is loaded, else in memory. They
 * form the top layer of the service's {@link PolicyTable}, so they take
 * precedence over the config's and visibility layer 4 sees `disabled` at
 * once. A change applies from the next call; a call in flight is never
 * interrupted.
 */
export class PolicyStore {
  private layer: Dict<ToolPolicy> = {}
  private info: Dict<{ updatedAt: number; updatedBy?: string }> = {}
  private database?: Database
  private listeners = new Set<() => void>()

  constructor(private table: PolicyTable, private config: () => Dict<ToolPolicy>) {}

  /** Pushes the layer into the table; returns the remover. */
  install() {
    return this.table.push(this.layer)
  }

  /** Stored policies first, then the config's, each sorted by pattern. */
  list(): PolicyEntry[] {
    const stored = Object.keys(this.layer).sort().map((pattern): PolicyEntry => ({
      pattern,
      policy: this.layer[pattern],
      source: 'stored',
      ...this.info[pattern],
    }))
    const config = this.config() ?? {}
    const configured = Object.keys(config).sort().map((pattern): PolicyEntry => ({ pattern, policy: config[pattern], source: 'config' }))
    return [...stored, ...configured]
  }

  /** Sets the policy of a tool-name pattern. Throws `PermissionInputError` for a bad pattern or policy. */
  async set(pattern: string, policy: ToolPolicy, updatedBy?: string) {
    pattern = typeof pattern === 'string' ? pattern.trim() : ''
    if (!pattern || pattern.length > 255 || /\s/.test(pattern)) {
      throw new PermissionInputError('policy-pattern', 'the pattern must be 1 to 255 characters without spaces', { pattern: String(pattern) })
    }
    if (!toolPolicies.includes(policy)) {
      throw new PermissionInputError('policy-value', `the policy must be auto, approval or disabled, not ${JSON.stringify(policy)}`, { policy: String(policy) })
    }
    const updatedAt = Date.now()
    if (this.database) {
      await this.database.upsert('chatluna_tools_policy', [{ pattern, policy, updatedAt: new Date(updatedAt), updatedBy: updatedBy ?? '' }])
    }
    this.layer[pattern] = policy
    this.info[pattern] = { updatedAt, updatedBy }
    this.changed()
  }

  /** Removes a stored policy; false when none was stored for that pattern. */
  async remove(pattern: string): Promise<boolean> {
    if (!(pattern in this.layer)) return false
    if (this.database) await this.database.remove('chatluna_tools_policy', { pattern })
    delete this.layer[pattern]
    delete this.info[pattern]
    this.changed()
    return true
  }

  /** Calls `listener` after every change; returns an unsubscribe function. */
  subscribe(listener: () => void) {
    this.listeners.add(listener)
    return () => this.listeners.delete(listener)
  }

  /** Loads the stored policies and writes those set before the database came. */
  async attach(database: Database) {
    const rows = await database.get('chatluna_tools_policy', {})
    const unsaved = Object.keys(this.layer).filter((pattern) => !rows.some((row) => row.pattern === pattern))
    if (unsaved.length) {
      await database.upsert('chatluna_tools_policy', unsaved.map((pattern) => ({
        pattern,
        policy: this.layer[pattern],
        updatedAt: new Date(this.info[pattern]?.updatedAt ?? Date.now()),
        updatedBy: this.info[pattern]?.updatedBy ?? '',
      })))
    }
    for (const row of rows) {
      if (!toolPolicies.includes(row.policy as ToolPolicy)) continue
      this.layer[row.pattern] = row.policy as ToolPolicy
      this.info[row.pattern] = { updatedAt: row.updatedAt ? +new Date(row.updatedAt) : 0, updatedBy: row.updatedBy || undefined }
    }
    this.database = database
    this.changed()
  }

  /** Stops using the database; the policies stay in memory. */
  detach() {
    this.database = undefined
  }

  private changed() {
    for (const listener of this.listeners) listener()
  }
}
