import { Context } from 'koishi'

/** A stored permission rule (see `PermissionRule`); empty strings stand for "not set". */
export interface RuleRow {
  id: string
  effect: string
  action: string
  target: string
  exact: boolean
  validity: string
  expiresAt: Date
  userId: string
  platform: string
  guildId: string
  channelId: string
  agent: string
  kind: string
  minLevel: number
  maxLevel: number
  final: boolean
  createdAt: Date
  createdBy: string
  source: string
  approval: string
}

/** A stored tool policy (issue 3, item 6). */
export interface PolicyRow {
  pattern: string
  policy: string
  updatedAt: Date
  updatedBy: string
}

/** The mode set with `tools.mode` for one channel. */
export interface SceneModeRow {
  platform: string
  channelId: string
  mode: string
  updatedAt: Date
  updatedBy: string
}

/** One entry of the audit trail (issue 3, item 9). */
export interface AuditRow {
  id: number
  time: Date
  platform: string
  userId: string
  authority: number
  guildId: string
  channelId: string
  agent: string
  tool: string
  callId: string
  action: string
  target: string
  risk: string
  mode: string
  decision: string
  status: string
  code: string
  reason: string
  approval: string
  approver: string
  answer: string
}

declare module 'koishi' {
  interface Tables {
    chatluna_tools_rule: RuleRow
    chatluna_tools_policy: PolicyRow
    chatluna_tools_scene_mode: SceneModeRow
    chatluna_tools_audit: AuditRow
  }
}

/** Declares the permission tables (minato models); call inside `ctx.inject(['database'], …)`. */
export function extendPermissionModels(ctx: Context) {
  ctx.model.extend('chatluna_tools_rule', {
    id: 'string(16)',
    effect: 'string(8)',
    action: 'string(200)',
    target: 'string(500)',
    exact: 'boolean',
    validity: 'string(16)',
    expiresAt: { type: 'timestamp', nullable: true },
    userId: 'string(255)',
    platform: 'string(255)',
    guildId: 'string(255)',
    channelId: 'string(255)',
    agent: 'string(255)',
    kind: 'string(8)',
    minLevel: { type: 'integer', nullable: true },
    maxLevel: { type: 'integer', nullable: true },
    final: 'boolean',
    createdAt: 'timestamp',
    createdBy: 'string(255)',
    source: 'string(16)',
    approval: 'string(16)',
  }, { primary: 'id' })

  ctx.model.extend('chatluna_tools_policy', {
    pattern: 'string(255)',
    policy: 'string(16)',
    updatedAt: 'timestamp',
    updatedBy: 'string(255)',
  }, { primary: 'pattern' })

  ctx.model.extend('chatluna_tools_scene_mode', {
    platform: 'string(255)',
    channelId: 'string(255)',
    mode: 'string(16)',
    updatedAt: 'timestamp',
    updatedBy: 'string(255)',
  }, { primary: ['platform', 'channelId'] })

  ctx.model.extend('chatluna_tools_audit', {
    id: 'unsigned',
    time: 'timestamp',
    platform: 'string(255)',
    userId: 'string(255)',
    authority: 'integer',
    guildId: 'string(255)',
    channelId: 'string(255)',
    agent: 'string(255)',
    tool: 'string(64)',
    callId: 'string(255)',
    action: 'string(200)',
    target: 'text',
    risk: 'string(16)',
    mode: 'string(16)',
    decision: 'string(8)',
    status: 'string(16)',
    code: 'string(64)',
    reason: 'text',
    approval: 'string(16)',
    approver: 'string(255)',
    answer: 'string(16)',
  }, { autoInc: true })
}
