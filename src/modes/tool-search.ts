import { Schema } from 'koishi'
import { ToolDefinition, ToolScope } from '../types'
import { ToolRunError } from '../pipeline/errors'
import { maxSearchLimit, ModesConfig } from './config'
import { declareTool } from './native'
import { SearchMode, summary, toolSearchName } from './search'

/** Longest query `tool_search` accepts, in characters. */
export const maxQueryLength = 1000

/** Arguments of `tool_search`. */
export interface ToolSearchArgs {
  query: string
  limit?: number
}

/** What `tool_search` needs from the service. */
export interface ToolSearchHost {
  search: SearchMode
  config(): ModesConfig
  /** Locales for descriptions in a scope, most preferred first. */
  locales(scope: ToolScope): string[]
}

/**
 * The `tool_search` tool of search mode (tool-system seed, "search：…模型先
 * 调用搜索工具，命中的工具再加载完整结构"). It ranks the deferred tools
 * visible in the caller's scope for `query`, loads the best `limit`
 * (default `searchLimit`, at most {@link maxSearchLimit}) for the
 * conversation, and returns their names, one-line summaries, full
 * descriptions and parameter schemas, so the model can call them at once;
 * from the next request on they are also in the declarations.
 *
 * Failures: an empty query → `invalid` (`empty-query`); a query longer than
 * {@link maxQueryLength} characters → `invalid` (`query-too-long`). A query
 * that matches nothing is a success that says so. The result's
 * `meta.loaded` lists the loaded names, `meta.candidates` the number of
 * loadable tools.
 */
export function createToolSearchTool(host: ToolSearchHost): ToolDefinition<ToolSearchArgs> {
  const { searchLimit } = host.config()
  return host.search.markModeTool({
    name: toolSearchName,
    description: 'Find and load tools that are not declared yet. Describe the task in a few keywords, in English or Chinese '
      + '(e.g. "create github issue", "查询天气"), or give a tool\'s exact name. Returns the best matching tools with their '
      + 'descriptions and parameters; call them directly by name afterwards.',
    args: Schema.object({
      query: Schema.string().required().description('What the tool should do, in a few keywords, or its exact name.'),
      limit: Schema.natural().min(1).description(`How many tools to load. Default ${searchLimit}, at most ${maxSearchLimit}.`),
    }),
    traits: { effect: 'read', parallel: true },
    permission: 'tools:search',
    render: {
      call: (args) => `tool_search ${args.query}`,
    },
    run(args, call) {
      const query = typeof args.query === 'string' ? args.query.trim() : ''
      if (!query) {
        throw new ToolRunError('empty-query', 'The query is empty.', {
          status: 'invalid',
          hint: 'Describe the tool you need in a few keywords, e.g. "send email" or "查询天气".',
        })
      }
      if (query.length > maxQueryLength) {
        throw new ToolRunError('query-too-long', `The query has ${query.length} characters; at most ${maxQueryLength} are accepted.`, {
          status: 'invalid',
          hint: 'Use a few keywords that describe the tool, not the whole task.',
        })
      }
      const requested = args.limit ?? host.config().searchLimit
      const limit = Math.min(requested, maxSearchLimit)
      const locales = host.locales(call.scope)
      const { found, candidates } = host.search.search(call.scope, query, limit, locales)
      const meta = { loaded: found.map((entry) => entry.definition.name), candidates }
      if (!candidates) {
        return { content: [{ type: 'text', text: 'There are no tools to load in this conversation: every available tool is already declared.' }], meta }
      }
      if (!found.length) {
        const text = `No tool matches "${query}" among the ${candidates} tools that can be loaded. Try other keywords (English or Chinese) or an exact tool name.`
        return { content: [{ type: 'text', text }], meta }
      }
      const capped = requested > limit ? ` (limit capped at ${maxSearchLimit})` : ''
      const declarations = found.map((entry) => declareTool(entry, call.scope, locales))
      const lines = [
        `Loaded ${found.length} of ${candidates} loadable tools for "${query}"${capped}; call them directly by name:`,
        ...declarations.map((declaration) => `- ${declaration.name}: ${summary(declaration.description)}`),
      ]
      for (const declaration of declarations) {
        lines.push('', `## ${declaration.name}`, declaration.description, `Parameters (JSON Schema): ${JSON.stringify(declaration.parameters)}`)
      }
      return { content: [{ type: 'text', text: lines.join('\n') }], meta }
    },
  })
}
