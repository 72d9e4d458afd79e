import { Context } from 'koishi'
import { ToolScope, ToolSource } from '../types'
import { ToolRegistry } from '../registry/registry'
import { closestNames } from '../registry/names'
import { LayerVerdict, VisibilityChain } from './chain'

/** Where a tool came from, for explanations. */
export interface ToolOrigin {
  source: ToolSource
  plugin: string
}

/**
 * Why a tool is or is not visible in a scope (DESIGN.md "Visibility"):
 * whether it is registered, each layer's verdict, the first layer that
 * removed it, and the same-named tools it shadows or is shadowed by.
 */
export interface ToolExplanation {
  name: string
  registered: boolean
  visible: boolean
  /** The active entry's origin. */
  active?: ToolOrigin
  layers: LayerVerdict[]
  removedBy?: LayerVerdict
  /** Entries of the same name that are not active, and why. */
  shadowed: (ToolOrigin & { by: ToolOrigin; reason: 'priority' | 'duplicate' })[]
  /** For an unregistered name: registered names close to it. */
  similar: string[]
}

/**
 * Builds the explanation of `name` in `scope`; never throws. `candidates`
 * are the names offered as similar (default: every registered name).
 */
export function explainTool(registry: ToolRegistry, chain: VisibilityChain, name: string, scope: ToolScope, candidates = registry.names()): ToolExplanation {
  const entry = registry.get(name)
  if (!entry) {
    return { name, registered: false, visible: false, layers: [], shadowed: [], similar: closestNames(name, candidates, 3) }
  }
  const layers = chain.explain(entry, scope)
  const removedBy = layers.find((verdict) => !verdict.passed)
  const origin = (tool: { source: ToolSource; plugin: string }) => ({ source: tool.source, plugin: tool.plugin })
  return {
    name,
    registered: true,
    visible: !removedBy,
    active: origin(entry),
    layers,
    removedBy,
    shadowed: registry.shadowed(name).map((info) => ({ ...origin(info.entry), by: origin(info.by), reason: info.reason })),
    similar: [],
  }
}

/**
 * The explanation as plain sentences in the given locales, through the
 * `chatluna-tools.explain.*` and `chatluna-tools.visibility.*` texts.
 */
export function explanationLines(ctx: Context, explanation: ToolExplanation, locales: string[]): string[] {
  const text = (path: string, params: object = {}) => ctx.i18n.text(locales, [`chatluna-tools.${path}`], params)
  const { name } = explanation
  if (!explanation.registered) {
    const lines = [text('explain.not-registered', { name })]
    if (explanation.similar.length) lines.push(text('explain.similar', { names: explanation.similar.join(', ') }))
    return lines
  }
  const lines: string[] = []
  if (explanation.visible) {
    lines.push(text('explain.visible', { name }))
  } else {
    const verdict = explanation.removedBy
    lines.push(text('explain.hidden', { name, layer: text(`layer.${verdict.layer}`) }))
    const params = verdict.code === 'owner-disabled'
      ? { ...verdict.params, kind: text(`owner.${verdict.params.kind}`) }
      : verdict.params
    lines.push(text(`visibility.${verdict.code}`, params))
  }
  for (const shadow of explanation.shadowed) {
    lines.push(text(`explain.shadowed-${shadow.reason}`, {
      name,
      plugin: shadow.plugin,
      source: shadow.source,
      winner: shadow.by.plugin,
      winnerSource: shadow.by.source,
    }))
  }
  return lines
}
