import { Schema } from 'koishi'
import { ToolDefinition } from '../types'
import { ToolRunError, toolErrorText } from '../pipeline/errors'
import { closestNames } from '../registry/names'
import { localizedArgs, toolDescription } from '../builtin/texts'
import { SkillManager } from './manager'

/** Arguments of the `skill` tool. */
export interface SkillArgs {
  /** The skill's name, as the catalog lists it. */
  skill: string
}

/** The hint naming up to 10 skills the model may ask for. */
function availableHint(names: string[]) {
  return names.length ? `Available skills: ${names.slice(0, 10).join(', ')}.` : 'No skills are available.'
}

/**
 * The `skill` tool (RuleGo seed, "技能系统（skill）"; issue "Built-in
 * tools", item 7): takes `{ skill }` and returns the skill's instructions
 * (the body of its `SKILL.md`) with its base directory. Its description
 * carries the catalog of enabled skills, in the caller's language (or
 * Chinese with `useChinese`). A disabled skill is absent from the catalog
 * and refused (`skill-disabled`); an unknown one gets close names.
 * Skills changed on disk are picked up on the next call.
 */
export function createSkillTool(skills: SkillManager, useChinese: () => boolean): ToolDefinition<SkillArgs> {
  const locale = (caller?: string) => (useChinese() ? 'zh-CN' : caller)
  return {
    name: 'skill',
    description: toolDescription('skill'),
    describe: (caller) => {
      const chosen = locale(caller.locale ?? caller.scope?.locale)
      return `${toolDescription('skill', [chosen].filter(Boolean))}\n\n${skills.catalog(chosen)}`
    },
    args: localizedArgs('skill', Schema.object({
      skill: Schema.string().required(),
    })),
    traits: { effect: 'read', parallel: true },
    permission: (args) => ({ name: 'skill:use', target: { skill: args.skill } }),
    render: {
      call: (args) => `skill ${args.skill}`,
    },
    async run(args) {
      await skills.refresh()
      const skill = skills.get(args.skill)
      const enabled = skills.list().filter((item) => item.enabled).map((item) => item.name)
      if (!skill) {
        const close = closestNames(args.skill, enabled)
        throw new ToolRunError('unknown-skill', `There is no skill named ${JSON.stringify(args.skill)}.`, {
          hint: availableHint(close.length ? close : enabled),
          text: close.length || enabled.length
            ? toolErrorText('unknown-skill', { name: args.skill, names: (close.length ? close : enabled).slice(0, 10).join(', ') })
            : toolErrorText('unknown-skill-none', { name: args.skill }),
        })
      }
      if (!skills.isEnabled(skill.name)) {
        throw new ToolRunError('skill-disabled', `The skill ${JSON.stringify(skill.name)} is disabled.`, {
          status: 'denied',
          hint: availableHint(enabled),
          text: toolErrorText('skill-disabled', { name: skill.name }),
        })
      }
      return [
        `Skill "${skill.name}" (base directory: ${skill.dir})`,
        'Relative paths in these instructions are relative to the base directory.',
        '',
        skill.body.trimEnd(),
      ].join('\n')
    },
  }
}
