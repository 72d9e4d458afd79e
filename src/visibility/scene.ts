import { Schema } from 'koishi'
import type { PermissionSubject } from '../permission/subject'
import { PermissionMode, permissionModes } from '../permission/modes'

/**
 * A scene rule from the config (visibility layer 3): where it applies and
 * which tools it allows or denies there. Empty fields match anything.
 */
export interface SceneRule {
  /** A label shown in explanations, e.g. `no-bash-in-groups`. */
  name?: string
  platform?: string
  guildId?: string
  channelId?: string
  /** `private`, `group` or `any` chat. */
  kind?: 'any' | 'private' | 'group'
  /** When not empty, only tools matching one of these patterns stay visible. */
  allow?: string[]
  /** Tools matching any of these patterns are hidden. */
  deny?: string[]
  /**
   * The permission mode here: one layer of the mode (the strictest layer
   * wins, so a scene can only restrict; issue 3, item 3).
   */
  mode?: PermissionMode
}

export const SceneRule: Schema<SceneRule> = Schema.object({
  name: Schema.string(),
  platform: Schema.string(),
  guildId: Schema.string(),
  channelId: Schema.string(),
  kind: Schema.union(['any', 'private', 'group']).default('any'),
  allow: Schema.array(String).role('table').default([]),
  deny: Schema.array(String).role('table').default([]),
  mode: Schema.union(permissionModes),
})

/**
 * Whether a scene rule applies to a place: a permission subject
 * (`subjectOf(scope)`), whose fields already fall back to the scope's
 * session — a raw scope without them would miss rules for its session.
 */
export function sceneMatches(rule: SceneRule, place: Pick<PermissionSubject, 'platform' | 'guildId' | 'channelId' | 'private'>) {
  if (rule.platform && rule.platform !== place.platform) return false
  if (rule.guildId && rule.guildId !== place.guildId) return false
  if (rule.channelId && rule.channelId !== place.channelId) return false
  if (rule.kind === 'private' && !place.private) return false
  if (rule.kind === 'group' && place.private) return false
  return true
}

/** The label of a rule in explanations: its name, or `#<index + 1>`. */
export function sceneLabel(rule: SceneRule, index: number) {
  return rule.name || `#${index + 1}`
}
