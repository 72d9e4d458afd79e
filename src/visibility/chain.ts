import { Dict } from 'koishi'
import { ToolScope } from '../types'
import { RegisteredTool } from '../registry/registry'
import { PolicyTable } from '../permission/policy'
import { findMatch } from './patterns'
import { SceneRule, sceneLabel, sceneMatches } from './scene'
import { OwnerStates } from './owners'
import { subjectOf } from '../permission/subject'

/** The five visibility layers, in order (DESIGN.md "Visibility"). */
export const visibilityLayers = ['filter', 'agent', 'scene', 'policy', 'owner'] as const
/** One of the five layers: `filter`, `agent`, `scene`, `policy`, `owner`. */
export type VisibilityLayer = typeof visibilityLayers[number]

/**
 * One layer's verdict on one tool in one scope. `code` and `params` name the
 * reason; locales render them as `chatluna-tools.visibility.<code>`.
 */
export interface LayerVerdict {
  layer: VisibilityLayer
  passed: boolean
  code?: string
  params?: Dict
}

/** What the chain needs from the service. */
export interface VisibilitySources {
  scenes: () => SceneRule[]
  policies: PolicyTable
  owners: OwnerStates
}

/**
 * The five-layer visibility chain. Each layer can only narrow: a tool hidden
 * by one layer stays hidden whatever the later layers say
 * (tool-system seed, "可见性").
 */
export class VisibilityChain {
  constructor(private sources: VisibilitySources) {}

  /** The first layer that hides the tool in this scope, or undefined when it is visible. */
  firstFailure(entry: RegisteredTool, scope: ToolScope): LayerVerdict | undefined {
    for (const layer of visibilityLayers) {
      const verdict = this.failure(layer, entry, scope)
      if (verdict) return verdict
    }
  }

  /** Whether no layer hides the tool in this scope. */
  isVisible(entry: RegisteredTool, scope: ToolScope) {
    return !this.firstFailure(entry, scope)
  }

  /** Every layer's verdict, for explanations and the console. */
  explain(entry: RegisteredTool, scope: ToolScope): LayerVerdict[] {
    return visibilityLayers.map((layer) => this.judge(layer, entry, scope))
  }

  /** One layer's verdict on a tool in a scope, passed or not. */
  judge(layer: VisibilityLayer, entry: RegisteredTool, scope: ToolScope): LayerVerdict {
    return this.failure(layer, entry, scope) ?? { layer, passed: true }
  }

  /** One layer's verdict when it hides the tool; undefined when it lets it through. */
  private failure(layer: VisibilityLayer, entry: RegisteredTool, scope: ToolScope): LayerVerdict | undefined {
    const name = entry.definition.name
    switch (layer) {
      case 'filter': {
        if (!entry.contextFilter(sessionLike(scope))) {
          return { layer, passed: false, code: 'filter-context', params: { plugin: entry.plugin } }
        }
        try {
          if (entry.definition.filter && !entry.definition.filter(scope)) {
            return { layer, passed: false, code: 'filter-function', params: { plugin: entry.plugin } }
          }
        } catch (error) {
          return { layer, passed: false, code: 'filter-error', params: { plugin: entry.plugin, error: String(error?.message ?? error) } }
        }
        return
      }
      case 'agent': {
        // A sub-agent's set, then each set it lies within (its callers'), innermost first.
        let set = scope.tools
        for (let depth = 0; set && depth < 16; depth++, set = set.within) {
          if (set.include?.length && !findMatch(set.include, name)) {
            return { layer, passed: false, code: 'agent-not-included', params: { agent: setOwner(scope, depth), patterns: set.include.join(', ') } }
          }
          const excluded = findMatch(set.exclude, name)
          if (excluded) return { layer, passed: false, code: 'agent-excluded', params: { agent: setOwner(scope, depth), pattern: excluded } }
        }
        return
      }
      case 'scene': {
        const rules = this.sources.scenes()
        // The scope's own fields, else its session's (as the permission subject reads them).
        const place = rules.length ? subjectOf(scope) : undefined
        for (let index = 0; index < rules.length; index++) {
          const rule = rules[index]
          if (!sceneMatches(rule, place)) continue
          const denied = findMatch(rule.deny, name)
          if (denied) {
            return { layer, passed: false, code: 'scene-deny', params: { rule: sceneLabel(rule, index), pattern: denied } }
          }
          if (rule.allow?.length && !findMatch(rule.allow, name)) {
            return { layer, passed: false, code: 'scene-not-allowed', params: { rule: sceneLabel(rule, index), patterns: rule.allow.join(', ') } }
          }
        }
        return
      }
      case 'policy': {
        const match = this.sources.policies.resolve(name)
        if (match?.policy === 'disabled') {
          return { layer, passed: false, code: 'policy-disabled', params: { pattern: match.pattern } }
        }
        return
      }
      case 'owner': {
        const owner = entry.definition.owner
        if (!this.sources.owners.isEnabled(owner)) {
          return { layer, passed: false, code: `owner-disabled`, params: { kind: owner.kind, id: owner.id } }
        }
        return
      }
    }
  }
}

/**
 * The agent whose tool set lies `depth` sets out from the scope's own
 * (`scope.tools` is depth 0, its `within` depth 1, …): the acting agent,
 * then the agents that delegated to it, innermost first; past the known
 * agents, the outermost one.
 */
function setOwner(scope: ToolScope, depth: number): string {
  const agents = [scope.agent ?? '', ...(scope.delegatedBy ?? []).slice().reverse()]
  return agents[depth] ?? agents[agents.length - 1]
}

/**
 * The object a Koishi context filter (`ctx.platform(...)`, `ctx.guild(...)`,
 * `ctx.private()`) is tested against: the real session when there is one,
 * otherwise the scope's fields in session form.
 */
export function sessionLike(scope: ToolScope): any {
  if (scope.session) return scope.session
  return {
    platform: scope.platform,
    guildId: scope.private ? undefined : scope.guildId,
    channelId: scope.channelId,
    userId: scope.userId,
    isDirect: !!scope.private,
    subtype: scope.private ? 'private' : 'group',
  }
}
