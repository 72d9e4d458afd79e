import { Context, Dict, h, Session } from 'koishi'
import type { Approval } from './approvals'

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

/**
 * The localized sentence for a permission code (`mode-deny`, `rule-ask`, …)
 * from its `params`: `chatluna-tools.permission.<code>`, with the effect
 * and risk names localized too.
 */
export function permissionText(ctx: Context, audience: Audience, code: string, params: Dict = {}): string {
  const effect = params.effect ? say(ctx, audience, `effect.${params.effect}`) : ''
  const risk = say(ctx, audience, `risk.${params.risk || 'none'}`)
  const status = params.status ? say(ctx, audience, `approval.status.${params.status}`) : ''
  return say(ctx, audience, `permission.${code}`, { ...params, effect, risk, status })
}

/**
 * The approval request posted in chat (issue 3, item 7): the tool, the
 * action, the target, the risk, who asked and why, the id and how to
 * answer, and when it expires.
 */
export function approvalPrompt(ctx: Context, audience: Audience, approval: Approval, timeout: number): string {
  const params: Dict = {
    ...approval.params,
    id: approval.id,
    tool: approval.tool,
    requester: approval.requesterName,
    level: approval.requester.authority,
    seconds: seconds(timeout),
  }
  const lines = [
    say(ctx, audience, 'approval.prompt.title', params),
    say(ctx, audience, 'approval.prompt.action', params),
  ]
  if (params.target) lines.push(say(ctx, audience, 'approval.prompt.target', params))
  lines.push(say(ctx, audience, 'approval.prompt.risk', { risk: say(ctx, audience, `risk.${approval.risk || 'none'}`) }))
  lines.push(say(ctx, audience, 'approval.prompt.why', { why: permissionText(ctx, audience, approval.code, approval.params) }))
  if (approval.critical) lines.push(say(ctx, audience, 'approval.prompt.critical'))
  lines.push(say(ctx, audience, 'approval.prompt.answer', params))
  return lines.join('\n')
}

/** The reply to an answer: `chatluna-tools.approval.answer.<code>`, plus a note when the answer was downgraded. */
export function answerMessage(ctx: Context, audience: Audience, code: string, params: Dict): string {
  const status = params.status ? say(ctx, audience, `approval.status.${params.status}`) : ''
  const text = say(ctx, audience, `approval.answer.${code}`, { ...params, status })
  if (!params.downgraded) return text
  const note = params.downgraded === 'anonymous' ? 'approval.answer.downgraded-anonymous' : 'approval.answer.downgraded'
  return text + '\n' + say(ctx, audience, note, params)
}
