import { resolve } from 'path'
import { Awaitable, Context, Service, Session } from 'koishi'
import { Config } from './config'
import {
  DefineOptions, ToolCall, ToolCallLogEntry, ToolCallRequest, ToolDefinition, ToolEntry, ToolOwner,
  ToolProgress, ToolResult, ToolScope,
} from './types'
import { RegisteredTool, ToolRegistry } from './registry/registry'
import { VisibilityChain } from './visibility/chain'
import { OwnerStates } from './visibility/owners'
import { explainTool, ToolExplanation } from './visibility/explain'
import { PolicyTable } from './permission/policy'
import { PermissionGate } from './permission/gate'
import { PermissionService } from './permission/service'
import type { Approval, ApprovalAnswer } from './permission/approvals'
import { Pipeline } from './pipeline/pipeline'
import { formatForModel } from './pipeline/result'
import { renderReply } from './commands/reply'
import { emitEvent, plainLifecycle } from './pipeline/hooks'
import { DeclarationOptions, modeDeclarations, resolveMode, toDialect, ToolMode } from './modes'
import { SearchMode } from './modes/search'
import type { AgentRunner } from './agent/runner'
import { McpManager } from './mcp/manager'
import { localesFor } from './permission/texts'
import { createSkillManager, SkillManager } from './skills'

declare module 'koishi' {
  interface Context {
    tools: ToolService
  }

  interface Events {
    /**
     * Before a tool runs, in registration order, on the mutable call. Return
     * a reason to block the call; change `call.args` to rewrite it (the new
     * arguments are validated and authorised again). A throwing listener
     * blocks the call.
     */
    'chatluna/tool-before'(call: ToolCall): Awaitable<void | string>
    /** After a tool ran: may change `result.content` and push to `result.messages`. */
    'chatluna/tool-after'(call: ToolCall, result: ToolResult): Awaitable<void>
    /** A running tool reported progress. */
    'chatluna/tool-progress'(event: ToolProgress): void
    /** A call finished (any status). */
    'chatluna/tool-call'(entry: ToolCallLogEntry, result: ToolResult): void
    /** Tools were defined or removed, or an owner was switched on or off. */
    'chatluna/tools-changed'(): void
    /** The permission service posted an approval request and waits for an answer. */
    'chatluna/approval-requested'(approval: Approval): void
    /** An approval was answered (`answer` after any downgrade). */
    'chatluna/approval-answered'(approval: Approval, answer: ApprovalAnswer): void
  }
}

/** Finished calls kept in memory for `history` (newest last). */
export const historySize = 200

/**
 * The tool service, `ctx.tools` (DESIGN.md "The service"). Tools defined
 * through it belong to the calling plugin and disappear when that plugin is
 * disposed.
 */
export class ToolService extends Service {
  readonly registry = new ToolRegistry()
  readonly owners = new OwnerStates()
  readonly policies: PolicyTable
  readonly visibility: VisibilityChain
  readonly pipeline: Pipeline
  /** The permission service: decisions, rules, policies, approvals, audit (issue 3). */
  readonly permissions: PermissionService
  /** The permission stage of the pipeline; the permission service by default. */
  gate: PermissionGate
  /** The agent runner while `agent.enabled` (issue "Agent runner"); undefined otherwise. */
  agent?: AgentRunner
  /** The most recent finished calls, oldest first. */
  readonly history: ToolCallLogEntry[] = []
  /** Search mode: deferred tools, the ranker, tools loaded per conversation (DESIGN.md "Modes"). */
  readonly searchMode: SearchMode
  /** MCP servers as tools, and these tools as an MCP provider (issue "MCP"). */
  readonly mcp: McpManager
  /** The skill system: SKILL.md files, their catalog and enabled states. */
  readonly skills: SkillManager

  /** The service's own context (the plugin's); `this.ctx` in a method is the caller's. */
  readonly app: Context

  constructor(ctx: Context, public config: Config) {
    super(ctx, 'tools', true)
    this.app = ctx
    // Cordis wraps every read of `ctx.tools.x` in a tracing proxy; when the
    // service has an own `ctx` property, each read also builds a shadow
    // context (an object and a proxy, microseconds per call). Methods here
    // use `this.app` for the service's own context and `this.ctx` only for
    // the caller's, which the proxy supplies either way, so the own property
    // is replaced by the prototype getter below.
    delete (this as any).ctx
    this.policies = new PolicyTable(config.policies)
    const lifecycle = plainLifecycle(ctx)
    this.permissions = new PermissionService(ctx, config, this.policies, lifecycle)
    this.gate = this.permissions
    this.visibility = new VisibilityChain({
      scenes: () => this.config.scenes,
      policies: this.policies,
      owners: this.owners,
    })
    this.searchMode = new SearchMode({ registry: this.registry, visibility: this.visibility, config: () => this.config })
    ctx.on('dispose', () => this.searchMode.dispose())
    this.pipeline = new Pipeline({
      lifecycle,
      registry: this.registry,
      visibility: this.visibility,
      gate: () => this.gate,
      timeout: () => this.config.timeout,
      hookTimeout: () => this.config.hookTimeout ?? 10000,
      maxOutputLength: () => this.config.maxOutputLength,
      outputDir: () => this.outputDir,
      loaded: (name, scope) => this.searchMode.isLoaded(scope, name),
      isModeTool: (entry) => this.searchMode.isModeTool(entry),
      record: (entry, result) => {
        this.history.push(entry)
        if (this.history.length > historySize) this.history.shift()
        emitEvent(lifecycle, 'chatluna/tool-call', [entry, result])
      },
    })
    this.mcp = new McpManager(ctx, this, () => this.config.mcp)
    const changed = () => this.app.emit('chatluna/tools-changed')
    this.skills = createSkillManager(ctx, config, this.owners, changed)
    ctx.effect(() => this.registry.subscribe(changed))
    ctx.effect(() => this.owners.subscribe(changed))
  }

