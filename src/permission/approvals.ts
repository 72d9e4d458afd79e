import { Context, Dict, h, Logger, Session } from 'koishi'
import { ToolAction, ToolCall, ToolRisk } from '../types'
import { emitEvent, Lifecycle } from '../pipeline/hooks'
import { settleWithin } from '../pipeline/within'
import { targetText } from './action'
import { Decision, PermissionDecision } from './decision'
import { PermissionVerdict } from './gate'
import { shortId } from './ids'
import { RuleStore } from './rule-store'
import { RuleInput } from './rules'
import { PermissionSubject, sessionKey, subjectLabel } from './subject'
import { approvalPrompt, answerMessage, localesFor, seconds } from './texts'
import { ApprovalAnswer, approveWords, isApprovalAnswer } from './answers'

const logger = new Logger('chatluna-tools')

export type { ApprovalAnswer } from './answers'

/** Where an approval was posted. */
export interface ApprovalPlace {
  platform?: string
  channelId?: string
  guildId?: string
  private: boolean
}

/** A request for a human decision about one tool call. */
export interface Approval {
  /** Short, lowercase, unique among pending approvals. */
  id: string
  tool: string
  callId: string
  action: ToolAction
  risk?: ToolRisk
  /** The action is critical: `always`/`never` count as `once`/`reject`, and the requester cannot approve it alone. */
  critical: boolean
  requester: PermissionSubject
  requesterName: string
  /**
   * Every part of a compound action (e.g. each command of a shell line)
   * with its own decision, so a prompt shows the whole line and not only
   * the part that asks; one entry for a simple action.
   */
  parts: ApprovalPart[]
  /** Why a human is asked: the decision's code, reason and text parameters. */
  code: string
  reason: string
  params: Dict
  place: ApprovalPlace
  turn?: string
  createdAt: number
  expiresAt: number
  status: 'pending' | 'approved' | 'rejected' | 'timeout' | 'aborted'
  answer?: ApprovalAnswer
  /** `platform:userId` of whoever answered. */
  approver?: string
}

/** One part of an approval's action: its name, its target as text, and how it was decided. */
export interface ApprovalPart {
  action: string
  target: string
  decision: Decision
}

/** What `answer` reports; `message` is in the approver's language. */
export interface AnswerResult {
  ok: boolean
  /** `approved`, `rejected`, `unknown-id`, `already-answered`, `invalid-answer`, `not-allowed`, `wrong-channel`, `store-failed`. */
  code: string
  message: string
  approval?: Approval
  /** The answer after any downgrade. */
  answer?: ApprovalAnswer
}

/**
 * The person answering: their subject, and for the reply's language their
 * session, or without one their locale (e.g. the console user's language).
 */
export type Approver = PermissionSubject & { session?: Session; locale?: string }

/** What the approvals need from the permission service. */
export interface ApprovalHost {
  ctx: Context
  lifecycle: Lifecycle
  rules: RuleStore
  timeout(): number
  approverAuthority(): number
}

interface Waiting {
  approval: Approval
  decision: PermissionDecision
  settle(verdict: PermissionVerdict): void
  /** Set while an accepted answer is being stored: the approval counts as answered. */
  answering?: Approval['status']
}

/** Answered ids remembered to tell "already answered" from "unknown". */
const recentLimit = 500
/** Turn grants end with the turn, at the latest after this many ms. */
export const turnGrantLifetime = 3600_000

/**
 * Approvals in chat (issue 3, item 7): posts the request where the call
 * came from (or to `scope.approvalChannel`), waits for an answer given
 * through `answer` (the commands `tools.approve` / `tools.deny`), and turns
 * it into a verdict, grants and rules. Unanswered approvals end after the
 * timeout with status `timeout`.
 */
export class ApprovalManager {
  private waiting = new Map<string, Waiting>()
  private recent = new Map<string, Approval>()

  constructor(private host: ApprovalHost) {}

  /** Pending approvals, oldest first. */
  pending(): Approval[] {
    return [...this.waiting.values()].map((item) => item.approval)
  }

  /** A pending or recently answered approval by id (case-insensitive). */
  get(id: string): Approval | undefined {
    const key = normalizeId(id)
    return this.waiting.get(key)?.approval ?? this.recent.get(key)
  }

