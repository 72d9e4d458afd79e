import { JSONSchema } from '../types'

/**
 * A tool declaration before any provider's format: what every dialect is
 * made from. `parameters` is a draft-07 JSON Schema object; it may be shared
 * and frozen, so a dialect that changes it must copy it first.
 */
export interface ToolDeclaration {
  name: string
  description: string
  parameters: JSONSchema
}

/** A declaration in OpenAI's Chat Completions function-tool form. */
export interface OpenAIToolDeclaration {
  type: 'function'
  function: { name: string; description: string; parameters: JSONSchema }
}

/** Converters from neutral declarations to each provider's format, by dialect name. */
export const dialects = {
  openai: (declaration: ToolDeclaration): OpenAIToolDeclaration => ({
    type: 'function',
    function: { name: declaration.name, description: declaration.description, parameters: declaration.parameters },
  }),
}

export type Dialect = keyof typeof dialects
