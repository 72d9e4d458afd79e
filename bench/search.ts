/**
 * Tool-search quality and speed: our ranker (src/modes/ranker.ts) against
 * MiniSearch's BM25 with its default tokenisation, in one process, on the
 * MetaTool and BFCL retrieval sets of `../shared/bench-data/` (see its
 * README: rank the whole corpus, collapse the ranking to distinct names,
 * binary relevance against `gold`; Recall@1/3/5, nDCG@5/10, MRR, means
 * over the queries of a file). Also the per-query latency (p50 µs) of both
 * and of a whole `tool_search` call through `ctx.tools.call`.
 *
 * Run: npm run bench:search [-- --data ../shared/bench-data] [-- --repeat 5]
 */
import { readFileSync } from 'fs'
import { mkdtemp, rm } from 'fs/promises'
import { tmpdir } from 'os'
import { join, resolve } from 'path'
import MiniSearch from 'minisearch'
import { App } from 'koishi'
import { RankerDocument, schemaText, ToolRanker } from '../src/modes/ranker'
import { englishStopWords } from '../src/modes/tokenize'
import * as tools from '../src'
import { chineseQueries, chineseTools, englishQueries, englishTools } from '../tests/fixtures/search-corpus'

function option(name: string, fallback: string) {
  const index = process.argv.indexOf(name)
  return index > 0 ? process.argv[index + 1] : fallback
}

const dataDir = resolve(__dirname, '..', option('--data', '../shared/bench-data'))
const repeat = Number(option('--repeat', '5')) || 5

interface Tool { name: string; description: string; parameters: any; source: string }
interface Query { id: string; query: string; gold: string[] }

function readLines<T>(file: string): T[] {
  return readFileSync(join(dataDir, file), 'utf8').split('\n').filter(Boolean).map((line) => JSON.parse(line))
}

/** Recall@1/3/5, nDCG@5/10 and MRR of one ranking of names (already collapsed to distinct names). */
function score(ranking: string[], gold: string[]) {
  const relevant = new Set(gold)
  const recall = (k: number) => ranking.slice(0, k).filter((name) => relevant.has(name)).length / relevant.size
  const ndcg = (k: number) => {
    let dcg = 0
    ranking.slice(0, k).forEach((name, i) => { if (relevant.has(name)) dcg += 1 / Math.log2(i + 2) })
    let ideal = 0
    for (let i = 0; i < Math.min(k, relevant.size); i++) ideal += 1 / Math.log2(i + 2)
    return dcg / ideal
  }
  const first = ranking.findIndex((name) => relevant.has(name))
  return { r1: recall(1), r3: recall(3), r5: recall(5), n5: ndcg(5), n10: ndcg(10), mrr: first < 0 ? 0 : 1 / (first + 1) }
}

type Metrics = ReturnType<typeof score>
const metricNames: (keyof Metrics)[] = ['r1', 'r3', 'r5', 'n5', 'n10', 'mrr']

function distinct(names: string[]) {
  return [...new Set(names)]
}

interface Engine {
  name: string
  /** Every matching tool name, best first, not yet collapsed. */
  rank(query: string): string[]
}

function evaluate(engine: Engine, queries: Query[]) {
  const sums = Object.fromEntries(metricNames.map((key) => [key, 0])) as Metrics
  for (const query of queries) {
    const metrics = score(distinct(engine.rank(query.query)), query.gold)
    for (const key of metricNames) sums[key] += metrics[key]
  }
  for (const key of metricNames) sums[key] /= queries.length
  return sums
}

/** p50 and p99 in µs of one search per query, `repeat` rounds after one warm-up round. */
function latency(engine: Engine, queries: Query[]) {
  for (const query of queries) engine.rank(query.query)
  const samples: number[] = []
  for (let round = 0; round < repeat; round++) {
    for (const query of queries) {
      const start = process.hrtime.bigint()
      engine.rank(query.query)
      samples.push(Number(process.hrtime.bigint() - start) / 1000)
    }
  }
  samples.sort((a, b) => a - b)
  return { p50: samples[Math.floor(samples.length / 2)], p99: samples[Math.floor(samples.length * 0.99)] }
}

