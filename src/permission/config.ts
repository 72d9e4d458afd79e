import { Dict, Schema } from 'koishi'
import { configSection } from '../locales'
import { PermissionMode, permissionModes } from './modes'

/** Options of the permission service (DESIGN.md "Permissions"; issue 3). */
export interface PermissionConfig {
  /** The default mode of each authority level 0–5 (issue 3, item 3). */
  levelModes: Record<0 | 1 | 2 | 3 | 4 | 5, PermissionMode>
  /** The plugin-wide mode layer; `allow` leaves the decision to the other layers. */
  defaultMode: PermissionMode
  /** A mode layer per agent id (`scope.agent`). */
  agentModes: Dict<PermissionMode>
  /** Authority a user needs to answer someone else's approval (issue 3, item 7). */
  approverAuthority: number
  /** Authority needed for the rule, policy, mode and audit commands. */
  adminAuthority: number
  /** How long an approval waits for an answer, in ms; then the call ends with status `timeout`. */
  approvalTimeout: number
  /** How many audit entries are kept (oldest removed first). */
  auditSize: number
}

const mode = () => Schema.union(permissionModes)

export const PermissionConfig: Schema<PermissionConfig> = configSection('permissions', Schema.object({
  levelModes: Schema.object({
    0: mode().default('read-only'),
    1: mode().default('read-only'),
    2: mode().default('read-only'),
    3: mode().default('auto'),
    4: mode().default('auto'),
    5: mode().default('allow'),
  }),
  defaultMode: mode().default('allow'),
  agentModes: Schema.dict(mode()).default({}),
  approverAuthority: Schema.natural().max(5).default(3),
  adminAuthority: Schema.natural().max(5).default(4),
  approvalTimeout: Schema.natural().role('ms').min(1).default(120000),
  auditSize: Schema.natural().min(10).default(10000),
})) as Schema<PermissionConfig>
