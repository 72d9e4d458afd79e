import { Context, Dict } from 'koishi'
import { ToolAction, ToolScope } from '../types'
import { RegisteredTool } from '../registry/registry'
import { targetText } from '../permission/action'
import { ToolPolicy } from '../permission/policy'
import { PermissionInputError } from '../permission/rules'
import { approvalWhy, localesFor, say } from '../permission/texts'
import type { Approval } from '../permission/approvals'
import type { ApprovalAnswer } from '../permission/answers'
import type { PermissionSubject } from '../permission/subject'
import { localeIds } from '../locales'
import { ActionResult, ApprovalView, DecisionView, PolicyView, RuleView } from './types'

/**
 * Who answers an approval or sets a policy from the console, as a
 * permission subject: platform `console`, the plugin-auth user's name (or
 * `owner` when the console has no logins), their authority (5 without
 * logins), and a private place (the console talks to one person).
 */
export interface ConsoleApprover extends PermissionSubject {
  platform: 'console'
  userId: string
  private: true
  /** Koishi user id (plugin-auth), when logged in. */
  id?: number
}

/** `console:<name>`, as audit lines and stored policies name the console user. */
export function approverLabel(approver: ConsoleApprover) {
  return `${approver.platform}:${approver.userId}`
}

/**
 * The console's view of the permission service `ctx.tools.permissions`
 * (issue "Permissions"): "would be denied" decisions, policies, rules and
 * approvals, in the shapes the page shows.
 */
export class ConsolePermissions {
  constructor(private ctx: Context) {}

  private get service() {
    return this.ctx.tools.permissions
  }

  /** Stored policies and rules survive a restart only with a database. */
  get persistentPolicies() {
    return !!this.ctx.get('database')
  }

  /**
   * The permission decision for calling `entry` in `scope` with arguments
   * not yet known: the tool's fixed action name (or `tool:<name>`), effect
   * and base risk, judged purely (nobody is asked, nothing is recorded).
   */
  decide(entry: RegisteredTool, scope: ToolScope): DecisionView & { params: Dict } {
    const { definition } = entry
    const action: ToolAction = {
      name: typeof definition.permission === 'string' && definition.permission ? definition.permission : `tool:${definition.name}`,
      effect: definition.traits?.effect ?? 'exec',
      risk: definition.traits?.risk,
    }
    try {
      const service = this.service
      const result = service.decide(action, service.subjectOf(scope), { tool: definition.name, turn: scope.turn })
      return { decision: result.decision, code: result.code, reason: result.reason, params: result.params ?? {}, mode: result.mode }
    } catch (error) {
      return { decision: 'deny', code: 'decision-error', reason: String(error?.message ?? error), params: {} }
    }
  }

  /** Every policy: those set at run time (from this page, a command or the API), then the config's. */
  listPolicies(): PolicyView[] {
    return this.service.policies.list().map((row) => {
      const view: PolicyView = { pattern: row.pattern, policy: row.policy, origin: row.source === 'config' ? 'config' : 'stored' }
      if (row.updatedBy) view.updatedBy = row.updatedBy
      return view
    })
  }

  /**
   * Sets the policy of a tool-name pattern, or removes the stored policy
   * for it when `policy` is null. A stored policy takes precedence over the
   * config's policy for the same pattern. A pattern the permission service
   * refuses (its `PermissionInputError`) and a removal with nothing stored
   * answer `ok: false` with the reason in `locale` (the page's language),
   * else in the app's default; other errors (the database) are thrown.
   */
  async setPolicy(pattern: string, policy: ToolPolicy | null, approver: ConsoleApprover, locale?: string): Promise<ActionResult> {
    const refused = (code: string, path: string, params: Dict): ActionResult => ({
      ok: false,
      code,
      message: say(this.ctx, localesFor(this.ctx, locale), path, params),
    })
    try {
      if (policy) {
        await this.service.policies.set(pattern, policy, approverLabel(approver))
        return { ok: true, code: 'policy-set' }
      }
      if (await this.service.policies.remove(pattern)) return { ok: true, code: 'policy-removed' }
      return refused('policy-not-found', 'policy.not-found', { pattern })
    } catch (error) {
      if (error instanceof PermissionInputError) return refused(error.code, `input.${error.code}`, error.params)
      throw error
    }
  }

  /** Every permission rule, as plain JSON. */
  listRules(): RuleView[] {
    return this.service.rules.list().map((rule) => plain(rule))
  }

  /** The approvals waiting for an answer, with why they ask in each of the page's languages. */
  pendingApprovals(): ApprovalView[] {
    return this.service.approvals.pending().map((approval) => {
      const view = approvalView(approval)
      view.why = {}
      // Pushed to every console user: the reason in each language the plugin (and its page) has.
      for (const locale of localeIds) view.why[locale] = approvalWhy(this.ctx, this.ctx.i18n.fallback([locale]), approval)
      return view
    })
  }

  /**
   * Answers a pending approval as the console user, with the same rules as
   * in chat: the permission service refuses a user below its approver
   * authority (`not-allowed`), unknown ids and approvals already answered.
   * `message` says what happened in `locale` (the page's language), else in
   * the app's default.
   */
  async answer(id: string, answer: ApprovalAnswer, approver: ConsoleApprover, locale?: string): Promise<ActionResult> {
    const { ok, code, message } = await this.service.approvals.answer(id, answer, locale ? { ...approver, locale } : approver)
    return { ok, code, message }
  }
}

/** The fields of an approval the page shows. */
export function approvalView(approval: Approval): ApprovalView {
  const action = approval.action
  const view: ApprovalView = {
    id: approval.id,
    tool: approval.tool,
    action: action?.name,
    target: action?.target === undefined ? undefined : targetText(action.target),
    risk: approval.risk,
    reason: approval.reason,
    critical: approval.critical,
    userId: approval.requester.userId,
    userName: approval.requesterName,
    platform: approval.place.platform ?? approval.requester.platform,
    channelId: approval.place.channelId,
    createdAt: approval.createdAt,
    expiresAt: approval.expiresAt,
    // A compound action (a shell line of several commands): every part with its own decision.
    parts: approval.parts?.length > 1 ? approval.parts.map((part) => ({ ...part })) : undefined,
  }
  for (const key of Object.keys(view) as (keyof ApprovalView)[]) {
    if (view[key] === undefined) delete view[key]
  }
  return view
}

/** A JSON-safe copy (no functions or cycles). */
function plain(value: object): Dict {
  const seen = new WeakSet()
  return JSON.parse(JSON.stringify(value, (key, inner) => {
    if (typeof inner === 'function') return undefined
    if (inner && typeof inner === 'object') {
      if (seen.has(inner)) return undefined
      seen.add(inner)
    }
    return inner
  }))
}
