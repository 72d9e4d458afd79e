import { Schema } from 'koishi'
import { configSection } from '../locales'

/** Options of the built-in `read` tool (RuleGo seed, "read — 记忆"). */
export interface ReadConfig {
  enabled: boolean
  /** Most lines one `file` call returns (seed default 1000). */
  maxReadLines: number
  /** Most results one `search` call returns (seed default 30). */
  maxSearchResults: number
  /** Most entries one `list` call returns. */
  maxListEntries: number
  /** Directory names `search` and `list` skip unless the path names them. */
  skipDirs: string[]
}

/** Options of the built-in `write` tool (RuleGo seed, "write — 创造力"). */
export interface WriteConfig {
  enabled: boolean
  /** Largest file the tool writes, in bytes (UTF-8), after an append too. */
  maxFileSize: number
  /** Whether `append` puts a timestamp line before the new text (seed: "自动添加时间戳分隔符"). */
  appendTimestamp: boolean
}

/** Options of the built-in `edit` tool (RuleGo seed, "edit — 进化"). */
export interface EditConfig {
  enabled: boolean
  /** Backups kept per file and session; older ones are deleted. */
  maxHistory: number
  /** Largest file the tool edits, in bytes. */
  maxFileSize: number
}

/** `allow`: only listed commands run; `deny`: everything but the deny lists runs. */
export type BashMode = 'allow' | 'deny'

/** Options of the built-in `bash` tool (RuleGo seed, "bash — 行动力"). */
export interface BashConfig {
  enabled: boolean
  /** Default and largest time limit of one command, in ms; a call may ask for less. */
  timeout: number
  /** Output shown to the model, in bytes; more is saved to a file, head and tail shown. */
  maxOutputSize: number
  mode: BashMode
  /** Command patterns that may run in `allow` mode (`git`, `npm run *`, …). */
  allow: string[]
  /** Command names (globs) that never run. */
  deny: string[]
  /** Command patterns with arguments that never run (`rm -rf`, `git push --force`, …). */
  denyArgs: string[]
  /** Shell to run commands with; empty: bash if found, else sh. */
  shellPath: string
  /** Pass the whole environment of Koishi to commands (it may hold secrets); default: a safe subset. */
  inheritEnv: boolean
}

/** Options of the skill system (RuleGo seed, "skill 配置"). */
export interface SkillsConfig {
  enabled: boolean
  /** Skill directories shared by every agent, relative to Koishi's base dir. */
  globalDirs: string[]
  /** Skill directories of this workspace, relative to the workDir; they win over global ones. */
  localDirs: string[]
  /** Describe the skill tool in Chinese whatever the caller's language. */
  useChinese: boolean
  /** Skills switched off at start (visibility layer 5). */
  disabled: string[]
}

/** Options of the built-in tools (RuleGo seed, "4 大原始能力"). */
export interface BuiltinConfig {
  /** The workspace of the built-in tools, relative to Koishi's base dir. */
  workDir: string
  /** More directories the file tools may read and write, relative to Koishi's base dir. */
  extraDirs: string[]
  read: ReadConfig
  write: WriteConfig
  edit: EditConfig
  bash: BashConfig
  skills: SkillsConfig
}

/** Megabytes in bytes. */
const MB = 1024 * 1024

/**
 * Commands the bash tool refuses by default in `deny` mode: disks,
 * power, accounts, and killing processes by name (the bot is one of them).
 */
export const defaultDeny = [
  'mkfs', 'mkfs.*', 'mke2fs', 'mkswap', 'fdisk', 'sfdisk', 'cfdisk', 'parted', 'wipefs', 'shred', 'format',
  'shutdown', 'reboot', 'halt', 'poweroff', 'init', 'telinit',
  'passwd', 'chpasswd', 'useradd', 'userdel', 'usermod',
  'pkill', 'killall',
]

/** Command patterns with arguments refused by default (see {@link BashConfig.denyArgs}). */
export const defaultDenyArgs = [
  'rm -rf', 'rm -Rf', 'rm -r --force', 'rm -R --force', 'rm --recursive -f', 'rm --recursive --force',
  'rm --no-preserve-root',
  'chmod -R 777', 'chown -R',
  'dd of=/dev/*',
  'git push --force', 'git push -f', 'git push +*', 'git reset --hard', 'git clean -f',
  'systemctl poweroff', 'systemctl reboot', 'systemctl halt',
  'kill -1', 'kill -9 -1',
]

export const ReadConfig: Schema<ReadConfig> = Schema.object({
  enabled: Schema.boolean().default(true),
  maxReadLines: Schema.natural().min(1).default(1000),
  maxSearchResults: Schema.natural().min(1).default(30),
  maxListEntries: Schema.natural().min(1).default(500),
  skipDirs: Schema.array(Schema.string()).default(['.git', 'node_modules']),
})

export const WriteConfig: Schema<WriteConfig> = Schema.object({
  enabled: Schema.boolean().default(true),
  maxFileSize: Schema.natural().min(1).default(10 * MB),
  appendTimestamp: Schema.boolean().default(true),
})

export const EditConfig: Schema<EditConfig> = Schema.object({
  enabled: Schema.boolean().default(true),
  maxHistory: Schema.natural().min(1).default(10),
  maxFileSize: Schema.natural().min(1).default(10 * MB),
})

export const BashConfig: Schema<BashConfig> = Schema.object({
  enabled: Schema.boolean().default(true),
  timeout: Schema.natural().role('ms').min(100).default(30000),
  maxOutputSize: Schema.natural().min(200).default(50000),
  mode: Schema.union(['deny', 'allow']).default('deny'),
  allow: Schema.array(Schema.string()).default([]),
  deny: Schema.array(Schema.string()).default(defaultDeny),
  denyArgs: Schema.array(Schema.string()).default(defaultDenyArgs),
  shellPath: Schema.string().default(''),
  inheritEnv: Schema.boolean().default(false),
})

export const SkillsConfig: Schema<SkillsConfig> = Schema.object({
  enabled: Schema.boolean().default(true),
  globalDirs: Schema.array(Schema.path({ filters: ['directory'] })).default([]),
  localDirs: Schema.array(Schema.string()).default(['skills']),
  useChinese: Schema.boolean().default(false),
  disabled: Schema.array(Schema.string()).default([]),
})

export const BuiltinConfig: Schema<BuiltinConfig> = configSection('builtin', Schema.object({
  workDir: Schema.path({ filters: ['directory'], allowCreate: true }).default('data/chatluna-tools/workspace'),
  extraDirs: Schema.array(Schema.path({ filters: ['directory'] })).default([]),
  read: ReadConfig,
  write: WriteConfig,
  edit: EditConfig,
  bash: BashConfig,
  skills: SkillsConfig,
}))
