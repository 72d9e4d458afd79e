import { resolve } from 'path'
import { Context } from 'koishi'
import { BuiltinConfig } from '../builtin/config'
import { OwnerStates } from '../visibility/owners'
import { SkillManager, skillOwner } from './manager'

export * from './manager'
export * from './loader'
export { createSkillTool } from './tool'

/**
 * The skill manager of a plugin instance: local dirs relative to the
 * workDir (default `<workDir>/skills`), global dirs relative to Koishi's
 * base dir; the skills in `skills.disabled` start switched off.
 */
export function createSkillManager(ctx: Context, config: BuiltinConfig, owners: OwnerStates, onChange: () => void) {
  const workDir = resolve(ctx.baseDir, config.workDir)
  const manager = new SkillManager(() => ({
    localDirs: config.skills.localDirs.map((dir) => resolve(workDir, dir)),
    globalDirs: config.skills.globalDirs.map((dir) => resolve(ctx.baseDir, dir)),
  }), owners, onChange)
  for (const name of config.skills.disabled) owners.setEnabled(skillOwner(name), false)
  return manager
}