function ours(corpus: Tool[]): Engine {
  const ranker = new ToolRanker(corpus as RankerDocument[])
  return { name: 'ours (BM25F, zh+en tokeniser)', rank: (query) => ranker.rank(query).map((hit) => corpus[hit.index].name) }
}

/**
 * MiniSearch over the same three fields. `stopWords`: its default
 * tokeniser with our English stop-word list dropped in `processTerm` (an
 * ablation that shows how much of the gap is stop words alone).
 */
function minisearch(corpus: Tool[], stopWords = false): Engine {
  const processTerm = (term: string) => {
    const lower = term.toLowerCase()
    return englishStopWords.has(lower) ? null : lower
  }
  const index = new MiniSearch({ fields: ['name', 'description', 'parameters'], idField: 'id', ...(stopWords ? { processTerm } : {}) })
  index.addAll(corpus.map((tool, id) => ({
    id,
    name: tool.name,
    description: tool.description,
    parameters: schemaText(tool.parameters).join('\n'),
  })))
  const name = stopWords ? 'MiniSearch + our stop words' : 'MiniSearch 7 (BM25+, defaults)'
  return { name, rank: (query) => index.search(query).map((hit) => corpus[hit.id].name) }
}

const format = (value: number) => value.toFixed(3).padStart(6)

function table(title: string, rows: { engine: Engine; metrics: Metrics; time: { p50: number; p99: number } }[]) {
  console.log(`\n${title}\n`)
  console.log('| ranker                          |    R@1 |    R@3 |    R@5 | nDCG@5 | nDCG@10 |    MRR | p50 µs | p99 µs |')
  console.log('|---------------------------------|--------|--------|--------|--------|---------|--------|--------|--------|')
  for (const { engine, metrics, time } of rows) {
    console.log(`| ${engine.name.padEnd(31)} | ${metricNames.map((key) => key === 'n10' ? format(metrics[key]) + ' ' : format(metrics[key])).join(' | ')} | ${time.p50.toFixed(1).padStart(6)} | ${time.p99.toFixed(1).padStart(6)} |`)
  }
  const [a, b] = rows
  console.log(`\nours / MiniSearch: MRR ${(a.metrics.mrr / b.metrics.mrr).toFixed(3)}, R@5 ${(a.metrics.r5 / b.metrics.r5).toFixed(3)}, p50 latency ${(a.time.p50 / b.time.p50).toFixed(3)}`)
}

/** BFCL's Python-flavoured types (`dict`, `float`, `tuple`, `any`) as JSON Schema types. */
function toJSONSchema(value: any): any {
  if (Array.isArray(value)) return value.map(toJSONSchema)
  if (!value || typeof value !== 'object') return value
  const out: any = {}
  for (const [key, inner] of Object.entries(value)) {
    if (key === 'type' && typeof inner === 'string') {
      const types: Record<string, string | undefined> = { dict: 'object', float: 'number', tuple: 'array', any: undefined }
      const type = inner in types ? types[inner] : inner
      if (type) out.type = type
    } else {
      out[key] = key === 'properties' ? Object.fromEntries(Object.entries(inner as any).map(([name, schema]) => [name, toJSONSchema(schema)])) : toJSONSchema(inner)
    }
  }
  return out
}

/**
 * A whole `tool_search` call through `ctx.tools.call` with the BFCL corpus
 * registered as deferred MCP-style tools (`mcp__bfcl__<name>`): pipeline,
 * visibility of every candidate, ranking, loading and formatting.
 */
