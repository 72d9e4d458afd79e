import { Awaitable, Context, Dict } from 'koishi'
import { ToolAction, ToolScope } from '../types'
import { RegisteredTool } from '../registry/registry'
import { MinimumAuthorityGate } from '../permission/gate'
import { targetText } from '../permission/action'
import { ToolPolicy } from '../permission/policy'
import { ActionResult, ApprovalView, DecisionView, PolicyView, RuleView } from './types'

/** The policies a tool may have (tool-system seed, "策略与权限"). */
export const toolPolicies: ToolPolicy[] = ['auto', 'approval', 'disabled']

/** Answers an approver can give (DESIGN.md "Permissions"). */
export const approvalAnswers = ['once', 'turn', 'session', 'always', 'reject', 'never'] as const
export type ApprovalAnswer = typeof approvalAnswers[number]

/**
 * What the console uses of the permission service `ctx.tools.permissions`
 * (issue "Permissions"). Every member is optional: the console works with
 * whatever is loaded and falls back to the foundation's pieces otherwise.
 */
export interface PermissionsContract {
  /** The pure decision for an action by a subject: no human is asked, nothing is recorded. */
  decide?(action: ToolAction, subject: unknown, options?: Dict): { decision: 'allow' | 'ask' | 'deny'; code: string; reason: string; params?: Dict; mode?: string }
  subjectOf?(scope: ToolScope): unknown
  modeOf?(subject: unknown): string
  rules?: { list(): Awaitable<Dict[]> }
  policies?: {
    /** Stored policies (`source: 'stored'`) and the config's (`source: 'config'`), or a plain pattern → policy map. */
    list(): Awaitable<{ pattern: string; policy: ToolPolicy; source?: string; updatedBy?: string }[] | Dict<ToolPolicy>>
    set(pattern: string, policy: ToolPolicy, updatedBy?: string): Awaitable<unknown>
    remove(pattern: string): Awaitable<unknown>
  }
  approvals?: {
    pending(): Awaitable<Dict[]>
    answer(id: string, answer: ApprovalAnswer, approver: ConsoleApprover): Awaitable<ActionResult>
  }
}

/**
 * Who answers an approval or sets a policy from the console, as a
 * permission subject: platform `console`, the plugin-auth user's name (or
 * `owner` when the console has no logins), their authority (5 without
 * logins), and a private place (the console talks to one person).
 */
export interface ConsoleApprover {
  platform: 'console'
  userId: string
  authority: number
  private: true
  /** Koishi user id (plugin-auth), when logged in. */
  id?: number
}

/** `console:<name>`, as audit lines and stored policies name the console user. */
export function approverLabel(approver: ConsoleApprover) {
  return `${approver.platform}:${approver.userId}`
}

/**
 * The console's view of permissions: policies, "would be denied" decisions,
 * rules and approvals, through the permission service when it is loaded and
 * through the foundation's policy table and default gate otherwise.
 */
export class ConsolePermissions {
  /** Policies set from the page while no permission service stores them (not persisted). */
  private fallbackPolicies: Dict<ToolPolicy> = Object.create(null)

  constructor(private ctx: Context) {
    ctx.effect(() => ctx.tools.policies.push(this.fallbackPolicies))
  }

  /** The permission service, when loaded. */
  get service(): PermissionsContract | undefined {
    return (this.ctx.tools as any).permissions
  }

  get decisions() {
    return typeof this.service?.decide === 'function' || this.ctx.tools.gate instanceof MinimumAuthorityGate
  }

  get approvals() {
    return typeof this.service?.approvals?.pending === 'function'
  }

  get rules() {
    return typeof this.service?.rules?.list === 'function'
  }

  get persistentPolicies() {
    return typeof this.service?.policies?.set === 'function'
  }

  /**
   * The permission stage's decision for calling `entry` in `scope` with
   * arguments not yet known: the tool's fixed action name (or `tool:<name>`),
   * effect and base risk. Undefined when no pure decision is available (a
   * custom gate that might ask a human is never called from here).
   */
  decide(entry: RegisteredTool, scope: ToolScope): (DecisionView & { params: Dict }) | undefined {
    const { definition } = entry
    const action: ToolAction = {
      name: typeof definition.permission === 'string' && definition.permission ? definition.permission : `tool:${definition.name}`,
      effect: definition.traits?.effect ?? 'exec',
      risk: definition.traits?.risk,
    }
    const service = this.service
    try {
      if (typeof service?.decide === 'function') {
        const subject = service.subjectOf ? service.subjectOf(scope) : scope
        const result = service.decide(action, subject, { tool: definition.name, turn: scope.turn })
        const mode = result.mode ?? service.modeOf?.(subject)
        return { decision: result.decision, code: result.code, reason: result.reason, params: result.params ?? {}, ...(mode ? { mode } : {}) }
      }
      const gate = this.ctx.tools.gate
      if (gate instanceof MinimumAuthorityGate) {
        const verdict = gate.authorize({ name: definition.name, action, scope, entry } as any)
        return { decision: verdict.decision, code: verdict.code, reason: verdict.reason, params: verdict.params ?? {} }
      }
    } catch (error) {
      return { decision: 'deny', code: 'decision-error', reason: String(error?.message ?? error), params: {} }
    }
  }

