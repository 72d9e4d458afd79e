import { JSONSchema } from '../types'
import { compactName, tokenize, unigramPrefix } from './tokenize'

/** What the ranker reads of a tool. `parameters` is its JSON Schema (BFCL's `type: dict` works too). */
export interface RankerDocument {
  name: string
  description: string
  parameters?: JSONSchema | null
}

/** One ranked document: its index in the list given to the ranker, and its score (higher is better). */
export interface RankedHit {
  index: number
  score: number
}

/**
 * Field weights and BM25 constants. Defaults: name 3, description 1,
 * parameters 0.5; `k1` 1.2; `b` 0.75 for descriptions and parameters and
 * 0.3 for names (names are short and their length says little);
 * single CJK characters count 0.3 of a word.
 */
export interface RankerOptions {
  weights: { name: number; description: number; parameters: number }
  b: { name: number; description: number; parameters: number }
  k1: number
  /** Weight of single CJK characters relative to words and bigrams. */
  unigram: number
}

/** The defaults listed on {@link RankerOptions}. */
export const defaultRankerOptions: RankerOptions = {
  weights: { name: 3, description: 1, parameters: 0.5 },
  b: { name: 0.3, description: 0.75, parameters: 0.75 },
  k1: 1.2,
  unigram: 0.3,
}

const fields = ['name', 'description', 'parameters'] as const
type Field = typeof fields[number]

/** Deepest nesting of a parameter schema that is indexed. */
const maxSchemaDepth = 4

/**
 * Parameter names, descriptions, titles and string enum values of a JSON
 * Schema, nested objects and array items included (to depth 4).
 */
export function schemaText(schema: JSONSchema | null | undefined, depth = 0, out: string[] = []): string[] {
  if (!schema || typeof schema !== 'object' || depth > maxSchemaDepth) return out
  if (depth > 0) {
    if (typeof schema.title === 'string') out.push(schema.title)
    if (typeof schema.description === 'string') out.push(schema.description)
    if (Array.isArray(schema.enum)) out.push(...schema.enum.filter((value) => typeof value === 'string'))
  }
  if (schema.properties && typeof schema.properties === 'object') {
    for (const [key, inner] of Object.entries(schema.properties)) {
      out.push(key)
      schemaText(inner as JSONSchema, depth + 1, out)
    }
  }
  const items = schema.items
  if (Array.isArray(items)) for (const item of items) schemaText(item, depth + 1, out)
  else if (items) schemaText(items, depth + 1, out)
  for (const key of ['anyOf', 'oneOf', 'allOf']) {
    if (Array.isArray(schema[key])) for (const inner of schema[key]) schemaText(inner, depth + 1, out)
  }
  return out
}

/**
 * A BM25F ranker over tool names, descriptions and parameters
 * (Robertson & Zaragoza, "The Probabilistic Relevance Framework: BM25 and
 * Beyond", 2009, §3.4): per field, term frequency is normalised by the
 * field's length, weighted, summed over fields, then saturated with `k1`
 * and multiplied by the term's IDF. Terms come from {@link tokenize}
 * (English and Chinese). A query that names a tool exactly as an
 * identifier ranks it first.
 *
 * Build once per document set (about 10 µs per tool); `rank` is a walk
 * over the posting lists of the query's terms. Immutable after construction.
 */
export class ToolRanker {
  readonly options: RankerOptions
  /** term → [document index, saturated weighted tf] pairs, flattened. */
  private postings = new Map<string, number[]>()
  private byCompactName = new Map<string, number[]>()
  private size: number

  constructor(documents: readonly RankerDocument[], options: Partial<RankerOptions> = {}) {
    this.options = { ...defaultRankerOptions, ...options }
    const { weights, b, k1 } = this.options
    this.size = documents.length
    documents.forEach((doc, index) => {
      // `mcp__fs__write_file` is also found as `write_file`, the MCP server's own name for it.
      const names = new Set([compactName(doc.name), compactName(doc.name.split('__').pop())])
      for (const name of names) {
        const list = this.byCompactName.get(name)
        if (list) list.push(index)
        else this.byCompactName.set(name, [index])
      }
    })

    const tokens: Record<Field, string[][]> = {
      name: documents.map((doc) => tokenize(doc.name)),
      description: documents.map((doc) => tokenize(doc.description ?? '')),
      parameters: documents.map((doc) => tokenize(schemaText(doc.parameters).join('\n'))),
    }
    const average = {} as Record<Field, number>
    for (const field of fields) {
      const total = tokens[field].reduce((sum, list) => sum + list.length, 0)
      average[field] = total / Math.max(1, this.size) || 1
    }
    for (let index = 0; index < this.size; index++) {
      const combined = new Map<string, number>()
      for (const field of fields) {
        const list = tokens[field][index]
        if (!list.length) continue
        const norm = 1 - b[field] + b[field] * list.length / average[field]
        const counts = new Map<string, number>()
        for (const term of list) counts.set(term, (counts.get(term) ?? 0) + 1)
        for (const [term, count] of counts) {
          combined.set(term, (combined.get(term) ?? 0) + weights[field] * count / norm)
        }
      }
      for (const [term, tf] of combined) {
        let list = this.postings.get(term)
        if (!list) this.postings.set(term, list = [])
        list.push(index, tf * (k1 + 1) / (k1 + tf))
      }
    }
  }

  /** Number of documents indexed. */
  get length() {
    return this.size
  }

  /** BM25's IDF with the +1 inside the log, so it is never negative. */
  private idf(documentFrequency: number) {
    return Math.log(1 + (this.size - documentFrequency + 0.5) / (documentFrequency + 0.5))
  }

  /**
   * The documents that match `query`, best first (ties keep index order),
   * at most `limit` (default all), only those `accept` lets through.
   * Documents that share no term with the query are not returned. Never
   * throws; an empty or stop-word-only query returns `[]`.
   */
  rank(query: string, options: { limit?: number; accept?: (index: number) => boolean } = {}): RankedHit[] {
    const { accept, limit = Infinity } = options
    const terms = [...new Set(tokenize(query ?? ''))]
    const scores = new Map<number, number>()
    for (const term of terms) {
      const list = this.postings.get(term)
      if (!list) continue
      let idf = this.idf(list.length / 2)
      if (term.startsWith(unigramPrefix)) idf *= this.options.unigram
      for (let i = 0; i < list.length; i += 2) {
        const index = list[i]
        scores.set(index, (scores.get(index) ?? 0) + idf * list[i + 1])
      }
    }
    this.addExactNames(query ?? '', scores)
    const hits: RankedHit[] = []
    for (const [index, score] of scores) {
      if (score > 0 && (!accept || accept(index))) hits.push({ index, score })
    }
    hits.sort((a, b) => b.score - a.score || a.index - b.index)
    return hits.length > limit ? hits.slice(0, limit) : hits
  }

  /**
   * A query that contains a tool's full name written as an identifier
   * (`create_issue`, `createIssue`; for `mcp__github__create_issue` also
   * the part after the last `__`) puts that tool first. Plain words are left to BM25, so a tool named `Now` does
   * not win every query containing "now".
   */
  private addExactNames(query: string, scores: Map<number, number>) {
    for (const chunk of query.split(/[\s,;，；、()（）"'`]+/)) {
      if (!/[_.\-]|\p{Ll}\p{Lu}/u.test(chunk)) continue
      const compact = compactName(chunk)
      if (compact.length < 3) continue
      for (const index of this.byCompactName.get(compact) ?? []) {
        scores.set(index, (scores.get(index) ?? 0) + 1000)
      }
    }
  }
}
