import { ToolScope } from '../types'
import { RegisteredTool } from '../registry/registry'
import { Dialect, dialects, ToolDeclaration } from './dialects'
import { nativeDeclarations } from './native'

export * from './dialects'
export { describeTool, declareTool } from './native'

/** What the model sees (tool-system seed, "三种工具模式"). */
export type ToolMode = 'native'

/** Options of `ctx.tools.declarations`. */
export interface DeclarationOptions {
  /** Default `native`: every visible tool with its full schema. */
  mode?: ToolMode
  /** The provider's format; default `openai`. */
  dialect?: Dialect
  /** Locales for descriptions, most preferred first. */
  locales?: string[]
}

/**
 * The declarations of the visible tools `entries` for a mode, before any
 * dialect. Throws a `TypeError` for an unknown mode.
 */
export function modeDeclarations(mode: string, entries: RegisteredTool[], scope: ToolScope, locales: string[]): ToolDeclaration[] {
  switch (mode) {
    case 'native': return nativeDeclarations(entries, scope, locales)
    default: throw new TypeError(`unknown tool mode "${mode}"`)
  }
}

/** Converts neutral declarations to a dialect; throws a `TypeError` for an unknown dialect. */
export function toDialect(declarations: ToolDeclaration[], dialect: string) {
  const convert: (declaration: ToolDeclaration) => unknown = dialects[dialect as Dialect]
  if (!convert) throw new TypeError(`unknown declaration dialect "${dialect}"`)
  return declarations.map((declaration) => convert(declaration))
}
