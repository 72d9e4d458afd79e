import { realpathSync } from 'fs'
import { basename, dirname, join, resolve } from 'path'
import { Context, Logger } from 'koishi'
import { Config } from '../config'
import { ToolAction, ToolCall, ToolScope } from '../types'
import { Lifecycle } from '../pipeline/hooks'
import { sceneMatches } from '../visibility/scene'
import { ApprovalManager } from './approvals'
import { AuditEntry, AuditTrail } from './audit'
import { extendPermissionModels } from './database'
import { decideAction, PermissionDecision } from './decision'
import { PermissionGate, PermissionVerdict } from './gate'
import { isPermissionMode, modeRank, PermissionMode, permissionModes, strictestMode } from './modes'
import { PolicyTable } from './policy'
import { PolicyStore } from './policy-store'
import { RuleStore } from './rule-store'
import { SceneModeStore } from './scene-modes'
import { agentChain, PermissionSubject, subjectOf } from './subject'
import type { Approval } from './approvals'

const logger = new Logger('chatluna-tools')

/**
 * The real path of a directory (`fs.realpathSync`), or of its nearest
 * existing ancestor with the missing tail appended; `exists` says whether
 * the directory itself exists.
 */
function realDirectory(path: string): { path: string; exists: boolean } {
  const tail: string[] = []
  let current = path
  for (;;) {
    try {
      return { path: join(realpathSync(current), ...tail), exists: !tail.length }
    } catch {
      const parent = dirname(current)
      if (parent === current) return { path, exists: false }
      tail.unshift(basename(current))
      current = parent
    }
  }
}

/** The configured mode of an authority level (issue 3 defaults: 0–2 read-only, 3–4 auto, 5 allow). */
function levelMode(config: Config, authority: number): PermissionMode {
  const level = Math.max(0, Math.min(5, authority)) as 0 | 1 | 2 | 3 | 4 | 5
  const mode = config.levelModes?.[level]
  return isPermissionMode(mode) ? mode : level >= 5 ? 'allow' : level >= 3 ? 'auto' : 'read-only'
}

/** Options of `decide`. */
export interface DecideOptions {
  /** The tool name, for its policy. */
  tool?: string
  /** The agent turn, for `turn` grants. */
  turn?: string
  /** Judge with this mode instead of the subject's. */
  mode?: PermissionMode
  /** The time to judge at (ms since epoch); default now. */
  now?: number
}

/** One layer of `modeOf`, for `tools.mode` and the console. */
export interface ModeLayer {
  source: 'level' | 'plugin' | 'agent' | 'scene' | 'channel'
  mode: PermissionMode
  /** The agent id or scene rule name. */
  name?: string
}

/** The mode of a subject with the layers it came from. */
export interface ModeExplanation {
  mode: PermissionMode
  layers: ModeLayer[]
  /** `allow` was asked for by every layer but the subject is below level 5, so it became `auto`. */
  downgraded: boolean
}

/**
 * The permission service, `ctx.tools.permissions` (issue 3; DESIGN.md
 * "Permissions"): the gate of pipeline step 5. It decides from levels,
 * modes, risk, rules and policies, asks a human in chat when the decision
 * is `ask`, and keeps an audit trail. Rules, policies, channel modes and
 * the audit trail are stored in the database when one is loaded, else kept
 * in memory for the life of the process.
 */
export class PermissionService implements PermissionGate {
  readonly rules = new RuleStore()
  readonly policies: PolicyStore
  readonly sceneModes = new SceneModeStore()
  readonly approvals: ApprovalManager
  private trail: AuditTrail
  private loading?: Promise<void>
  private workDirCache = { from: '', to: [] as string[], real: false, checkedAt: 0 }