async function pipelineLatency(corpus: Tool[], queries: Query[]) {
  const baseDir = await mkdtemp(join(tmpdir(), 'chatluna-tools-bench-'))
  const app = new App()
  app.baseDir = baseDir
  app.plugin(tools, { read: { enabled: false }, mode: 'search' })
  await app.start()
  const service = app.tools
  const seen = new Set<string>()
  for (const tool of corpus) {
    const name = `mcp__bfcl__${tool.name.replace(/[^a-zA-Z0-9_-]/g, '_')}`.slice(0, 64)
    if (seen.has(name)) continue
    seen.add(name)
    const parameters = tool.parameters ? toJSONSchema(tool.parameters) : undefined
    service.define({ name, description: tool.description, parameters, traits: { effect: 'read' }, run: () => '' }, { source: 'mcp' })
  }
  const scope = { platform: 'bench', channelId: 'c' }
  const call = (query: string) => service.call({ name: 'tool_search', args: { query }, scope })
  const first = await call(queries[0].query)
  if (!first.ok) throw new Error('tool_search failed: ' + JSON.stringify(first))
  for (const query of queries) await call(query.query)
  const samples: number[] = []
  for (const query of queries) {
    const start = process.hrtime.bigint()
    await call(query.query)
    samples.push(Number(process.hrtime.bigint() - start) / 1000)
  }
  samples.sort((a, b) => a - b)
  const size = (mode: 'native' | 'search') => Buffer.byteLength(JSON.stringify(service.declarations({ platform: 'bench', channelId: 'fresh' }, { mode })))
  const bytes = { native: size('native'), search: size('search') }
  await app.stop()
  await rm(baseDir, { recursive: true, force: true })
  return { bytes, tools: seen.size, p50: samples[Math.floor(samples.length / 2)], p99: samples[Math.floor(samples.length * 0.99)] }
}

async function main() {
  const sets = [
    { corpus: 'metatool-tools.jsonl', queries: 'metatool-queries-dev.jsonl' },
    { corpus: 'metatool-tools.jsonl', queries: 'metatool-multi-dev.jsonl' },
    { corpus: 'bfcl-tools.jsonl', queries: 'bfcl-queries-dev.jsonl' },
  ]
  console.log(`Tool retrieval on ${dataDir} (Node ${process.version}); latency: one search per query over the whole corpus, ${repeat} rounds.`)
  for (const set of sets) {
    const corpus = readLines<Tool>(set.corpus)
    const queries = readLines<Query>(set.queries)
    const rows = [ours(corpus), minisearch(corpus), minisearch(corpus, true)].map((engine) => ({
      engine,
      metrics: evaluate(engine, queries),
      time: latency(engine, queries),
    }))
    table(`${set.queries}: ${queries.length} queries over ${set.corpus} (${corpus.length} tools)`, rows)
  }
  const fixtures = [
    { title: 'Chinese sanity set', corpus: chineseTools, queries: chineseQueries },
    { title: 'English MCP-style sanity set', corpus: englishTools, queries: englishQueries },
  ]
  for (const set of fixtures) {
    const corpus = set.corpus.map((tool) => ({ ...tool, source: 'fixture' }))
    const queries = set.queries.map((query, index) => ({ id: String(index), query: query.query, gold: [query.gold] }))
    const rows = [ours(corpus), minisearch(corpus), minisearch(corpus, true)].map((engine) => ({
      engine,
      metrics: evaluate(engine, queries),
      time: latency(engine, queries),
    }))
    table(`${set.title} (tests/fixtures/search-corpus.ts): ${queries.length} queries over ${corpus.length} tools`, rows)
  }
  if (!process.argv.includes('--no-pipeline')) {
    const corpus = readLines<Tool>('bfcl-tools.jsonl')
    const queries = readLines<Query>('bfcl-queries-dev.jsonl')
    const result = await pipelineLatency(corpus, queries)
    console.log(`\nWhole tool_search call through ctx.tools.call, ${result.tools} deferred tools, ${queries.length} queries: p50 ${result.p50.toFixed(1)} µs, p99 ${result.p99.toFixed(1)} µs`)
    console.log(`Declarations (OpenAI JSON) for these ${result.tools} tools: native ${result.bytes.native} bytes, search ${result.bytes.search} bytes (tool_search with its catalog)`)
  }
}

main().catch((error) => {
  console.error(error)
  process.exit(1)
})
