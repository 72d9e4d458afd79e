import { Context, Dict } from 'koishi'
import { ToolScope } from '../types'
import { RegisteredTool } from '../registry/registry'
import { LayerVerdict } from '../visibility/chain'
import { sceneLabel } from '../visibility/scene'
import { explanationLines } from '../visibility/explain'
import { describeTool } from '../modes'
import { ConsolePermissions } from './permissions'
import { localesFor } from '../permission/texts'
import {
  CallView, ConsoleFeatures, DeclarationsView, LayerView, RemovalView, ScopeReport, ScopeVerdict, ToolDetail, ToolRow, ToolTable,
} from './types'

/** Modes the page offers when the service accepts them (tool-system seed, "三种工具模式"). */
export const candidateModes = ['auto', 'native', 'search', 'code']

/** The declaration dialect the page shows (the byte size is that of this JSON). */
export const consoleDialect = 'openai'

/**
 * Builds the console's views of the tool service: the tool table, a scope's
 * verdicts and declarations, one tool's detail. Texts are rendered with the
 * plugin's locale files in the page's locale.
 */
export class ConsoleViews {
  private modes: string[]

  constructor(private ctx: Context, private permissions: ConsolePermissions) {}

  /** Every registered entry (shadowed ones too), in name order, active first. */
  rows(): ToolRow[] {
    // One read of `ctx.tools` (a proxy) for the whole table.
    const tools = this.ctx.tools
    return tools.registry.names().flatMap((name) => this.rowsOf(name, tools))
  }

  /** The registered entries of one name, active first. */
  private rowsOf(name: string, tools = this.ctx.tools): ToolRow[] {
    const { registry, owners, policies, config, searchMode } = tools
    const shadowed = new Map(registry.shadowed(name).map((info) => [info.entry, info]))
    const policy = policies.resolve(name)
    return registry.all(name).map((entry) => {
      const { definition } = entry
      const traits = definition.traits ?? {}
      const effect = traits.effect ?? 'exec'
      const info = shadowed.get(entry)
      const row: ToolRow = {
        name,
        active: !info,
        source: entry.source,
        plugin: entry.plugin,
        description: definition.description,
        effect,
        parallel: traits.parallel ?? effect === 'read',
        timeout: traits.timeout ?? config.timeout,
        background: !!traits.background,
        deferred: searchMode.isDeferred(entry),
        modeTool: searchMode.isModeTool(entry),
      }
      if (traits.risk) row.risk = traits.risk
      if (definition.owner) row.owner = { ...definition.owner, enabled: owners.isEnabled(definition.owner) }
      if (info) row.shadowedBy = { source: info.by.source, plugin: info.by.plugin, reason: info.reason }
      if (policy) row.policy = { policy: policy.policy, pattern: policy.pattern }
      return row
    })
  }

  /** Modes `declarations` accepts; probed once, since modes are code, not configuration. */
  availableModes(): string[] {
    return this.modes ??= candidateModes.filter((mode) => {
      try {
        this.ctx.tools.declarations({}, { mode: mode as any, dialect: consoleDialect })
        return true
      } catch (error) {
        return !/unknown tool mode/.test(String(error?.message))
      }
    })
  }

  /** What the page can offer with the services loaded now. */
  features(): ConsoleFeatures {
    return {
      persistentPolicies: this.permissions.persistentPolicies,
      modes: this.availableModes(),
      defaultMode: this.ctx.tools.config.mode,
    }
  }

  /** The tool table of data service `chatluna-tools`: rows, policies, features, and the platforms and scene labels of the scope bar. */
  async table(): Promise<ToolTable> {
    const scenes = this.ctx.tools.config.scenes ?? []
    const platforms = new Set<string>()
    for (const bot of this.ctx.bots) platforms.add(bot.platform)
    for (const rule of scenes) if (rule.platform) platforms.add(rule.platform)
    return {
      tools: this.rows(),
      policies: this.permissions.listPolicies(),
      features: this.features(),
      platforms: [...platforms].sort(),
      scenes: scenes.map(sceneLabel),
    }
  }

  /** The most recent `limit` finished calls, newest first. */
  recentCalls(limit: number): CallView[] {
    return this.ctx.tools.history.slice(-limit).reverse()
  }

  /** Locales for texts: the page's first, then the app's fallbacks. */
  locales(locale?: string) {
    return localesFor(this.ctx, locale)
  }

  private text(locales: string[], path: string, params: Dict = {}) {
    return this.ctx.i18n.text(locales, [`chatluna-tools.${path}`], params)
  }

