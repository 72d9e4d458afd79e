import { Context, Dict, Session, Time } from 'koishi'
import { PermissionConfig } from '../permission/config'
import { approveWords, ApprovalAnswer, denyWords } from '../permission/approvals'
import { AuditEntry } from '../permission/audit'
import { isPermissionMode, modeDefault } from '../permission/modes'
import { toolPolicies } from '../permission/policy-store'
import { ToolPolicy } from '../permission/policy'
import { parseLevelRange, PermissionInputError, PermissionRule, RuleInput } from '../permission/rules'
import { normalizeAuthority, subjectLabel } from '../permission/subject'
import { say } from '../permission/texts'

/** The authority of a chat user; no user record (no database) counts as 0. */
const sessionAuthority = (session: Session) => normalizeAuthority((session.user as any)?.authority)

/** `yyyy-MM-dd hh:mm` in the bot's time zone. */
function formatTime(time: number, seconds = false) {
  return Time.template(seconds ? 'yyyy-MM-dd hh:mm:ss' : 'yyyy-MM-dd hh:mm', new Date(time))
}

/** One line describing a rule, in the session's language. */
export function ruleLine(ctx: Context, session: Session, rule: PermissionRule): string {
  const text = (path: string, params: Dict = {}) => say(ctx, session, path, params)
  const who: string[] = []
  for (const key of ['userId', 'platform', 'guildId', 'channelId', 'agent', 'kind'] as const) {
    if (rule[key]) who.push(text(`rule.who.${key}`, { value: rule[key] }))
  }
  if (rule.minLevel !== undefined || rule.maxLevel !== undefined) {
    const low = rule.minLevel ?? 0
    const high = rule.maxLevel ?? 5
    who.push(text('rule.who.level', { value: low === high ? low : `${low}-${high}` }))
  }
  return text('rule.line', {
    id: rule.id,
    effect: rule.effect,
    action: rule.action + (rule.exact ? text('rule.exact') : ''),
    target: rule.target ? text('rule.target', { target: rule.target }) : '',
    who: who.length ? who.join(', ') : text('rule.everyone'),
    validity: text(`rule.validity.${rule.validity}`, { time: rule.expiresAt ? formatTime(rule.expiresAt) : '' }),
    final: rule.final ? text('rule.final') : '',
  })
}

function auditLine(ctx: Context, session: Session, entry: AuditEntry): string {
  const text = (path: string, params: Dict = {}) => say(ctx, session, path, params)
  return text('audit.line', {
    time: formatTime(entry.time, true),
    user: subjectLabel(entry),
    level: entry.authority,
    tool: entry.tool,
    action: entry.action,
    target: entry.target ? text('rule.target', { target: entry.target }) : '',
    risk: text(`risk.${entry.risk || 'none'}`),
    status: text(`audit.status.${entry.status}`),
    code: entry.code,
    approver: entry.approver ? text('audit.approver', { approver: entry.approver, answer: entry.answer ?? '' }) : '',
  })
}

/** The localized text of a rule or policy input error; other errors are rethrown. */
function inputError(ctx: Context, session: Session, error: unknown) {
  if (error instanceof PermissionInputError) return say(ctx, session, `input.${error.code}`, error.params)
  throw error
}

/**
 * Registers the permission commands (issue 3, item 10): `tools.rule
 * add|list|remove`, `tools.policy`, `tools.mode`, `tools.pending`,
 * `tools.approve`, `tools.deny`, `tools.audit`. Admin commands check
 * `adminAuthority` themselves, since Koishi lets everybody pass its own
 * authority checks when no database is loaded.
 */
