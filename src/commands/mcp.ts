import { Context, Session, Time } from 'koishi'
import { McpServerStatus } from '../mcp/connection'

/** Authority of `tools.mcp` (listing) and of `tools.mcp.test|enable|disable`; admins can change both in the console. */
export const mcpCommandAuthority = { list: 3, manage: 4 }

function stateText(session: Session, status: McpServerStatus) {
  const state = session.text(`chatluna-tools.mcp.state.${status.state}`)
  if (status.state === 'retrying' && status.retryAt) {
    return session.text('chatluna-tools.mcp.retrying', { state, delay: Time.format(Math.max(0, status.retryAt - Date.now())), attempts: status.attempts })
  }
  return state
}

/** The lines of one server in `tools.mcp`: state, protocol, tool count, last error, skipped tools. */
function statusLines(session: Session, status: McpServerStatus) {
  const lines = [session.text('commands.tools.mcp.messages.line', {
    id: status.id,
    state: stateText(session, status),
    transport: status.protocol ?? status.transport,
    count: status.tools.length,
  })]
  if (status.error) lines.push(session.text('commands.tools.mcp.messages.error', { error: status.error }))
  if (status.skipped.length) {
    lines.push(session.text('commands.tools.mcp.messages.skipped', { names: status.skipped.map((item) => item.tool).join(', ') }))
  }
  return lines
}

function unknown(session: Session, ctx: Context, id: string) {
  const ids = ctx.tools.mcp.servers.map((status) => status.id)
  return session.text('commands.tools.mcp.messages.unknown', { id, ids: ids.join(', ') || '-' })
}

/** Registers `tools.mcp`, `tools.mcp.test`, `tools.mcp.enable` and `tools.mcp.disable` (issue "MCP", item 6). */
export function applyMcpCommands(ctx: Context) {
  ctx.command('tools.mcp', { authority: mcpCommandAuthority.list })
    .action(({ session }) => {
      const servers = ctx.tools.mcp.servers
      if (!servers.length) return session.text('.empty')
      return [session.text('.header', { count: servers.length }), ...servers.flatMap((status) => statusLines(session, status))].join('\n')
    })

  ctx.command('tools.mcp.test <id:string>', { authority: mcpCommandAuthority.manage })
    .action(async ({ session }, id) => {
      if (!id) return session.text('.missing-id')
      const report = await ctx.tools.mcp.test(id)
      if (!report) return unknown(session, ctx, id)
      if (!report.ok) return session.text('.failed', { id, error: report.error })
      const lines = [session.text('.passed', {
        id,
        duration: report.duration,
        protocol: report.protocol,
        server: report.server ? `${report.server.name} ${report.server.version}` : '?',
        count: report.tools.length,
      })]
      if (report.tools.length) lines.push(report.tools.join(', '))
      for (const item of report.skipped) lines.push(session.text('.skipped', item))
      return lines.join('\n')
    })

  ctx.command('tools.mcp.enable <id:string>', { authority: mcpCommandAuthority.manage })
    .action(async ({ session }, id) => {
      if (!id) return session.text('.missing-id')
      const status = await ctx.tools.mcp.enable(id)
      if (!status) return unknown(session, ctx, id)
      return [session.text('.enabled', { id }), ...statusLines(session, status)].join('\n')
    })

  ctx.command('tools.mcp.disable <id:string>', { authority: mcpCommandAuthority.manage })
    .action(async ({ session }, id) => {
      if (!id) return session.text('.missing-id')
      const status = await ctx.tools.mcp.disable(id)
      if (!status) return unknown(session, ctx, id)
      return session.text('.disabled', { id, count: status.tools.length })
    })
}
