/**
 * The bash tool's overhead, in one process:
 * 1. time to first output of `echo hi` through `ctx.tools.call` (analysis,
 *    permission, pty, progress event) against `child_process.spawn` of the
 *    same shell (first `data` on stdout), and a bare node-pty spawn for
 *    reference. Target (issue "Built-in tools"): p50 ratio ≤ 1.5.
 * 2. the command analysis (unbash parse + walk + rules + workspace
 *    heuristic) per command line, as the bash tool's permission function
 *    runs it. Target: ≤ 0.2 ms.
 *
 * Run: npm run bench:bash [-- --runs 60 --iterations 5000]
 */
import { spawn } from 'child_process'
import { mkdtemp, rm } from 'fs/promises'
import { tmpdir } from 'os'
import { join } from 'path'
import { App } from 'koishi'
import * as pty from 'node-pty'
import * as tools from '../src'
import { commandParts, compileRules } from '../src/builtin/shell/rules'
import { normalizeWorkspace } from '../src/builtin/shell/workspace'
import { defaultDeny, defaultDenyArgs } from '../src/builtin/config'
import { detectShell } from '../src/builtin/process/runner'

const argument = (name: string, fallback: number) => Number(process.argv[process.argv.indexOf(name) + 1]) || fallback
const runs = argument('--runs', 60)
const iterations = argument('--iterations', 5000)

const now = () => Number(process.hrtime.bigint()) / 1e6

interface Stats { p50: number; p90: number; mean: number }

function stats(samples: number[]): Stats {
  const sorted = [...samples].sort((a, b) => a - b)
  return {
    p50: sorted[Math.floor(sorted.length * 0.5)],
    p90: sorted[Math.floor(sorted.length * 0.9)],
    mean: sorted.reduce((a, b) => a + b, 0) / sorted.length,
  }
}

/** ms until `echo hi` printed `hi` through child_process.spawn. */
function spawnFirstOutput(shell: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const start = now()
    let first: number | undefined
    const child = spawn(shell, ['-c', 'echo hi'], { stdio: ['ignore', 'pipe', 'ignore'] })
    child.stdout.on('data', (chunk) => {
      if (first === undefined && String(chunk).includes('hi')) first = now() - start
    })
    child.on('error', reject)
    child.on('close', () => (first === undefined ? reject(new Error('no output')) : resolve(first)))
  })
}

/** ms until `echo hi` printed `hi` through a bare node-pty spawn. */
function ptyFirstOutput(shell: string): Promise<number> {
  return new Promise((resolve) => {
    const start = now()
    let first: number | undefined
    const child = pty.spawn(shell, ['-c', 'echo hi'], { cwd: tmpdir(), env: { PATH: process.env.PATH ?? '' } })
    child.onData((chunk) => {
      if (first === undefined && chunk.includes('hi')) first = now() - start
    })
    child.onExit(() => resolve(first ?? NaN))
  })
}

