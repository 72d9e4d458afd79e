import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { McpServerConfig } from './config'
import { ConnectionHost, McpTestReport } from './status'
import { openClient, StderrTail } from './transport'
import { listAllTools } from './listing'
import { planTools } from './tools'
import { startErrorText } from './errors'
import { implementation } from './implementation'

/**
 * A one-off connection for `tools.mcp.test`: connect, list every tool,
 * plan their names, close (issue "MCP", item 6). Defines nothing and never
 * rejects; a failure is `ok: false` with the reason.
 */
export async function probeServer(config: McpServerConfig, host: ConnectionHost): Promise<McpTestReport> {
  const start = Date.now()
  const report: McpTestReport = { id: config.id, ok: false, tools: [], skipped: [], filtered: 0, duration: 0 }
  let client: Client | undefined
  const stderr = new StderrTail()
  try {
    const opened = await openClient(config, {
      stderr,
      baseDir: host.baseDir,
      createClient: () => new Client(implementation, { capabilities: {} }),
      onClient: (created) => client = created,
      onSpawn: (pid) => host.trackProcess(pid),
    })
    const plan = planTools(config.id, await listAllTools(opened.client, config.startupTimeout), config.tools)
    Object.assign(report, {
      ok: true,
      protocol: opened.protocol,
      server: opened.server,
      tools: plan.tools.map((planned) => planned.name),
      skipped: plan.skipped,
      filtered: plan.filtered,
    })
  } catch (error) {
    report.error = startErrorText(config, error, stderr.text())
  }
  report.duration = Date.now() - start
  await client?.close().catch(() => {})
  return report
}
