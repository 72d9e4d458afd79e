import { Schema } from 'koishi'
import { configSection } from '../locales'

/** Options of the console page (issue "Console page"). */
export interface ConsoleConfig {
  /**
   * The authority a console user needs to see the page's data and use its
   * actions (explain, set a policy, answer approvals, read rules and the
   * call log). Console users get an identity from `@koishijs/plugin-auth`.
   */
  consoleAuthority: number
}

export const ConsoleConfig: Schema<ConsoleConfig> = configSection('console', Schema.object({
  consoleAuthority: Schema.natural().min(1).max(5).default(4),
}))
