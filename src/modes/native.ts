import { ToolEntry, ToolScope } from '../types'
import { RegisteredTool } from '../registry/registry'
import { ToolDeclaration } from './dialects'

/**
 * The description a caller sees: `describe(caller)` when the tool has one
 * and it returns a string, otherwise the static description. A throwing
 * `describe` falls back to the static description.
 */
export function describeTool(entry: ToolEntry, scope: ToolScope, locales: string[]) {
  const { definition } = entry
  if (definition.describe) {
    try {
      const text = definition.describe({ scope, locale: locales.find(Boolean) })
      if (typeof text === 'string' && text) return text
    } catch {}
  }
  return definition.description
}

/** The neutral declaration of one tool for a caller. */
export function declareTool(entry: RegisteredTool, scope: ToolScope, locales: string[]): ToolDeclaration {
  return {
    name: entry.definition.name,
    description: describeTool(entry, scope, locales),
    parameters: entry.schema.jsonSchema(locales),
  }
}

/** Native mode (tool-system seed, "三种工具模式"): one full declaration per visible tool. */
export function nativeDeclarations(entries: RegisteredTool[], scope: ToolScope, locales: string[]): ToolDeclaration[] {
  return entries.map((entry) => declareTool(entry, scope, locales))
}
