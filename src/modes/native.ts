import { JSONSchema, ToolScope } from '../types'
import { RegisteredTool } from '../registry/registry'

/** A declaration in OpenAI's function-tool form. */
export interface OpenAIToolDeclaration {
  type: 'function'
  function: { name: string; description: string; parameters: JSONSchema }
}

/** Options of `ctx.tools.declarations`. */
export interface DeclarationOptions {
  /** What the model sees (tool-system seed, "三种工具模式"); `native` lists every visible tool. */
  mode?: 'native'
  /** The provider's format. */
  dialect?: 'openai'
  /** Locales for descriptions, most preferred first. */
  locales?: string[]
}

/**
 * The description a caller sees: `describe(caller)` when the tool has one
 * and it returns a string, otherwise the static description. A throwing
 * `describe` falls back to the static description.
 */
export function describeTool(entry: RegisteredTool, scope: ToolScope, locales: string[]) {
  const { definition } = entry
  if (definition.describe) {
    try {
      const text = definition.describe({ scope, locale: locales[0] })
      if (typeof text === 'string' && text) return text
    } catch {}
  }
  return definition.description
}

/** Native mode: one full declaration per visible tool, in the OpenAI dialect. */
export function nativeDeclarations(entries: RegisteredTool[], scope: ToolScope, locales: string[]): OpenAIToolDeclaration[] {
  return entries.map((entry) => ({
    type: 'function',
    function: {
      name: entry.definition.name,
      description: describeTool(entry, scope, locales),
      parameters: entry.schema.jsonSchema(locales),
    },
  }))
}
