import { Schema } from 'koishi'
import { configSection } from '../locales'
import { ReadConfig } from './read'

/** Options of the built-in tools (RuleGo seed, "4 大原始能力"). */
export interface BuiltinConfig {
  /** The workspace of the built-in file tools, relative to Koishi's base dir. */
  workDir: string
  read: ReadConfig
}

export const BuiltinConfig: Schema<BuiltinConfig> = configSection('builtin', Schema.object({
  workDir: Schema.path({ filters: ['directory'], allowCreate: true }).default('data/chatluna-tools/workspace'),
  read: ReadConfig,
}))
