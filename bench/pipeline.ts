/**
 * Pipeline overhead: p50/p99 microseconds of a no-op tool called through
 * `ctx.tools.call`, a direct function call, and LangChain's
 * `tool(...).invoke` with an equivalent zod schema, all in one process.
 * Target (foundation issue): our p50 ≤ 0.2 × LangChain's.
 *
 * Run: npm run bench:pipeline [-- --iterations 100000]. Fewer iterations
 * leave the JIT cold and the ratios noisy (20 000 gave 0.19–0.23 where
 * 100 000 gives 0.12–0.14 on the same machine).
 */
import { mkdtemp, rm } from 'fs/promises'
import { tmpdir } from 'os'
import { join } from 'path'
import { App, Schema } from 'koishi'
import { tool } from '@langchain/core/tools'
import { z } from 'zod'
// The build in lib/ (npm run build:lib runs first; see bench/register.js).
import * as tools from '../lib'

const iterations = Number(process.argv[process.argv.indexOf('--iterations') + 1]) || 100000
const warmup = Math.min(2000, iterations / 5)

interface Row { name: string; p50: number; p99: number; mean: number }

async function measure(name: string, body: () => Promise<unknown>): Promise<Row> {
  for (let i = 0; i < warmup; i++) await body()
  const samples = new Float64Array(iterations)
  for (let i = 0; i < iterations; i++) {
    const start = process.hrtime.bigint()
    await body()
    samples[i] = Number(process.hrtime.bigint() - start) / 1000
  }
  samples.sort()
  const mean = samples.reduce((a, b) => a + b, 0) / iterations
  return { name, p50: samples[Math.floor(iterations * 0.5)], p99: samples[Math.floor(iterations * 0.99)], mean }
}

async function main() {
  const baseDir = await mkdtemp(join(tmpdir(), 'chatluna-tools-bench-'))
  const app = new App()
  app.baseDir = baseDir
  app.plugin(tools, { read: { enabled: false } })
  await app.start()

  const noop = (args: { text: string; count: number }) => args.text
  app.tools.define({
    name: 'noop',
    description: 'Does nothing.',
    args: Schema.object({ text: Schema.string().required(), count: Schema.natural().default(1) }),
    traits: { effect: 'read', parallel: true },
    run: noop,
  })
  const langchain = tool(async (args: { text: string; count?: number }) => args.text, {
    name: 'noop',
    description: 'Does nothing.',
    schema: z.object({ text: z.string(), count: z.number().int().min(0).default(1) }),
  })

  // Sanity: all three return the same text.
  const ours = await app.tools.call({ name: 'noop', args: { text: 'hi' } })
  if (!ours.ok || (ours.content[0] as any).text !== 'hi') throw new Error('ctx.tools.call returned ' + JSON.stringify(ours))
  if (await langchain.invoke({ text: 'hi' }) !== 'hi') throw new Error('langchain returned something else')

  // A plugin usually reads `ctx.tools` once (e.g. per agent turn) and makes
  // several calls; reading it costs Koishi's service proxy each time.
  const held = app.tools
  const rows = [
    await measure('direct function call', async () => noop({ text: 'hi', count: 1 })),
    await measure('tools.call, held ctx.tools', () => held.call({ name: 'noop', args: { text: 'hi' } })),
    await measure('tools.call, held, JSON args', () => held.call({ name: 'noop', args: '{"text":"hi"}' })),
    await measure('ctx.tools.call, ctx.tools read', () => app.tools.call({ name: 'noop', args: { text: 'hi' } })),
    await measure('ctx.tools read alone (Koishi)', async () => app.tools),
    await measure('LangChain tool().invoke (zod)', () => langchain.invoke({ text: 'hi' })),
  ]
  await app.stop()
  await rm(baseDir, { recursive: true, force: true })

  const reference = rows[5].p50
  const format = (value: number) => value.toFixed(2).padStart(9)
  console.log(`\nNo-op tool, ${iterations} calls each after ${warmup} warm-up calls (Node ${process.version}).\n`)
  console.log('| path                              |   p50 µs |   p99 µs |  mean µs | p50 / LangChain |')
  console.log('|-----------------------------------|----------|----------|----------|-----------------|')
  for (const row of rows) {
    console.log(`| ${row.name.padEnd(33)} |${format(row.p50)} |${format(row.p99)} |${format(row.mean)} | ${(row.p50 / reference).toFixed(3).padStart(15)} |`)
  }
  for (const row of [rows[1], rows[3]]) {
    const ratio = row.p50 / reference
    console.log(`Target p50 ≤ 0.2 × LangChain, ${row.name}: ${ratio.toFixed(3)} (${ratio <= 0.2 ? 'met' : 'NOT met'})`)
  }
}

main().catch((error) => {
  console.error(error)
  process.exit(1)
})
