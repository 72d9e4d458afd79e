import { ToolDefinition, ToolScope } from '../types'
import { RegisteredTool, ToolRegistry } from '../registry/registry'
import { VisibilityChain } from '../visibility/chain'
import { findMatch } from '../visibility/patterns'
import { ToolDeclaration } from './dialects'
import { declareTool, describeTool } from './native'
import { ToolRanker } from './ranker'
import { conversationKey, LoadedTools } from './loaded'
import { ModesConfig } from './config'

/** Name of the search tool of search mode. */
export const toolSearchName = 'tool_search'

/** Characters of the catalog of loadable tools appended to `tool_search`'s description. */
export const catalogBudget = 4000
/** Characters of a tool's one-line summary in the catalog and in search results. */
export const summaryLength = 100

/** What search mode needs from the service. */
export interface SearchModeHost {
  /** Every active tool, for the ranker's index. */
  registry: ToolRegistry
  /** Which deferred tools a scope may load. */
  visibility: VisibilityChain
  config(): ModesConfig
}

/** The outcome of one search. */
export interface ToolSearchOutcome {
  /** The tools found and loaded, best first. */
  found: RegisteredTool[]
  /** How many visible tools could have been found (visible and deferred in this scope). */
  candidates: number
}

/** The first line of a description, cut to `max` characters with an ellipsis. */
export function summary(text: string, max = summaryLength) {
  const line = (text || '').trim().split('\n')[0].trim()
  return line.length > max ? line.slice(0, max - 1) + '…' : line
}

/**
 * Search mode (tool-system seed, "三种工具模式": "常驻工具 + 搜索工具，其余
 * 工具按需加载"; DESIGN.md "Modes"). The model gets the resident tools in
 * full, `tool_search`, and the tools it has loaded in this conversation;
 * deferred tools (`traits.deferred`, or a name matching the `deferred`
 * patterns, default `mcp__*`) are found and loaded by `tool_search`.
 *
 * Holds the loaded tools per conversation ({@link LoadedTools}) and one
 * ranker index per locale list over every active tool, rebuilt on the next
 * search after the registry changes. Call `dispose` when the plugin stops.
 */
export class SearchMode {
  readonly loaded = new LoadedTools()
  /** Definitions of the search tools this instance made; they are part of the mode, not tools to choose. */
  private modeTools = new WeakSet<ToolDefinition>()
  private indexes = new Map<string, { ranker: ToolRanker; entries: RegisteredTool[] }>()
  private unsubscribe: () => void

  constructor(private host: SearchModeHost) {
    this.unsubscribe = host.registry.subscribe(() => this.indexes.clear())
  }

  /** Marks a definition as a mode tool (`tool_search`): left out of `list` and native declarations. */
  markModeTool(definition: ToolDefinition) {
    this.modeTools.add(definition)
    return definition
  }

  /** Whether an entry is a mode tool this instance made ({@link markModeTool}). */
  isModeTool(entry: RegisteredTool) {
    return this.modeTools.has(entry.definition)
  }

  /** Whether a tool is loaded on demand in search mode: `traits.deferred`, or a name matching the `deferred` patterns. */
  isDeferred(entry: RegisteredTool) {
    return entry.definition.traits?.deferred === true || !!findMatch(this.host.config().deferred, entry.definition.name)
  }

  /** The active `tool_search` tool when it is visible in the scope. */
  searchTool(scope: ToolScope): RegisteredTool | undefined {
    const entry = this.host.registry.get(toolSearchName)
    if (entry && this.isModeTool(entry) && this.host.visibility.isVisible(entry, scope)) return entry
  }

  /** Whether `name` was loaded by `tool_search` in the conversation of `scope`. */
  isLoaded(scope: ToolScope, name: string) {
    return this.loaded.has(conversationKey(scope), name)
  }

