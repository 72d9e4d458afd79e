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

/** Characters that could fake lines or reorder text: C0/C1 controls, line and paragraph separators, bidi controls. */
const unsafeCharacters = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069]/g

/**
 * A value shown inside one line of a chat text (a target, an action, a
 * name): control characters, line separators and bidi controls as `\n`,
 * `\u202e`-style escapes, so a model-written command cannot fake more
 * lines of an approval prompt ("Risk: none") or hide its end; cut to
 * `limit` characters with a note of how many more there are.
 */
export function oneLine(value: unknown, limit = 500): string {
  const text = String(value ?? '').replace(unsafeCharacters, (char) => {
    const code = char.charCodeAt(0)
    if (char === '\n') return '\\n'
    if (char === '\r') return '\\r'
    if (char === '\t') return '\\t'
    return '\\u' + code.toString(16).padStart(4, '0')
  })
  return text.length > limit ? `${text.slice(0, limit)}… (${text.length - limit} more characters)` : text
}

/** Text parameters with the values a caller or a model chose shown on one line each ({@link oneLine}). */
export function displayParams(params: Dict): Dict {
  const result = { ...params }
  for (const key of ['target', 'action', 'requester', 'tool']) {
    if (typeof result[key] === 'string') result[key] = oneLine(result[key])
  }
  return result
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
  return say(ctx, audience, `permission.${code}`, { ...displayParams(params), effect, risk, status })
}

/**
 * The approval request posted in chat (issue 3, item 7): the tool, the
 * action, the target, the risk, who asked and why, the id and how to
 * answer, and when it expires. Each value stays on its line ({@link oneLine}).
 */
export function approvalPrompt(ctx: Context, audience: Audience, approval: Approval, timeout: number): string {
  const params: Dict = displayParams({
    ...approval.params,
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
