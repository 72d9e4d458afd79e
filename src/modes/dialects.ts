import { JSONSchema } from '../types'
import { toStrictSchema } from './strict'
import { toAnthropicSchema } from './anthropic'
import { toGeminiSchema } from './gemini'

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
  function: { name: string; description: string; parameters: JSONSchema; strict?: boolean }
}

/** A tool of Anthropic's Messages API (a "client tool"). */
export interface AnthropicToolDeclaration {
  name: string
  description: string
  input_schema: JSONSchema
}

/**
 * A Gemini `FunctionDeclaration`; a request lists them as
 * `tools: [{ functionDeclarations: [...] }]`. `parameters` is left out for a
 * function without parameters.
 */
export interface GeminiFunctionDeclaration {
  name: string
  description: string
  parameters?: JSONSchema
}

/**
 * Converters from neutral declarations to each provider's format, by dialect
 * name. The rules each one follows, with their sources, are in `strict.ts`,
 * `anthropic.ts` and `gemini.ts`.
 *
 * - `openai`: Chat Completions function tools, the schema as it is.
 * - `openai-strict`: the same with `strict: true` and the schema rewritten
 *   for strict mode (every object closed, optional fields required but
 *   nullable). A tool whose schema strict mode cannot express is sent with
 *   `strict: false` and its schema unchanged, so one tool never breaks the
 *   request.
 * - `anthropic`: `{ name, description, input_schema }`.
 * - `gemini`: function declarations in Gemini's OpenAPI Schema subset.
 */
export const dialects = {
  openai: (declaration: ToolDeclaration): OpenAIToolDeclaration => ({
    type: 'function',
    function: { name: declaration.name, description: declaration.description, parameters: declaration.parameters },
  }),
  'openai-strict': (declaration: ToolDeclaration): OpenAIToolDeclaration => {
    const strict = toStrictSchema(declaration.parameters)
    return {
      type: 'function',
      function: {
        name: declaration.name,
        description: declaration.description,
        parameters: strict.ok === true ? strict.schema : declaration.parameters,
        strict: strict.ok,
      },
    }
  },
  anthropic: (declaration: ToolDeclaration): AnthropicToolDeclaration => ({
    name: declaration.name,
    description: declaration.description,
    input_schema: toAnthropicSchema(declaration.parameters),
  }),
  gemini: (declaration: ToolDeclaration): GeminiFunctionDeclaration => {
    const parameters = toGeminiSchema(declaration.parameters)
    const result: GeminiFunctionDeclaration = { name: declaration.name, description: declaration.description }
    if (parameters) result.parameters = parameters
    return result
  },
}

/** A provider format of `ctx.tools.declarations`: `openai`, `openai-strict`, `anthropic` or `gemini`. */
export type Dialect = keyof typeof dialects
