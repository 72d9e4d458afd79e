import { Dict } from 'koishi'
import { ToolAction, ToolCall } from '../types'
import { normalizeAuthority } from './subject'

/**
 * The permission stage's answer after any human has been asked: the call
 * runs (`allow`) or not (`deny`, reported with `status`, default `denied`;
 * `timeout` when an approval went unanswered, `aborted` when the caller
 * gave up while waiting). `code` is stable (`mode-deny`, `rule-deny`, …);
 * `reason` is a plain English sentence for the model; `params` fill the
 * chat text `chatluna-tools.permission.<code>`.
 */
export interface PermissionVerdict {
  decision: 'allow' | 'deny'
  status?: 'denied' | 'timeout' | 'aborted'
  code: string
  reason: string
  params?: Dict
  /** Who approved the call (`platform:userId`), when a human did. */
  approvedBy?: string
}

/**
 * The pluggable permission stage of the pipeline (DESIGN.md step 5). It
 * receives the call with `call.action` computed, may wait for a human, and
 * never throws for a normal refusal. The permission service
 * (`ctx.tools.permissions`) is the gate the service installs.
 */
export interface PermissionGate {
  /** May answer synchronously; a promise when it has to wait (e.g. for a human). */
  authorize(call: ToolCall): PermissionVerdict | Promise<PermissionVerdict>
}

/** The authority level of a call's caller: the scope's, else the session user's, else 0. */
export function callerAuthority(call: Pick<ToolCall, 'scope'>): number {
  const { scope } = call
  return normalizeAuthority(scope.authority ?? (scope.session?.user as any)?.authority)
}

/** The parts of an action (the action itself when it has none). */
export function actionParts(action: ToolAction): ToolAction[] {
  return action.parts?.length ? action.parts : [action]
}
