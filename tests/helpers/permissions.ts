import { App, Context, Schema } from 'koishi'
import type { Approval } from '../../src/permission/approvals'

/**
 * Tools for the permission scenarios: `shell` (exec; action `exec:<first
 * word>`, target the command line; `sudo` raises the risk to critical;
 * `;` splits the line into parts), `save` (write; target the path) and
 * `peek` (read). Each records what actually ran in `ran`.
 */
export function defineTestTools(ctx: Context, ran: string[]) {
  ctx.tools.define({
    name: 'shell',
    description: 'Runs a command line.',
    args: Schema.object({ command: Schema.string().required() }),
    traits: { effect: 'exec' },
    permission: ({ command }) => {
      const commands = command.split(';').map((part) => part.trim()).filter(Boolean)
      const part = (line: string) => ({
        name: `exec:${line.split(/\s+/)[0]}`,
        target: line,
        risk: line.startsWith('sudo') ? 'critical' as const : undefined,
      })
      if (commands.length === 1) return part(commands[0])
      return { name: 'exec', target: command, parts: commands.map(part) }
    },
    run: ({ command }) => {
      ran.push(`shell ${command}`)
      return `ran ${command}`
    },
  })
  ctx.tools.define({
    name: 'save',
    description: 'Saves a file.',
    args: Schema.object({ path: Schema.string().required() }),
    traits: { effect: 'write' },
    permission: ({ path }) => ({ name: 'tool:save', target: { path } }),
    run: ({ path }) => {
      ran.push(`save ${path}`)
      return `saved ${path}`
    },
  })
  ctx.tools.define({
    name: 'peek',
    description: 'Reads something.',
    traits: { effect: 'read' },
    run: () => {
      ran.push('peek')
      return 'peeked'
    },
  })
}

/** The next approval request posted in the app. */
export function nextApproval(app: App): Promise<Approval> {
  return new Promise((resolve) => {
    const dispose = app.on('chatluna/approval-requested', (approval) => {
      dispose()
      resolve(approval)
    })
  })
}

/** The approval id in a posted prompt (`#abcd`). */
export function promptId(prompt: string) {
  return /#([a-z0-9]+)/.exec(prompt)?.[1]
}

/** `tools.call <tool> <json>` as text. */
export function callText(tool: string, args: object) {
  return `tools.call ${tool} ${JSON.stringify(args)}`
}