  /**
   * Posts an approval for a call the decision says to `ask` about and
   * waits for the answer, the timeout, or the call's abort. Without a
   * session and without `scope.approvalChannel`, or when posting fails or
   * the platform does not confirm the post within the approval timeout,
   * the call is denied with `approval-unavailable`.
   */
  async request(call: ToolCall, subject: PermissionSubject, decision: PermissionDecision): Promise<{ verdict: PermissionVerdict; approval?: Approval }> {
    const { ctx } = this.host
    const session = call.session
    const channel = call.scope.approvalChannel
    const unavailable = (why: string): { verdict: PermissionVerdict } => ({
      verdict: { decision: 'deny', code: 'approval-unavailable', reason: `${decision.reason}, but ${why}`, params: { ...decision.params } },
    })
    if (call.signal.aborted) return { verdict: aborted(call) }
    const bot = !session && channel ? ctx.bots.find((bot) => bot.platform === channel.platform && (!channel.selfId || bot.selfId === channel.selfId)) : undefined
    if (!session && !channel) return unavailable('there is no chat to ask in (no session and no approval channel)')
    if (!session && !bot) return unavailable(`no bot of platform "${channel.platform}" is online to post the approval`)

    const now = Date.now()
    const timeout = this.host.timeout()
    const id = shortId((candidate) => this.waiting.has(candidate) || this.recent.has(candidate))
    const approval: Approval = {
      id,
      tool: call.name,
      callId: call.id,
      action: call.action,
      risk: decision.risk,
      critical: decision.parts.some((part) => part.part.risk === 'critical'),
      parts: decision.parts.map(({ part, decision }) => ({ action: part.name, target: targetText(part.target), decision })),
      requester: subject,
      requesterName: session?.username || subject.userId || 'anonymous',
      code: decision.code,
      reason: decision.reason,
      params: decision.params,
      place: session
        ? { platform: session.platform, channelId: session.channelId, guildId: session.isDirect ? undefined : session.guildId, private: !!session.isDirect }
        : { platform: channel.platform, channelId: channel.channelId, guildId: channel.guildId, private: false },
      turn: call.scope.turn,
      createdAt: now,
      expiresAt: now + timeout,
      status: 'pending',
    }
    const text = approvalPrompt(ctx, session ?? localesFor(ctx, call.scope.locale), approval, timeout)
    try {
      // A platform that never answers must not hold the call past the approval's own timeout.
      const posting = session ? session.send(h.escape(text)) : bot.sendMessage(channel.channelId, h.escape(text), channel.guildId)
      const posted = await settleWithin(posting.catch((error) => { throw error ?? new Error('posting failed') }), timeout, call.signal)
      if (posted === 'aborted') return { verdict: aborted(call) }
      if (posted === 'timeout') {
        logger.warn('could not post approval %s: no answer from the platform within %d ms', id, timeout)
        return unavailable(`the approval request could not be posted within ${seconds(timeout)} s`)
      }
    } catch (error) {
      logger.warn('could not post approval %s: %s', id, error)
      return unavailable(`the approval request could not be posted (${error?.message ?? error})`)
    }

    return new Promise((resolve) => {
      const signal = call.signal
      const onAbort = () => this.close(id, 'aborted', aborted(call))
      const timer = setTimeout(() => this.close(id, 'timeout', {
        decision: 'deny',
        status: 'timeout',
        code: 'approval-timeout',
        reason: `nobody answered approval ${id} within ${seconds(timeout)} s`,
        params: { ...decision.params, id, seconds: seconds(timeout) },
      }), timeout)
      signal.addEventListener('abort', onAbort, { once: true })
      this.waiting.set(id, {
        approval,
        decision,
        settle: (verdict) => {
          clearTimeout(timer)
          signal.removeEventListener('abort', onAbort)
          resolve({ verdict, approval })
        },
      })
      emitEvent(this.host.lifecycle, 'chatluna/approval-requested', [approval])
    })
  }