  /** The caller's context inside a method called through `ctx.tools`; the service's own otherwise. */
  // @ts-ignore: an accessor where the base class declares a field
  get ctx(): Context {
    return this.app
  }

  /** Absolute directory of this plugin's data: `<baseDir>/data/chatluna-tools`. */
  get dataDir() {
    return resolve(this.app.baseDir, 'data/chatluna-tools')
  }

  /** Absolute directory where oversized outputs are spooled. */
  get outputDir() {
    return resolve(this.dataDir, 'outputs')
  }

  /**
   * Registers a tool for the calling plugin. Throws a `TypeError` for an
   * illegal name, a definition without `run`/`forward` or without a string
   * `description`, an unknown `options.source`, or raw `parameters` nested
   * more than 64 levels deep. Returns a disposer; the
   * tool is also removed when the calling plugin is disposed.
   */
  define<A = any>(definition: ToolDefinition<A>, options?: DefineOptions): () => void {
    const caller = this.ctx
    // Tools the service defines itself (MCP servers' tools) belong to this plugin.
    const plugin = caller === this.app ? 'chatluna-tools' : undefined
    return caller.effect(() => {
      const entry = this.registry.add(caller, definition, options, plugin)
      return () => this.registry.remove(entry)
    })
  }

  /** The active tool of that exact name, or undefined. */
  get(name: string): ToolEntry | undefined {
    return this.registry.get(name)
  }

  /**
   * The scope of a chat session: platform, guild, channel, user, private,
   * authority (`session.user.authority`, 0 without a user record) and
   * locale, plus `extra` (agent, tool set, …).
   */
  scope(session?: Session, extra: Partial<ToolScope> = {}): ToolScope {
    if (!session) return { authority: 0, ...extra }
    const authority = (session.user as any)?.authority
    return {
      session,
      platform: session.platform,
      guildId: session.guildId,
      channelId: session.channelId,
      userId: session.userId,
      private: session.isDirect,
      authority: typeof authority === 'number' ? authority : 0,
      locale: this.locales(session).find(Boolean),
      ...extra,
    }
  }

  /**
   * Tools visible in a scope, in name order (DESIGN.md "Visibility").
   * Mode tools (`tool_search`) are part of a mode, not tools to choose, and
   * are left out.
   */
  list(scope: ToolScope = {}): ToolEntry[] {
    return this.registry.active().filter((entry) => !this.searchMode.isModeTool(entry) && this.visibility.isVisible(entry, scope))
  }

  /** Why a tool is or is not visible in a scope, layer by layer, with shadowing. */
  explain(name: string, scope: ToolScope = {}): ToolExplanation {
    // Names offered as similar to an unknown one: not tool_search, which is part of a mode.
    const candidates = this.registry.get(name)
      ? undefined
      : this.registry.active().filter((entry) => !this.searchMode.isModeTool(entry)).map((entry) => entry.definition.name)
    return explainTool(this.registry, this.visibility, name, scope, candidates)
  }

  /**
   * Exactly what the model is shown in a scope, in `mode` (default: the
   * config's `mode`, default `auto`). Throws a `TypeError` for an unknown
   * mode or dialect.
   */
  declarations(scope: ToolScope = {}, options: DeclarationOptions = {}): any[] {
    const { dialect = 'openai' } = options
    const locales = options.locales ?? this.scopeLocales(scope)
    const entries = this.list(scope) as RegisteredTool[]
    const mode = resolveMode(options.mode ?? this.config.mode, entries.length, this.config.searchThreshold)
    return toDialect(modeDeclarations(mode, entries, scope, locales, this.searchMode), dialect)
  }

  /** The concrete mode (`native` or `search`) that `declarations` uses in a scope for `mode` (default: the config's). */
  modeFor(scope: ToolScope = {}, mode: ToolMode = this.config.mode): 'native' | 'search' {
    return resolveMode(mode, this.list(scope).length, this.config.searchThreshold) as 'native' | 'search'
  }

  /** Runs one call through the whole pipeline; never throws for tool faults. */
  call(request: ToolCallRequest): Promise<ToolResult> {
    return this.pipeline.call(request)
  }

  /** The text a model reads for a result. */
  format(result: ToolResult) {
    return formatForModel(result)
  }

  /**
   * The chat reply for a result, in the session's language (what
   * `tools.call` replies): the tool's `render.result` on success, else the
   * result text with a localized status. `args` are passed to `render`.
   */
  reply(session: Session | undefined, result: ToolResult, args?: unknown) {
    return renderReply(this, session, result, args)
  }

  /** Switches a skill or MCP server on or off (visibility layer 5). */
  setOwnerEnabled(owner: ToolOwner, enabled: boolean) {
    this.owners.setEnabled(owner, enabled)
  }

  /** Locales of a session, most preferred first, ending with the app's fallbacks. */
  locales(session?: Session): string[] {
    const preferred = [(session?.user as any)?.locales, (session?.channel as any)?.locales].flat().filter(Boolean)
    return this.app.i18n.fallback(preferred)
  }

  /** Locales of a scope for descriptions: its `locale`, then the app's fallbacks. */
  scopeLocales(scope: ToolScope) {
    return localesFor(this.app, scope.locale)
  }
}
