import { Schema } from 'koishi'
import { configSection } from '../locales'

/** Options of the call pipeline (DESIGN.md "The call pipeline"). */
export interface PipelineConfig {
  /** Default synchronous wait limit of a tool call in ms (tool-system seed: 180 s). */
  timeout: number
  /** Characters of text output above which the full output is written to a file. */
  maxOutputLength: number
  /**
   * Time limit in ms of one `chatluna/tool-before` or `-after` listener: a
   * before-listener that does not answer in time blocks the call (fail
   * closed), an after-listener is reported in the result's messages.
   */
  hookTimeout: number
}

export const PipelineConfig: Schema<PipelineConfig> = configSection('pipeline', Schema.object({
  timeout: Schema.natural().role('ms').min(1).default(180000),
  maxOutputLength: Schema.natural().min(100).default(8000),
  hookTimeout: Schema.natural().role('ms').min(1).default(10000),
}))