  /** Whether a locale of the chain has a text at `chatluna-tools.<path>` (texts of later issues may be missing). */
  private hasText(locales: string[], path: string) {
    const data = (this.ctx.i18n as any)._data ?? {}
    return locales.some((locale) => data[locale]?.[`chatluna-tools.${path}`] !== undefined)
  }

  /** A hiding layer's verdict with its sentence. */
  removal(verdict: LayerVerdict, locales: string[]): RemovalView {
    const params = { ...verdict.params }
    if (verdict.code === 'owner-disabled') params.kind = this.text(locales, `owner.${params.kind}`)
    return {
      layer: verdict.layer,
      code: verdict.code,
      params: verdict.params ?? {},
      layerText: this.text(locales, `layer.${verdict.layer}`),
      text: this.text(locales, `visibility.${verdict.code}`, params),
    }
  }

  /** Whether a tool is visible in a scope (else the first layer that hid it) and the permission decision, with texts in `locales`. */
  verdict(entry: RegisteredTool, scope: ToolScope, locales: string[]): ScopeVerdict {
    const failure = this.ctx.tools.visibility.firstFailure(entry, scope)
    const verdict: ScopeVerdict = { visible: !failure }
    if (failure) verdict.removedBy = this.removal(failure, locales)
    const { params, ...decision } = this.permissions.decide(entry, scope)
    const path = `permission.${decision.code}`
    if (this.hasText(locales, path)) decision.text = this.text(locales, path, { tool: entry.definition.name, ...params })
    verdict.decision = decision
    return verdict
  }

  /**
   * Exactly what the model gets in a scope and mode (default: the config's),
   * with UTF-8 byte sizes. The scope has no conversation, so search mode
   * shows what a conversation starts with: no tool loaded yet.
   */
  declarations(scope: ToolScope, requested: string | undefined, locales: string[]): DeclarationsView {
    const mode = requested ?? this.ctx.tools.config.mode
    try {
      const list = this.ctx.tools.declarations(scope, { mode: mode as any, dialect: consoleDialect, locales })
      const resolved = mode === 'auto' ? this.ctx.tools.modeFor(scope, mode) : mode
      const items = list.map((declaration) => ({
        name: declaration.function?.name ?? declaration.name,
        bytes: Buffer.byteLength(JSON.stringify(declaration)),
      }))
      const json = JSON.stringify(list)
      return {
        mode,
        resolved,
        dialect: consoleDialect,
        count: list.length,
        bytes: Buffer.byteLength(json),
        items,
        json: JSON.stringify(list, null, 2),
      }
    } catch (error) {
      return { mode, resolved: mode, dialect: consoleDialect, count: 0, bytes: 0, items: [], json: '[]', error: String(error?.message ?? error) }
    }
  }

  /** Every active tool's verdict in a scope, and the declarations of the chosen mode. */
  scopeReport(scope: ToolScope, mode: string | undefined, locale?: string): ScopeReport {
    const locales = this.locales(locale)
    const tools: Dict<ScopeVerdict> = {}
    for (const entry of this.ctx.tools.registry.active()) {
      tools[entry.definition.name] = this.verdict(entry, scope, locales)
    }
    return { tools, declarations: this.declarations(scope, mode, locales) }
  }

  /** One tool in a scope; undefined when no tool has that name. */
  detail(name: string, scope: ToolScope, locale?: string): ToolDetail | undefined {
    const entry = this.ctx.tools.registry.get(name)
    if (!entry) return
    const locales = this.locales(locale)
    const { definition } = entry
    const explanation = this.ctx.tools.explain(name, scope)
    const layers: LayerView[] = explanation.layers.map((verdict) => {
      const view: LayerView = { layer: verdict.layer, layerText: this.text(locales, `layer.${verdict.layer}`), passed: verdict.passed }
      if (!verdict.passed) {
        const removal = this.removal(verdict, locales)
        view.code = removal.code
        view.text = removal.text
      }
      return view
    })
    let schema: unknown = null
    try {
      schema = definition.args ? JSON.parse(JSON.stringify(definition.args.toJSON())) : null
    } catch {}
    return {
      row: this.rowsOf(name).find((row) => row.active),
      description: describeTool(entry, scope, locales),
      schema,
      jsonSchema: entry.schema.jsonSchema(locales),
      permission: typeof definition.permission === 'function' ? 'computed' : definition.permission || `tool:${name}`,
      lines: explanationLines(this.ctx, explanation, locales),
      layers,
      verdict: this.verdict(entry, scope, locales),
    }
  }
}
