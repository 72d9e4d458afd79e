import { Context, Logger } from 'koishi'
import { DefineOptions, sourcePriority, ToolDefinition, ToolEntry } from '../types'
import { assertToolName, normalizeToolName } from './names'
import { ArgumentSchema } from '../schema/validate'
import { isSchemastery } from '../schema/schemastery'
import { maxSchemaDepth, nestedDeeperThan } from '../schema/limits'

const logger = new Logger('chatluna-tools')

/** A registered entry with its compiled argument schema. */
export interface RegisteredTool<A = any> extends ToolEntry<A> {
  schema: ArgumentSchema
  /** Compiled `result` schema, when the definition has one. */
  resultSchema?: ArgumentSchema
  /** The defining context's session filter (`ctx.filter`), read once. */
  contextFilter: (session: any) => boolean
}

/** Why an entry is not the active one for its name. */
export interface ShadowInfo {
  entry: RegisteredTool
  by: RegisteredTool
  /** `priority`: a higher-priority source wins; `duplicate`: same priority, the earlier one wins. */
  reason: 'priority' | 'duplicate'
}

/**
 * Storage of every defined tool, keyed by name. Several entries may share a
 * name: the active one is the highest-priority source, then the earliest
 * registered (DESIGN.md "ToolDefinition"); the others wait, shadowed, and
 * come back when the winner is disposed.
 */
export class ToolRegistry {
  private entries = new Map<string, RegisteredTool[]>()
  private order = 0
  private listeners = new Set<() => void>()
  private namesCache?: string[]
  private activeCache?: RegisteredTool[]

  /**
   * Adds a definition for the plugin whose context is `ctx` (named `plugin`
   * in explanations and the console; default: that context's plugin name).
   * Throws a `TypeError` for an illegal name, a definition without `run` or
   * `forward`, a description that is not a string, an unknown
   * `options.source`, or raw `parameters` nested more than
   * {@link maxSchemaDepth} levels deep. Returns the entry; remove it with `remove(entry)`.
   */
  add(ctx: Context, definition: ToolDefinition, options: DefineOptions = {}, plugin = pluginName(ctx)): RegisteredTool {
    assertToolName(definition?.name)
    if (typeof definition.run !== 'function' && typeof definition.forward !== 'function') {
      throw new TypeError(`tool "${definition.name}" needs a run or a forward function`)
    }
    if (typeof definition.description !== 'string') {
      throw new TypeError(`tool "${definition.name}" needs a description (a string)`)
    }
    const source = options.source ?? 'plugin'
    if (!(source in sourcePriority)) throw new TypeError(`unknown tool source "${source}"`)
    if (!isSchemastery(definition.args) && nestedDeeperThan(definition.parameters, maxSchemaDepth)) {
      throw new TypeError(`tool "${definition.name}" has a parameters schema nested more than ${maxSchemaDepth} levels deep`)
    }
    const entry: RegisteredTool = {
      definition,
      source,
      plugin,
      ctx,
      order: ++this.order,
      schema: ArgumentSchema.from(definition),
      resultSchema: definition.result ? ArgumentSchema.from({ args: definition.result }) : undefined,
      contextFilter: ctx.filter,
    }
    if (entry.schema.compileError) {
      logger.warn('tool %s: the argument schema cannot be compiled (%s); arguments are passed without validation', definition.name, entry.schema.compileError)
    }
    const list = this.entries.get(definition.name) ?? []
    list.push(entry)
    list.sort(compareEntries)
    this.entries.set(definition.name, list)
    const winner = list[0]
    if (winner !== entry) {
      if (winner.source === entry.source) {
        logger.warn('tool %s from plugin %s is skipped: plugin %s registered it first', definition.name, entry.plugin, winner.plugin)
      } else {
        logger.info('tool %s from plugin %s (%s) is shadowed by the %s tool of plugin %s', definition.name, entry.plugin, entry.source, winner.source, winner.plugin)
      }
    }
    this.changed()
    return entry
  }

  /** Removes an entry; a shadowed entry of the same name becomes active. */
  remove(entry: RegisteredTool) {
    const list = this.entries.get(entry.definition.name)
    if (!list) return false
    const index = list.indexOf(entry)
    if (index < 0) return false
    list.splice(index, 1)
    if (!list.length) this.entries.delete(entry.definition.name)
    this.changed()
    return true
  }

  /** The active entry for an exact name. */
  get(name: string): RegisteredTool | undefined {
    return this.entries.get(name)?.[0]
  }

  /**
   * Resolves a name as a model wrote it: exact first, then the normal form
   * (case, `-` → `_`) when exactly one active name has that normal form.
   */
  resolve(name: string): RegisteredTool | undefined {
    if (typeof name !== 'string' || !name) return
    const exact = this.get(name)
    if (exact) return exact
    const normal = normalizeToolName(name)
    const matches = this.names().filter((candidate) => normalizeToolName(candidate) === normal)
    return matches.length === 1 ? this.get(matches[0]) : undefined
  }

  /** Every active entry, in name order. A fresh array; computed once per change. */
  active(): RegisteredTool[] {
    this.activeCache ??= this.names().map((name) => this.get(name))
    return this.activeCache.slice()
  }

  /** Every registered name, sorted. A fresh array; computed once per change. */
  names() {
    this.namesCache ??= [...this.entries.keys()].sort()
    return this.namesCache.slice()
  }

  /** All entries of a name, active first. */
  all(name: string): RegisteredTool[] {
    return this.entries.get(name)?.slice() ?? []
  }

  /** The entries of a name that are not active, with the reason. */
  shadowed(name: string): ShadowInfo[] {
    const [winner, ...rest] = this.entries.get(name) ?? []
    return rest.map((entry) => ({
      entry,
      by: winner,
      reason: entry.source === winner.source ? 'duplicate' : 'priority',
    }))
  }

  /** Calls `listener` after every change; returns an unsubscribe function. */
  subscribe(listener: () => void) {
    this.listeners.add(listener)
    return () => this.listeners.delete(listener)
  }

  private changed() {
    this.namesCache = undefined
    this.activeCache = undefined
    for (const listener of this.listeners) listener()
  }
}

function compareEntries(a: ToolEntry, b: ToolEntry) {
  return sourcePriority[b.source] - sourcePriority[a.source] || a.order - b.order
}

/** A readable name for the plugin that owns `ctx`: its registered name, or `anonymous`. */
export function pluginName(ctx: Context): string {
  const runtime = ctx.runtime
  const plugin = runtime?.plugin as any
  return ctx.name && ctx.name !== 'root' ? ctx.name : plugin?.name || 'anonymous'
}