  /**
   * Answers a pending approval (issue 3, item 7). The requester may answer
   * when their own level would allow the action in `allow` mode (level 5,
   * not critical); anyone else needs `approverAuthority`, and must answer
   * in the approval's channel or in a private chat with the bot. A refused
   * answer leaves the approval pending. `always`/`never` on a critical
   * action count as `once`/`reject`; `always` on an action the tool itself
   * wants asked every time counts as `once`, and so does `always` for a
   * requester without a user id (its rule would allow everybody). Never
   * throws.
   */
  async answer(id: string, answer: ApprovalAnswer, approver: Approver): Promise<AnswerResult> {
    const audience = approver.session ?? localesFor(this.host.ctx, approver.locale)
    const reply = (ok: boolean, code: string, params: Dict = {}, approval?: Approval, given?: ApprovalAnswer): AnswerResult =>
      ({ ok, code, message: answerMessage(this.host.ctx, audience, code, { id: normalizeId(id), ...params }), approval, answer: given })
    const key = normalizeId(id)
    const item = this.waiting.get(key)
    if (!item) {
      const old = this.recent.get(key)
      if (old) return reply(false, 'already-answered', { status: old.status }, old)
      return reply(false, 'unknown-id')
    }
    const { approval } = item
    if (item.answering) return reply(false, 'already-answered', { status: item.answering }, approval)
    if (!isApprovalAnswer(answer)) return reply(false, 'invalid-answer', { answer: String(answer) }, approval)

    const isRequester = !!approver.userId && approver.userId === approval.requester.userId && approver.platform === approval.requester.platform
    const needed = this.host.approverAuthority()
    const mayAnswer = (isRequester && approver.authority >= 5 && !approval.critical) || approver.authority >= needed
    if (!mayAnswer) return reply(false, 'not-allowed', { needed, level: approver.authority }, approval)
    const samePlace = approver.private
      || (approver.platform === approval.place.platform && approver.channelId === approval.place.channelId)
    if (!samePlace) return reply(false, 'wrong-channel', {}, approval)

    let given = answer
    const askParts = item.decision.parts.filter((part) => part.decision === 'ask')
    if (approval.critical && given === 'always') given = 'once'
    if (approval.critical && given === 'never') given = 'reject'
    if (given === 'always' && askParts.some((part) => part.needsHuman)) given = 'once'
    // A rule needs someone to belong to: without a requester it would allow the action for everybody.
    const anonymous = given === 'always' && !approval.requester.userId
    if (anonymous) given = 'once'

    // `platform:userId` identifies the approver in rules and the audit trail; chat texts use their name.
    const label = subjectLabel(approver)
    const name = approver.session?.username || approver.session?.author?.name || label
    const requester = approval.requester
    const ruleFor = (part: ToolAction, effect: 'allow' | 'deny'): RuleInput => ({
      effect,
      action: part.name,
      target: targetText(part.target) || undefined,
      exact: true,
      userId: requester.userId,
      platform: requester.platform,
      source: 'approval',
      approval: approval.id,
      createdBy: label,
    })
    const approved = approveWords.includes(given)
    if (given === 'always' || given === 'never') {
      // Storing takes time: a second answer meanwhile is refused as already answered.
      item.answering = approved ? 'approved' : 'rejected'
      try {
        for (const part of askParts) await this.host.rules.add({ ...ruleFor(part.part, given === 'always' ? 'allow' : 'deny'), validity: 'permanent' })
      } catch (error) {
        item.answering = undefined
        logger.warn('could not store the rule for approval %s: %s', approval.id, error)
        return reply(false, 'store-failed', { error: String(error?.message ?? error) }, approval)
      }
      // It may have timed out or been cancelled while the rule was stored.
      if (this.waiting.get(key) !== item) return reply(false, 'already-answered', { status: approval.status }, approval)
    }
    if (given === 'turn' && approval.turn) {
      for (const part of askParts) {
        this.host.rules.grant({ ...ruleFor(part.part, 'allow'), validity: 'turn', turn: approval.turn, expiresAt: Date.now() + turnGrantLifetime })
      }
    }
    if (given === 'session') {
      for (const part of askParts) this.host.rules.grant({ ...ruleFor(part.part, 'allow'), validity: 'session', session: sessionKey(requester) })
    }

    approval.approver = label
    approval.answer = given
    const params = { ...item.decision.params, id: approval.id, approver: name, answer: given }
    this.close(key, approved ? 'approved' : 'rejected', approved
      ? { decision: 'allow', code: 'approved', reason: `${name} approved it (${given})`, params, approvedBy: label }
      : { decision: 'deny', code: 'approval-rejected', reason: `${name} refused approval ${approval.id}${given === 'never' ? ' and stored a rule that refuses this action from now on' : ''}`, params })
    emitEvent(this.host.lifecycle, 'chatluna/approval-answered', [approval, given])
    const downgraded = given === answer ? false : anonymous ? 'anonymous' : true
    return reply(true, approved ? 'approved' : 'rejected', { answer: given, tool: approval.tool, downgraded, requested: answer }, approval, given)
  }

  /** Ends every pending approval (the plugin is being disposed): their calls are denied as aborted. */
  dispose() {
    for (const id of [...this.waiting.keys()]) {
      this.close(id, 'aborted', { decision: 'deny', status: 'aborted', code: 'approval-aborted', reason: 'the tool service stopped while waiting for approval' })
    }
  }

  private close(id: string, status: Approval['status'], verdict: PermissionVerdict) {
    const item = this.waiting.get(id)
    if (!item) return
    this.waiting.delete(id)
    item.approval.status = status
    this.recent.set(id, item.approval)
    if (this.recent.size > recentLimit) this.recent.delete(this.recent.keys().next().value)
    item.settle(verdict)
  }
}

function aborted(call: ToolCall): PermissionVerdict {
  return { decision: 'deny', status: 'aborted', code: 'approval-aborted', reason: 'the caller gave up while waiting for approval', params: { tool: call.name } }
}

/** Approval ids are matched case-insensitively, without surrounding spaces or a leading `#`. */
export function normalizeId(id: string) {
  return String(id ?? '').trim().replace(/^#/, '').toLowerCase()
}
