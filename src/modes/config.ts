import { Schema } from 'koishi'
import { configSection } from '../locales'

/** Most tools one `tool_search` call loads, whatever `limit` or `searchLimit` ask for. */
export const maxSearchLimit = 20

/**
 * Options of the tool modes (tool-system seed, "三种工具模式" and
 * "搜索的默认配置"; DESIGN.md "Modes: what the model sees").
 */
export interface ModesConfig {
  /**
   * What the model is shown when the caller names no mode: `native` (every
   * visible tool in full), `search` (resident tools + `tool_search`), or
   * `auto` (search above `searchThreshold` visible tools). Default `auto`.
   */
  mode: 'auto' | 'native' | 'search'
  /** `auto` switches to search mode when more than this many tools are visible. Default 20. */
  searchThreshold: number
  /** Name patterns (globs) of tools always loaded on demand in search mode. Default `['mcp__*']`. */
  deferred: string[]
  /** Tools one `tool_search` call loads when the model gives no `limit`. Default 5, at most 20. */
  searchLimit: number
}

export const ModesConfig: Schema<ModesConfig> = configSection('modes', Schema.object({
  mode: Schema.union(['auto', 'native', 'search']).default('auto'),
  searchThreshold: Schema.natural().default(20),
  deferred: Schema.array(String).role('table').default(['mcp__*']),
  searchLimit: Schema.natural().min(1).max(maxSearchLimit).default(5),
}))
