import { Schema } from 'koishi'
import { configSection } from '../locales'
import { ToolSet } from '../types'
import { ProviderOptions } from './provider'

/** A sub-agent offered to the model as a tool (issue "Agent runner", item 6; RuleGo seed, sub-agent tools). */
export interface SubAgentConfig {
  /** The tool name: `^[a-zA-Z0-9_-]{1,64}$`. */
  name: string
  /** What the calling model reads to decide when to delegate. */
  description: string
  systemPrompt: string
  /** The tools the sub-agent may see (visibility layer 2); glob patterns. */
  tools: ToolSet
  /** Most model requests of one sub-agent run. */
  maxSteps: number
}

/** When the bot posts a line per batch of tool calls. */
export type ProgressMode = 'never' | 'private' | 'always'

/** Options of the agent runner (issue "Agent runner"); the endpoint fields are the provider's. */
export interface AgentOptions extends ProviderOptions {
  enabled: boolean
  /** How tool declarations are sent: `openai`, or `openai-strict` (Structured Outputs). */
  dialect: 'openai' | 'openai-strict'
  systemPrompt: string
  /** Most model requests in one turn. */
  maxSteps: number
  /** Most tool calls of one model response that run; the others are answered "not run". */
  maxToolCalls: number
  /** Most messages of earlier turns kept per conversation. */
  historyLimit: number
  /** Name of the chat command. */
  command: string
  replyOnMention: boolean
  replyInPrivate: boolean
  progress: ProgressMode
  subAgents: SubAgentConfig[]
}

export interface AgentConfig {
  agent: AgentOptions
}

/** The default system prompt (English; models answer in the user's language when told to). */
export const defaultSystemPrompt = [
  'You are a helpful assistant in a group or private chat.',
  'Use the tools you are given when they help; never invent tool results.',
  'When a tool call is denied or times out, tell the user plainly instead of retrying.',
  'Answer in the language of the user, briefly and in plain text.',
].join(' ')

export const SubAgentConfig: Schema<SubAgentConfig> = Schema.object({
  name: Schema.string().pattern(/^[a-zA-Z0-9_-]{1,64}$/).required(),
  description: Schema.string().role('textarea').required(),
  systemPrompt: Schema.string().role('textarea').default(''),
  tools: Schema.object({
    include: Schema.array(String).default([]),
    exclude: Schema.array(String).default([]),
  }),
  maxSteps: Schema.natural().min(1).default(8),
})

export const AgentConfig: Schema<AgentConfig> = configSection('agent', Schema.object({
  agent: Schema.object({
    enabled: Schema.boolean().default(false),
    baseURL: Schema.string().role('link').default('https://api.openai.com/v1'),
    apiKey: Schema.string().role('secret').default(''),
    model: Schema.string().default(''),
    headers: Schema.dict(String).role('table').default({}),
    timeout: Schema.natural().role('ms').default(60000),
    responseTimeout: Schema.natural().role('ms').default(600000),
    stream: Schema.boolean().default(true),
    dialect: Schema.union(['openai', 'openai-strict']).default('openai'),
    systemPrompt: Schema.string().role('textarea').default(defaultSystemPrompt),
    maxSteps: Schema.natural().min(1).default(16),
    maxToolCalls: Schema.natural().min(1).default(32),
    historyLimit: Schema.natural().default(40),
    command: Schema.string().default('agent'),
    replyOnMention: Schema.boolean().default(false),
    replyInPrivate: Schema.boolean().default(false),
    progress: Schema.union(['never', 'private', 'always']).default('private'),
    subAgents: Schema.array(SubAgentConfig).default([]),
  }),
}))
