import { distance } from 'fastest-levenshtein'

/** Tool names the model sees: 1–64 letters, digits, `_` or `-` (DESIGN.md "ToolDefinition"). */
export const toolNamePattern = /^[a-zA-Z0-9_-]{1,64}$/

/**
 * Throws a `TypeError` naming the rule when `name` is not a legal tool name.
 * Called by `ctx.tools.define`, so a bad name fails at define time.
 */
export function assertToolName(name: unknown): asserts name is string {
  if (typeof name !== 'string' || !toolNamePattern.test(name)) {
    throw new TypeError(`invalid tool name ${JSON.stringify(name)}: a tool name must match ${toolNamePattern} (1–64 letters, digits, "_" or "-")`)
  }
}

/**
 * The conservative normal form used when an exact name is not found:
 * lower case, `-` and spaces become `_` (DESIGN.md pipeline step 1).
 */
export function normalizeToolName(name: string) {
  return name.trim().toLowerCase().replace(/[-\s]/g, '_')
}

/** Characters of a name compared by {@link closestNames}: twice the longest legal name. */
const comparedLength = 128

/**
 * Up to `limit` names from `candidates` closest to `name`, closest first
 * (Levenshtein distance on the normal form, ties by name). For an empty name
 * every candidate is equally close, so the first ones in name order are given.
 * Only the first 128 characters of `name` are compared, so a model's
 * megabyte-long name costs no more than a long legal one.
 */
export function closestNames(name: string, candidates: Iterable<string>, limit = 5) {
  const target = normalizeToolName(String(name || '').slice(0, comparedLength))
  return [...candidates]
    .map((candidate) => {
      const normal = normalizeToolName(candidate)
      let score = target ? distance(target, normal) : 0
      if (target && (normal.includes(target) || target.includes(normal))) score -= 2
      return { candidate, score }
    })
    .sort((a, b) => a.score - b.score || a.candidate.localeCompare(b.candidate))
    .slice(0, limit)
    .map(({ candidate }) => candidate)
}

/**
 * The name an MCP tool gets: `mcp__<server>__<tool>`, characters outside
 * `[a-zA-Z0-9_-]` replaced by `_`, cut to 64 characters (DESIGN.md "ToolDefinition").
 */
export function mcpToolName(server: string, tool: string) {
  return `mcp__${server}__${tool}`.replace(/[^a-zA-Z0-9_-]/g, '_').slice(0, 64)
}
