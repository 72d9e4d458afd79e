import { Schema } from 'koishi'
import { BuiltinConfig } from './builtin/config'
import { PipelineConfig } from './pipeline/config'
import { PermissionConfig } from './permission/config'
import { VisibilityConfig } from './visibility/config'
import { CommandConfig } from './commands/config'
import { ModesConfig } from './modes/config'
import { AgentConfig } from './agent/config'
import { McpConfig } from './mcp/config'
import { ConsoleConfig } from './console/config'

/**
 * The plugin's configuration: one section per area (DESIGN.md "Layout"),
 * each defined in its own folder's `config.ts` with its texts under
 * `_config.<section>` in the locale files.
 */
export interface Config extends BuiltinConfig, PipelineConfig, PermissionConfig, VisibilityConfig, CommandConfig, ModesConfig, AgentConfig, McpConfig, ConsoleConfig {}

export const Config: Schema<Config> = Schema.intersect([
  BuiltinConfig,
  PipelineConfig,
  PermissionConfig,
  VisibilityConfig,
  CommandConfig,
  ModesConfig,
  AgentConfig,
  McpConfig,
  ConsoleConfig,
]) as Schema<Config>
