import { Dict, Schema } from 'koishi'
import { SceneRule } from './visibility/scene'
import { ToolPolicy } from './permission/policy'
import { ReadConfig } from './builtin/read'
import { locales } from './locales'

/** The plugin's configuration, one section per area (DESIGN.md "Layout"). */
export interface Config {
  /** The workspace of the built-in file tools, relative to Koishi's base dir. */
  workDir: string
  /** Default synchronous wait limit of a tool call in ms (tool-system seed: 180 s). */
  timeout: number
  /** Characters of text output above which the full output is written to a file. */
  maxOutputLength: number
  /** The authority a caller needs for `write` and `exec` tools until the permission service decides. */
  minAuthority: number
  /** Scene rules (visibility layer 3). */
  scenes: SceneRule[]
  /** Tool policies by name pattern: `auto`, `approval` or `disabled` (layer 4). */
  policies: Dict<ToolPolicy>
  /** The authority needed for `tools.call`. */
  callAuthority: number
  read: ReadConfig
}

export const Config: Schema<Config> = Schema.intersect([
  Schema.object({
    workDir: Schema.path({ filters: ['directory'], allowCreate: true }).default('data/chatluna-tools/workspace'),
  }),
  Schema.object({
    timeout: Schema.natural().role('ms').min(1).default(180000),
    maxOutputLength: Schema.natural().min(100).default(8000),
  }),
  Schema.object({
    minAuthority: Schema.natural().max(5).default(3),
  }),
  Schema.object({
    scenes: Schema.array(SceneRule).default([]),
    policies: Schema.dict(Schema.union(['auto', 'approval', 'disabled'])).default({}),
  }),
  Schema.object({
    callAuthority: Schema.natural().max(5).default(3),
  }),
  Schema.object({
    read: ReadConfig,
  }),
]).i18n({
  'zh-CN': locales['zh-CN']._config,
  'en-US': locales['en-US']._config,
}) as Schema<Config>
