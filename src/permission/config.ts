import { Schema } from 'koishi'
import { configSection } from '../locales'

/** Options of the permission stage (DESIGN.md "Permissions"). */
export interface PermissionConfig {
  /** The authority a caller needs for `write` and `exec` tools. */
  minAuthority: number
}

export const PermissionConfig: Schema<PermissionConfig> = configSection('permissions', Schema.object({
  minAuthority: Schema.natural().max(5).default(3),
}))
