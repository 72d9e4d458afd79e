import { Dict, Schema } from 'koishi'
import { configSection } from '../locales'
import { SceneRule } from './scene'
import { ToolPolicy, toolPolicies } from '../permission/policy'

/** Options of the visibility chain (DESIGN.md "Visibility"). */
export interface VisibilityConfig {
  /** Scene rules (layer 3). */
  scenes: SceneRule[]
  /** Tool policies by name pattern: `auto`, `approval` or `disabled` (layer 4). */
  policies: Dict<ToolPolicy>
}

export const VisibilityConfig: Schema<VisibilityConfig> = configSection('visibility', Schema.object({
  scenes: Schema.array(SceneRule).default([]),
  policies: Schema.dict(Schema.union(toolPolicies)).default({}),
}))