export function applyPermissionCommands(ctx: Context, config: PermissionConfig) {
  const permissions = () => ctx.tools.permissions
  const subject = (session: Session) => permissions().subjectOf(ctx.tools.scope(session, { authority: sessionAuthority(session) }))
  const denyAdmin = (session: Session) => {
    const level = sessionAuthority(session)
    if (level >= config.adminAuthority) return
    return say(ctx, session, 'admin-only', { needed: config.adminAuthority, level })
  }

  const listRules = ({ session }: { session?: Session }) => {
    const refused = denyAdmin(session)
    if (refused) return refused
    const rules = permissions().rules.list()
    if (!rules.length) return session.text('commands.tools.rule.messages.empty')
    return [session.text('commands.tools.rule.messages.header', { count: rules.length }), ...rules.map((rule) => ruleLine(ctx, session, rule))].join('\n')
  }
  ctx.command('tools.rule').userFields(['authority']).action(listRules)
  ctx.command('tools.rule.list').userFields(['authority']).action(listRules)

  ctx.command('tools.rule.add <effect:string> <action:string> [target:text]')
    .userFields(['authority'])
    .option('user', '-u <id:string>')
    .option('platform', '-p <platform:string>')
    .option('guild', '-g <id:string>')
    .option('channel', '-c <id:string>')
    .option('here', '-H')
    .option('agent', '-a <id:string>')
    .option('level', '-l <range:string>')
    .option('kind', '-k <kind:string>')
    .option('until', '-t <time:string>')
    .option('once', '-o')
    .option('final', '-f')
    .action(async ({ session, options }, effect, action, target) => {
      const refused = denyAdmin(session)
      if (refused) return refused
      if (!effect || !action) return session.text('.usage')
      try {
        const input: RuleInput = {
          effect: effect.toLowerCase() as any,
          action,
          target,
          final: !!options.final,
          source: 'command',
          createdBy: subjectLabel(session),
          platform: options.platform ?? (options.user || options.here ? session.platform : undefined),
          userId: options.user,
          guildId: options.guild,
          channelId: options.channel ?? (options.here ? session.channelId : undefined),
          agent: options.agent,
        }
        if (options.kind) {
          if (options.kind !== 'private' && options.kind !== 'group') throw new PermissionInputError('rule-invalid', 'kind must be private or group')
          input.kind = options.kind
        }
        if (options.level) Object.assign(input, parseLevelRange(options.level))
        if (options.once) input.validity = 'once'
        if (options.until) {
          const time = +Time.parseDate(options.until)
          if (!Number.isFinite(time)) throw new PermissionInputError('rule-until', 'unreadable time', { text: options.until })
          input.expiresAt = time
          if (!options.once) input.validity = 'until'
        }
        const rule = await permissions().rules.add(input)
        return session.text('.added', { rule: ruleLine(ctx, session, rule) })
      } catch (error) {
        return inputError(ctx, session, error)
      }
    })

  ctx.command('tools.rule.remove <id:string>')
    .userFields(['authority'])
    .action(async ({ session }, id) => {
      const refused = denyAdmin(session)
      if (refused) return refused
      if (!id) return session.text('.missing-id')
      id = id.trim().toLowerCase()
      return session.text(await permissions().rules.remove(id) ? '.removed' : '.not-found', { id })
    })

  ctx.command('tools.policy [pattern:string] [policy:string]')
    .userFields(['authority'])
    .option('remove', '-r')
    .action(async ({ session, options }, pattern, policy) => {
      const refused = denyAdmin(session)
      if (refused) return refused
      const store = permissions().policies
      if (pattern && options.remove) {
        return session.text(await store.remove(pattern) ? '.removed' : '.not-found', { pattern })
      }
      if (pattern && !policy) return session.text('.missing-policy')
      if (pattern) {
        try {
          await store.set(pattern, policy.toLowerCase() as ToolPolicy, subjectLabel(session))
        } catch (error) {
          return inputError(ctx, session, error)
        }
        return session.text('.set', { pattern, policy: policy.toLowerCase() })
      }
      const entries = store.list()
      if (!entries.length) return session.text('.empty')
      return [session.text('.header'), ...entries.map((entry) => `${entry.pattern} → ${entry.policy} (${entry.source})`)].join('\n')
    })

  ctx.command('tools.mode [mode:string]')
    .userFields(['authority'])
    .option('reset', '-r')
    .action(async ({ session, options }, mode) => {
      if (mode || options.reset) {
        const refused = denyAdmin(session)
        if (refused) return refused
        if (!session.channelId) return session.text('.no-channel')
        if (options.reset) {
          await permissions().sceneModes.set(session.platform, session.channelId, undefined, subjectLabel(session))
          return session.text('.reset')
        }
        mode = mode.toLowerCase()
        if (!isPermissionMode(mode)) return session.text('.invalid', { mode })
        await permissions().sceneModes.set(session.platform, session.channelId, mode, subjectLabel(session))
        return session.text('.set', { mode })
      }
      const who = subject(session)
      const explained = permissions().explainMode(who)
      const effective = explained.mode
      const cell = (effect: 'read' | 'write' | 'exec') => {
        const fallback = modeDefault(effective, effect, effect === 'write')
        return say(ctx, session, `decision.${fallback.decision}`)
      }
      const lines = [
        session.text('.current', { mode: effective, level: who.authority }),
        session.text('.table', { read: cell('read'), write: cell('write'), exec: cell('exec') }),
        session.text('.layers', {
          layers: explained.layers.map((layer) => say(ctx, session, `mode-layer.${layer.source}`, { ...layer, level: who.authority })).join('; '),
        }),
      ]
      if (explained.downgraded) lines.push(session.text('.downgraded'))
      return lines.join('\n')
    })

  ctx.command('tools.pending')
    .userFields(['authority'])
    .action(({ session }) => {
      const who = subject(session)
      const all = who.private && who.authority >= config.approverAuthority
      const approvals = permissions().approvals.pending()
        .filter((approval) => all || (approval.place.platform === session.platform && approval.place.channelId === session.channelId))
      if (!approvals.length) return session.text('.empty')
      const now = Date.now()
      return [session.text('.header', { count: approvals.length }), ...approvals.map((approval) => say(ctx, session, 'approval.line', {
        ...approval.params,
        id: approval.id,
        tool: approval.tool,
        risk: say(ctx, session, `risk.${approval.risk || 'none'}`),
        requester: approval.requesterName,
        seconds: Math.max(0, Math.round((approval.expiresAt - now) / 1000)),
      }))].join('\n')
    })

  const answer = (words: readonly ApprovalAnswer[], fallback: ApprovalAnswer) => async ({ session }: { session?: Session }, id: string, word?: string) => {
    if (!id) return session.text('.missing-id')
    const given = (word?.trim().toLowerCase() || fallback) as ApprovalAnswer
    if (!words.includes(given)) return session.text('.invalid-answer', { answer: word })
    const result = await permissions().approvals.answer(id, given, { ...subject(session), session })
    return result.message
  }
  ctx.command('tools.approve <id:string> [answer:string]').userFields(['authority']).action((argv, id, word) => answer(approveWords, 'once')(argv, id, word))
  ctx.command('tools.deny <id:string> [answer:string]').userFields(['authority']).action((argv, id, word) => answer(denyWords, 'reject')(argv, id, word))

  ctx.command('tools.audit [count:natural]')
    .userFields(['authority'])
    .action(async ({ session }, count) => {
      const refused = denyAdmin(session)
      if (refused) return refused
      const entries = await permissions().audit(Math.min(Math.max(count || 10, 1), 100))
      if (!entries.length) return session.text('.empty')
      return [session.text('.header', { count: entries.length }), ...entries.map((entry) => auditLine(ctx, session, entry))].join('\n')
    })
}