  constructor(private ctx: Context, private config: Config, private table: PolicyTable, lifecycle: Lifecycle) {
    this.policies = new PolicyStore(table, () => this.config.policies)
    this.trail = new AuditTrail(() => this.config.auditSize ?? 10000)
    this.approvals = new ApprovalManager({
      ctx,
      lifecycle,
      rules: this.rules,
      timeout: () => this.config.approvalTimeout ?? 120000,
      approverAuthority: () => this.config.approverAuthority ?? 3,
    })
    ctx.effect(() => this.policies.install())
    ctx.effect(() => this.policies.subscribe(() => ctx.emit('chatluna/tools-changed')))
    ctx.effect(() => () => this.approvals.dispose())
    ctx.inject(['database'], (ctx) => {
      extendPermissionModels(ctx)
      const database = ctx.database
      const loading = this.loading = (async () => {
        await this.rules.attach(database)
        await this.policies.attach(database)
        await this.sceneModes.attach(database)
        this.trail.attach(database)
      })().catch((error) => {
        logger.warn('could not load permission rules and policies from the database: %s', error)
      }).finally(() => {
        if (this.loading === loading) this.loading = undefined
      })
      ctx.on('dispose', () => {
        this.rules.detach()
        this.policies.detach()
        this.sceneModes.detach()
        this.trail.detach()
      })
    })
  }

  /** Resolves when the stored rules and policies are loaded (at once without a database). */
  async ready() {
    while (this.loading) await this.loading
  }

  /** The absolute workDir of the built-in file tools (for `files` mode and path rules), symbolic links resolved. */
  get workDir() {
    return this.workDirs[0]
  }

  /**
   * The spellings of the workDir path targets are compared with: its real
   * path (the built-in tools name real paths), then the configured path
   * when a symbolic link lies on the way. Cached; while the directory does
   * not exist yet, looked up again at most once a second.
   */
  get workDirs(): readonly string[] {
    return this.workDirsAt(Date.now())
  }

  /** {@link workDirs} as of `now` (ms since epoch), so that one decision reads the clock once. */
  private workDirsAt(now: number): readonly string[] {
    const from = this.config.workDir
    const cache = this.workDirCache
    if (cache.from !== from || (!cache.real && now - cache.checkedAt > 1000)) {
      const configured = resolve(this.ctx.baseDir, from)
      const real = realDirectory(configured)
      this.workDirCache = { from, to: real.path === configured ? [configured] : [real.path, configured], real: real.exists, checkedAt: now }
    }
    return this.workDirCache.to
  }

  /** The subject of a scope (missing authority → 0). */
  subjectOf(scope: ToolScope): PermissionSubject {
    return subjectOf(scope)
  }

  /**
   * The mode of a subject: the same answer as {@link explainMode} without
   * listing the layers (it runs on every call).
   */
  modeOf(subject: PermissionSubject): PermissionMode {
    const config = this.config
    let rank = Math.min(modeRank(levelMode(config, subject.authority)), modeRank(config.defaultMode))
    // The agents of agentChain(subject), without building that list on every call.
    for (const agent of subject.delegatedBy ?? []) rank = Math.min(rank, modeRank(config.agentModes?.[agent]))
    if (subject.agent) rank = Math.min(rank, modeRank(config.agentModes?.[subject.agent]))
    for (const rule of config.scenes ?? []) {
      if (rule.mode && sceneMatches(rule, subject)) rank = Math.min(rank, modeRank(rule.mode))
    }
    rank = Math.min(rank, modeRank(this.sceneModes.get(subject.platform, subject.channelId)))
    if (rank === 3 && subject.authority < 5) rank = 2
    return permissionModes[rank]
  }