  /** Every policy: those set at run time (stored by the permission service, or set from the page), then the config's. */
  async listPolicies(): Promise<PolicyView[]> {
    const rows: PolicyView[] = []
    const stored = this.persistentPolicies ? await this.service.policies.list() : this.fallbackPolicies
    const entries = Array.isArray(stored) ? stored : Object.entries(stored ?? {}).map(([pattern, policy]) => ({ pattern, policy, source: 'stored' }))
    for (const row of entries) {
      const view: PolicyView = { pattern: row.pattern, policy: row.policy, origin: row.source === 'config' ? 'config' : 'stored' }
      if ('updatedBy' in row && row.updatedBy) view.updatedBy = row.updatedBy
      rows.push(view)
    }
    if (!rows.some((row) => row.origin === 'config')) {
      for (const [pattern, policy] of Object.entries(this.ctx.tools.config.policies ?? {})) {
        rows.push({ pattern, policy, origin: 'config' })
      }
    }
    return rows
  }

  /**
   * Sets the policy of a tool-name pattern, or removes the stored policy
   * for it when `policy` is null. A stored policy takes precedence over
   * the config's policy for the same pattern. Errors of the permission
   * service (a bad pattern) propagate.
   */
  async setPolicy(pattern: string, policy: ToolPolicy | null, approver: ConsoleApprover): Promise<ActionResult> {
    if (this.persistentPolicies) {
      if (policy) {
        await this.service.policies.set(pattern, policy, approverLabel(approver))
      } else if (await this.service.policies.remove(pattern) === false) {
        return { ok: false, code: 'policy-not-found', message: `no stored policy for "${pattern}"` }
      }
    } else if (policy) {
      this.fallbackPolicies[pattern] = policy
    } else if (pattern in this.fallbackPolicies) {
      delete this.fallbackPolicies[pattern]
    } else {
      return { ok: false, code: 'policy-not-found', message: `no stored policy for "${pattern}"` }
    }
    return { ok: true, code: policy ? 'policy-set' : 'policy-removed' }
  }

  async listRules(): Promise<RuleView[]> {
    if (!this.rules) return []
    return (await this.service.rules.list()).map(plain)
  }

  async pendingApprovals(): Promise<ApprovalView[]> {
    if (!this.approvals) return []
    return (await this.service.approvals.pending()).map(approvalView)
  }

  /** Answers a pending approval; the permission service checks whether this console user may. */
  async answer(id: string, answer: ApprovalAnswer, approver: ConsoleApprover): Promise<ActionResult> {
    if (!this.approvals) return { ok: false, code: 'approvals-unavailable', message: 'no approval flow is loaded' }
    const { ok, code, message } = await this.service.approvals.answer(id, answer, approver)
    return { ok, code, message }
  }
}

/** The fields of an approval the page shows; live objects (sessions, calls) are left out. */
export function approvalView(approval: Dict): ApprovalView {
  const action = approval.action ?? {}
  const target = approval.target ?? action.target
  const requester = approval.requester ?? {}
  const time = (value: unknown) => value instanceof Date ? value.getTime() : typeof value === 'number' ? value : undefined
  const view: ApprovalView = {
    id: String(approval.id),
    tool: approval.tool,
    action: typeof action === 'string' ? action : action.name,
    target: target === undefined || target === null ? undefined : targetText(target),
    risk: approval.risk ?? action.risk,
    reason: approval.reason ?? action.reason,
    critical: !!approval.critical,
    userId: requester.userId ?? approval.userId,
    userName: approval.requesterName,
    platform: approval.place?.platform ?? requester.platform ?? approval.platform,
    channelId: approval.place?.channelId ?? requester.channelId ?? approval.channelId,
    createdAt: time(approval.createdAt),
    expiresAt: time(approval.expiresAt),
  }
  for (const key of Object.keys(view) as (keyof ApprovalView)[]) {
    if (view[key] === undefined) delete view[key]
  }
  return view
}

/** A JSON-safe copy (dates as ISO strings, no functions or cycles). */
function plain(value: Dict): Dict {
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
