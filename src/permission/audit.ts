import { Context, Logger } from 'koishi'
import { ToolAction } from '../types'
import { targetText } from './action'
import { AuditRow } from './database'
import { PermissionVerdict } from './gate'
import { PermissionSubject } from './subject'

const logger = new Logger('chatluna-tools')

type Database = Context['database']

/**
 * One decision of the permission service (issue 3, item 9): who, what,
 * the outcome and who approved it. Times are ms since epoch; empty fields
 * are omitted.
 */
export interface AuditEntry {
  id?: number
  time: number
  platform?: string
  userId?: string
  authority: number
  guildId?: string
  channelId?: string
  agent?: string
  tool: string
  callId?: string
  action: string
  target?: string
  risk?: string
  mode?: string
  /** The final answer: the call ran (`allow`) or not (`deny`). */
  decision: 'allow' | 'deny'
  /** `allowed`, `denied`, `timeout` (nobody answered) or `aborted` (the caller gave up while waiting). */
  status: 'allowed' | 'denied' | 'timeout' | 'aborted'
  code: string
  reason: string
  /** The approval asked, when a human was asked. */
  approval?: string
  /** `platform:userId` of whoever answered it. */
  approver?: string
  /** The answer word, after any downgrade (`always` → `once` for critical actions). */
  answer?: string
}

/**
 * What the service hands to the trail for one decision; turned into an
 * {@link AuditEntry} only when it is read or stored, so that recording
 * costs one small object on the call's hot path.
 */
export interface AuditSource {
  time: number
  subject: PermissionSubject
  tool: string
  callId?: string
  action: ToolAction
  mode?: string
  verdict: PermissionVerdict
  approval?: { id: string; approver?: string; answer?: string }
}

/** The entry of a source. */
export function auditEntry(source: AuditSource): AuditEntry {
  const { subject, action, verdict, approval } = source
  const entry: AuditEntry = {
    time: source.time,
    authority: subject.authority,
    tool: source.tool,
    action: action.name,
    decision: verdict.decision,
    status: verdict.decision === 'allow' ? 'allowed' : verdict.status ?? 'denied',
    code: verdict.code,
    reason: verdict.reason,
  }
  const optional = {
    platform: subject.platform,
    userId: subject.userId,
    guildId: subject.guildId,
    channelId: subject.channelId,
    agent: subject.agent,
    callId: source.callId,
    target: targetText(action.target),
    risk: action.risk,
    mode: source.mode,
    approval: approval?.id,
    approver: approval?.approver,
    answer: approval?.answer,
  }
  for (const key in optional) if (optional[key]) entry[key] = optional[key]
  return entry
}

const stringKeys = ['platform', 'userId', 'guildId', 'channelId', 'agent', 'callId', 'target', 'risk', 'mode', 'approval', 'approver', 'answer'] as const

function toRow(entry: AuditEntry): Omit<AuditRow, 'id'> {
  const row: any = { ...entry, time: new Date(entry.time) }
  delete row.id
  for (const key of stringKeys) row[key] = entry[key] ?? ''
  return row
}

function fromRow(row: AuditRow): AuditEntry {
  const entry: any = { ...row, time: +new Date(row.time) }
  for (const key of stringKeys) if (!entry[key]) delete entry[key]
  return entry
}

/** Most entries kept in memory (without a database, or as the fallback when writing fails). */
export const memoryAuditLimit = 1000

/**
 * The audit trail: the table `chatluna_tools_audit` when a database is
 * loaded (the oldest rows beyond `size` are deleted every 100 entries),
 * else the last entries in memory until the process ends. Writing never
 * delays a call; `list` waits for writes still under way.
 */
export class AuditTrail {
  private memory: AuditSource[] = []
  private next = 0
  private database?: Database
  private writing: Promise<void> = Promise.resolve()
  private written = 0

  constructor(private size: () => number) {}

  /**
   * Adds one decision: kept in memory (the last `min(size, 1000)`) and,
   * with a database, queued for writing; never throws or waits.
   */
  record(source: AuditSource) {
    // A ring buffer: `next` is where the next entry goes once the buffer is full.
    const limit = Math.min(this.size(), memoryAuditLimit)
    if (this.memory.length < limit) {
      this.memory.push(source)
    } else {
      this.memory[this.next % limit] = source
      this.next = (this.next + 1) % limit
    }
    const database = this.database
    if (!database) return
    this.writing = this.writing.then(async () => {
      const row = await database.create('chatluna_tools_audit', toRow(auditEntry(source)))
      if (++this.written % 100 === 0 && row.id > this.size()) {
        await database.remove('chatluna_tools_audit', { id: { $lte: row.id - this.size() } })
      }
    }).catch((error) => {
      logger.warn('could not write the audit trail: %s', error)
    })
  }

  /** The newest `limit` entries, newest first. */
  async list(limit = 20): Promise<AuditEntry[]> {
    limit = Math.max(1, Math.floor(limit) || 1)
    const database = this.database
    if (database) {
      await this.writing
      const rows = await database.get('chatluna_tools_audit', {}, { sort: { id: 'desc' }, limit })
      return rows.map(fromRow)
    }
    const ordered = this.memory.slice(this.next).concat(this.memory.slice(0, this.next))
    return ordered.slice(-limit).reverse().map(auditEntry)
  }

  /** Writes and reads entries through the database from now on. */
  attach(database: Database) {
    this.database = database
  }

  /** Stops using the database; new entries are kept in memory only. */
  detach() {
    this.database = undefined
  }
}
