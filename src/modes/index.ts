import { ToolScope } from '../types'
import { RegisteredTool } from '../registry/registry'
import { Dialect, dialects, ToolDeclaration } from './dialects'
import { nativeDeclarations } from './native'
import { SearchMode } from './search'

export * from './dialects'
export { describeTool, declareTool } from './native'

/**
 * What the model sees (tool-system seed, "三种工具模式"; DESIGN.md "Modes"):
 * `native` every visible tool in full; `search` the resident tools,
 * `tool_search` and the tools loaded in this conversation; `auto` search
 * when more than `searchThreshold` tools are visible, else native.
 */
export type ToolMode = 'native' | 'search' | 'auto'

/** Options of `ctx.tools.declarations`. */
export interface DeclarationOptions {
  /** Default: the config's `mode` (default `auto`). */
  mode?: ToolMode
  /** The provider's format; default `openai`. */
  dialect?: Dialect
  /** Locales for descriptions, most preferred first. */
  locales?: string[]
}

/**
 * The concrete mode for `count` visible tools (mode tools not counted):
 * `auto` is `search` when `count > threshold`, else `native`; other modes
 * are returned as they are. Seed: "自动模式下，工具总数超过阈值才启用搜索".
 */
export function resolveMode(mode: string, count: number, threshold: number): string {
  return mode === 'auto' ? (count > threshold ? 'search' : 'native') : mode
}

/**
 * The declarations of the visible tools `entries` (mode tools such as
 * `tool_search` excluded) for a concrete mode (`native` or `search`; see
 * {@link resolveMode}), before any dialect. Search mode needs `search`.
 * Throws a `TypeError` for an unknown mode.
 */
export function modeDeclarations(mode: string, entries: RegisteredTool[], scope: ToolScope, locales: string[], search?: SearchMode): ToolDeclaration[] {
  switch (mode) {
    case 'native': return nativeDeclarations(entries, scope, locales)
    case 'search':
      if (!search) throw new TypeError('search mode needs the search state')
      return search.declarations(entries, scope, locales)
    default: throw new TypeError(`unknown tool mode "${mode}"`)
  }
}

/** Converts neutral declarations to a dialect; throws a `TypeError` for an unknown dialect. */
export function toDialect(declarations: ToolDeclaration[], dialect: string) {
  const convert: (declaration: ToolDeclaration) => unknown = dialects[dialect as Dialect]
  if (!convert) throw new TypeError(`unknown declaration dialect "${dialect}"`)
  return declarations.map((declaration) => convert(declaration))
}
