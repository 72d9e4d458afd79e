import { Awaitable, Context, Dict, h, Session, Time } from 'koishi'
import { PermissionConfig } from '../permission/config'
import { approveWords, ApprovalAnswer, denyWords } from '../permission/answers'
import { AuditEntry } from '../permission/audit'
import { isPermissionMode, modeDefault } from '../permission/modes'
import { ToolPolicy } from '../permission/policy'
import { parseLevelRange, PermissionInputError, PermissionRule, RuleInput } from '../permission/rules'
import { sessionAuthority, subjectLabel } from '../permission/subject'
import { approvalSubject, commandText, displayParams, say } from '../permission/texts'

/** A command text as plain text (Koishi renders texts as message elements, `&lt;` for `<`). */
const t = commandText

/** Wraps a command action that builds plain text, so that `<` or `&` in rules and targets reach the chat as typed. */
function escaped<A extends any[]>(action: (...args: A) => Awaitable<string | undefined>) {
  return async (...args: A) => {
    const text = await action(...args)
    return typeof text === 'string' ? h.escape(text) : text
  }
}

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
    who: who.length ? who.join(text('separator')) : text('rule.everyone'),
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
  const subject = (session: Session) => permissions().subjectOf(ctx.tools.scope(session))
  const denyAdmin = (session: Session) => {
    const level = sessionAuthority(session)
    if (level >= config.adminAuthority) return
    return say(ctx, session, 'admin-only', { needed: config.adminAuthority, level })
  }

  const listRules = ({ session }: { session?: Session }) => {
    const refused = denyAdmin(session)
    if (refused) return refused
    const rules = permissions().rules.list()
    if (!rules.length) return t(session, 'commands.tools.rule.messages.empty')
    return [t(session, 'commands.tools.rule.messages.header', { count: rules.length }), ...rules.map((rule) => ruleLine(ctx, session, rule))].join('\n')
  }
  ctx.command('tools.rule').userFields(['authority']).action(escaped(listRules))
  ctx.command('tools.rule.list').userFields(['authority']).action(escaped(listRules))

  ctx.command('tools.rule.add <effect:string> <action:string> [target:string]')
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
    .action(escaped(async ({ session, options }, effect, action, target) => {
      const refused = denyAdmin(session)
      if (refused) return refused
      if (!effect || !action) return t(session, '.usage')
      // Koishi hands arguments over in message-element form (`&lt;` for `<`).
      action = h.unescape(action)
      target = target && h.unescape(target)
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
        return t(session, '.added', { rule: ruleLine(ctx, session, rule) })
      } catch (error) {
        return inputError(ctx, session, error)
      }
    }))

  ctx.command('tools.rule.remove <id:string>')
    .userFields(['authority'])
    .action(escaped(async ({ session }, id) => {
      const refused = denyAdmin(session)
      if (refused) return refused
      if (!id) return t(session, '.missing-id')
      id = id.trim().toLowerCase()
      return t(session, await permissions().rules.remove(id) ? '.removed' : '.not-found', { id })
    }))

  ctx.command('tools.policy [pattern:string] [policy:string]')
    .userFields(['authority'])
    .option('remove', '-r')
    .action(escaped(async ({ session, options }, pattern, policy) => {
      const refused = denyAdmin(session)
      if (refused) return refused
      const store = permissions().policies
      pattern = pattern && h.unescape(pattern)
      if (pattern && options.remove) {
        return t(session, await store.remove(pattern) ? '.removed' : '.not-found', { pattern })
      }
      if (pattern && !policy) return t(session, '.missing-policy')
      if (pattern) {
        try {
          await store.set(pattern, policy.toLowerCase() as ToolPolicy, subjectLabel(session))
        } catch (error) {
          return inputError(ctx, session, error)
        }
        return t(session, '.set', { pattern, policy: policy.toLowerCase() })
      }
      const entries = store.list()
      if (!entries.length) return t(session, '.empty')
      return [t(session, '.header'), ...entries.map((entry) => say(ctx, session, `policy.${entry.source}`, entry))].join('\n')
    }))

  ctx.command('tools.mode [mode:string]')
    .userFields(['authority'])
    .option('reset', '-r')
    .action(escaped(async ({ session, options }, mode) => {
      if (mode || options.reset) {
        const refused = denyAdmin(session)
        if (refused) return refused
        if (!session.channelId) return t(session, '.no-channel')
        if (options.reset) {
          await permissions().sceneModes.set(session.platform, session.channelId, undefined, subjectLabel(session))
          return t(session, '.reset')
        }
        mode = mode.toLowerCase()
        if (!isPermissionMode(mode)) return t(session, '.invalid', { mode })
        await permissions().sceneModes.set(session.platform, session.channelId, mode, subjectLabel(session))
        return t(session, '.set', { mode })
      }
      const who = subject(session)
      const explained = permissions().explainMode(who)
      const effective = explained.mode
      const cell = (effect: 'read' | 'write' | 'exec') => {
        const fallback = modeDefault(effective, effect, effect === 'write')
        return say(ctx, session, `decision.${fallback.decision}`)
      }
      const lines = [
        t(session, '.current', { mode: effective, level: who.authority }),
        t(session, '.table', { read: cell('read'), write: cell('write'), exec: cell('exec') }),
        t(session, '.layers', {
          layers: explained.layers.map((layer) => say(ctx, session, `mode-layer.${layer.source}`, { ...layer, level: who.authority })).join(say(ctx, session, 'separator')),
        }),
      ]
      if (explained.downgraded) lines.push(t(session, '.downgraded'))
      return lines.join('\n')
    }))

  ctx.command('tools.pending')
    .userFields(['authority'])
    .action(escaped(({ session }) => {
      const who = subject(session)
      const all = who.private && who.authority >= config.approverAuthority
      const approvals = permissions().approvals.pending()
        .filter((approval) => all || (approval.place.platform === session.platform && approval.place.channelId === session.channelId))
      if (!approvals.length) return t(session, '.empty')
      const now = Date.now()
      return [t(session, '.header', { count: approvals.length }), ...approvals.map((approval) => say(ctx, session, 'approval.line', displayParams({
        ...approval.params,
        ...approvalSubject(approval),
        id: approval.id,
        tool: approval.tool,
        risk: say(ctx, session, `risk.${approval.risk || 'none'}`),
        requester: approval.requesterName,
        seconds: Math.max(0, Math.round((approval.expiresAt - now) / 1000)),
      })))].join('\n')
    }))

  const answer = (words: readonly ApprovalAnswer[], fallback: ApprovalAnswer) => async ({ session }: { session?: Session }, id: string, word?: string) => {
    if (!id) return t(session, '.missing-id')
    const given = (word?.trim().toLowerCase() || fallback) as ApprovalAnswer
    if (!words.includes(given)) return t(session, '.invalid-answer', { answer: word })
    const result = await permissions().approvals.answer(id, given, { ...subject(session), session })
    return result.message
  }
  ctx.command('tools.approve <id:string> [answer:string]').userFields(['authority']).action(escaped(answer(approveWords, 'once')))
  ctx.command('tools.deny <id:string> [answer:string]').userFields(['authority']).action(escaped(answer(denyWords, 'reject')))

  ctx.command('tools.audit [count:natural]')
    .userFields(['authority'])
    .action(escaped(async ({ session }, count) => {
      const refused = denyAdmin(session)
      if (refused) return refused
      const entries = await permissions().audit(Math.min(Math.max(count || 10, 1), 100))
      if (!entries.length) return t(session, '.empty')
      return [t(session, '.header', { count: entries.length }), ...entries.map((entry) => auditLine(ctx, session, entry))].join('\n')
    }))
}
