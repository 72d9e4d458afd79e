import { Dict } from 'koishi'
import { ToolCall } from '../types'

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
