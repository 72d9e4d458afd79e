import { join, resolve } from 'path'
import { Context, Logger } from 'koishi'
import { Config } from '../config'
import { createSkillTool } from '../skills'
import { PathGuard } from './path-guard'
import { createReadTool } from './read'
import { createWriteTool } from './write'
import { createEditTool } from './edit'
import { createBashTool } from './bash'
import { BackupStore } from './backups'
import { detectShell, loadPty, ShellRunner } from './process/runner'

const logger = new Logger('chatluna-tools')

/**
 * Defines the built-in tools `read`, `write`, `edit`, `bash` and `skill`
 * that the config enables (issue "Built-in tools"), all confined to the
 * workDir and the extra dirs by one path guard (spooled outputs readable
 * too). The workDir is created when first written to (write, bash), not
 * here. Processes started by `bash` are killed when this context is
 * disposed; skill directories are watched while it lives.
 */
export function applyBuiltinTools(ctx: Context, config: Config) {
  const service = ctx.tools
  const workDir = resolve(ctx.baseDir, config.workDir)
  const extraDirs = config.extraDirs.map((dir) => resolve(ctx.baseDir, dir))
  const guard = new PathGuard({
    workDir,
    extraDirs,
    readOnlyDirs: [service.outputDir],
  })
  const define = (definition: any) => service.define(definition, { source: 'builtin' })

  if (config.read.enabled) define(createReadTool(guard, () => config.read))
  if (config.write.enabled) define(createWriteTool(guard, () => config.write))
  if (config.edit.enabled) {
    const backups = new BackupStore(() => join(service.dataDir, 'backups'), () => config.edit.maxHistory)
    define(createEditTool(guard, backups, () => config.edit))
  }
  const pty = config.bash.enabled ? loadPty() : undefined
  if (pty instanceof Error) {
    logger.warn('the bash tool is off: node-pty could not be loaded (%s). Run "npm rebuild node-pty" where the bot runs.', pty.message)
  } else if (config.bash.enabled) {
    const shell = detectShell(config.bash.shellPath)
    const runner = new ShellRunner(() => shell, () => config.bash.inheritEnv)
    ctx.on('dispose', () => runner.killAll())
    define(createBashTool({
      runner,
      config: () => config.bash,
      workDir: () => workDir,
      allowedDirs: () => [...extraDirs, service.outputDir],
      outputDir: () => service.outputDir,
      maxOutputLength: () => service.config.maxOutputLength,
    }))
  }
  if (config.skills.enabled) {
    const { skills } = service
    define(createSkillTool(skills, () => config.skills.useChinese))
    ctx.effect(() => skills.watch())
    skills.refresh().catch((error) => logger.warn('loading skills failed: %s', error?.message ?? error))
  }
}