  /**
   * The declarations of search mode for the visible tools `entries` (mode
   * tools excluded): resident tools in name order, then `tool_search` with
   * the catalog of loadable tools, then the tools loaded in this
   * conversation in loading order. Without any visible deferred tool, or
   * when `tool_search` itself is hidden in the scope (a scene rule, a policy
   * or the agent's tool set), this is native mode: every visible tool in full.
   */
  declarations(entries: RegisteredTool[], scope: ToolScope, locales: string[]): ToolDeclaration[] {
    const resident: RegisteredTool[] = []
    const deferred = new Map<string, RegisteredTool>()
    for (const entry of entries) {
      if (this.isDeferred(entry)) deferred.set(entry.definition.name, entry)
      else resident.push(entry)
    }
    const tool = deferred.size ? this.searchTool(scope) : undefined
    if (!tool) return entries.map((entry) => declareTool(entry, scope, locales))
    const loaded = this.loaded.names(conversationKey(scope))
      .map((name) => deferred.get(name))
      .filter(Boolean)
    return [
      ...resident.map((entry) => declareTool(entry, scope, locales)),
      this.declareSearchTool(tool, [...deferred.values()], scope, locales),
      ...loaded.map((entry) => declareTool(entry, scope, locales)),
    ]
  }

  /**
   * `tool_search`'s declaration: its description followed by the catalog of
   * the deferred tools visible here (name and one-line summary each, as
   * the seed's "提示词只列工具名和一句话说明"). Past {@link catalogBudget}
   * characters the catalog lists names only, and past that it is cut with
   * the number of tools left out.
   */
  private declareSearchTool(tool: RegisteredTool, deferred: RegisteredTool[], scope: ToolScope, locales: string[]): ToolDeclaration {
    const declaration = declareTool(tool, scope, locales)
    const header = `\n\nTools you can load (${deferred.length}):`
    let catalog = deferred.map((entry) => `\n- ${entry.definition.name}: ${summary(describeTool(entry, scope, locales))}`).join('')
    if (catalog.length > catalogBudget) {
      catalog = '\n'
      let shown = 0
      for (const entry of deferred) {
        const name = (shown ? ', ' : '') + entry.definition.name
        if (catalog.length + name.length > catalogBudget) break
        catalog += name
        shown++
      }
      if (shown < deferred.length) catalog += ` … and ${deferred.length - shown} more; search to find them.`
    }
    return { ...declaration, description: declaration.description + header + catalog }
  }

  /**
   * Ranks the visible deferred tools of `scope` for `query`, keeps the best
   * `limit`, and loads them for the scope's conversation. Never throws for
   * a query: one without searchable words finds nothing.
   */
  search(scope: ToolScope, query: string, limit: number, locales: string[]): ToolSearchOutcome {
    const { visibility } = this.host
    const index = this.index(locales)
    const candidates = new Set<RegisteredTool>()
    for (const entry of index.entries) {
      if (this.isDeferred(entry) && visibility.isVisible(entry, scope)) candidates.add(entry)
    }
    const hits = index.ranker.rank(query, { limit, accept: (i) => candidates.has(index.entries[i]) })
    const found = hits.map((hit) => index.entries[hit.index])
    if (found.length) this.loaded.load(conversationKey(scope), found.map((entry) => entry.definition.name))
    return { found, candidates: candidates.size }
  }

  /** The ranker over every active tool except mode tools, for a locale list; built on first use after a change. */
  private index(locales: string[]) {
    const key = locales.join(',')
    let index = this.indexes.get(key)
    if (!index) {
      const entries = this.host.registry.active().filter((entry) => !this.isModeTool(entry))
      const ranker = new ToolRanker(entries.map((entry) => ({
        name: entry.definition.name,
        description: entry.definition.description,
        parameters: entry.schema.jsonSchema(locales),
      })))
      this.indexes.set(key, index = { ranker, entries })
    }
    return index
  }

  /** Forgets every loaded tool and index, and stops listening to the registry. */
  dispose() {
    this.unsubscribe()
    this.loaded.clear()
    this.indexes.clear()
  }
}
