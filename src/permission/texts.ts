import { Context, Dict, h, Session } from 'koishi'
import type { Approval } from './approvals'
import { targetText } from './action'
import type { ToolReasonText } from '../types'

/** A duration in ms as seconds for people: whole seconds, or one decimal below 10 s (`0.2`). */
export function seconds(ms: number) {
  return ms >= 10000 ? Math.round(ms / 1000) : Math.round(ms / 100) / 10
}

/** Whom a text is for: a chat session (its languages), or a list of locales. */
export type Audience = Session | string[]

/**
 * A `chatluna-tools.*` text for a session or for some locales, as plain
 * text: Koishi renders texts as message elements (`&lt;` for `<`), so the
 * result is unescaped here, and must be escaped (`h.escape`) once when it is
 * sent as a message.
 */
export function say(ctx: Context, audience: Audience, path: string, params: Dict = {}): string {
  const key = `chatluna-tools.${path}`
  return h.unescape(Array.isArray(audience) ? ctx.i18n.text(audience, [key], params) : audience.text(key, params))
}

/** Locales for a text in `locale` when one is given (a scope's, a console page's), then the app's fallbacks. */
export function localesFor(ctx: Context, locale?: string): string[] {
  return ctx.i18n.fallback(locale ? [locale] : [])
}

/**
 * A text of the session's command (`.key`) or at a full i18n path, as plain
 * text like {@link say}: escape it once (`h.escape`) when it is sent.
 */
export function commandText(session: Session, path: string, params: Dict = {}): string {
  return h.unescape(session.text(path, params))
}

/** A text at a full i18n path (any plugin's namespace) as plain text; undefined when no locale defines it. */
export function sayPath(ctx: Context, audience: Audience, path: string, params: Dict): string | undefined {
  const text = Array.isArray(audience) ? ctx.i18n.text(audience, [path], params) : audience.text(path, params)
  // Koishi answers a missing text with its path.
  return text === path ? undefined : h.unescape(text)
}

/** Characters that could fake lines or reorder text: C0/C1 controls, line and paragraph separators, bidi controls. */
export const unsafeCharacters = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069]/g

/**
 * A value shown inside one line of a chat text (a target, an action, a
 * name): control characters, line separators and bidi controls as `\n`,
 * `\u202e`-style escapes, so a model-written command cannot fake more
 * lines of an approval prompt ("Risk: none") or hide its end; cut to
 * `limit` characters, then `…(+N)` with the number of characters cut (the
 * same in every language).
 */
export function oneLine(value: unknown, limit = 500): string {
  const text = String(value ?? '').replace(unsafeCharacters, (char) => {
    const code = char.charCodeAt(0)
    if (char === '\n') return '\\n'
    if (char === '\r') return '\\r'
    if (char === '\t') return '\\t'
    return '\\u' + code.toString(16).padStart(4, '0')
  })
  return text.length > limit ? `${text.slice(0, limit)}…(+${text.length - limit})` : text
}

/** Text parameters with the values a caller or a model chose shown on one line each ({@link oneLine}). */
export function displayParams(params: Dict): Dict {
  const result = { ...params }
  for (const key of ['target', 'action', 'requester', 'tool', 'path', 'name', 'reason', 'error', 'issues', 'expected', 'got']) {
    if (typeof result[key] === 'string') result[key] = oneLine(result[key])
  }
  return result
}

/**
 * A tool's reason said in the audience's language (DESIGN "Permissions";
 * the zh-CN newcomer report: no English sentence inside a localized
 * reply): each locale text of `texts` ({@link ToolReasonText}, string
 * parameters shown on one line by {@link oneLine}), joined by
 * `chatluna-tools.reason.separator` and closed by `chatluna-tools.reason.end`.
 * Returns `fallback` (the tool's English reason) when there are no texts or
 * one is missing in every locale.
 */
export function sayReason(ctx: Context, audience: Audience, texts: ToolReasonText[] | undefined, fallback = ''): string {
  if (!Array.isArray(texts) || !texts.length) return fallback
  const said: string[] = []
  for (const item of texts) {
    const params: Dict = { ...item?.params }
    for (const key in params) if (typeof params[key] === 'string') params[key] = oneLine(params[key])
    const text = typeof item?.path === 'string' ? sayPath(ctx, audience, item.path, params) : undefined
    if (text === undefined) return fallback
    said.push(text)
  }
  return say(ctx, audience, 'reason.end', { reasons: said.join(say(ctx, audience, 'reason.separator')) })
}

