import { Dict } from 'koishi'
import { ToolAction, ToolCall } from '../types'

/**
 * The permission stage's answer after any human has been asked: the call
 * runs (`allow`) or not (`deny`, reported with `status`, default `denied`).
 * `code` is stable (`insufficient-authority`, `rule-deny`, …); `reason` is a
 * plain English sentence for the model; `params` fill the chat text
 * `chatluna-tools.permission.<code>`.
 */
export interface PermissionVerdict {
  decision: 'allow' | 'deny'
  status?: 'denied' | 'timeout'
  code: string
  reason: string
  params?: Dict
  /** Who approved the call, when a human did. */
  approvedBy?: string
}

/**
 * The pluggable permission stage of the pipeline (DESIGN.md step 5). It
 * receives the call with `call.action` computed, may wait for a human, and
 * never throws for a normal refusal.
 */
export interface PermissionGate {
  /** May answer synchronously; a promise when it has to wait (e.g. for a human). */
  authorize(call: ToolCall): PermissionVerdict | Promise<PermissionVerdict>
}

/** The authority level of a call's caller: the scope's, else the session user's, else 0. */
export function callerAuthority(call: Pick<ToolCall, 'scope'>): number {
  const { scope } = call
  const value = scope.authority ?? (scope.session?.user as any)?.authority
  return typeof value === 'number' && Number.isFinite(value) ? value : 0
}

/** The parts of an action (the action itself when it has none). */
export function actionParts(action: ToolAction): ToolAction[] {
  return action.parts?.length ? action.parts : [action]
}

/**
 * The gate used until the permission service is loaded: a tool's own
 * `deny` verdict denies; an `ask` verdict or a `critical` risk is denied too,
 * since this gate cannot ask anyone; otherwise `read` effects pass and
 * `write` and `exec` need the configured minimum authority (default 3). A
 * caller without a user record counts as level 0.
 */
export class MinimumAuthorityGate implements PermissionGate {
  constructor(private minAuthority: () => number) {}

  authorize(call: ToolCall): PermissionVerdict {
    const action = call.action ?? { name: `tool:${call.name}` }
    for (const part of actionParts(action)) {
      if (part.verdict === 'deny') {
        return { decision: 'deny', code: 'tool-deny', reason: part.reason || `the tool refuses ${part.name}`, params: { action: part.name } }
      }
    }
    for (const part of actionParts(action)) {
      if (part.verdict === 'ask' || part.risk === 'critical') {
        return {
          decision: 'deny',
          code: 'approval-unavailable',
          reason: `${part.reason || `${part.name} needs a human approval`}, and no approval flow is loaded`,
          params: { action: part.name },
        }
      }
    }
    const effect = action.effect ?? 'exec'
    if (effect === 'read') return { decision: 'allow', code: 'read', reason: 'reading is allowed' }
    const level = callerAuthority(call)
    const needed = this.minAuthority()
    if (level >= needed) return { decision: 'allow', code: 'authority', reason: `authority ${level} may ${effect}` }
    return {
      decision: 'deny',
      code: 'insufficient-authority',
      reason: `this tool has effect "${effect}" and needs authority ${needed}; the caller has authority ${level}`,
      params: { effect, needed, level },
    }
  }
}
