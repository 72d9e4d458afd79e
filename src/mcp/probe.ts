import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { McpServerConfig } from './config'
import { ConnectionHost, McpTestReport } from './status'
import { openClient, StderrTail } from './transport'
import { listAllTools } from './listing'
import { planTools } from './tools'
import { startErrorText } from './errors'
import { implementation } from './implementation'

/** What a successful test found. */
export type McpTestFindings = Pick<McpTestReport, 'protocol' | 'server' | 'tools' | 'skipped' | 'filtered'>

/**
 * Runs one test of server `id` and reports it: `ok` with what `run`
 * found, or `ok: false` with `failed(error)` as the error; `duration` is
 * the wall time of `run` in ms. Never rejects.
 */
export async function testReport(id: string, run: () => Promise<McpTestFindings>, failed: (error: unknown) => string): Promise<McpTestReport> {
  const start = Date.now()
  const report: McpTestReport = { id, ok: false, tools: [], skipped: [], filtered: 0, duration: 0 }
  try {
    Object.assign(report, { ok: true, ...await run() })
  } catch (error) {
    report.error = failed(error)
  }
  report.duration = Date.now() - start
  return report
}

/**
 * A one-off connection for `tools.mcp.test`: connect, list every tool,
 * plan their names, close (issue "MCP", item 6). Defines nothing and never
 * rejects; a failure is `ok: false` with the reason.
 */
export async function probeServer(config: McpServerConfig, host: ConnectionHost): Promise<McpTestReport> {
  let client: Client | undefined
  const stderr = new StderrTail()
  const report = await testReport(config.id, async () => {
    const opened = await openClient(config, {
      stderr,
      baseDir: host.baseDir,
      createClient: () => new Client(implementation, { capabilities: {} }),
      onClient: (created) => client = created,
      onSpawn: (pid) => host.trackProcess(pid),
    })
    const plan = planTools(config.id, await listAllTools(opened.client, config.startupTimeout), config.tools)
    return {
      protocol: opened.protocol,
      server: opened.server,
      tools: plan.tools.map((planned) => planned.name),
      skipped: plan.skipped,
      filtered: plan.filtered,
    }
  }, (error) => startErrorText(config, error, stderr.text()))
  await client?.close().catch(() => {})
  return report
}
