import { Context, h } from 'koishi'
import { explanationLines } from '../visibility/explain'
import { describeTool } from '../modes'
import { summary } from '../modes/search'
import { CommandConfig } from './config'
import { PermissionConfig } from '../permission/config'
import { applyPermissionCommands } from './permissions'
import { sessionAuthority } from '../permission/subject'
import { commandText } from '../permission/texts'

/**
 * Registers `tools`, `tools.info` and `tools.call` (issue "Foundation",
 * item 9) and the permission commands (issue 3, item 10).
 */
export function applyCommands(ctx: Context, config: CommandConfig & PermissionConfig) {
  applyPermissionCommands(ctx, config)

  ctx.command('tools')
    .userFields(['authority'])
    .action(({ session }) => {
      const scope = ctx.tools.scope(session)
      const tools = ctx.tools.list(scope)
      if (!tools.length) return session.text('.empty')
      const locales = ctx.tools.locales(session)
      return plainReply([
        commandText(session, '.header', { count: tools.length }),
        ...tools.map((entry) => `${entry.definition.name} — ${summary(describeTool(entry, scope, locales), 80)}`),
      ])
    })

  ctx.command('tools.info <name:string>')
    .userFields(['authority'])
    .action(({ session }, name) => {
      if (!name) return session.text('.missing-name')
      const scope = ctx.tools.scope(session)
      const explanation = ctx.tools.explain(name, scope)
      const locales = ctx.tools.locales(session)
      const entry = ctx.tools.registry.get(name)
      if (!entry) return explanationLines(ctx, explanation, locales).join('\n')
      const { definition } = entry
      const traits = definition.traits ?? {}
      const effect = traits.effect ?? 'exec'
      return plainReply([
        commandText(session, '.title', { name, source: entry.source, plugin: entry.plugin }),
        describeTool(entry, scope, locales),
        commandText(session, '.traits', {
          effect,
          parallel: String(traits.parallel ?? effect === 'read'),
          timeout: traits.timeout ?? ctx.tools.config.timeout,
        }),
        commandText(session, '.schema'),
        JSON.stringify(entry.schema.jsonSchema(locales), null, 2),
        ...explanationLines(ctx, explanation, locales).map((line) => h.unescape(line)),
      ])
    })

  ctx.command('tools.call <name:string> [args:text]')
    .userFields(['authority'])
    .action(async ({ session }, name, args) => {
      args = args && h.unescape(args)
      if (!name) return session.text('.missing-name')
      const authority = sessionAuthority(session)
      if (authority < config.callAuthority) {
        return session.text('.low-authority', { needed: config.callAuthority, level: authority })
      }
      const result = await ctx.tools.call({
        name,
        args: args ?? '',
        scope: ctx.tools.scope(session),
      })
      return ctx.tools.reply(session, result, safeParse(args))
    })
}

/**
 * Lines of plain text as one reply. Descriptions and schemas come from
 * plugins and MCP servers: a description holding `<at type="all"/>` or
 * `<image url=…>` must reach the chat as those characters, never as a
 * mention or an image the bot fetches, so the whole text is escaped once.
 */
function plainReply(lines: string[]) {
  return h.escape(lines.join('\n'))
}

function safeParse(text: string | undefined) {
  try {
    return text ? JSON.parse(text) : {}
  } catch {
    return {}
  }
}