async function main() {
  const baseDir = await mkdtemp(join(tmpdir(), 'chatluna-tools-bench-'))
  const app = new App()
  app.baseDir = baseDir
  app.plugin(tools, { workDir: 'work', skills: { enabled: false } })
  await app.start()
  const service = app.tools
  const shell = detectShell()

  /** ms until the bash tool's first progress event with `hi`, and ms until the call returned. */
  const toolFirstOutput = async (): Promise<[number, number]> => {
    const start = now()
    let first: number | undefined
    const result = await service.call({
      name: 'bash',
      args: { command: 'echo hi' },
      scope: { authority: 5 },
      onProgress: (event) => {
        if (first === undefined && event.message?.includes('hi')) first = now() - start
      },
    })
    if (!result.ok) throw new Error('the bash tool failed: ' + service.format(result))
    return [first ?? NaN, now() - start]
  }

  // Warm up each path, then interleave them so load changes hit all alike.
  for (let i = 0; i < 5; i++) {
    await toolFirstOutput()
    await spawnFirstOutput(shell)
    await ptyFirstOutput(shell)
  }
  const toolFirst: number[] = []
  const toolTotal: number[] = []
  const spawnFirst: number[] = []
  const ptyFirst: number[] = []
  for (let i = 0; i < runs; i++) {
    const [first, total] = await toolFirstOutput()
    toolFirst.push(first)
    toolTotal.push(total)
    spawnFirst.push(await spawnFirstOutput(shell))
    ptyFirst.push(await ptyFirstOutput(shell))
  }
  await app.stop()
  await rm(baseDir, { recursive: true, force: true })

  const rows: [string, Stats][] = [
    ['child_process.spawn (peer)', stats(spawnFirst)],
    ['node-pty spawn, bare', stats(ptyFirst)],
    ['bash tool, first output', stats(toolFirst)],
    ['bash tool, whole call', stats(toolTotal)],
  ]
  const peer = rows[0][1].p50
  const ms = (value: number) => value.toFixed(2).padStart(8)
  console.log(`\nTime to first output of \`echo hi\` with ${shell}, ${runs} runs each, interleaved (Node ${process.version}).\n`)
  console.log('| path                         |  p50 ms |  p90 ms | mean ms | p50 / spawn |')
  console.log('|------------------------------|---------|---------|---------|-------------|')
  for (const [name, row] of rows) {
    console.log(`| ${name.padEnd(28)} |${ms(row.p50)} |${ms(row.p90)} |${ms(row.mean)} | ${(row.p50 / peer).toFixed(2).padStart(11)} |`)
  }
  const ratio = rows[2][1].p50 / peer
  console.log(`Target first output p50 ≤ 1.5 × child_process.spawn: ${ratio.toFixed(2)} (${ratio <= 1.5 ? 'met' : 'NOT met'})`)

  // 2. The analysis alone.
  const rules = compileRules({ mode: 'deny', allow: [], deny: defaultDeny, denyArgs: defaultDenyArgs })
  const lines: [string, string][] = [
    ['simple', 'ls -la'],
    ['pipeline', 'git log --oneline | grep fix | head -n 20'],
    ['list with wrappers', 'cd src && sudo -u www env NODE_ENV=production timeout 60 npm run build 2>&1 | tee build.log'],
    ['substitutions', 'echo "$(date +%F) $(git rev-parse --short HEAD)" > stamp.txt; cat <(ls) `pwd`'],
    ['control flow', 'for f in $(find . -name "*.log"); do if [ -s "$f" ]; then gzip "$f"; else rm "$f"; fi; done'],
    ['heredoc + awk + sed', `cat <<'EOF' | awk '{ print $1 }' | sed -n 's/a/b/p'\nalpha beta\nEOF`],
    ['bash -c nested', `bash -c 'find . -type f -exec chmod 644 {} \\; && echo done'`],
    ['paths outside', 'cp ../a/b.txt /tmp/x && cat ~/notes sub/../c > /var/tmp/out 2>&1'],
  ]
  const workspace = () => normalizeWorkspace(join(baseDir, 'work'), [join(baseDir, 'data/chatluna-tools/outputs')])
  const analysis: [string, Stats][] = []
  for (const [name, line] of lines) {
    for (let i = 0; i < 500; i++) commandParts(line, rules, { workspace: workspace() })
    const samples: number[] = []
    for (let i = 0; i < iterations; i++) {
      const start = process.hrtime.bigint()
      commandParts(line, rules, { workspace: workspace() })
      samples.push(Number(process.hrtime.bigint() - start) / 1e6)
    }
    analysis.push([name, stats(samples)])
  }
  const fine = (value: number) => value.toFixed(4).padStart(9)
  console.log(`\nCommand analysis (parse + commands + rules + workspace) per line, ${iterations} iterations each.\n`)
  console.log('| command line          |   p50 ms |   p90 ms |  mean ms | length |')
  console.log('|-----------------------|----------|----------|----------|--------|')
  for (const [index, [name, row]] of analysis.entries()) {
    console.log(`| ${name.padEnd(21)} |${fine(row.p50)} |${fine(row.p90)} |${fine(row.mean)} | ${String(lines[index][1].length).padStart(6)} |`)
  }
  const worst = Math.max(...analysis.map(([, row]) => row.p50))
  console.log(`Target analysis ≤ 0.2 ms per line (worst p50): ${worst.toFixed(4)} ms (${worst <= 0.2 ? 'met' : 'NOT met'})`)
}

main().catch((error) => {
  console.error(error)
  process.exit(1)
})
