import { Schema } from 'koishi'
import { configSection } from '../locales'

/** Options of the chat commands. */
export interface CommandConfig {
  /** Authority needed for `tools.call`. */
  callAuthority: number
}

export const CommandConfig: Schema<CommandConfig> = configSection('commands', Schema.object({
  callAuthority: Schema.natural().max(5).default(3),
}))