/**
 * The localized sentence for a permission code (`mode-deny`, `rule-ask`, …)
 * from its `params`: `chatluna-tools.permission.<code>`, with the effect
 * and risk names localized too.
 */
export function permissionText(ctx: Context, audience: Audience, code: string, params: Dict = {}): string {
  const effect = params.effect ? say(ctx, audience, `effect.${params.effect}`) : ''
  const risk = say(ctx, audience, `risk.${params.risk || 'none'}`)
  const status = params.status ? say(ctx, audience, `approval.status.${params.status}`) : ''
  const reason = params.reasonText ? sayReason(ctx, audience, params.reasonText, params.reason) : params.reason
  return say(ctx, audience, `permission.${code}`, { ...displayParams(params), reason, effect, risk, status })
}

/**
 * The approval request posted in chat (issue 3, item 7): the tool, the
 * action, the target, the risk, who asked and why, the id and how to
 * answer, and when it expires. Each value stays on its line ({@link oneLine}).
 * The "why" line gives the decision, then the reasons of the action's parts
 * it does not already say (a command that reaches outside the workspace).
 */
export function approvalPrompt(ctx: Context, audience: Audience, approval: Approval, timeout: number): string {
  const params: Dict = displayParams({
    ...approval.params,
    ...approvalSubject(approval),
    id: approval.id,
    tool: approval.tool,
    requester: approval.requesterName,
    level: approval.requester.authority,
    seconds: seconds(timeout),
  })
  const lines = [
    say(ctx, audience, 'approval.prompt.title', params),
    say(ctx, audience, 'approval.prompt.action', params),
  ]
  if (params.target) lines.push(say(ctx, audience, 'approval.prompt.target', params))
  if (approval.parts.length > 1) {
    const parts = approval.parts.map((part) => say(ctx, audience, 'approval.prompt.part', {
      target: oneLine(part.target, 200),
      decision: say(ctx, audience, `decision.${part.decision}`),
    }))
    lines.push(say(ctx, audience, 'approval.prompt.parts', { parts: parts.join(' · ') }))
  }
  lines.push(say(ctx, audience, 'approval.prompt.risk', { risk: say(ctx, audience, `risk.${approval.risk || 'none'}`) }))
  lines.push(say(ctx, audience, 'approval.prompt.why', { why: approvalWhy(ctx, audience, approval) }))
  if (approval.critical) lines.push(say(ctx, audience, 'approval.prompt.critical'))
  lines.push(say(ctx, audience, 'approval.prompt.answer', params))
  return lines.join('\n')
}

/**
 * What an approval is about, for prompts and lists: `{ action, target }`.
 * A compound action (a shell line of several commands) shows the whole
 * target and the names of the parts that ask, so approving never runs
 * more than the prompt showed; a simple action keeps its decision's own
 * action and target.
 */
export function approvalSubject(approval: Approval): { action?: string; target?: string } {
  if (approval.parts.length <= 1) return {}
  const asking = [...new Set(approval.parts.filter((part) => part.decision === 'ask').map((part) => part.action))]
  const target = targetText(approval.action?.target)
  return {
    ...asking.length && { action: asking.join(', ') },
    ...target && { target },
  }
}

/** Why an approval asks: the decision's sentence, then the localized reasons of the action and its parts that it does not say yet. */
export function approvalWhy(ctx: Context, audience: Audience, approval: Approval): string {
  let why = permissionText(ctx, audience, approval.code, approval.params)
  const action = approval.action
  for (const part of [action, ...action?.parts ?? []]) {
    if (!part?.reasonText?.length) continue
    const more = sayReason(ctx, audience, part.reasonText)
    if (more && !why.includes(more)) why = say(ctx, audience, 'reason.also', { text: why, more })
  }
  return why
}

/** The reply to an answer: `chatluna-tools.approval.answer.<code>`, plus a note when the answer was downgraded. */
export function answerMessage(ctx: Context, audience: Audience, code: string, params: Dict): string {
  const status = params.status ? say(ctx, audience, `approval.status.${params.status}`) : ''
  const text = say(ctx, audience, `approval.answer.${code}`, { ...params, status })
  if (!params.downgraded) return text
  const note = params.downgraded === 'anonymous' ? 'approval.answer.downgraded-anonymous' : 'approval.answer.downgraded'
  return text + '\n' + say(ctx, audience, note, params)
}
