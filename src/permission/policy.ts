import { Dict } from 'koishi'
import { matchName, specificity } from '../visibility/patterns'

/**
 * A tool policy (tool-system seed, "策略与权限"): `auto` runs when the
 * permission check allows, `approval` always asks a human, `disabled` hides
 * the tool from the model (visibility layer 4).
 */
export type ToolPolicy = 'auto' | 'approval' | 'disabled'

/** Every policy, in the order the config and the console offer them. */
export const toolPolicies: readonly ToolPolicy[] = ['auto', 'approval', 'disabled']

/** A policy that applies to a tool, with the pattern that gave it. */
export interface PolicyMatch {
  policy: ToolPolicy
  pattern: string
}

/**
 * Policies keyed by tool-name pattern (glob wildcards). When several
 * patterns match, the most specific wins: an exact name beats every
 * wildcard, then the pattern with more literal characters. Layers added
 * later (e.g. policies saved in the database) are consulted first.
 */
export class PolicyTable {
  private layers: Dict<ToolPolicy>[] = []

  constructor(base: Dict<ToolPolicy> = {}) {
    this.layers.push(base)
  }

  /** Adds a layer that takes precedence over the existing ones; returns a remover. */
  push(layer: Dict<ToolPolicy>) {
    this.layers.unshift(layer)
    return () => {
      const index = this.layers.indexOf(layer)
      if (index >= 0) this.layers.splice(index, 1)
    }
  }

  /** The policy for a tool name, or undefined when no pattern matches. */
  resolve(name: string): PolicyMatch | undefined {
    for (const layer of this.layers) {
      let best: PolicyMatch | undefined
      for (const pattern in layer) {
        if (!matchName(pattern, name)) continue
        if (!best || specificity(pattern) > specificity(best.pattern)) {
          best = { policy: layer[pattern], pattern }
        }
      }
      if (best) return best
    }
  }
}