  /**
   * The layered mode (issue 3, item 3): the per-level default, the plugin
   * default, the agent's mode (and the modes of the agents that delegated
   * to it), matching scene rules and the mode set for
   * the channel with `tools.mode`; the strictest wins. `allow` is only
   * for level 5: anyone lower gets `auto`.
   */
  explainMode(subject: PermissionSubject): ModeExplanation {
    const config = this.config
    const layers: ModeLayer[] = []
    layers.push({ source: 'level', mode: levelMode(config, subject.authority) })
    if (isPermissionMode(config.defaultMode)) layers.push({ source: 'plugin', mode: config.defaultMode })
    for (const agent of agentChain(subject)) {
      const agentMode = config.agentModes?.[agent]
      if (isPermissionMode(agentMode)) layers.push({ source: 'agent', mode: agentMode, name: agent })
    }
    const scenes = config.scenes ?? []
    scenes.forEach((rule, index) => {
      if (isPermissionMode(rule.mode) && sceneMatches(rule, subject)) {
        layers.push({ source: 'scene', mode: rule.mode, name: rule.name || `#${index + 1}` })
      }
    })
    const stored = this.sceneModes.get(subject.platform, subject.channelId)
    if (stored) layers.push({ source: 'channel', mode: stored })
    let mode = strictestMode(layers.map((layer) => layer.mode))
    const downgraded = mode === 'allow' && subject.authority < 5
    if (downgraded) mode = 'auto'
    return { mode, layers, downgraded }
  }

  /**
   * The pure decision (issue 3, item 1): `allow`, `ask` or `deny` with a
   * reason, for an action and a subject — nothing is asked, stored or
   * audited. The console uses it for "would be denied" badges.
   */
  decide(action: ToolAction, subject: PermissionSubject, options: DecideOptions = {}): PermissionDecision {
    return this.decideAt(Date.now(), action, subject, options)
  }

  /** {@link decide} with the clock already read (`clock`, ms since epoch); `options.now` still sets the time rules are judged at. */
  private decideAt(clock: number, action: ToolAction, subject: PermissionSubject, options: DecideOptions): PermissionDecision {
    return decideAction(action, subject, {
      rules: this.rules.live(),
      mode: options.mode ?? this.modeOf(subject),
      policy: options.tool ? this.table.resolve(options.tool) : undefined,
      tool: options.tool,
      workDir: this.workDirsAt(clock),
      now: options.now ?? clock,
      turn: options.turn,
    })
  }

  /**
   * The gate (pipeline step 5): decides, asks a human when the decision is
   * `ask` (posting an approval and waiting; status `timeout` when nobody
   * answers in time), uses up `once` rules, and records the outcome in the
   * audit trail. Synchronous unless it waits for the database or a human.
   */
  authorize(call: ToolCall): PermissionVerdict | Promise<PermissionVerdict> {
    if (this.loading) return this.ready().then(() => this.authorize(call))
    const subject = subjectOf(call.scope)
    const action = call.action ?? { name: `tool:${call.name}` }
    // One clock read for the rules' expiry, the workDir cache and the audit entry.
    const now = Date.now()
    const decision = this.decideAt(now, action, subject, { tool: call.name, turn: call.scope.turn })
    if (decision.decision === 'ask') {
      return this.approvals.request(call, subject, decision).then(({ verdict, approval }) => {
        if (verdict.decision === 'allow') this.useUp(decision)
        this.record(Date.now(), call, action, subject, decision, verdict, approval)
        return verdict
      })
    }
    if (decision.decision === 'allow') this.useUp(decision)
    // The decision is a verdict already (allow or deny, code, reason, params).
    this.record(now, call, action, subject, decision, decision as PermissionVerdict)
    return decision as PermissionVerdict
  }

  /** The newest `limit` audit entries, newest first (issue 3, item 9). */
  audit(limit = 20): Promise<AuditEntry[]> {
    return this.trail.list(limit)
  }

  /** `once` rules that decided a part of a call that runs are used up. */
  private useUp(decision: PermissionDecision) {
    for (const part of decision.parts) if (part.rule?.validity === 'once') this.rules.consume(part.rule)
  }

  /** Adds the audit entry of a decision made at `time` (ms since epoch). */
  private record(time: number, call: ToolCall, action: ToolAction, subject: PermissionSubject, decision: PermissionDecision, verdict: PermissionVerdict, approval?: Approval) {
    this.trail.record({
      time,
      subject,
      tool: call.name,
      callId: call.id,
      action,
      mode: decision.mode,
      verdict,
      approval,
    })
  }
}
